/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* percpu.h - sums of a BPF per-CPU array's counters over the CPUs. */
#ifndef IOLAT_PERCPU_H
#define IOLAT_PERCPU_H

#include <stdint.h>

/*
 * out[i] = slot i of the per-CPU array map fd (u64 values), summed over
 * ncpus possible CPUs, for i < n; a slot that cannot be read counts 0.
 * 0 or -ENOMEM.
 */
int percpu_array_sums(int fd, int ncpus, uint64_t *out, uint32_t n);

/*
 * out[w] = word w of slot `key` of the per-CPU array map fd whose values are
 * `words` u64 counters each, summed over ncpus possible CPUs, for w < words.
 * 0, or -errno (out then left 0).
 */
int percpu_slot_sums(int fd, uint32_t key, int ncpus, uint64_t *out, uint32_t words);

#endif
