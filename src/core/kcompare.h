/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kcompare.h - iolat's completions set against the kernel's own count
 * (sys/blockstat.h), per disk and kernel group, for `serve`
 * (serve/exporter_kstat.h) and `hist --json` alike.
 *
 * iolat's ops map onto the kernel's groups as op_stat_group() sorts
 * requests: read; write and write_zeroes (op_is_write); discard; flush.
 * iolat's "other" (zone management, secure erase, ...) is left out: the
 * kernel files those under read or write by the op's number alone.
 */
#ifndef IOLAT_KCOMPARE_H
#define IOLAT_KCOMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"
#include "sys/blockstat.h"
#include "sys/disks.h"

/* The kernel group (enum blockstat_group) an enum iolat_op counts in; -1: none. */
int kcompare_group_of_op(int op);

/* A disk with a medium, and its kernel counts when listed. */
struct kcompare_disk {
	char name[DISK_NAME_MAX];
	uint32_t dev;
	struct blockstat kernel;
};

/*
 * The disks under sys_block (/sys/block, or a directory laid out like it)
 * with a medium (size > 0), at most max, ascending by number, each with
 * its kernel counts. only_dev: that disk alone; 0: all. The count or -errno.
 */
int kcompare_list(const char *sys_block, uint32_t only_dev, struct kcompare_disk *out, size_t max);

/*
 * iolat's completions in snap (summed over cgroups, flags and size classes)
 * per disk of devs[] (n of them, ascending) and kernel group, into
 * counts[i][group]; series of other disks are ignored.
 */
void kcompare_counts(const uint32_t *devs, size_t n, const struct snapshot *snap,
		     uint64_t (*counts)[BLOCKSTAT_GROUPS]);

#endif
