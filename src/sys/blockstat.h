/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * blockstat.h - a disk's own count of completed I/O, from /sys/block/X/stat.
 *
 * The kernel counts an I/O there when it ends it (blk_account_io_done for
 * requests, bio_end_io_acct on bio-based disks; flushes in flush_end_io),
 * per group: reads, writes (write zeroes included), discards and flushes.
 * A whole disk's line includes its partitions'. The line has 11 fields up
 * to 4.18, 15 since 4.19 (discards, commit bdca3c87fb7a) and 17 since 5.5
 * (flushes, commit b6866318657); Documentation/block/stat.rst numbers them.
 * Whether reads, writes and discards are counted at all is queue/iostats's
 * say (0 on loop devices until someone turns it on); flushes always are.
 */
#ifndef IOLAT_BLOCKSTAT_H
#define IOLAT_BLOCKSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kernel's groups (enum stat_group), in its stat line's order. */
enum blockstat_group {
	BLOCKSTAT_READ = 0,
	BLOCKSTAT_WRITE,
	BLOCKSTAT_DISCARD,
	BLOCKSTAT_FLUSH,
	BLOCKSTAT_GROUPS,
};

struct blockstat {
	uint64_t done[BLOCKSTAT_GROUPS]; /* I/Os completed since the disk was made */
	bool has[BLOCKSTAT_GROUPS];	 /* the kernel's line has this group's field */
	bool iostats;			 /* queue/iostats on: read, write, discard counted */
};

/* The group's name, as iolat's op label spells it ("read", ...). */
const char *blockstat_group_name(int g);

/*
 * Parses one stat line (text, NUL-terminated): at least 11 unsigned
 * decimal fields separated by blanks, more ignored. Fills done[] and has[]
 * (iostats is left as it was). 0, or -EINVAL for anything else.
 */
int blockstat_parse(const char *text, struct blockstat *out);

/*
 * Reads disk `name`'s stat line and queue/iostats under sys_block
 * (/sys/block, or a directory laid out like it, for tests). 0, -ENOENT
 * when the disk has no such files, -EINVAL for a line blockstat_parse
 * refuses, or -errno.
 */
int blockstat_read(const char *sys_block, const char *name, struct blockstat *out);

/*
 * blockstat_read in two steps, for a reader that keeps the files open
 * between reads: blockstat_open opens disk `name`'s stat file (0, or
 * -errno as blockstat_read's) and its queue/iostats (-1 where there is
 * none); blockstat_read_open reads both from their start, fresh values at
 * each call (0, -EINVAL as blockstat_read's, or -errno: ENODEV once the
 * disk is gone). The caller closes the descriptors.
 */
int blockstat_open(const char *sys_block, const char *name, int *stat_fd, int *iostats_fd);
int blockstat_read_open(int stat_fd, int iostats_fd, struct blockstat *out);

/*
 * Disk `name` under sys_block: its number (dev's "major:minor", in
 * disk_mkdev's encoding) and size in 512-byte sectors (0: no medium). 0,
 * -ENOENT, or -EINVAL for a file that does not read as a number.
 */
int blockstat_disk(const char *sys_block, const char *name, uint32_t *dev, uint64_t *sectors);

#endif
