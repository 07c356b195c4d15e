// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * check_maps.c - `iolat check`'s tables of the collector's maps on a host
 * (check_maps.h): their sizes and why, and with --memory every map's
 * kernel memory, for this host or one described.
 */
#include "cli/check_maps.h"

#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>

#include "core/mapmem.h"

/* Which of the planned maps is mapsize's m (the histogram map: hist). */
static int planned(const struct map_def *d, int n, int hist, enum mapsize_map m)
{
	if (m == MAPSIZE_HISTS)
		return hist;
	for (int i = 0; i < n; i++)
		if (!strcmp(d[i].name, mapsize_name(m)))
			return i;
	return -1;
}

static void print_plan(const char *what, const struct collector_opts *o, const struct check_host *h,
		       long keys_needed, const char *needed_how)
{
	struct mapsize_plan p;
	struct map_def m[16];
	uint64_t total = 0, bytes;
	int hist, n = collector_plan(o, &h->h, m, 16, &hist, &p);

	if (n < 0) {
		printf("%s: cannot open the collector's object: %s\n", what, strerror(-n));
		return;
	}
	printf("\n%s (histogram values %s):\n", what,
	       m[hist].type == BPF_MAP_TYPE_PERCPU_HASH ? "per CPU" : "shared, one per key");
	printf("  %-16s %-14s %8s %8s %10s\n", "map", "kind", "entries", "value B", "KiB");
	for (int i = 0; i < n; i++) {
		bytes = mapmem_bytes(&m[i], (int)h->h.cpus);
		total += bytes;
		printf("  %-16s %-14s %8u %8u %10.1f\n", m[i].name,
		       libbpf_bpf_map_type_str(m[i].type), m[i].max_entries, m[i].value_size,
		       (double)bytes / 1024);
		if (i == hist)
			printf("    keys: %u; needed: %ld (%s)%s\n", m[i].max_entries, keys_needed,
			       needed_how,
			       keys_needed > (long)m[i].max_entries ? ": DOES NOT FIT" : "");
		for (int k = 0; k < MAPSIZE_COUNT; k++)
			if (planned(m, n, hist, k) == i)
				printf("    why: %s\n", p.why[k]);
		if (!strcmp(m[i].name, "restamps"))
			printf("    why: %s\n", p.restamp_why);
	}
	printf("  total: %.1f MiB", (double)total / (1 << 20));
	if (p.mem_limit)
		printf(" (the sized maps may take 1/%d of MemTotal: %.1f MiB%s)", MAPSIZE_MEM_SHARE,
		       (double)p.mem_limit / (1 << 20), p.mem_bound ? ", which bound them" : "");
	printf("\n");
}

/* serve's collector options with its defaults (workloads by cgroup, under
 * a cap) on host h. */
static struct collector_opts serve_opts(const struct check_host *h)
{
	struct collector_opts o = { .map_budget = COLLECTOR_SERVE_BUDGET,
				    .key_cgroup = true,
				    .workloads = (uint32_t)h->workloads };

	memcpy(o.map_size, h->set, sizeof(o.map_size));
	return o;
}

int check_maps_memory(const struct check_host *h)
{
	struct collector_opts hist = { 0 }, serve = serve_opts(h);
	char how[128];

	memcpy(hist.map_size, h->set, sizeof(hist.map_size));
	printf("Kernel memory of iolat's collector maps (preallocated at load) on a host\n"
	       "of %u CPUs, %u disks and %ld workloads:\n",
	       h->h.cpus, h->h.disks, h->workloads);
	printf("(disks holding %llu requests at once, MemTotal %.1f GiB)\n",
	       (unsigned long long)h->h.inflight, (double)h->h.mem_bytes / (1 << 30));
	snprintf(how, sizeof(how), "%u disks x %d operations", h->h.disks, MAPSIZE_OPS);
	print_plan("iolat hist -D -O", &hist, h, (long)h->h.disks * MAPSIZE_OPS, how);
	snprintf(how, sizeof(how), "%ld workloads x %d disks each x %d operations", h->workloads,
		 MAPSIZE_DISKS_PER_WORKLOAD, MAPSIZE_OPS);
	print_plan("iolat serve, per workload (its default)", &serve, h,
		   h->workloads * MAPSIZE_DISKS_PER_WORKLOAD * MAPSIZE_OPS, how);
	printf("\nFigures follow the kernel's own map accounting (memlock in bpftool and\n"
	       "/proc/PID/fdinfo); user programs' maps (serve --config.dir) come on top.\n");
	return 0;
}

void check_maps_sizes(const struct check_host *h)
{
	struct collector_opts o = serve_opts(h);
	struct mapsize_plan p;
	struct map_def m[16];
	int hist, n = collector_plan(&o, &h->h, m, 16, &hist, &p);

	if (n < 0)
		return;
	printf("\nMap sizes (serve's defaults; %u CPUs, %u disks holding %llu requests, "
	       "MemTotal %.1f GiB):\n",
	       h->h.cpus, h->h.disks, (unsigned long long)h->h.inflight,
	       (double)h->h.mem_bytes / (1 << 30));
	for (int k = 0; k < MAPSIZE_COUNT; k++) {
		int i = planned(m, n, hist, k);

		if (i < 0)
			continue;
		printf("  %-12s %8u entries %9.1f KiB  %s\n", m[i].name, m[i].max_entries,
		       (double)p.bytes[k] / 1024, p.why[k]);
	}
	printf("  (--bpf.map-size=MAP=ENTRIES sets one; 'iolat check --memory' shows every "
	       "map)\n");
}
