/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * trace_out.h - where `iolat trace`'s records go: text lines like biosnoop
 * with blktrace's stages, JSON lines, the --summary report or a --write
 * file; and the join of each syscall record with the block records queued
 * inside it (--syscalls).
 */
#ifndef IOLAT_TRACE_OUT_H
#define IOLAT_TRACE_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/trace_summary.h"
#include "sys/disks.h"
#include "trace.h"
#include <linux/types.h>

/* Block records seen for one syscall, until its own record arrives (at its
 * exit, after the completions of its synchronous I/O). */
struct sys_link {
	uint64_t enter_ns; /* 0: free slot */
	uint32_t tid;
	uint32_t records;	 /* block records shown */
	uint64_t q2c_ns, d2c_ns; /* summed over the completed ones */
};

#define SYS_LINKS 256

/* For text output: who wrote the data a bio carries from the page cache,
 * kept from its page_cache records (at Q) until its own record (at C). */
struct pc_writer {
	uint64_t io_id; /* 0: free slot */
	uint32_t pid;
	bool several; /* more than one process's writes */
	char comm[IOLAT_COMM_LEN + 1];
};

#define PC_WRITERS 256

/* What the record callback needs: output, the clock origin, disk names. */
struct trace_out {
	bool json, syscalls;
	struct trace_summary *summary; /* --summary: records go here, not out */
	FILE *file;		       /* --write: records go here */
	bool header_pending;	       /* --read: text header before the first record */
	uint64_t t0_ns;
	uint64_t emitted, sys_emitted, pc_emitted;
	/* --max-rate: block records a second at most (0: no cap), counted in
	 * the second of t0_ns's clock that `window` is; the ones past it are
	 * dropped here and counted in `capped`. */
	uint64_t max_rate, window, in_window, capped;
	struct sys_link links[SYS_LINKS];
	struct pc_writer writers[PC_WRITERS];
	struct {
		uint32_t dev;
		char name[DISK_NAME_MAX];
	} names[16];
	int nnames;
};

/* The text output's column header. */
void trace_out_header(bool syscalls);

/* A block record (ctx: struct trace_out). 0, or -errno to stop. */
int trace_out_record(void *ctx, const struct trace_record *r);

/* A syscall record, after the block records it contains. 0, or -errno. */
int trace_out_syscall(void *ctx, const struct trace_syscall *s);

/* A page-cache link, when its bio is queued (before the bio's record). 0,
 * or -errno. */
int trace_out_pc_link(void *ctx, const struct trace_pc_link *l);

#endif
