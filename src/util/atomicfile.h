/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * atomicfile.h - a whole file replaced at once: written to PATH.tmp beside
 * it, flushed to disk, then renamed over PATH, so a reader (or the next
 * run after a crash) finds the old file or the new one, never half of one.
 */
#ifndef IOLAT_ATOMICFILE_H
#define IOLAT_ATOMICFILE_H

#include <stddef.h>

/* One piece of the file's contents; the pieces are written in order. */
struct atomicfile_part {
	const void *data;
	size_t len; /* 0: nothing (data may be NULL) */
};

/*
 * Replaces path with the n parts, one after the other. Returns 0, or
 * -errno with what failed in err; then path is as it was and no PATH.tmp
 * is left behind.
 */
int atomicfile_write(const char *path, const struct atomicfile_part *parts, size_t n, char *err,
		     size_t errlen);

#endif
