/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * uprog.h - loads a user's compiled CO-RE BPF object (.bpf.o), attaches its
 * programs by their SEC names, and reads its maps for `iolat serve`
 * (docs/userprogs.md). Library code: it never prints; every error is one
 * line in the caller's buffer.
 */
#ifndef IOLAT_UPROG_H
#define IOLAT_UPROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uprog/uconfig.h"

struct uprog;

/* How maps are read: the fastest way the kernel offers, or (tests and
 * bench/userprogs.sh compare them) a slower one forced. */
enum uprog_map_read {
	UPROG_READ_AUTO = 0, /* a map-element iterator, else batches, else keys */
	UPROG_READ_BATCH,    /* batches, else keys */
	UPROG_READ_KEYS,     /* get_next_key and lookup (arrays by index) */
};

/* The commands' IOLAT_MAP_READ (batch or keys; anything else is auto) and
 * IOLAT_FORCE_NO_BATCH (set: keys), either NULL when unset. */
enum uprog_map_read uprog_map_read_parse(const char *map_read, const char *force_no_batch);

/*
 * Opens, loads and attaches every program of a compiled BPF object by its
 * SEC name (libbpf's auto-attach: tracepoint/, raw_tracepoint/ or raw_tp/,
 * tp_btf/ ...); a SEC("perf_event") program named by one of the nperf perf
 * events goes on that event, on every CPU (uprog_perf.h). Its maps are
 * read as map_read says. Returns 0 and *out, or -errno with one line in
 * err: a missing or unreadable file, a file that is not a BPF object, a
 * program the verifier rejects (with the tail of the verifier's log), or a
 * program that cannot be auto-attached. On error nothing stays loaded or
 * attached.
 *
 * Not thread-safe: what libbpf says while it loads is captured through its
 * one, global print callback (core/libbpf_log.h).
 */
int uprog_open(const char *object_path, const struct uperf_conf *perf, size_t nperf,
	       enum uprog_map_read map_read, struct uprog **out, char *err, size_t errlen);

/* Detaches and unloads everything uprog_open made; NULL is fine. */
void uprog_close(struct uprog *p);

struct uprog_map {
	int fd;
	unsigned type; /* enum bpf_map_type */
	unsigned key_size, value_size, max_entries;
	bool percpu;	  /* values are per possible CPU: uprog_map_read sums them */
	const char *name; /* owned by the uprog */
};

/*
 * The named map (any type: a stack-trace map's fd too), or -ENOENT with
 * "map NAME not found in OBJECT (it has: a, b, c)" in err.
 */
int uprog_map(struct uprog *p, const char *name, struct uprog_map *m, char *err, size_t errlen);

/* Called once per entry; a nonzero return stops the walk. */
typedef int (*uprog_entry_fn)(void *arg, const void *key, uint64_t value);

/*
 * Calls fn for every entry of a map whose value is one u64 (value_size 8;
 * per-CPU values summed over the possible CPUs). A map is read through a
 * BPF map-element iterator (mapiter.h, Linux 5.9) where the kernel has
 * one, else with BPF_MAP_LOOKUP_BATCH, else with get_next_key and lookup
 * (arrays by index). Which method works is remembered per map. Returns 0,
 * fn's nonzero return, or -errno with err set.
 */
int uprog_map_read(struct uprog *p, const struct uprog_map *m, uprog_entry_fn fn, void *arg,
		   char *err, size_t errlen);

/* Up to max programs' names and SEC names (owned by the uprog); the count. */
size_t uprog_programs(struct uprog *p, const char **names, const char **secs, size_t max);

#endif /* IOLAT_UPROG_H */
