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

#include "iolat.h"
#include <linux/types.h>

/* One series: a key and its values summed over CPUs, cumulative. */
struct series {
	struct iolat_key key;
	struct iolat_val val;
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

/* Adds v into the series with key k, created if missing. 0 or -ENOMEM. */
int snapshot_add(struct snapshot *snap, const struct iolat_key *k, const struct iolat_val *v);

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
