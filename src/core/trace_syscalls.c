// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* trace_syscalls.c - the I/O syscalls trace links block I/O to (trace_syscalls.h). */
#include "core/trace_syscalls.h"

#include <sys/syscall.h>

/* The I/O syscalls linkage follows, with this architecture's numbers (the
 * kernel's native ABI, as raw_syscalls reports them). The asynchronous
 * ones submit I/O that completes after they return. */
const struct trace_syscall_info trace_syscalls[] = {
	{ SYS_read, "read", TRACE_FILE_FPOS },
	{ SYS_pread64, "pread64", TRACE_FILE_ARG4 },
	{ SYS_readv, "readv", TRACE_FILE_FPOS },
	{ SYS_preadv, "preadv", TRACE_FILE_ARG4 },
	{ SYS_preadv2, "preadv2", TRACE_FILE_ARG4 },
	{ SYS_write, "write", TRACE_FILE_FPOS, false, true },
	{ SYS_pwrite64, "pwrite64", TRACE_FILE_ARG4, false, true },
	{ SYS_writev, "writev", TRACE_FILE_FPOS, false, true },
	{ SYS_pwritev, "pwritev", TRACE_FILE_ARG4, false, true },
	{ SYS_pwritev2, "pwritev2", TRACE_FILE_ARG4, false, true },
	{ SYS_fsync, "fsync", TRACE_FILE_ONLY },
	{ SYS_fdatasync, "fdatasync", TRACE_FILE_ONLY },
	{ SYS_io_uring_enter, "io_uring_enter", TRACE_FILE_NONE, true },
	{ SYS_io_submit, "io_submit", TRACE_FILE_NONE, true },
};

const size_t trace_syscalls_count = sizeof(trace_syscalls) / sizeof(trace_syscalls[0]);

static int sys_index(uint32_t nr)
{
	for (size_t i = 0; i < trace_syscalls_count; i++)
		if (trace_syscalls[i].nr == (long)nr)
			return (int)i;
	return -1;
}

const char *tracer_syscall_name(uint32_t nr)
{
	int i = sys_index(nr);

	if (nr == TRACE_SYS_FAULT)
		return "page_fault";
	return i < 0 ? NULL : trace_syscalls[i].name;
}

bool tracer_syscall_async(uint32_t nr)
{
	int i = sys_index(nr);

	return i >= 0 && trace_syscalls[i].async;
}

bool tracer_syscall_writes(uint32_t nr)
{
	int i = sys_index(nr);

	return i >= 0 && trace_syscalls[i].writes;
}

bool tracer_syscall_positional(uint32_t nr)
{
	int i = sys_index(nr);

	return i >= 0 && trace_syscalls[i].file == TRACE_FILE_ARG4;
}
