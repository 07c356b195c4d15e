/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * render.h - turns collected series into text (biolatency-style log2 rows
 * with percentiles) and JSON. Writes to a FILE * it is given; holds no state.
 */
#ifndef IOLAT_RENDER_H
#define IOLAT_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "core/buckets.h"
#include "iolat.h"
#include "sys/disks.h"
#include "util/json.h"
#include <linux/types.h>

/* A series as shown: an interval's counts under the labels it was grouped by. */
struct shown_series {
	char disk[64];		 /* "" when all disks are summed */
	int op;			 /* enum iolat_op, or -1 when summed */
	int flags;		 /* enum iolat_flag bits, or -1 when not split by flags */
	int size_class;		 /* enum iolat_size_class, or -1 when not split by size */
	bool bio_layer;		 /* disk timed at the bio layer (no request events) */
	struct disk_stack stack; /* the disks above and below it, if stacked */
	struct iolat_val val;
};

const char *render_op_name(int op);

/* "<=4KiB", "4-16KiB", ... for an enum iolat_size_class. */
const char *render_size_class_name(int c);

/* "sync|fua", or "none"; into buf. */
void render_flags(int flags, char *buf, size_t len);

/* Log2 rows of one latency view in usecs (or msecs), then its percentiles. */
void render_latency_text(FILE *f, const struct iolat_lat *lat, const struct bucket_table *t,
			 bool msecs);

/* Log2 rows of request sizes in KiB. */
void render_size_text(FILE *f, const __u64 *slots, const struct bucket_table *t);

/* The header line naming a series' labels, e.g. "disk = vda  op = read". */
void render_labels_text(FILE *f, const struct shown_series *s);

/* One disk and kernel group's completions in an interval: the kernel's
 * own count (/sys/block/X/stat) and iolat's (core/kcompare.h). */
struct kernel_row {
	const char *disk;
	int group; /* enum blockstat_group */
	uint64_t kernel, iolat;
};

/* The rows as hist's "kernel" array: disk, op, kernel, iolat, unseen
 * (kernel - iolat, signed). */
void render_kernel_json(struct json *j, const struct kernel_row *rows, size_t n);

/* One series as a JSON object: labels, counters, both views, sizes. */
void render_series_json(struct json *j, const struct shown_series *s,
			const struct bucket_table *lat, const struct bucket_table *size);

/*
 * The line hist and top print under an interval whose I/O could not all be
 * timed true: `untrue` completions kept the plug clock's cached stamps
 * (untrue_stamps), or, restamp_off, the kernel caches its clock and the
 * collector does not replace such stamps. Nothing when neither.
 */
void render_untrue_text(FILE *f, uint64_t untrue, bool restamp_off);

#endif
