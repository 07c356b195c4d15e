// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mapwalk.c - the floor of a map read: walks one BPF map with
 * BPF_MAP_LOOKUP_BATCH as a bare reader would (buffers sized once for the
 * whole map, every value summed, nothing else) and prints the time per
 * walk, so bench/userprogs.sh can set iolat's scrape beside it.
 *
 * Usage: mapwalk [-n WALKS] MAP
 * MAP: id:ID, pid:PID:NAME (the map named NAME that process PID holds
 * open), or a pinned map's path.
 * Prints one line: "walks N entries E median_ns M min_ns L sum S".
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Map id of process fd `fdinfo` (a /proc/PID/fdinfo/N path), or 0. */
static uint32_t fdinfo_map_id(const char *fdinfo)
{
	FILE *f = fopen(fdinfo, "r");
	char line[256];
	unsigned id = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "map_id: %u", &id) == 1)
			break;
	fclose(f);
	return id;
}

/* An fd of the map called name among those process pid holds, or -1. */
static int open_by_pid(const char *pid, const char *name)
{
	char dir[64], path[128];
	struct dirent *e;
	DIR *d;
	int fd = -1;

	snprintf(dir, sizeof(dir), "/proc/%s/fdinfo", pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while (fd < 0 && (e = readdir(d))) {
		struct bpf_map_info info = { 0 };
		uint32_t len = sizeof(info), id;

		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		id = e->d_name[0] != '.' ? fdinfo_map_id(path) : 0;
		if (!id || (fd = bpf_map_get_fd_by_id(id)) < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) || strcmp(info.name, name)) {
			close(fd);
			fd = -1;
		}
	}
	closedir(d);
	return fd;
}

static int open_map(const char *spec)
{
	char pid[32];
	const char *colon;

	if (!strncmp(spec, "id:", 3))
		return bpf_map_get_fd_by_id((uint32_t)strtoul(spec + 3, NULL, 10));
	if (!strncmp(spec, "pid:", 4) && (colon = strchr(spec + 4, ':')) &&
	    (size_t)(colon - spec - 4) < sizeof(pid)) {
		snprintf(pid, sizeof(pid), "%.*s", (int)(colon - spec - 4), spec + 4);
		return open_by_pid(pid, colon + 1);
	}
	return bpf_obj_get(spec);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One walk of the whole map: entries seen, or -errno. Adds every value's
 * 64-bit words into *sum, as a reader that uses them would touch them. */
static long walk(int fd, const struct bpf_map_info *info, void *keys, uint64_t *vals, size_t vwords,
		 uint64_t *sum)
{
	uint64_t in = 0, out = 0;
	long total = 0;
	int first = 1;

	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		uint32_t count = info->max_entries;
		int e =
		    bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &count, &opts)
			? errno
			: 0;

		if (e && e != ENOENT)
			return -e;
		for (size_t i = 0; i < (size_t)count * vwords; i++)
			*sum += vals[i];
		total += count;
		if (e == ENOENT)
			return total;
		in = out;
		first = 0;
	}
}

int main(int argc, char **argv)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	int walks = 20, fd, opt, ncpus = libbpf_num_possible_cpus();
	uint64_t *ns, *vals, sum = 0;
	size_t vwords;
	void *keys;
	long n = 0;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n' || (walks = atoi(optarg)) < 1) {
			fprintf(stderr, "usage: mapwalk [-n WALKS] MAP\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: mapwalk [-n WALKS] MAP\n");
		return 2;
	}
	fd = open_map(argv[optind]);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		fprintf(stderr, "mapwalk: cannot open map %s: %s\n", argv[optind],
			strerror(errno ? errno : ENOENT));
		return 1;
	}
	vwords = (info.value_size + 7) / 8;
	if (info.type == BPF_MAP_TYPE_PERCPU_HASH || info.type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	    info.type == BPF_MAP_TYPE_PERCPU_ARRAY)
		vwords *= (size_t)ncpus;
	/* Sized once, and touched before the first walk: no page faults timed. */
	keys = calloc(info.max_entries, info.key_size);
	vals = calloc(info.max_entries, vwords * 8);
	ns = calloc((size_t)walks, sizeof(*ns));
	if (!keys || !vals || !ns) {
		fprintf(stderr, "mapwalk: out of memory\n");
		return 1;
	}
	if (walk(fd, &info, keys, vals, vwords, &sum) < 0) {
		fprintf(stderr, "mapwalk: batch lookup on %s: %s\n", info.name, strerror(errno));
		return 1;
	}
	for (int i = 0; i < walks; i++) {
		uint64_t t0 = now_ns();

		n = walk(fd, &info, keys, vals, vwords, &sum);
		ns[i] = now_ns() - t0;
		if (n < 0) {
			fprintf(stderr, "mapwalk: batch lookup on %s: %s\n", info.name,
				strerror((int)-n));
			return 1;
		}
	}
	qsort(ns, (size_t)walks, sizeof(*ns), cmp_u64);
	printf("walks %d entries %ld median_ns %llu min_ns %llu sum %llu\n", walks, n,
	       (unsigned long long)ns[walks / 2], (unsigned long long)ns[0],
	       (unsigned long long)sum);
	free(keys);
	free(vals);
	free(ns);
	close(fd);
	return 0;
}
