// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* mapsize.c - the collector's map sizes from the host (mapsize.h). */
#include "core/mapsize.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mapmem.h"
#include "sys/disks.h"

static const char *const names[MAPSIZE_COUNT] = {
	[MAPSIZE_HISTS] = "hists",
	[MAPSIZE_RQ_STARTS] = "rq_starts",
	[MAPSIZE_BIO_STARTS] = "bio_starts",
	[MAPSIZE_COMMS] = "comms",
};

const char *mapsize_name(enum mapsize_map m)
{
	return m < MAPSIZE_COUNT ? names[m] : "?";
}

int mapsize_from_name(const char *name)
{
	if (!strcmp(name, "hists_shared"))
		return MAPSIZE_HISTS;
	for (int i = 0; i < MAPSIZE_COUNT; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static uint64_t map_bytes(const struct mapsize_want *w, enum mapsize_map m, uint32_t type,
			  uint32_t entries, uint32_t cpus)
{
	struct map_def d = { .type = type,
			     .key_size = w->key_size[m],
			     .value_size = w->value_size[m],
			     .max_entries = entries };

	return mapmem_bytes(&d, (int)cpus);
}

static uint32_t hist_type(bool shared)
{
	return shared ? BPF_MAP_TYPE_HASH : BPF_MAP_TYPE_PERCPU_HASH;
}

/* Keys of `value` bytes with `nvals` values each that fit `budget` bytes. */
static uint32_t budget_keys(uint64_t budget, uint32_t nvals, uint32_t value)
{
	uint64_t keys = budget / ((uint64_t)nvals * (value ? value : 1));

	return (uint32_t)clamp_u64(keys, MAPSIZE_HIST_MIN_KEYS, MAPSIZE_HIST_MAX_KEYS);
}

/*
 * The start-time maps hold a request (or bio) from its creation to its
 * completion: no more than the disks' tags, nr_requests per hardware queue
 * (with a scheduler, its own tags, nr_requests of them per queue, bound it
 * the same way). Bio-based disks (dm, md) hand their bios to the disks
 * below, so bio_starts needs as many. Plus each CPU's LRU free list.
 */
static void size_starts(const struct mapsize_host *h, uint32_t cpus, struct mapsize_plan *p)
{
	uint64_t lru = (uint64_t)cpus * MAPSIZE_LRU_PER_CPU, need = h->inflight + lru;
	uint32_t n =
	    (uint32_t)clamp_u64(pow2_at_least(need), MAPSIZE_STARTS_MIN, MAPSIZE_STARTS_MAX);

	p->entries[MAPSIZE_RQ_STARTS] = p->entries[MAPSIZE_BIO_STARTS] = n;
	snprintf(p->why[MAPSIZE_RQ_STARTS], sizeof(p->why[0]),
		 "%" PRIu64 " requests the disks hold at once (nr_requests x hardware queues)"
		 " + %u CPUs x %d (LRU free lists) = %" PRIu64 ", as a power of two from %d to %d",
		 h->inflight, cpus, MAPSIZE_LRU_PER_CPU, need, MAPSIZE_STARTS_MIN,
		 MAPSIZE_STARTS_MAX);
	snprintf(p->why[MAPSIZE_BIO_STARTS], sizeof(p->why[0]),
		 "as rq_starts: bio-based disks (dm, md) pass their bios to the disks below");
}

static uint64_t restamp_bytes(const struct mapsize_want *w, const struct mapsize_plan *p)
{
	struct map_def d = { .type = BPF_MAP_TYPE_ARRAY,
			     .key_size = sizeof(uint32_t),
			     .value_size = w->restamp_value_size,
			     .max_entries = p->restamp_slots };

	return mapmem_bytes(&d, 1);
}

/* The restamps table from the requests in flight (mapsize.h), halved
 * (not below its floor) while it takes more than an eighth of the memory
 * share. A kernel without the plug clock never uses it: the collector
 * then shrinks it to one slot. */
static void size_restamps(const struct mapsize_host *h, const struct mapsize_want *w,
			  struct mapsize_plan *p)
{
	uint64_t need = h->inflight * MAPSIZE_RESTAMPS_PER_REQUEST;

	p->restamp_slots =
	    (uint32_t)clamp_u64(pow2_at_least(need), MAPSIZE_RESTAMPS_MIN, MAPSIZE_RESTAMPS_MAX);
	snprintf(p->restamp_why, sizeof(p->restamp_why),
		 "%d x %" PRIu64 " requests the disks hold at once, as a power of two from %d "
		 "to %d (used on 6.9+ kernels only)",
		 MAPSIZE_RESTAMPS_PER_REQUEST, h->inflight, MAPSIZE_RESTAMPS_MIN,
		 MAPSIZE_RESTAMPS_MAX);
	while (p->mem_limit && p->restamp_slots > MAPSIZE_RESTAMPS_MIN &&
	       restamp_bytes(w, p) > p->mem_limit / 8) {
		p->restamp_slots /= 2;
		p->mem_bound = true;
		snprintf(p->restamp_why, sizeof(p->restamp_why),
			 "halved to fit 1/8 of the maps' share of MemTotal (%" PRIu64 " MiB)",
			 p->mem_limit >> 20);
	}
	p->restamp_bytes = restamp_bytes(w, p);
}

static void size_comms(const struct mapsize_want *w, uint32_t cpus, struct mapsize_plan *p)
{
	uint64_t lru = (uint64_t)cpus * MAPSIZE_LRU_PER_CPU, need;

	if (!w->key_process) {
		p->entries[MAPSIZE_COMMS] = 1;
		snprintf(p->why[MAPSIZE_COMMS], sizeof(p->why[0]), "unused: not keyed by process");
		return;
	}
	need = (w->workloads ? w->workloads : MAPSIZE_COMMS_MIN) + lru;
	p->entries[MAPSIZE_COMMS] =
	    (uint32_t)clamp_u64(pow2_at_least(need), MAPSIZE_COMMS_MIN, MAPSIZE_STARTS_MAX);
	snprintf(p->why[MAPSIZE_COMMS], sizeof(p->why[0]),
		 "%u processes%s + %u CPUs x %d (LRU free lists), as a power of two from %d "
		 "to %d",
		 w->workloads ? w->workloads : MAPSIZE_COMMS_MIN,
		 w->workloads ? " (the workload cap)" : "", cpus, MAPSIZE_LRU_PER_CPU,
		 MAPSIZE_COMMS_MIN, MAPSIZE_STARTS_MAX);
}

/* Halves the start-time maps (not below their floor) while the three LRU
 * maps take more than a quarter of the memory share. */
static void fit_starts(const struct mapsize_want *w, uint32_t cpus, struct mapsize_plan *p)
{
	uint64_t lru;

	for (;;) {
		lru = map_bytes(w, MAPSIZE_RQ_STARTS, BPF_MAP_TYPE_LRU_HASH,
				p->entries[MAPSIZE_RQ_STARTS], cpus) +
		      map_bytes(w, MAPSIZE_BIO_STARTS, BPF_MAP_TYPE_LRU_HASH,
				p->entries[MAPSIZE_BIO_STARTS], cpus) +
		      map_bytes(w, MAPSIZE_COMMS, BPF_MAP_TYPE_LRU_HASH, p->entries[MAPSIZE_COMMS],
				cpus);
		if (lru <= p->mem_limit / 4 || p->entries[MAPSIZE_RQ_STARTS] <= MAPSIZE_STARTS_MIN)
			return;
		p->entries[MAPSIZE_RQ_STARTS] /= 2;
		p->entries[MAPSIZE_BIO_STARTS] /= 2;
		p->mem_bound = true;
		snprintf(p->why[MAPSIZE_RQ_STARTS], sizeof(p->why[0]),
			 "halved to fit 1/%d of MemTotal (%" PRIu64 " MiB for all maps)",
			 MAPSIZE_MEM_SHARE, p->mem_limit >> 20);
		snprintf(p->why[MAPSIZE_BIO_STARTS], sizeof(p->why[0]), "%s",
			 p->why[MAPSIZE_RQ_STARTS]);
	}
}

/* The most keys, up to `keys`, for which the histogram map and the others
 * (`others` bytes) fit the memory share, with the maps' overheads. */
static uint32_t fit_hists(const struct mapsize_want *w, uint32_t cpus, uint64_t others,
			  uint32_t keys, struct mapsize_plan *p)
{
	uint32_t lo = MAPSIZE_HIST_MIN_KEYS, hi = keys, mid, type = hist_type(p->shared);
	size_t at;

	if (!p->mem_limit || keys <= lo ||
	    others + map_bytes(w, MAPSIZE_HISTS, type, keys, cpus) <= p->mem_limit)
		return keys;
	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (others + map_bytes(w, MAPSIZE_HISTS, type, mid, cpus) <= p->mem_limit)
			lo = mid;
		else
			hi = mid - 1;
	}
	p->mem_bound = true;
	at = strlen(p->why[MAPSIZE_HISTS]);
	snprintf(p->why[MAPSIZE_HISTS] + at, sizeof(p->why[0]) - at,
		 "; %u fit 1/%d of MemTotal with the other maps (%d at least)", lo,
		 MAPSIZE_MEM_SHARE, MAPSIZE_HIST_MIN_KEYS);
	return lo;
}

/*
 * The histogram map: its budget (less what the memory share leaves, on a
 * small host) decides per-CPU or shared values and how many keys fit;
 * keyed by workload under a cap, the keys are what the cap needs, twice,
 * when that is fewer.
 */
static void size_hists(const struct mapsize_host *h, const struct mapsize_want *w, uint32_t cpus,
		       struct mapsize_plan *p)
{
	uint64_t budget = w->hist_budget, others = 0, need, want;
	uint32_t value = w->value_size[MAPSIZE_HISTS], keys;
	char *why = p->why[MAPSIZE_HISTS];
	size_t len = sizeof(p->why[0]);
	int at;

	for (int m = MAPSIZE_RQ_STARTS; m < MAPSIZE_COUNT; m++)
		others += map_bytes(w, m, BPF_MAP_TYPE_LRU_HASH, p->entries[m], cpus);
	others += p->restamp_bytes;
	if (p->mem_limit && budget > (p->mem_limit > others ? p->mem_limit - others : 0)) {
		budget = p->mem_limit > others ? p->mem_limit - others : 0;
		p->mem_bound = true;
	}
	p->shared = w->key_workload || budget_keys(budget, cpus, value) < MAPSIZE_MIN_PERCPU_KEYS;
	keys = budget_keys(budget, p->shared ? 1 : cpus, value);
	at = snprintf(why, len, "%s values: %.1f MiB%s / (%u x %u B) = %u keys (at most %d)",
		      p->shared ? "shared" : "per-CPU", (double)budget / (1 << 20),
		      budget < w->hist_budget ? " (what 1/32 of MemTotal leaves)" : " budget",
		      p->shared ? 1 : cpus, value, keys, MAPSIZE_HIST_MAX_KEYS);
	if (w->key_workload && w->workloads) {
		need = ((uint64_t)w->workloads + 1) *
		       (h->disks < MAPSIZE_DISKS_PER_WORKLOAD ? (h->disks ? h->disks : 1)
							      : MAPSIZE_DISKS_PER_WORKLOAD) *
		       MAPSIZE_OPS * (w->key_size_class ? MAPSIZE_SIZE_CLASSES : 1);
		want = (2 * need + MAPSIZE_HIST_STEP - 1) / MAPSIZE_HIST_STEP * MAPSIZE_HIST_STEP;
		if (want < keys)
			keys = (uint32_t)want;
		if (at > 0 && (size_t)at < len)
			snprintf(why + at, len - (size_t)at,
				 "; the workload cap needs %" PRIu64
				 " ((%u + 1) x disks x ops%s): %s",
				 need, w->workloads, w->key_size_class ? " x size classes" : "",
				 keys == want ? "twice that, in 1024s" : "more than fit");
	}
	p->entries[MAPSIZE_HISTS] = fit_hists(w, cpus, others, keys, p);
}

/* The dense rows' share of the histogram's keys (mapsize.h); none when
 * keys are more than disk and op, or the operator sized the map. */
static void size_rows(const struct mapsize_want *w, struct mapsize_plan *p)
{
	uint32_t keys = p->entries[MAPSIZE_HISTS], rows = keys / MAPSIZE_ROWS_SHARE;
	size_t at = strlen(p->why[MAPSIZE_HISTS]);

	p->rows = 0;
	if (!w->dense_rows || w->set[MAPSIZE_HISTS] || !rows)
		return;
	p->rows = rows < MAPSIZE_ROWS_MAX ? rows : MAPSIZE_ROWS_MAX;
	p->entries[MAPSIZE_HISTS] = keys - p->rows;
	snprintf(p->why[MAPSIZE_HISTS] + at, sizeof(p->why[0]) - at,
		 "; %u of them as dense rows (keys by disk and op)", p->rows);
}

void mapsize_plan(const struct mapsize_host *h, const struct mapsize_want *w,
		  struct mapsize_plan *out)
{
	uint32_t cpus = h->cpus ? h->cpus : 1;

	memset(out, 0, sizeof(*out));
	out->mem_limit = h->mem_bytes / MAPSIZE_MEM_SHARE;
	size_starts(h, cpus, out);
	size_restamps(h, w, out);
	size_comms(w, cpus, out);
	if (out->mem_limit)
		fit_starts(w, cpus, out);
	size_hists(h, w, cpus, out);
	size_rows(w, out);
	for (int m = 0; m < MAPSIZE_COUNT; m++) {
		if (w->set[m]) {
			snprintf(out->why[m], sizeof(out->why[0]),
				 "set (--bpf.map-size or bpf_map_sizes); the host's plan: %u",
				 out->entries[m]);
			out->entries[m] = w->set[m];
			out->set[m] = true;
		}
		out->bytes[m] = map_bytes(
		    w, m, m == MAPSIZE_HISTS ? hist_type(out->shared) : BPF_MAP_TYPE_LRU_HASH,
		    out->entries[m], cpus);
	}
}

int mapsize_parse(const char *spec, uint32_t set[MAPSIZE_COUNT], char *err, size_t len)
{
	char name[32], *end;
	unsigned long n;
	size_t k;
	int m;

	if (!spec || !*spec)
		goto bad;
	for (const char *p = spec; *p; p = *end ? end + 1 : end) {
		k = strcspn(p, "=,");
		if (p[k] != '=' || !k || k >= sizeof(name))
			goto bad;
		memcpy(name, p, k);
		name[k] = '\0';
		m = mapsize_from_name(name);
		if (m < 0) {
			snprintf(err, len,
				 "unknown map '%s' (known: hists, rq_starts, bio_starts, comms)",
				 name);
			return -EINVAL;
		}
		errno = 0;
		n = strtoul(p + k + 1, &end, 10);
		if (p[k + 1] < '0' || p[k + 1] > '9' || errno || (*end && *end != ',') || !n ||
		    n > MAPSIZE_SET_MAX) {
			snprintf(err, len, "%s: entries must be a number from 1 to %u", name,
				 MAPSIZE_SET_MAX);
			return -EINVAL;
		}
		if (*end && !end[1])
			goto bad; /* a trailing comma */
		set[m] = (uint32_t)n;
	}
	return 0;
bad:
	snprintf(err, len, "'%s': want MAP=ENTRIES[,MAP=ENTRIES...]", spec ? spec : "");
	return -EINVAL;
}

/* MemTotal in bytes, 0 if unreadable. */
static uint64_t mem_total(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	char line[128];
	unsigned long long kib = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib * 1024;
}

int mapsize_host_read(struct mapsize_host *h, uint32_t ncpus)
{
	int rc;

	memset(h, 0, sizeof(*h));
	h->cpus = ncpus;
	h->mem_bytes = mem_total();
	rc = disks_inflight(&h->disks, &h->inflight);
	if (!h->mem_bytes && !rc)
		rc = -ENOENT;
	return rc;
}

bool mapsize_fill_warn(bool *warned, uint64_t entries, uint64_t capacity)
{
	if (!capacity)
		return false;
	if (*warned) {
		if (entries * 100 < capacity * MAPSIZE_REARM_PCT)
			*warned = false;
		return false;
	}
	if (entries * 100 >= capacity * MAPSIZE_WARN_PCT) {
		*warned = true;
		return true;
	}
	return false;
}
