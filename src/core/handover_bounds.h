/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * handover_bounds.h - the slot bounds a pinned collector counts at, and
 * where each of its slots goes in ours (handover.h).
 *
 * A collector's slots are laid at its start (core/buckets.h): by default
 * the fixed bounds, plus serve's configured classic bounds. A collector of
 * other settings or another build may have laid them otherwise, so what it
 * counted in its slot i is not what ours counts in slot i: its counts are
 * moved to our slot that holds its slot's upper bound. Where its bounds are
 * ours too (the defaults, the configured classic bounds both had) that is
 * exact; a slot of its that spans one of our new bounds lands above it.
 */
#ifndef IOLAT_HANDOVER_BOUNDS_H
#define IOLAT_HANDOVER_BOUNDS_H

#include <stdint.h>

#include "core/buckets.h"
#include "iolat.h"

/* Where each of its slots goes in ours, per table. */
struct handover_slot_map {
	uint16_t lat[IOLAT_LAT_SLOTS];
	uint16_t size[IOLAT_SIZE_SLOTS];
};

/*
 * Reads the bounds the program behind a pinned link counts at, from its
 * read-only data (the map libbpf names OBJ.rodata, whose BTF says where
 * lat_bounds and size_bounds lie). 0; -ENOENT if the program has no such
 * data or the arrays are not of our sizes; or another -errno.
 */
int handover_bounds_read(int link_fd, uint64_t lat[IOLAT_LAT_SLOTS],
			 uint64_t size[IOLAT_SIZE_SLOTS]);

/* The slot map from its bounds to our tables. */
void handover_bounds_map(struct handover_slot_map *m, const uint64_t lat[IOLAT_LAT_SLOTS],
			 const uint64_t size[IOLAT_SIZE_SLOTS], const struct bucket_table *our_lat,
			 const struct bucket_table *our_size);

/* Moves a series' slot counts (a handed-over change) to our slots. */
void handover_bounds_apply(const struct handover_slot_map *m, struct iolat_val *v);

#endif
