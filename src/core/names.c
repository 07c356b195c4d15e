// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* names.c - iolat's names for the kernel's numbers (names.h). */
#include "core/names.h"

#include <stddef.h>

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Indexed by the enums, so a value added to one in iolat.h without a name
 * here reads NULL rather than a neighbour's name. */
static const char *const op_names[IOLAT_OP_COUNT] = {
	[IOLAT_OP_READ] = "read",
	[IOLAT_OP_WRITE] = "write",
	[IOLAT_OP_FLUSH] = "flush",
	[IOLAT_OP_DISCARD] = "discard",
	[IOLAT_OP_WRITE_ZEROES] = "write_zeroes",
	[IOLAT_OP_OTHER] = "other",
};

/* blktrace's letters (blk_fill_rwbs): write zeroes and the rest are 'N'. */
static const char op_rwbs[IOLAT_OP_COUNT] = {
	[IOLAT_OP_READ] = 'R',	  [IOLAT_OP_WRITE] = 'W',	 [IOLAT_OP_FLUSH] = 'F',
	[IOLAT_OP_DISCARD] = 'D', [IOLAT_OP_WRITE_ZEROES] = 'N', [IOLAT_OP_OTHER] = 'N',
};

static const char *const flag_names[IOLAT_F_COUNT] = {
	"sync", "meta",	    "prio",   "nomerge",    "idle",
	"fua",	"preflush", "rahead", "background", "nowait",
};

static const char *const size_class_names[IOLAT_SIZE_CLASSES] = {
	[IOLAT_SIZE_4K] = "<=4KiB",    [IOLAT_SIZE_16K] = "4-16KiB",
	[IOLAT_SIZE_64K] = "16-64KiB", [IOLAT_SIZE_1M] = "64KiB-1MiB",
	[IOLAT_SIZE_LARGER] = ">1MiB",
};

static const char *const stat_names[IOLAT_STAT_COUNT] = {
	[IOLAT_STAT_HIST_FULL] = "hist_map_full",     [IOLAT_STAT_RQMAP_MISS] = "rq_map_miss",
	[IOLAT_STAT_BIOMAP_MISS] = "bio_map_miss",    [IOLAT_STAT_PARTIAL] = "partial_completion",
	[IOLAT_STAT_RQMAP_FULL] = "rq_map_full",      [IOLAT_STAT_BIOMAP_FULL] = "bio_map_full",
	[IOLAT_STAT_SAME_STAMPS] = "same_stamps",     [IOLAT_STAT_RESTAMPED] = "restamped",
	[IOLAT_STAT_UNTRUE_STAMPS] = "untrue_stamps",
};

const char *names_op(int op)
{
	return op >= 0 && op < COUNT(op_names) ? op_names[op] : NULL;
}

char names_op_rwbs(int op)
{
	return op >= 0 && op < COUNT(op_rwbs) ? op_rwbs[op] : 'N';
}

const char *names_flag(int bit)
{
	return bit >= 0 && bit < COUNT(flag_names) ? flag_names[bit] : NULL;
}

const char *names_size_class(int c)
{
	return c >= 0 && c < COUNT(size_class_names) ? size_class_names[c] : NULL;
}

const char *names_stat(int s)
{
	return s >= 0 && s < COUNT(stat_names) && stat_names[s] ? stat_names[s] : "unknown";
}
