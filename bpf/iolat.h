/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * iolat.h - the structures the kernel collector and user space share.
 *
 * Fixed-width types only: this header is compiled both by clang for the
 * BPF target and by the host compiler, and the layouts must agree.
 */
#ifndef IOLAT_H
#define IOLAT_H

/* The kernel's fixed-width types: BPF programs have them from vmlinux.h,
 * user space from the UAPI header. */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * Histogram slots. Every histogram is a sorted table of inclusive upper
 * bounds (built once in user space, src/core/buckets.c, and handed to the kernel
 * before load); slot i counts values v with bound[i-1] < v <= bound[i]. The
 * last slot's bound is UINT64_MAX, so it is the overflow slot. Slot counts
 * are powers of two so the kernel's search is a fixed number of halvings.
 */
#define IOLAT_LAT_SLOTS_LOG2 9
#define IOLAT_LAT_SLOTS (1u << IOLAT_LAT_SLOTS_LOG2) /* latency, ns */
#define IOLAT_SIZE_SLOTS_LOG2 8
#define IOLAT_SIZE_SLOTS (1u << IOLAT_SIZE_SLOTS_LOG2) /* request size, bytes */

/* Operations, normalised from the kernel's REQ_OP_* numbers. */
enum iolat_op {
	IOLAT_OP_READ = 0,
	IOLAT_OP_WRITE,
	IOLAT_OP_FLUSH,
	IOLAT_OP_DISCARD,
	IOLAT_OP_WRITE_ZEROES,
	IOLAT_OP_OTHER,
	IOLAT_OP_COUNT,
};

/*
 * Request flags, normalised: the kernel's __REQ_* bit positions moved between
 * releases, so flags_of() (bpf/block.h) maps them through CO-RE enum relocations.
 */
enum iolat_flag {
	IOLAT_F_SYNC = 1 << 0,
	IOLAT_F_META = 1 << 1,
	IOLAT_F_PRIO = 1 << 2,
	IOLAT_F_NOMERGE = 1 << 3,
	IOLAT_F_IDLE = 1 << 4,
	IOLAT_F_FUA = 1 << 5,
	IOLAT_F_PREFLUSH = 1 << 6,
	IOLAT_F_RAHEAD = 1 << 7,
	IOLAT_F_BACKGROUND = 1 << 8,
	IOLAT_F_NOWAIT = 1 << 9,
	IOLAT_F_COUNT = 10,
};

/* queue_stats_bit when BTF does not say where QUEUE_FLAG_STATS is: past the
 * 64 bits of queue_flags, so no bit is tested. */
#define IOLAT_QUEUE_STATS_BIT_UNKNOWN 64

/* A task's command name, as bpf_get_current_comm() gives it (TASK_COMM_LEN):
 * the collector's `comms` values and the tracer's records. */
#define IOLAT_COMM_LEN 16

/* Request size classes, so 4 KiB latency is not mixed with 1 MiB latency. */
enum iolat_size_class {
	IOLAT_SIZE_4K = 0, /* <= 4 KiB */
	IOLAT_SIZE_16K,	   /* 4-16 KiB */
	IOLAT_SIZE_64K,	   /* 16-64 KiB */
	IOLAT_SIZE_1M,	   /* 64 KiB-1 MiB */
	IOLAT_SIZE_LARGER, /* > 1 MiB */
	IOLAT_SIZE_CLASSES,
};

/*
 * Keyed by process, the cgroup field holds the submitting process's tgid
 * with this bit set (0 with the bit: a request created before iolat
 * started). Real cgroup ids never reach it.
 */
#define IOLAT_KEY_PROCESS (1ULL << 62)

/* What one histogram series is keyed by. Unkeyed fields stay zero. */
struct iolat_key {
	__u64 cgroup;	 /* blkcg's cgroup id, when keyed or filtered by cgroup;
			  * IOLAT_KEY_PROCESS | tgid when keyed by process */
	__u32 dev;	 /* whole disk, kernel encoding: major << 20 | minor */
	__u16 flags;	 /* enum iolat_flag bits, when keyed by flags */
	__u8 op;	 /* enum iolat_op */
	__u8 size_class; /* enum iolat_size_class, when keyed by size class */
};

/* Latency views: index into iolat_val.lat[] and iolat_kval's views. */
enum iolat_view {
	IOLAT_VIEW_DEVICE = 0, /* issue -> complete (blktrace D2C) */
	IOLAT_VIEW_TOTAL,      /* request created -> complete (Q2C, request layer) */
	IOLAT_VIEW_COUNT,
};

/*
 * One latency view of a series, as user space keeps it (64-bit, cumulative
 * since load): the kernel's struct iolat_kval folded by the collector.
 */
struct iolat_lat {
	__u64 count;  /* completions timed in this view */
	__u64 unseen; /* completions whose start was not seen: not timed */
	__u64 sum_ns; /* exact sum of the timed latencies */
	__u64 max_ns; /* largest latency seen since start */
	__u64 slots[IOLAT_LAT_SLOTS];
};

/* One series in user space: a key's values summed over CPUs, 64-bit. */
struct iolat_val {
	__u64 ios;    /* completed requests (or bios on bio-based disks) */
	__u64 bytes;  /* exact sum of their sizes */
	__u64 errors; /* completions with a non-zero status */
	__u64 size_slots[IOLAT_SIZE_SLOTS];
	struct iolat_lat lat[IOLAT_VIEW_COUNT];
};

/*
 * What the kernel keeps per key (per CPU, or one shared value): the same
 * facts in half the memory (5 KiB), and what one completion writes sits in
 * four cache lines (the first 64 bytes, one slot of each view, one size
 * slot) where struct iolat_val took six.
 *
 * - Counters are 32-bit. They wrap; user space folds each into its 64-bit
 *   series by the difference mod 2^32 (histo_fold), and does so at least
 *   every COLLECTOR_FOLD_S seconds, long before any counter of one key could
 *   advance 2^32 (that would take 71 million completions a second, all in
 *   one slot). Sums of bytes and nanoseconds, which would wrap in seconds,
 *   stay 64-bit.
 * - Nothing is counted twice: a view's count is the sum of its slots, and
 *   every completion is counted in each view, timed (a slot) or not
 *   (unseen), so the device view's slots and unseen add up to the I/Os.
 */
struct iolat_klat {
	__u64 sum_ns; /* exact sum of the timed latencies */
	__u64 max_ns; /* largest latency seen since start */
};

struct iolat_kval {
	__u64 bytes;				 /* exact sum of the sizes */
	struct iolat_klat lat[IOLAT_VIEW_COUNT]; /* sums and maxima */
	__u32 unseen[IOLAT_VIEW_COUNT];		 /* completions not timed, per view */
	__u32 errors;				 /* completions with a non-zero status */
	__u32 pad[3];				 /* the header is 64 bytes: one cache line */
	__u32 lat_slots[IOLAT_VIEW_COUNT][IOLAT_LAT_SLOTS]; /* timed completions per slot */
	__u32 size_slots[IOLAT_SIZE_SLOTS];		    /* completions per size slot */
#ifdef IOLAT_TEST_LAYOUT_NEXT
	__u32 next_release[4]; /* make LAYOUT_NEXT=1: a field appended, for the test */
#endif
};

_Static_assert(__builtin_offsetof(struct iolat_kval, lat_slots) == 64,
	       "struct iolat_kval's header must be one cache line");

/*
 * The version of the layout of the collector's maps: struct iolat_key,
 * struct iolat_kval, enum iolat_stat and the maps' keys and values in
 * iolat.bpf.c. An iolat that finds maps pinned by another (src/core/pin.h)
 * adopts them only if this and everything else it would load are the same.
 * Changing any of them: fields only appended, never moved or reused, and
 * this number raised, so that no iolat reads a value it does not know. A
 * newer iolat reads the maps of every earlier layout (an older value is a
 * prefix of its own: src/core/handover.c) and takes them over without a
 * gap; an older one refuses a newer layout, says so, and starts afresh.
 * tests/integration/test_upgrade.sh hands over to a build with a field
 * appended (make LAYOUT_NEXT=1) and back.
 */
#ifndef IOLAT_TEST_LAYOUT_NEXT
/* 2: restamped, untrue_stamps; the restamps map. 3: the dense rows (disk_rows,
 * row_keys, rows, rows_shared). */
#define IOLAT_LAYOUT_VERSION 3
#else
#define IOLAT_LAYOUT_VERSION 4 /* make LAYOUT_NEXT=1 (Makefile) */
#endif

/*
 * Dense rows (bpf/iolat.bpf.c, "Dense rows"): where keys are disk and op
 * only, a completion finds its series at index q->id x IOLAT_ROW_OPS + op
 * of disk_rows, for request queue ids below IOLAT_ROW_QUEUES (the kernel
 * hands them out densely, the lowest free first); others take the hash.
 * An index entry is one 64-bit word, so a reader never sees half of one:
 * the disk's dev in the high half, its row + 1 in the low (0: none yet).
 */
#define IOLAT_ROW_QUEUES 256
#define IOLAT_ROW_OPS 8 /* enum iolat_op fits */
#define IOLAT_ROW_INDEX (IOLAT_ROW_QUEUES * IOLAT_ROW_OPS)
#define IOLAT_ROW_ENTRY(dev, row1) (((__u64)(dev) << 32) | (__u32)(row1))

/* Whom a row counts for (row_keys, written by user space only, so that a
 * successor reading the pins knows each row's key). */
enum iolat_row_state {
	IOLAT_ROW_FREE = 0,
	IOLAT_ROW_LIVE,	   /* counts for (dev, op) */
	IOLAT_ROW_RETIRED, /* its key left the map: folded, never used again */
};

struct iolat_row_key {
	__u32 dev;
	__u16 index; /* its entry in disk_rows */
	__u8 op;
	__u8 state; /* enum iolat_row_state */
};

/* What the programs write to the wakeups ring buffer. The first word says
 * why; a row request carries the index entry and the disk. */
enum iolat_wake_why {
	IOLAT_WAKE_UNSTAMPED = 1, /* a completion lacked a kernel stamp: __u32 only */
	IOLAT_WAKE_ROW,		  /* a disk and op want a dense row: struct iolat_wake */
};

struct iolat_wake {
	__u32 why;
	__u32 index; /* into disk_rows */
	__u32 dev;
	__u32 pad;
};

/*
 * A collector's window (bpf/iolat.bpf.c, the map of section .data.window):
 * it counts the completions of requests and bios that began at or after
 * from_ns and, if until_ns is not 0, before until_ns (kernel clock,
 * CLOCK_MONOTONIC). This layout never changes, whatever the layout version:
 * a newer iolat writes an older one's until_ns to hand over from it.
 */
struct iolat_window {
	__u64 from_ns;
	__u64 until_ns;
};

/* Collector-wide counters (per-CPU array, one slot each). */
enum iolat_stat {
	IOLAT_STAT_HIST_FULL = 0, /* a new key did not fit in the histogram map */
	IOLAT_STAT_RQMAP_MISS,	  /* fallback path: no entry for a request under way before
				   * the programs that fill the request map ran */
	IOLAT_STAT_BIOMAP_MISS,	  /* bio-based disk: bio start not found */
	IOLAT_STAT_PARTIAL,	  /* partial completions skipped (counted at the last piece) */
	IOLAT_STAT_RQMAP_FULL,	  /* request map lost what the fallback kept for a request
				   * (evicted from the full LRU, or never stored): untimed */
	IOLAT_STAT_BIOMAP_FULL,	  /* bio-based disk: a bio's start could not be stored */
	IOLAT_STAT_SAME_STAMPS,	  /* kernel start and issue stamps equal: since 6.9 both
				   * can be one plug's cached clock, so the total and
				   * device views of such a request are the same time */
	/* Layout 2: */
	IOLAT_STAT_RESTAMPED,	  /* timed from iolat's own clock in a view (or both)
				   * because the kernel's stamp was the plug's cached
				   * time (6.9+, bpf/iolat.bpf.c "Restamping") */
	IOLAT_STAT_UNTRUE_STAMPS, /* kernel issue stamp at or before the start stamp
				   * (one cached clock) and not made true: no record
				   * of the request's own times (its table slot was
				   * taken, or it began before the programs ran) */
	IOLAT_STAT_COUNT,
};

/*
 * The collector's programs, one slot each in its selfcost map; both forms
 * of a program (tp_btf, raw_tp) share the slot. The order is core/probe.h's
 * enum probe_tp (collector_stats.c checks it).
 */
enum iolat_prog {
	IOLAT_PROG_RQ_COMPLETE = 0,
	IOLAT_PROG_RQ_ISSUE,
	IOLAT_PROG_IO_START,
	IOLAT_PROG_RQ_INSERT,
	IOLAT_PROG_BIO_QUEUE,
	IOLAT_PROG_BIO_COMPLETE,
	IOLAT_PROG_COUNT,
};

/*
 * Every program times 1 run in IOLAT_SELFCOST_EVERY of its own on each CPU
 * (two bpf_ktime_get_ns() reads around its body), so that iolat's cost is
 * known without the kernel's BPF statistics (CAP_SYS_ADMIN). Two clock
 * reads cost up to ~110 ns against a completion of ~300 ns: 1 in 64 makes
 * that under 2 ns a run, under 1 % (BENCHMARKS.md, "BPF cost measured by
 * iolat itself"; the per-run count costs more than the reads).
 */
#define IOLAT_SELFCOST_EVERY_LOG2 6
#define IOLAT_SELFCOST_EVERY (1u << IOLAT_SELFCOST_EVERY_LOG2)

/* One program's cost as it measures it, per CPU (selfcost map). */
struct iolat_selfcost {
	__u64 runs;	    /* every run */
	__u64 sampled_runs; /* the runs it timed: the first of every IOLAT_SELFCOST_EVERY */
	__u64 sampled_ns;   /* their time, from the first clock read to the second */
};

#endif /* IOLAT_H */
