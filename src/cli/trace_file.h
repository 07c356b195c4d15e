/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * trace_file.h - `iolat trace --write FILE` / `--read FILE`: records kept in
 * a file, to print or summarise later (as blktrace's files are for btt).
 * Format: the magic "IOLATTRC", a version, the sizes of the three record
 * structs and the recording's start time (CLOCK_MONOTONIC ns), all 64-bit
 * little-endian words; then entries: a 32-bit length and the record as the
 * kernel made it (trace.h). A file is read on the same architecture.
 */
#ifndef IOLAT_TRACE_FILE_H
#define IOLAT_TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"
#include <linux/types.h>

/* Creates path and writes the header. 0, or -errno with a reason in err. */
int trace_file_create(FILE **out, const char *path, uint64_t t0_ns, char *err, size_t len);

/* Appends one record (a trace_record, trace_syscall or trace_pc_link). 0 or
 * -errno. */
int trace_file_append(FILE *f, const void *data, uint32_t len);

struct trace_file_sink {
	int (*record)(void *ctx, const struct trace_record *r);
	int (*syscall)(void *ctx, const struct trace_syscall *s);
	int (*pc_link)(void *ctx, const struct trace_pc_link *l);
	void *ctx;
};

/*
 * Reads path, calling the sink for every entry in order; *t0_ns gets the
 * recording's start. 0, or -errno with a reason in err (not an iolat trace
 * file, another layout, truncated).
 */
int trace_file_read(const char *path, uint64_t *t0_ns, const struct trace_file_sink *sink,
		    char *err, size_t len);

#endif
