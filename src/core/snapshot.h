/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * snapshot.h - a set of series (key + values summed over CPUs), as read
 * from the collector's histogram map or kept in user space for keys the
 * kernel no longer holds.
 */
#ifndef IOLAT_SNAPSHOT_H
#define IOLAT_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/histo.h"
#include "iolat.h"
#include <linux/types.h>

/* One series: a key and its values summed over CPUs, cumulative. */
struct series {
	struct iolat_key key;
	struct iolat_val val;
	/* Where val's non-zero slots lie, as the fold that set val found them
	 * (histo_fold_spans); zeroed, not known: anything else that changes
	 * val zeroes them. */
	struct histo_span span[HISTO_SPANS];
};

struct snapshot {
	struct series *s;
	size_t n, cap;
};

void snapshot_free(struct snapshot *snap);

/* Appends a zeroed series with key k; NULL on allocation failure. */
struct series *snapshot_push(struct snapshot *snap, const struct iolat_key *k);

/* The series with this key, or NULL. Linear: for small snapshots. */
const struct series *snapshot_find(const struct snapshot *snap, const struct iolat_key *k);

/* Re-keys every series of cgroup `from` to cgroup `to`, merging with what
 * `to` already holds. 0 or -ENOMEM. */
int snapshot_refold(struct snapshot *snap, uint64_t from, uint64_t to);

/*
 * A hash index of a snapshot's keys, for whoever looks keys up in a large
 * snapshot over and over (the collector's folded series). It follows
 * pushes made through it; after any other change to the snapshot, clear it
 * (it rebuilds on the next use). Zeroed: empty.
 */
struct snapshot_index {
	uint32_t *slot; /* series index + 1, 0: empty; open addressing */
	size_t cap;	/* a power of two, at least twice the series indexed */
	size_t n;	/* series indexed */
};

/* The series with key k, appended (zeroed) if snap has none; NULL on
 * allocation failure. */
struct series *snapshot_index_get(struct snapshot *snap, struct snapshot_index *ix,
				  const struct iolat_key *k);

/*
 * Removes the series with key k through the index, adding its values into
 * `into` (if given): the last series takes its place, and the index follows
 * both moves, so removing many keys costs each one a lookup, not a scan and
 * a rebuild. Whether there was one. -ENOMEM is not possible once the index
 * is built; if it cannot be, this falls back to snapshot_take.
 */
bool snapshot_index_take(struct snapshot *snap, struct snapshot_index *ix,
			 const struct iolat_key *k, struct iolat_val *into);
void snapshot_index_clear(struct snapshot_index *ix);
void snapshot_index_free(struct snapshot_index *ix);

/*
 * Adds every series of src into the series of dst with the same key, or
 * appends a copy where dst has none: dst's keys stay unique if they were.
 * Linear in both sizes (a hash index of dst's keys). 0 or -ENOMEM.
 */
int snapshot_merge(struct snapshot *dst, const struct snapshot *src);

/* Removes the series with key k, adding its values into `into`. Whether
 * there was one. (Linear.) */
bool snapshot_take(struct snapshot *snap, const struct iolat_key *k, struct iolat_val *into);

/*
 * A collector's series in one array, so that a reader can take them all as
 * one snapshot, without a copy: first the live ones (one per kernel map
 * key, found through an index), then the kept ones (values taken out of the
 * kernel map: a gone disk's under their own keys, which may repeat a live
 * key when the disk came back, and retired keys under user-space cgroup
 * ids). Zeroed: empty.
 */
struct snapshot_store {
	struct snapshot all; /* live series in s[0, nlive), kept ones after */
	size_t nlive;
	struct snapshot_index live_ix;
};

void snapshot_store_free(struct snapshot_store *st);

/* Makes dst a copy of src, reusing dst's memory: its series (one block
 * copy) and an index rebuilt on dst's first lookup. 0 or -ENOMEM (dst is
 * then empty). */
int snapshot_store_copy(struct snapshot_store *dst, const struct snapshot_store *src);

/* The live series with key k, created zeroed if missing; NULL on allocation
 * failure. */
struct series *snapshot_store_live(struct snapshot_store *st, const struct iolat_key *k);

/* Removes the live series with key k, adding its values into `into` (if
 * given). Whether there was one. */
bool snapshot_store_unlive(struct snapshot_store *st, const struct iolat_key *k,
			   struct iolat_val *into);

/* Adds v into the kept series with key k, created if missing. 0 or -ENOMEM.
 * (Linear in the kept series.) */
int snapshot_store_keep(struct snapshot_store *st, const struct iolat_key *k,
			const struct iolat_val *v);

/* Removes the kept series with key k, adding its values into `into`.
 * Whether there was one. (Linear in the kept series.) */
bool snapshot_store_unkeep(struct snapshot_store *st, const struct iolat_key *k,
			   struct iolat_val *into);

/* The kept series as a snapshot of their own: to read, or to change in
 * place with snapshot_refold and snapshot_drop_dev (which only move series
 * within it); then snapshot_store_kept_done with it. */
struct snapshot snapshot_store_kept(const struct snapshot_store *st);
void snapshot_store_kept_done(struct snapshot_store *st, const struct snapshot *kept);

/* Removes every series of disk dev; how many there were. */
size_t snapshot_drop_dev(struct snapshot *snap, uint32_t dev);

/* Appends a copy of every series of src to dst. 0 or -ENOMEM. */
int snapshot_append(struct snapshot *dst, const struct snapshot *src);

/*
 * Calls fn for every series of `now` that completed I/O since `before`,
 * with the interval's delta (histo_sub). Stops at fn's first non-zero return
 * and returns it; 0 when done, -ENOMEM without room for the delta.
 */
int snapshot_deltas(const struct snapshot *now, const struct snapshot *before,
		    int (*fn)(void *ctx, const struct iolat_key *k, const struct iolat_val *delta),
		    void *ctx);

#endif
