/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tracer.h - loads, attaches and drains the per-I/O tracer
 * (bpf/trace.bpf.c) behind `iolat trace`: one record per sampled block I/O,
 * delivered through a BPF ring buffer, with what could not be delivered
 * counted, never silently dropped.
 */
#ifndef IOLAT_TRACER_H
#define IOLAT_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/attach.h"
#include "core/probe.h"
#include "trace.h"
#include <linux/types.h>

struct tracer_opts {
	uint32_t filter_dev;	 /* 0: all disks */
	uint64_t filter_cgroup;	 /* 0: all cgroups */
	int filter_cgroup_level; /* depth of filter_cgroup below its root */
	uint32_t filter_pid;	 /* tgid; 0: all */
	enum trace_op_filter filter_op;
	uint32_t sample_every;	/* 1 in N; 0 or 1: every I/O */
	uint64_t min_ns;	/* emit only Q2C >= min_ns; 0: all (forces N = 1) */
	uint32_t ringbuf_bytes; /* power of two, >= page size;
				 * 0: TRACE_RINGBUF_DEFAULT_BYTES */
	enum attach_mode attach;
	/* Link block I/O to the synchronous read/write/fsync syscall it was
	 * queued in: attaches raw_syscalls sys_enter/sys_exit, and delivers a
	 * trace_syscall to syscall_fn at the exit of each syscall with a
	 * followed bio (after that bio's record, for synchronous I/O). */
	bool syscalls;
	int (*syscall_fn)(void *ctx, const struct trace_syscall *s);
	/* With syscalls, where the kernel has writeback_dirty_folio (or
	 * _page): the folios a followed buffered write dirties are followed
	 * to the bios that later write them back, whatever thread queues
	 * them; each link is delivered here when its bio is queued. */
	int (*pc_link_fn)(void *ctx, const struct trace_pc_link *l);
};

/* Page-cache linkage's folios, since the start. */
struct tracer_pc_stats {
	uint64_t marked;    /* dirtied by a followed write */
	uint64_t linked;    /* found in a queued bio */
	uint64_t waiting;   /* still dirty (or never written: truncated) */
	uint64_t redirtied; /* written back unseen, dirtied again (by a newer write) */
	uint64_t dropped;   /* left the page cache unwritten (file truncated, deleted) */
	uint64_t evicted;   /* pushed out of the kernel's map: their bios not linked */
};

/* Called for each record, in completion order per CPU. Non-zero stops. */
typedef int (*tracer_fn)(void *ctx, const struct trace_record *r);

/* What --syscalls can follow on this kernel. */
struct tracer_linkage {
	const char *dirty_tp; /* "writeback_dirty_folio" or "_page"; NULL: none */
	int bpf_loop;	      /* 1 yes, 0 no, < 0 unknown (probing needs privileges) */
	bool page_cache;      /* both: buffered writes followed through the page cache */
	bool faults;	      /* mm_filemap_fault: I/O of file page faults linked */
};

/* Fills out from the kernel's BTF (pr->btf_path). 0 or -errno. */
int tracer_linkage(const struct probe_result *pr, struct tracer_linkage *out);

struct tracer;

/*
 * Opens, loads and attaches (tp_btf, falling back to raw_tp under
 * ATTACH_AUTO; a test's forced mode comes in o->attach). Returns 0 or -errno with a
 * reason in err; on failure nothing stays loaded.
 */
int tracer_open(struct tracer **out, const struct tracer_opts *o, const struct probe_result *pr,
		tracer_fn fn, void *ctx, char *err, size_t errlen);

/* Waits up to timeout_ms for the kernel's wakeup (it wakes the reader only
 * once a quarter of the buffer is waiting), then delivers every pending
 * record. Records thus reach the caller at most timeout_ms late. Returns
 * how many were delivered, or -errno (-EINTR on a signal). */
int tracer_poll(struct tracer *t, int timeout_ms);

/* Counters (enum trace_stat), summed over CPUs. 0 or -errno. */
int tracer_stats(struct tracer *t, uint64_t out[TRACE_STAT_COUNT]);

/* Whether page-cache linkage is on; if so, its counts in *out, from the
 * tracer's counters `st` (tracer_stats) and its map. */
bool tracer_page_cache(const struct tracer *t, const uint64_t st[TRACE_STAT_COUNT],
		       struct tracer_pc_stats *out);

/* Followed I/Os not completed yet: at exit, their records are not emitted.
 * *evicted: followed I/Os the kernel's map evicted to make room for newer
 * ones (more than its TRACE_BIOS_MAX entries in flight at once). */
uint64_t tracer_in_flight(const struct tracer *t, uint64_t *evicted);

/* Detaches and frees; records still in the ring buffer are discarded,
 * so drain with tracer_poll first. */
void tracer_close(struct tracer *t);

#endif
