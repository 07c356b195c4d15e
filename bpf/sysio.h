/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sysio.h - what sysio.bpf.c (the positional file I/O system calls: a VM's
 * disk I/O as qemu asks the host for it) and user space (src/core/systimes.c)
 * share. Fixed-width types only, as iolat.h.
 */
#ifndef IOLAT_SYSIO_H
#define IOLAT_SYSIO_H

#include "iolat.h"

/*
 * One series: the calls of one workload (the io cgroup of the calling
 * thread, as a bio's blkcg is charged: iolat.h's struct iolat_key.cgroup)
 * and one op (IOLAT_OP_READ or IOLAT_OP_WRITE).
 */
struct sysio_key {
	__u64 cgroup; /* or IOLAT_KEY_PROCESS | tgid, keyed by process */
	__u8 op;      /* enum iolat_op: READ or WRITE */
	__u8 pad[7];
};

/*
 * Its values, one shared copy per key, added to atomically (a VM's I/O
 * threads run on every CPU). 64-bit throughout: nothing wraps, so user
 * space reads them as they are, with no fold (unlike struct iolat_kval).
 */
struct sysio_val {
	__u64 calls;  /* calls that returned (each in one slot) */
	__u64 bytes;  /* sum of the positive return values */
	__u64 errors; /* calls that returned a negative errno */
	__u64 sum_ns; /* exact sum of their latencies, entry -> exit */
	__u64 max_ns; /* largest latency seen (racy: see racy_max in block.h) */
	__u64 slots[IOLAT_LAT_SLOTS];
};

#endif /* IOLAT_SYSIO_H */
