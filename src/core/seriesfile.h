/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * seriesfile.h - a collector's series saved to a file, for the next run
 * that adopts its pinned maps (core/pin.h) to continue from.
 *
 * The kernel's counters are 32-bit; the 64-bit series user space folds
 * them into (histo_fold) exist only in user space, as do the kept series
 * (retired keys, gone disks). Saved at every fold and at stop, they let a
 * restarted iolat go on from the last save: the kernel counted on in the
 * meantime, and the fold adds what it did, exactly, as long as no counter
 * advanced 2^32 since. The file names the pins it belongs to (their
 * identity and creation time); one that does not match is not read. With
 * the series go the collector-wide counters (enum iolat_stat) that earlier
 * collectors handed over (handover.h): the kernel's own start from zero.
 */
#ifndef IOLAT_SERIESFILE_H
#define IOLAT_SERIESFILE_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"
#include "iolat.h"

struct seriesfile_owner {
	uint64_t identity;   /* pin_control.identity */
	uint64_t created_ns; /* pin_control.created_ns */
};

/* Writes the store's series and stats to path (util/atomicfile.h: a
 * reader never sees half of it, a failure leaves the old file). 0 or
 * -errno. */
int seriesfile_write(const char *path, const struct seriesfile_owner *owner,
		     const struct snapshot_store *st, const uint64_t stats[IOLAT_STAT_COUNT]);

/* Reads path into an empty store, its live and kept series as saved, and
 * the stats into stats. 0; -ENOENT without a file; -ESTALE if it belongs
 * to other pins; -EPROTO if it is not a series file of this layout; or
 * another -errno (then stats are left as they were). */
int seriesfile_read(const char *path, const struct seriesfile_owner *owner,
		    struct snapshot_store *st, uint64_t stats[IOLAT_STAT_COUNT]);

#endif /* IOLAT_SERIESFILE_H */
