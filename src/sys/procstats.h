/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* procstats.h - this process's resources, as Prometheus' process_* metrics
 * (the names client libraries' process collectors use) plus its heap. */
#ifndef IOLAT_PROCSTATS_H
#define IOLAT_PROCSTATS_H

#include <stdint.h>

struct procstats {
	double cpu_seconds;	 /* user + system */
	uint64_t resident_bytes; /* VmRSS */
	uint64_t virtual_bytes;	 /* VmSize */
	uint64_t open_fds;
	uint64_t max_fds; /* RLIMIT_NOFILE, soft */
	/* Bytes malloc has handed out and not had back (glibc's mallinfo2):
	 * flat while resident_bytes grows means the allocator keeps freed
	 * memory (fragmentation), not a leak. 0 when the allocator is not
	 * glibc's (sanitizers bring their own). */
	uint64_t heap_bytes;
};

/* Fills *out from /proc/self; 0, or -errno if /proc could not be read. */
int procstats_read(struct procstats *out);

#endif
