/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mapsize.h - how many entries each of the collector's kernel maps gets,
 * chosen once at start from what the host has: its CPUs, its disks and
 * the requests they can hold at once, the workload cap and its memory.
 *
 * mapsize_plan is pure (a host description in, sizes and the reason for
 * each out), so `iolat check --memory` plans a host iolat has not run on
 * with the same code the collector loads with. The plan depends on nothing
 * that changes while the host runs (no free memory, no load): a restart on
 * the same host sizes the maps the same, which serve --handover needs to
 * adopt them. mapsize_host_read is the one function that reads the host.
 */
#ifndef IOLAT_MAPSIZE_H
#define IOLAT_MAPSIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The maps whose size is chosen; the others (counters, the wake-up ring,
 * global data) are fixed by what they hold. */
enum mapsize_map {
	MAPSIZE_HISTS,	    /* the histogram map in use: hists or hists_shared */
	MAPSIZE_RQ_STARTS,  /* requests' start times, where the kernel keeps none */
	MAPSIZE_BIO_STARTS, /* bios' start times, on bio-based disks */
	MAPSIZE_COMMS,	    /* submitters' command names, keyed by process */
	MAPSIZE_COUNT
};

/*
 * The histogram map: with one value per key (5 KiB), preallocated, the
 * budget bounds it; per-CPU values are used only while the budget still
 * holds MAPSIZE_MIN_PERCPU_KEYS keys (iolat.bpf.c says why both exist).
 */
#define MAPSIZE_HIST_MAX_KEYS 8192
#define MAPSIZE_HIST_MIN_KEYS 64 /* even where memory is short */
#define MAPSIZE_MIN_PERCPU_KEYS 256
/* Keyed by workload, the keys a workload takes: on each disk of its stack
 * it crosses (a VM's volume and the disk under it: 2), by operation (read,
 * write, flush: 3); the keys are twice what the cap needs, in steps of
 * MAPSIZE_HIST_STEP, at least MAPSIZE_HIST_STEP. */
#define MAPSIZE_OPS 3
#define MAPSIZE_DISKS_PER_WORKLOAD 2
#define MAPSIZE_SIZE_CLASSES 5
#define MAPSIZE_HIST_STEP 1024
/* Keyed by disk and op only, the histogram's budget holds the dense rows
 * too (bpf/iolat.bpf.c): an eighth of the keys it fits, at most this many
 * (a disk takes a row per op it does), taken from the hash's keys. */
#define MAPSIZE_ROWS_MAX 64
#define MAPSIZE_ROWS_SHARE 8
/* LRU hashes (rq_starts, bio_starts, comms): each CPU keeps up to this
 * many free entries of its own (LOCAL_FREE_TARGET, kernel/bpf/bpf_lru_list.c),
 * which the other CPUs cannot use, so they are added to what is needed. */
#define MAPSIZE_LRU_PER_CPU 128
/* Start-time maps: a power of two within these. */
#define MAPSIZE_STARTS_MIN 4096
#define MAPSIZE_STARTS_MAX 65536
#define MAPSIZE_COMMS_MIN 4096
/* The restamps table (bpf/iolat.bpf.c, "Restamping"), direct-mapped by a
 * hash of the request: a request loses its record when another in flight
 * takes the slot, so the slots are this many times the requests the disks
 * can hold at once (a request's chance of losing it: at most 1 in this,
 * with every tag of every disk busy), a power of two within these. */
#define MAPSIZE_RESTAMPS_PER_REQUEST 8
#define MAPSIZE_RESTAMPS_MIN 8192
#define MAPSIZE_RESTAMPS_MAX 262144
/* Requests a described host's disk holds at once when not told (check). */
#define MAPSIZE_DEFAULT_QUEUE 1024
/* serve's workloads.max (its label sets) by default and at most; check's
 * --workloads plans for the same. */
#define MAPSIZE_DEFAULT_WORKLOADS 500
#define MAPSIZE_MAX_WORKLOADS 100000
/* Never more than this fraction of MemTotal for all the maps together. */
#define MAPSIZE_MEM_SHARE 32
/* An override's range (--bpf.map-size). */
#define MAPSIZE_SET_MAX (1u << 24)

/* What the host has. */
struct mapsize_host {
	uint32_t cpus;	    /* possible CPUs */
	uint32_t disks;	    /* in /sys/block */
	uint64_t inflight;  /* requests its request-based disks hold at once:
			     * the sum of nr_requests x hardware queues */
	uint64_t mem_bytes; /* MemTotal; 0: unknown (no memory bound) */
};

/* What the command asks of the maps. */
struct mapsize_want {
	uint64_t hist_budget;	     /* bytes for the histogram map */
	bool key_workload;	     /* keys carry a cgroup or a process: shared values */
	bool key_process;	     /* comms is used */
	bool key_size_class;	     /* keys carry a size class */
	bool dense_rows;	     /* keys are disk and op only: rows by queue id */
	uint32_t workloads;	     /* keyed by workload, the cap (serve's workloads.max);
				      * 0: no cap, the budget alone sizes the keys */
	uint32_t set[MAPSIZE_COUNT]; /* the operator's sizes; 0: choose */
	/* Each map's key and value bytes (the BPF object's), for the memory. */
	uint32_t key_size[MAPSIZE_COUNT], value_size[MAPSIZE_COUNT];
	uint32_t restamp_value_size; /* a restamps slot's bytes */
};

struct mapsize_plan {
	uint32_t entries[MAPSIZE_COUNT];
	bool shared;		/* histogram values: one per key, not per CPU */
	uint32_t rows;		/* dense rows (rows, rows_shared); 0: unused */
	uint32_t restamp_slots; /* the restamps table, where it is used */
	uint64_t restamp_bytes; /* its kernel memory */
	char restamp_why[160];
	uint64_t bytes[MAPSIZE_COUNT]; /* each one's kernel memory (mapmem) */
	char why[MAPSIZE_COUNT][320];  /* how each size was reached, in words */
	bool set[MAPSIZE_COUNT];       /* the operator's size */
	uint64_t mem_limit;	       /* the maps' share of MemTotal; 0: none */
	bool mem_bound;		       /* that share made a map smaller */
};

/* "hists", "rq_starts", "bio_starts", "comms". */
const char *mapsize_name(enum mapsize_map m);

/* The map a name means (hists_shared is hists), or -1. */
int mapsize_from_name(const char *name);

/* Sizes every map for host h as w asks. Always succeeds. */
void mapsize_plan(const struct mapsize_host *h, const struct mapsize_want *w,
		  struct mapsize_plan *out);

/*
 * Reads "MAP=ENTRIES[,MAP=ENTRIES...]" into set[] (entries from 1 to
 * MAPSIZE_SET_MAX; later ones win). 0, or -EINVAL with what is wrong in err.
 */
int mapsize_parse(const char *spec, uint32_t set[MAPSIZE_COUNT], char *err, size_t len);

/*
 * This host: the disks in /sys/block (and what each request-based one holds
 * at once), MemTotal, and ncpus. 0 or -errno (then h has what it could
 * read: disks 0 and no memory bound if those failed).
 */
int mapsize_host_read(struct mapsize_host *h, uint32_t ncpus);

/*
 * A map's fill, seen at intervals: true when it is time to warn, the first
 * time it reaches MAPSIZE_WARN_PCT % of its capacity. Then *warned stays
 * set until it falls below MAPSIZE_REARM_PCT %, so a map that hovers at
 * the line warns once, and one that empties and fills again warns again.
 */
#define MAPSIZE_WARN_PCT 90
#define MAPSIZE_REARM_PCT 80
bool mapsize_fill_warn(bool *warned, uint64_t entries, uint64_t capacity);

#endif
