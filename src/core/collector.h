/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * collector.h - loads, attaches and reads the kernel collector
 * (bpf/iolat.bpf.c). Every command that shows block-I/O latency goes
 * through here, so there is one map -> series path.
 */
#ifndef IOLAT_COLLECTOR_H
#define IOLAT_COLLECTOR_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/attach.h"
#include "core/buckets.h"
#include "core/mapmem.h"
#include "core/mapsize.h"
#include "core/probe.h"
#include "core/snapshot.h"
#include "iolat.h"
#include <linux/types.h>

/* The histogram map's kernel memory for the commands (hist, top, check);
 * serve, with a key per workload, takes COLLECTOR_SERVE_BUDGET. */
#define COLLECTOR_MAP_BUDGET (16ULL << 20)
#define COLLECTOR_SERVE_BUDGET (64ULL << 20)

/*
 * The kernel's counters are 32-bit (struct iolat_kval); the collector folds
 * them into its 64-bit series at every read and, without reads, at least
 * this often, from collector_maintain (collector_wait wakes for it).
 */
#define COLLECTOR_FOLD_S 60

struct collector_opts {
	uint32_t filter_dev;	 /* 0: all disks */
	uint64_t filter_cgroup;	 /* 0: all cgroups */
	int filter_cgroup_level; /* depth of filter_cgroup below its root */
	bool key_flags;
	bool key_cgroup;
	bool key_size_class;
	enum attach_mode attach;
	bool force_rq_map; /* ignore struct request times (testing) */
	bool no_restamp;   /* keep the plug's cached stamps (testing: IOLAT_TEST_NO_RESTAMP) */
	/* Testing: the restamps table cut to this many slots, so that most
	 * requests find none (IOLAT_TEST_RESTAMP_SLOTS); 0: whole. */
	uint32_t test_restamp_slots;
	/* Testing: the fold reads key by key, as without batch lookups
	 * (IOLAT_FORCE_NO_BATCH); its batches start at this many keys, as on a
	 * host of ~200 CPUs (IOLAT_FOLD_BATCH_KEYS); 0: as the buffer holds. */
	bool test_fold_no_batch;
	uint32_t test_fold_batch_keys;
	uint32_t test_rows;	    /* testing: dense rows, where keys allow them; 0: planned */
	bool test_shared_values;    /* testing: shared values, as on a host of many CPUs */
	unsigned int disk_rescan_s; /* look for new bio-based disks this often; 0: 1 s */
	const uint64_t *extra_lat_bounds; /* more latency bounds (ns) */
	size_t nextra_lat_bounds;
	const uint64_t *extra_size_bounds; /* more size bounds (bytes) */
	size_t nextra_size_bounds;
	/* Kernel memory for the histogram map, which is preallocated: its
	 * keys are as many as fit. 0: COLLECTOR_MAP_BUDGET. */
	uint64_t map_budget;
	/* Keyed by workload: the cap on workloads (serve's workloads.max),
	 * which sizes the histogram map when fewer keys than the budget's
	 * do; 0: the budget alone. */
	uint32_t workloads;
	/* The operator's map sizes (mapsize.h), 0: chosen from the host. */
	uint32_t map_size[MAPSIZE_COUNT];
	/* The host to size the maps for; NULL: this one (mapsize_host_read). */
	const struct mapsize_host *host;
	bool key_process; /* key by submitting process (IOLAT_KEY_PROCESS) */
	/* Keep the programs and maps in bpffs under this instance name
	 * (core/pin.h), and adopt what an earlier run of the same collector
	 * left there, so that a restart loses no I/O; NULL: neither. */
	const char *pin_instance;
	/* With pin_instance: take over (or adopt) what is pinned there, but
	 * pin nothing for a next run: close removes the pins and the state. */
	bool unpin_at_close;
	/*
	 * With pin_instance (and not unpin_at_close): the lease, in ns. The
	 * collector counts I/O that begins before its lease ends; each
	 * collector_maintain and collector_close move the end to now + lease.
	 * So a collector left pinned by a run that stopped or died counts on
	 * for at most this long, for a successor to take it over without a gap;
	 * after that its programs count nothing (at about the cost of an empty
	 * program) and the next run that finds it starts afresh and removes it.
	 * The caller must call collector_maintain at least every lease / 3.
	 * 0: no lease (the collector counts on until removed).
	 */
	uint64_t lease_ns;
	/* With pin_instance: how long the programs of a collector taken over
	 * count on after the switch (handover.h); 0: HANDOVER_GRACE_S. */
	unsigned int handover_grace_s;
	/* Testing only (collector_test_knobs): map capacities by map
	 * (mapsize.h), over the sizes chosen and outside the plan; 0: as
	 * chosen. */
	uint32_t test_max_entries[MAPSIZE_COUNT];
};

/*
 * Testing only: the knobs tests set in the environment, which a command
 * reads (env is getenv: the library reads no environment of its own) and
 * this applies to o: IOLAT_FORCE_RQ_MAP=1 makes every request look
 * unstamped (force_rq_map), IOLAT_TEST_DISK=NAME keeps the collector to one
 * disk (filter_dev, so a test's counts are its own on a shared machine),
 * IOLAT_TEST_MAX_ENTRIES=MAP=N[,MAP=N...] sets map capacities
 * (test_max_entries, so a test can fill one), IOLAT_TEST_HANDOVER_GRACE_S
 * (1 to 60) shortens a handover (handover_grace_s), IOLAT_TEST_NO_RESTAMP=1
 * keeps the plug clock's cached stamps (no_restamp), IOLAT_TEST_RESTAMP_SLOTS
 * (1 to 8192) cuts the restamps table (test_restamp_slots),
 * IOLAT_FORCE_NO_BATCH (set) folds key by key (test_fold_no_batch) and
 * IOLAT_FOLD_BATCH_KEYS (1 or more) starts the fold's batches at that many
 * keys (test_fold_batch_keys), IOLAT_TEST_ROWS (1 to 64) gives the dense
 * rows that many (test_rows, so that a test runs out of them) and
 * IOLAT_TEST_SHARED_VALUES=1 counts in shared values, atomically, as on a
 * host of many CPUs (test_shared_values). 0, or -errno
 * with the variable and what is wrong in err.
 */
int collector_test_knobs(struct collector_opts *o, char *(*env)(const char *name), char *err,
			 size_t len);

struct collector;

/*
 * Opens, loads and attaches. The mode ATTACH_AUTO tries tp_btf and falls
 * back to raw_tp if that fails to load or attach (a test's forced mode
 * comes in opts->attach: attach_forced; its other knobs, from
 * collector_test_knobs). Returns 0 or -errno, with a reason in err.
 */
int collector_open(struct collector **out, const struct collector_opts *opts,
		   const struct probe_result *probe, char *err, size_t errlen);

/* Closes. A pinned collector (pin_instance) stays attached, for the next
 * run to adopt (pin_instance_remove lets it go). */
void collector_close(struct collector *c);

/* What the collector's pins are, with pin_instance. */
struct collector_pins {
	bool pinned;	    /* kept in bpffs: a restart adopts it */
	bool adopted;	    /* this run took over what an earlier one left */
	char dir[256];	    /* where */
	char replaced[256]; /* pins of another collector found and removed, and why;
			     * empty if none */
	/* Took over another build's or settings' collector (handover.h):
	 * its programs count what began before the switch, for a grace. */
	bool took_over;
	uint32_t took_over_layout; /* its map layout */
	unsigned int grace_s;	   /* how long its programs count on after the switch */
	bool switch_late;	   /* the switch time passed before both windows
				    * were set: some I/O may be counted twice */
	uint64_t created_ns;	   /* CLOCK_REALTIME when its maps were made */
	uint32_t adoptions;	   /* how many runs took them over */
	char made_by[48];	   /* the iolat version that made them */
	char name[64];		   /* the instance */
	/* Adopted: whether the series the last run saved were read
	 * (seriesfile.h), and if not, why (empty if they were). */
	bool restored;
	char not_restored[96];
};
void collector_pins(const struct collector *c, struct collector_pins *out);

/* When the collector's maps were made (CLOCK_REALTIME ns): at this run's
 * load, or an adopted collector's first. Its counts begin there. */
uint64_t collector_started_ns(const struct collector *c);

enum attach_mode collector_mode(const struct collector *c);
bool collector_rq_map_forced(const struct collector *c);
bool collector_keyed_by_cgroup(const struct collector *c);
bool collector_keyed_by_process(const struct collector *c);

/* The command name the kernel saw for process tgid (keyed by process). */
int collector_comm(struct collector *c, uint32_t tgid, char *out, size_t len);
bool collector_bio_attached(const struct collector *c);

/* The histogram map in use (preallocated): how its values and memory are
 * laid out. */
struct hist_map_info {
	const char *name;   /* hists (per-CPU values) or hists_shared */
	uint32_t keys;	    /* its capacity */
	int values_per_key; /* CPUs, or 1 when shared */
	size_t value_bytes; /* one value */
};
void collector_hist_map(const struct collector *c, struct hist_map_info *out);
bool collector_fallback_attached(const struct collector *c);

/* The kernel caches its clock in the plug (6.9+), so a request's stamps
 * may be one time, and the collector does not replace them by its own
 * (bpf/iolat.bpf.c, "Restamping"; off only by a test knob): its views there
 * are untrue, and the commands say so. */
bool collector_keeps_cached_stamps(const struct collector *c);

/*
 * The collector's maps as collector_open would size them with opts on host
 * h (opts->host is not used), without loading anything (no privileges
 * needed): their definitions in out[0..max), in *hist which of them is the
 * histogram map in use (a per-CPU hash, or a hash of shared values), and
 * the sizes chosen, with why, in *plan. Returns how many, or -errno.
 * mapmem_bytes() gives each one's kernel memory.
 */
int collector_plan(const struct collector_opts *opts, const struct mapsize_host *h,
		   struct map_def *out, int max, int *hist, struct mapsize_plan *plan);

/* The sizes this collector's maps were given, and why (mapsize.h); an
 * IOLAT_TEST_MAX_ENTRIES size is not in it. */
void collector_sizes(const struct collector *c, struct mapsize_plan *out);

/*
 * Sleeps until the kernel asks for the fallback programs, a block device is
 * added or resized, collector_maintain's timed look for bio-based disks
 * (disk_rescan_s) or its fold of the kernel's counters (COLLECTOR_FOLD_S)
 * is due, a descriptor given to collector_wait_also is
 * readable, a signal arrives, or timeout_ms pass (-1: no limit), using no
 * CPU meanwhile. Then call collector_maintain.
 *
 * sigmask, if not NULL, is the signal mask while it sleeps (epoll_pwait):
 * a caller that blocks its stop signals around its check of them and lets
 * them in here cannot miss one that comes between the check and the sleep.
 * Returns 0 (also when a signal woke it) or -errno.
 */
int collector_wait(struct collector *c, int timeout_ms, const sigset_t *sigmask);

/* Makes collector_wait return when fd is readable as well (the caller's own
 * wake-ups); the caller drains it. 0 or -errno. */
int collector_wait_also(struct collector *c, int fd);

/*
 * Attaches programs that became needed since open (the request-map fallback
 * after an unstamped request, the bio layer when a bio-based disk appears),
 * and folds the kernel's counters in when that is due.
 * Call it after each collector_wait. Returns what it attached
 * (COLLECTOR_NOW_* bits, 0 for nothing) or -errno.
 */
#define COLLECTOR_NOW_FALLBACK 1
#define COLLECTOR_NOW_BIO 2
#define COLLECTOR_NOW_HANDED_OVER 4 /* the collector taken over is gone */
int collector_maintain(struct collector *c);

/* What a COLLECTOR_NOW_* bit means, in words for an operator's log. */
const char *collector_now_reason(int bit);
const struct bucket_table *collector_lat_table(const struct collector *c);
const struct bucket_table *collector_size_table(const struct collector *c);

/* Reads every series into snap (replacing its contents), a copy of its
 * own: a series per key. 0 or -errno. */
int collector_read(struct collector *c, struct snapshot *snap);

/*
 * The same series without a copy, for serve, whose maintenance pass moves
 * keys in and out of the kernel map and whose scrapes only read.
 *
 * collector_fold, the pass's: folds the kernel map into the collector's
 * series and, pinned, saves them to its series file when that is due (at
 * most every few seconds). 0 or -errno. collector_series is the
 * collector's own array, valid until the next call that changes the
 * collector. There a key may repeat: a disk that went and came back has its
 * live series and, apart, what it had counted when it went (collector_read
 * adds the two); a reader that sums series by their labels shows the same
 * totals.
 *
 * collector_peek, a scrape's: the series as a fold now would make them, in
 * out (the caller's, its memory reused from one peek to the next), without
 * changing the collector: no kernel map or file is written, and the
 * collector's series stay as the last fold left them (during a handover's
 * grace, what the collector taken over counted is folded from a copy of
 * its series too). The caller keeps
 * peeks apart from folds and other calls that change the collector (they
 * share a scratch buffer). 0 or -errno.
 */
int collector_fold(struct collector *c);
const struct snapshot *collector_series(const struct collector *c);
int collector_peek(struct collector *c, struct snapshot_store *out);

/*
 * Moves key k's values out of the kernel map into user space, under cgroup
 * id `into` (an id of COLLECTOR_CG_USER or above, which collector_read
 * returns alongside the live keys): so keys of cgroups that are gone stop
 * taking map space while their counts stay in every total. 0 or -errno.
 */
#define COLLECTOR_CG_USER (1ULL << 63) /* kernel cgroup ids never reach it */
int collector_retire(struct collector *c, const struct iolat_key *k, uint64_t into);

/* Drops key k from the kernel map, counts and all (a view of intervals
 * only, like top, has no use for a gone cgroup's totals). 0 or -errno. */
int collector_forget(struct collector *c, const struct iolat_key *k);

/*
 * A disk that is gone (detached, unplugged): moves every kernel map key of
 * disk dev to user space under the same key, so gone disks take no map
 * space; collector_read adds those values to the live series of the same
 * key (collector_series shows both), so a disk that comes back under its
 * number counts on from them.
 * Returns how many keys moved, or -errno.
 */
int collector_retire_disk(struct collector *c, uint32_t dev);

/* Forgets every count of disk dev: its kernel keys and every series kept
 * in user space for it (retired by disk or by cgroup). 0 or -errno. */
int collector_drop_disk(struct collector *c, uint32_t dev);

/* Merges the retired series of cgroup id `from` into `into`. 0 or -errno. */
int collector_refold(struct collector *c, uint64_t from, uint64_t into);

/* Collector-wide counters (enum iolat_stat), summed over CPUs. */
int collector_stats(struct collector *c, uint64_t out[IOLAT_STAT_COUNT]);

/* How far counter `stat` went since *seen (0 if it cannot be read now);
 * *seen becomes its value. For a command's per-interval count. */
uint64_t collector_stat_growth(struct collector *c, enum iolat_stat stat, uint64_t *seen);

/* Their names are names_stat's (core/names.h). */

struct map_stats;

/*
 * For a counter of I/O a full map could not hold (hist_map_full,
 * rq_map_full, bio_map_full): the map's name and capacity in *out (entries
 * left 0), what that I/O lost in *lost, and true. False for other counters.
 */
bool collector_stat_map(const struct collector *c, enum iolat_stat s, struct map_stats *out,
			const char **lost);

struct prog_stats {
	char name[32];
	uint64_t run_cnt, run_time_ns, recursion_misses; /* kernel BPF stats */
	/* What the program measured of itself (struct iolat_selfcost), summed
	 * over CPUs: always there, with or without the kernel's stats. */
	uint64_t self_runs, sampled_runs, sampled_ns;
};

/* Stats of the attached programs; returns how many were filled (<= max). */
int collector_prog_stats(struct collector *c, struct prog_stats *out, int max);

struct map_stats {
	char name[32];
	uint64_t entries, capacity;
};

/* Occupancy of the collector's maps whose size is chosen (mapsize.h), in
 * that order (the histogram map in use under its own name): entries
 * counted by walking the keys,
 * but the histogram map's, once folded, are its live series (its keys at
 * the last fold, less those taken out since). */
int collector_map_stats(struct collector *c, struct map_stats *out, int max);

#endif
