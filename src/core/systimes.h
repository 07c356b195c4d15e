/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * systimes.h - per workload, the host's service time of positional file I/O
 * system calls (pread64, pwrite64, preadv, pwritev, preadv2, pwritev2):
 * what a VM's disk I/O costs on the host as qemu's I/O threads ask for it,
 * without entering the guest. Its own BPF object (bpf/sysio.bpf.c), loaded
 * and attached only by those who ask (serve's syscall families, top
 * --syscalls), beside the collector; read as a snapshot whose series the
 * workload views take as they take the collector's.
 */
#ifndef IOLAT_SYSTIMES_H
#define IOLAT_SYSTIMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buckets.h"
#include "core/snapshot.h"

struct systimes;

/* The keys the histogram map holds (workloads x read, write) unless
 * systimes_opts.max_keys says otherwise: 4 KiB each, preallocated. */
#define SYSTIMES_MAX_KEYS_DEFAULT 1024

struct systimes_opts {
	const struct bucket_table *lat; /* the collector's latency table: its slots */
	uint64_t filter_cgroup;		/* 0: all; else as collector_opts's */
	int filter_cgroup_level;
	bool key_process;  /* keyed by calling process, as the collector can be */
	uint32_t max_keys; /* 0: SYSTIMES_MAX_KEYS_DEFAULT */
};

/*
 * Testing: IOLAT_TEST_SYSCALL_KEYS (1 to 65536) sizes the histogram map,
 * so that a test can fill it (systimes_lost). env is getenv or a fake. 0,
 * or -EINVAL with what is wrong in err.
 */
int systimes_test_knobs(struct systimes_opts *o, char *(*env)(const char *name), char *err,
			size_t len);

/*
 * Loads bpf/sysio.bpf.c's programs and attaches them to the six system
 * calls' tracepoints (which libbpf finds in tracefs). 0, or -errno with
 * what failed and what to do in err; nothing stays attached on failure.
 */
int systimes_open(struct systimes **out, const struct systimes_opts *o, char *err, size_t len);
void systimes_close(struct systimes *s);

/*
 * Every series now into snap (emptied first; its memory reused): key
 * {cgroup, dev 0, op}, values cumulative since systimes_open: ios the calls
 * that returned, bytes the sum of their positive returns, errors those
 * that returned an errno, and lat[IOLAT_VIEW_DEVICE] their time, entry to
 * exit (lat[IOLAT_VIEW_TOTAL] stays zero). 0 or -errno.
 */
int systimes_read(struct systimes *s, struct snapshot *snap);

/* Calls not counted because the histogram map was full. */
uint64_t systimes_lost(struct systimes *s);

/* Removes key k's series from the kernel's map (a workload gone, as
 * collector_forget). 0 or -errno (-ENOENT: none). */
int systimes_forget(struct systimes *s, const struct iolat_key *k);

struct workload_cache;

/*
 * Removes the series of cgroups that are gone (names says which) and made
 * no call between before and now (two systimes_read, in that order), so
 * that a host where VMs come and go does not fill the map. 0 or -errno.
 */
int systimes_forget_gone(struct systimes *s, const struct snapshot *now,
			 const struct snapshot *before, struct workload_cache *names);

#endif
