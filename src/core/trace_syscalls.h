/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * trace_syscalls.h - the I/O syscalls `iolat trace --syscalls` links block
 * I/O to, with this architecture's numbers: what the tracer lists to the
 * kernel (tracer.c) and what the readers of its records (trace_out.c,
 * trace_join.c) call them. No BPF here: a reader of a trace file needs
 * none.
 */
#ifndef IOLAT_TRACE_SYSCALLS_H
#define IOLAT_TRACE_SYSCALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"
#include <linux/types.h>

struct trace_syscall_info {
	long nr; /* the kernel's native ABI, as raw_syscalls reports it */
	const char *name;
	enum trace_sys_file file; /* how its arguments name a file */
	bool async;		  /* submits I/O that completes after it returns */
	bool writes;		  /* writes its file; buffered data it writes is followed
				   * through the page cache */
};

extern const struct trace_syscall_info trace_syscalls[];
extern const size_t trace_syscalls_count;

/* The name of a syscall that linkage follows ("pread64"), "page_fault"
 * for TRACE_SYS_FAULT, or NULL if nr is not one of them. */
const char *tracer_syscall_name(uint32_t nr);

/* Whether that syscall only submits I/O (io_uring_enter, io_submit): the
 * I/O it queues completes after it returns. */
bool tracer_syscall_async(uint32_t nr);

/* Whether a linked syscall writes its file (write, pwrite64, writev, ...). */
bool tracer_syscall_writes(uint32_t nr);

/* Whether it reads or writes at an offset it is given (pread64, preadv,
 * pwritev2, ...). */
bool tracer_syscall_positional(uint32_t nr);

#endif
