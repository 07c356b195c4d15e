// SPDX-License-Identifier: GPL-2.0
/*
 * trace.bpf.c - the kernel half of `iolat trace`: follows sampled bios
 * through the block layer's stages and emits one record per I/O, with every
 * stage's timestamp, to a ring buffer. This file holds what its parts
 * share (the settings user space sets, the record ids, the ring buffer and
 * the counters, the sampling turn) and includes the parts, one job each,
 * into the one object (one skeleton, src/core/tracer.c):
 *
 *   trace_syscalls.bpf.h  the syscall or file page fault a bio was queued
 *                         in (--syscalls)
 *   trace_pagecache.bpf.h the buffered writes whose dirty folios a bio
 *                         carries to disk (writeback)
 *   trace_stages.bpf.h    a bio's way through the block layer, queue to
 *                         completion, and its record
 *
 * Unsampled I/O stays cheap: every stage below the queue returns before any
 * map lookup while no followed bio is in flight (`in_flight`).
 *
 * Every program exists twice, tp_btf and raw_tp (TP_PAIR, tp_pair.h); user
 * space loads one set. Both read through BPF_CORE_READ (probe reads): the
 * cost is the sampled path's, not every I/O's.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "block.h"
#include "iolat.h"
#include "tp_pair.h"
#include "trace.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space between open and load. */
const volatile __u32 filter_dev = 0; /* 0: every disk */
/* filter_cgroup, filter_cgroup_level: block.h */
const volatile __u32 filter_pid = 0; /* tgid; 0: every process */
const volatile __u32 filter_op = TRACE_OP_ANY;
const volatile __u32 sample_every = 1; /* follow 1 bio in N (per CPU) */
const volatile __u64 min_ns = 0;       /* emit only Q2C >= min_ns; 0: all */
const volatile __u64 wake_bytes = 0;   /* wake the reader at this much data */
/* Syscall linkage (--syscalls): the syscall numbers to link, a bit each.
 * The sys_enter/sys_exit programs are loaded only when it is on. */
const volatile bool link_syscalls = false;
const volatile __u64 sys_mask[TRACE_SYS_MAX / 64] = {};
/* Page-cache linkage (with link_syscalls, where the kernel has a dirtying
 * tracepoint): the buffered-write syscalls among the listed ones, whose
 * dirtied folios are followed to the bios that later carry them. */
const volatile bool link_page_cache = false;
/* iolat's own tgid: its own writes (the records it saves) are not followed. */
const volatile __u32 self_pid = 0;
const volatile __u64 sys_write_mask[TRACE_SYS_MAX / 64] = {};
/* Per listed syscall, how its arguments name a file (enum trace_sys_file). */
const volatile __u8 sys_file[TRACE_SYS_MAX] = {};

/*
 * The parts' counters, here in this order because .bss's layout is what a
 * reader without the skeleton sees: tests/integration/test_trace.sh takes
 * in_flight as .bss's first variable (bpftool map dump).
 *
 * Followed bios and requests in flight: the lower stages' fast exit
 * (trace_stages.bpf.h). LRU evictions are not subtracted, so it can only
 * err high (costing lookups, never records).
 */
__u64 in_flight = 0;
/* Threads inside a followed buffered write, and folios they dirtied not yet
 * seen in a bio: the page-cache programs' fast exits, which cost every
 * dirtied folio and every queued write one load while they are 0. Like
 * in_flight, LRU evictions leave pc_in_flight high, never low. */
__u64 writers_active = 0;
__u64 pc_in_flight = 0;
/* pc_files was full once: from then on every write bio is walked. */
__u32 pc_files_full = 0;

/* Record ids: each CPU's own sequence, with the CPU in the top bits, so
 * they are unique without an atomic that returns a value (5.12+) and
 * without one cache line that every CPU's I/O writes. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} id_seq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TRACE_STAT_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Sized by user space (--ringbuf-kib). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TRACE_RINGBUF_DEFAULT_BYTES);
} records SEC(".maps");

/*
 * How to submit a ring buffer sample. Waking the reader per sample costs an
 * interrupt (irq_work) per I/O: measured at ~8 us per completion here. So it
 * is woken once wake_bytes (user space: a quarter of the buffer) are
 * waiting; it also polls on a short timer for the rest.
 */
static __always_inline __u64 wake_flag(void)
{
	return bpf_ringbuf_query(&records, BPF_RB_AVAIL_DATA) >= wake_bytes ? BPF_RB_FORCE_WAKEUP
									    : BPF_RB_NO_WAKEUP;
}

/* Copies a record of `size` bytes (a constant at every call) to the ring
 * buffer, or counts it lost. */
static __always_inline void emit(const void *data, __u32 size)
{
	void *out = bpf_ringbuf_reserve(&records, size, 0);

	if (!out) {
		stat_inc(&stats, TRACE_STAT_LOST);
		return;
	}
	__builtin_memcpy(out, data, size);
	bpf_ringbuf_submit(out, wake_flag());
}

/* With a pid filter, whether the task (pid_tgid: bpf_get_current_pid_tgid())
 * belongs to another process. */
static __always_inline bool pid_filtered_out(__u64 pid_tgid)
{
	return filter_pid && (__u32)(pid_tgid >> 32) != filter_pid;
}

/* Whether the task's syscalls and faults are not followed: another process
 * than the pid filter's, or iolat itself. */
static __always_inline bool not_followed_task(__u64 pid_tgid)
{
	return pid_filtered_out(pid_tgid) || (__u32)(pid_tgid >> 32) == self_pid;
}

/* Whether this CPU's turn has come (1 in sample_every) on counter `which`
 * of a per-CPU array of counters. */
static __always_inline bool turn_of(void *counters, __u32 which)
{
	__u64 *n;

	if (sample_every <= 1)
		return true;
	n = bpf_map_lookup_elem(counters, &which);
	if (!n)
		return false;
	if (++*n < sample_every)
		return false;
	*n = 0;
	return true;
}

/* A new record id: CPU + 1 in bits 40-52, then that CPU's count (a
 * trillion ids before one could repeat). */
static __always_inline __u64 next_id(void)
{
	__u32 zero = 0;
	__u64 *seq = bpf_map_lookup_elem(&id_seq, &zero);

	if (!seq)
		return 0;
	*seq += 1;
	return ((__u64)(bpf_get_smp_processor_id() + 1) << 40) | (*seq & ((1ULL << 40) - 1));
}

/* The folio a page belongs to: a tail page of a large folio points at its
 * head with bit 0 set (page_folio(), include/linux/page-flags.h). */
static __always_inline __u64 folio_of(struct page *page)
{
	unsigned long head = BPF_CORE_READ(page, compound_head);

	return head & 1 ? head - 1 : (__u64)page;
}

/*
 * The io (blkio) cgroup of the current task: on cgroup v2 its own cgroup
 * (or the nearest ancestor with io on), on v1 its blkio one, as blk-cgroup
 * would charge its own direct I/O. NULL without CONFIG_BLK_CGROUP.
 */
static __always_inline struct cgroup *current_io_cgroup(void)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cset;
	int io;

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, io_cgrp_id))
		return NULL;
	io = bpf_core_enum_value(enum cgroup_subsys_id, io_cgrp_id);
	cset = BPF_CORE_READ(task, cgroups);
	if (!cset)
		return NULL;
	bpf_core_read(&css, sizeof(css), &cset->subsys[io & 0x3f]);
	return css ? BPF_CORE_READ(css, cgroup) : NULL;
}

/* The parts, in this order: each uses those before it (the queue program
 * links a bio to its syscall and to the page-cache walk's result). */
#include "trace_syscalls.bpf.h"

#include "trace_pagecache.bpf.h"

#include "trace_stages.bpf.h"
