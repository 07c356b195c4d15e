/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * exporter_kstat.h - the kernel's own count of completed I/O beside
 * iolat's, per disk and op, and the difference: what iolat did not see.
 *
 * At start and at each maintenance pass (never at a scrape) every disk in
 * /sys/block with a medium is noted; at a pass, a disk met for the first
 * time gets a baseline: the
 * kernel's counts (/sys/block/X/stat, since the disk was made) and iolat's
 * (since the collector attached) at that one moment. A scrape then reads
 * both again and exports
 *   iolat_block_kernel_completed_total{device,op}  the kernel's count, as is;
 *   iolat_block_unseen_completions{device,op}     (kernel now - kernel at the
 *     baseline) - (iolat now - iolat at the baseline).
 * The baseline is taken again, so the difference starts from 0, whenever
 * it could not hold: the disk left /sys/block or lost its medium, its number
 * changed, either count went down (a disk made anew, iolat's counts dropped
 * when a gone disk expired), queue/iostats was turned on or off, and in a
 * new process (after a restart or a handover: it is not saved).
 *
 * Ops are the kernel's groups: read; write (iolat's write and write_zeroes);
 * discard; flush. iolat's "other" ops (zone management, secure erase) have
 * no group of their own in the kernel and are left out of the difference.
 * With queue/iostats off the kernel keeps no read, write or discard counts:
 * those differences are not exported then (flushes are counted anyway).
 *
 * The disks noted are also the ones whose block families get zero series
 * (exporter_kstat_devs), so an idle disk differs from one not watched.
 */
#ifndef IOLAT_EXPORTER_KSTAT_H
#define IOLAT_EXPORTER_KSTAT_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"
#include "metrics/metrics.h"

struct exporter_kstat;

/* sys_block: /sys/block, or a directory laid out like it (tests). */
struct exporter_kstat *exporter_kstat_new(const char *sys_block);
void exporter_kstat_free(struct exporter_kstat *k);

/* The maintenance pass's part: notes the disks, takes the baselines that
 * are missing or no longer hold, against snap (the collector's series after
 * the pass's fold). The stat lines are read after that fold, so a
 * completion in between is in the kernel's baseline and not iolat's: the
 * difference is then below the truth by that much for good, never above.
 * 0 or -ENOMEM. */
int exporter_kstat_pass(struct exporter_kstat *k, const struct snapshot *snap);

/*
 * The scrape's part, in two steps: the kernel's counts read first
 * (exporter_kstat_sample, just before the render peeks at the collector),
 * then both families, iolat's counts taken from snap (the render's). Read
 * in that order, I/O completing in between counts in iolat's and not yet
 * in the kernel's: the difference can dip below 0 for a scrape, never
 * rise above it, so a rule on "> 0" sees misses only. Reads sysfs,
 * writes nothing but its own memory.
 */
void exporter_kstat_sample(struct exporter_kstat *k);

int exporter_kstat_metrics(const struct exporter_kstat *k, const struct snapshot *snap,
			   struct metric_set *set);

/* The disks the last pass noted, by number, ascending (*n of them). */
const uint32_t *exporter_kstat_devs(const struct exporter_kstat *k, size_t *n);

#endif
