/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * disklife.h - disks that come and go under `iolat serve`.
 *
 * The collector keys its series by disk number (dev_t). A disk that goes
 * away (a loop device detached or removed, a disk unplugged, a medium
 * ejected) would leave its keys in the kernel map for good and its series
 * in the output forever. So at each maintenance pass (exporter_maintain: before
 * every scrape, and on the daemon's timer), every disk whose completions
 * did not change since the previous pass is looked up in sysfs; one that
 * is gone (no such number, or a size of 0) has its kernel keys moved to
 * user space (the `retire` op), where they still add to its series: a disk
 * that comes back under the same number and name continues its series, and
 * no counter goes backwards. A gone disk whose series did not change for
 * `expire_s` leaves the output (the `drop` op forgets its counts; if it
 * comes back later, its series start again from 0, as after a restart). A
 * gone disk whose number a disk of another name has taken is dropped at
 * once, in the pass before the newcomer's first scrape, so its counts never
 * show under the newcomer's name (`renamed` tells the name cache).
 *
 * The ops are the collector's (collector_retire_disk, collector_drop_disk)
 * in the exporter, fakes in the unit tests. Not thread-safe: the exporter
 * serialises its maintenance and renders.
 */
#ifndef IOLAT_DISKLIFE_H
#define IOLAT_DISKLIFE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/snapshot.h"

struct disklife_ops {
	void *ctx;
	/* Moves disk dev's kernel keys to user space: keys moved, or -errno. */
	int (*retire)(void *ctx, uint32_t dev);
	/* Forgets every count of disk dev. 0 or -errno. */
	int (*drop)(void *ctx, uint32_t dev);
	/* Another disk has number dev now (optional). */
	void (*renamed)(void *ctx, uint32_t dev);
};

struct disklife;

/* sys_dev_block: /sys/dev/block, or a directory laid out like it. */
struct disklife *disklife_new(const char *sys_dev_block, const struct disklife_ops *ops);
void disklife_free(struct disklife *d);

/*
 * Before the pass reads the collector: drops gone disks whose number a
 * disk of another name has now. 0 or -errno.
 */
int disklife_check(struct disklife *d);

/*
 * On the pass's snapshot (collector_read): notes which disks' completions
 * changed since the previous pass, retires the keys of disks found gone,
 * drops gone ones unchanged for expire_s seconds. 0 or -errno.
 */
int disklife_prune(struct disklife *d, const struct snapshot *snap, time_t now,
		   unsigned int expire_s);

struct disklife_stats {
	size_t disks;	  /* disks with series now */
	size_t gone;	  /* of those, gone: series kept until they expire */
	uint64_t retired; /* times a gone disk's kernel keys moved to user space */
	uint64_t expired; /* gone disks whose series left the output */
};
void disklife_stats(const struct disklife *d, struct disklife_stats *out);

/* Calls fn for each gone disk: its number, its name ("" if never known)
 * and when its series last changed (they expire expire_s after that). */
typedef void (*disklife_gone_fn)(void *ctx, uint32_t dev, const char *name, time_t changed);
void disklife_each_gone(const struct disklife *d, disklife_gone_fn fn, void *ctx);

#endif /* IOLAT_DISKLIFE_H */
