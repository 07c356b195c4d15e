/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mapmem.h - the kernel memory a BPF map takes, from its definition and the
 * host's CPU count, so a host iolat has not run on yet can be planned for
 * (`iolat check --memory`).
 *
 * The figures follow the kernel's own accounting of each map kind (its
 * map_mem_usage, which bpftool and /proc/PID/fdinfo show as memlock, since
 * 6.4): kernel/bpf/hashtab.c, arraymap.c and ringbuf.c. Every map iolat
 * uses is preallocated, so this is what it takes from load on, full or not.
 */
#ifndef IOLAT_MAPMEM_H
#define IOLAT_MAPMEM_H

#include <stdbool.h>
#include <stdint.h>

/* The map kinds iolat's objects use (linux/bpf.h numbering). */
struct map_def {
	char name[32];
	uint32_t type; /* enum bpf_map_type */
	uint32_t key_size, value_size, max_entries;
	bool mmapable; /* BPF_F_MMAPABLE: a page-rounded array (global data) */
};

/* Bytes of kernel memory map m takes on a host of ncpus possible CPUs; 0
 * for a kind iolat's objects do not use (hash, LRU hash and array kinds,
 * per-CPU or not, and ring buffers are known). */
uint64_t mapmem_bytes(const struct map_def *m, int ncpus);

#endif
