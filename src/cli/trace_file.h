/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * trace_file.h - `iolat trace --write FILE` / `--read FILE`: records kept in
 * a file, to print or summarise later (as blktrace's files are for btt).
 * Format: the magic "IOLATTRC", a version, the sizes of the three record
 * structs, the recording's start time (CLOCK_MONOTONIC ns), the cap on
 * records a second it was made with (--max-rate; 0: none) and how many
 * records the cap dropped (written when the recording ends), all 64-bit
 * words in the machine's order; then entries: a 32-bit length and the
 * record as the kernel made it (trace.h). A file is read on the same
 * architecture.
 */
#ifndef IOLAT_TRACE_FILE_H
#define IOLAT_TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"
#include <linux/types.h>

/* Creates path and writes the header (max_rate: the cap, 0 for none). 0,
 * or -errno with a reason in err. */
int trace_file_create(FILE **out, const char *path, uint64_t t0_ns, uint64_t max_rate, char *err,
		      size_t len);

/* Writes into the header how many records the cap dropped, before the
 * file is closed. 0, or -EIO (a file that cannot seek keeps 0 there). */
int trace_file_finish(FILE *f, uint64_t capped);

/* Appends one record (a trace_record, trace_syscall or trace_pc_link). 0 or
 * -errno. */
int trace_file_append(FILE *f, const void *data, uint32_t len);

/* What a file's header says about its recording. */
struct trace_file_info {
	uint64_t t0_ns;	   /* its start (CLOCK_MONOTONIC ns) */
	uint64_t max_rate; /* its cap on records a second; 0: none */
	uint64_t capped;   /* the records the cap dropped */
};

struct trace_file_sink {
	/* Called once with the header, before any record: 0, or -errno. */
	int (*begin)(void *ctx, const struct trace_file_info *info);
	int (*record)(void *ctx, const struct trace_record *r);
	int (*syscall)(void *ctx, const struct trace_syscall *s);
	int (*pc_link)(void *ctx, const struct trace_pc_link *l);
	void *ctx;
};

/*
 * Reads path, calling the sink's begin with what its header says (also
 * left in *info), then the sink for every entry in order. 0, or -errno with a reason in err (not an
 * iolat trace file, another layout, truncated).
 */
int trace_file_read(const char *path, struct trace_file_info *info,
		    const struct trace_file_sink *sink, char *err, size_t len);

#endif
