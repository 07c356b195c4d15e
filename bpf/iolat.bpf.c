// SPDX-License-Identifier: GPL-2.0
/*
 * iolat.bpf.c - the kernel half of iolat: times every block I/O and adds it
 * to histograms keyed by disk, operation and (optionally) flags, size class
 * and cgroup or process: per-CPU values, or one shared value per key (see
 * hists_shared).
 *
 * The hot path is one program at request completion. It reads the start
 * times the block layer already keeps in struct request (start_time_ns set
 * when the request is created, io_start_time_ns when it is issued), so the
 * common case needs no per-request map; keyed by disk and op only, it finds
 * the series by the queue's id in a dense row, not by hashing ("Dense
 * rows"). Where the kernel leaves those unset,
 * small issue-side programs remember the times in a bounded LRU map.
 * Bio-based disks (zram, dm, md) make no request events; they are timed from
 * block_bio_queue to block_bio_complete.
 *
 * Every program exists twice: tp_btf (direct, typed loads) and raw_tp
 * (probe reads), both from one TP_PAIR (tp_pair.h), and user space loads
 * one set, chosen at start-up.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "block.h"
#include "iolat.h"
#include "slots.h"
#include "tp_pair.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space between open and load; constant for the verifier. */
const volatile __u64 lat_bounds[IOLAT_LAT_SLOTS] = {};
const volatile __u64 size_bounds[IOLAT_SIZE_SLOTS] = {};
const volatile __u32 lat_cells[IOLAT_CELL_TABLE] = {}; /* bpf/slots.h */
const volatile __u32 size_cells[IOLAT_CELL_TABLE] = {};
const volatile __u32 filter_dev = 0; /* 0: every disk */
/* filter_cgroup, filter_cgroup_level: block.h */
const volatile bool key_flags = false;
const volatile bool key_cgroup = false;
const volatile bool key_size_class = false;
const volatile bool key_process = false;  /* submitting process, from block_io_start */
const volatile bool force_rq_map = false; /* testing: ignore struct request times */
const volatile bool restamp = false;	  /* plug-clock kernel: see "Restamping" */
/* The restamps table's slots, log2: sized from the requests in flight. */
const volatile __u32 restamp_slots_log2 = 13; /* RESTAMP_SLOTS */
/* QUEUE_FLAG_STATS, or IOLAT_QUEUE_STATS_BIT_UNKNOWN */
const volatile __u32 queue_stats_bit = IOLAT_QUEUE_STATS_BIT_UNKNOWN;

/*
 * Benchmarks only: bench/breakdown.sh builds the object with one
 * IOLAT_BENCH_WITHOUT_* defined at a time (the Makefile's BENCH_BPF_DEFS),
 * to measure what that part of the completion costs: SELFCOST (issue 28's
 * run counter and sampled clock reads), CELLS (slots by bit length instead
 * of the bucket cells), STAMP_STATS (the same_stamps, restamped and
 * untrue_stamps counters), RESTAMP_READ (the completion's restamps lookup).
 * Such a build counts wrongly by design and is never installed.
 */

const volatile bool shared_values = false; /* count in hists_shared, atomically */
const volatile bool dense_rows = false;	   /* keys are disk and op only: "Dense rows" */

/*
 * Per-CPU values make the hot path free of atomics, but cost 5 KiB (struct
 * iolat_kval) per key per CPU: fine for a few disk keys, too much for
 * cgroups that appear by the hundred. Keyed by cgroup, iolat counts in one
 * shared value per key with atomic adds instead (user space shrinks the
 * unused map to one entry).
 *
 * Both are preallocated (user space sizes them to a memory budget). Before
 * 6.1 tracing programs may not allocate map elements at run time; since,
 * the BPF memory allocator keeps a cache of one to three 5 KiB elements
 * per CPU, refilled later from irq_work, so a burst of new keys completing
 * in interrupt context found it empty and lost its first completions (seen
 * in a 6.1 guest: 12 of 700 over seven new devices).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct iolat_key);
	__type(value, struct iolat_kval);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct iolat_key);
	__type(value, struct iolat_kval);
} hists_shared SEC(".maps");

/*
 * Dense rows. Keyed by disk and op only (hist -D -O, the default), a
 * completion finds its series without hashing: disk_rows, indexed by the
 * request queue's id x IOLAT_ROW_OPS + op (iolat.h), names the disk and its
 * row in rows (per-CPU values) or rows_shared (shared, atomic
 * adds; the unused one has one entry). A hash lookup of the 16-byte key
 * costs ~40-50 ns a completion that two array lookups do not
 * (BENCHMARKS.md, bound-views against bound-views-dense).
 *
 * User space assigns the rows: an entry that is empty or names another
 * disk (a queue id reused) sends the completion down the hash path and,
 * once, asks for a row through the wakeups ring buffer, leaving the entry
 * as (dev, 0) so that it asks no more. User space writes the row's key to
 * row_keys, then the entry; it never gives a row to another (dev, op) while
 * the collector lives, so a series is its hash value plus its row's, and a
 * key that leaves the map takes its row out of use (RETIRED). Rows run
 * out: the hash path, exact and only slower.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IOLAT_ROW_INDEX);
	__type(key, __u32);
	__type(value, __u64);
} disk_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct iolat_row_key);
} row_keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct iolat_kval);
} rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, struct iolat_kval);
} rows_shared SEC(".maps");

/* Fallback start times, for requests whose struct request times are unset. */
struct rq_times {
	__u64 start_ns;
	__u64 issue_ns;
	__u64 bytes;
	__u32 tgid;    /* submitting process, when keyed by process */
	__u32 partial; /* completed in pieces so far: size it at issue */
	__u64 cgroup;  /* a flush sequence's data step: its bio's cgroup */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct rq_times);
} rq_starts SEC(".maps");

/* Keyed by process: each submitter's command name, for user space to show
 * after the process is gone. */
struct comm {
	char comm[IOLAT_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct comm);
} comms SEC(".maps");

/* Bio-based disks: when each bio entered, its size and cgroup. */
struct bio_times {
	__u64 start_ns;
	__u64 bytes;
	__u64 cgroup;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct bio_times);
} bio_starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IOLAT_STAT_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/*
 * Which completions this collector counts: those of requests (and bios)
 * that began in [window_from_ns, window_until_ns), kernel clock; 0 for no
 * bound. Both stay 0 but while another collector's programs hand over to
 * this one's (src/core/handover.h): the older counts what began before a
 * switch time, the newer what began after, so that for a while both run
 * and nothing is counted twice or not at all. A section of its own, so the
 * map that holds it never changes: every later iolat writes the older one's
 * window_until_ns through it (struct iolat_window).
 */
struct iolat_window window SEC(".data.window") = {};

/* Set once a completion lacks a kernel timestamp: user space then attaches
 * the issue-side fallback programs (until then they cost nothing). */
bool saw_unstamped = false;

/*
 * When the programs that fill rq_starts first ran: the creation program
 * (block_io_start) sets the first, in the kernel clock, and the issue program
 * the second, in jiffies. A request created or issued after that went
 * through them, so if its entry is missing or short at completion the map
 * lost it (it was full: rq_map_full); a request already under way when they
 * were attached has none to lose (rq_map_miss). 0: not run yet.
 */
__u64 rq_created_since_ns = 0;
__u64 rq_issued_since_jiffies = 0;

/* Wakes user space (blocked on it, using no CPU) when saw_unstamped is set. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} wakeups SEC(".maps");

/*
 * What each program measures of its own cost (struct iolat_selfcost), per
 * CPU: no atomics, and a run on one CPU cannot be interleaved with another
 * run of the same program there (the kernel skips a program already running
 * on its CPU: recursion_misses).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IOLAT_PROG_COUNT);
	__type(key, __u32);
	__type(value, struct iolat_selfcost);
} selfcost SEC(".maps");

/* Source of a zeroed value when a key is first seen (too big for the stack). */
static struct iolat_kval zero_val;

/*
 * Restamping. Since 6.9 (commit 06b23f92af87 and its parent, "block: cache
 * current nsec time in struct blk_plug") the block layer's clock
 * (blk_time_get_ns, block/blk.h) returns, in task context inside a plug,
 * the plug's cached time (cur_ktime), read once and kept until the task
 * schedules. A request created and issued in one plug then carries that
 * one time in both stamps: the total view is the device view, and both
 * start early. The kernel writes each stamp just after a tracepoint
 * (io_start_time_ns after block_rq_issue in blk_mq_start_request;
 * start_time_ns after block_io_start in blk_account_io_start since 6.10,
 * at request init just before it in 6.9), so there the stamp about to be
 * written is predictable: the plug's cur_ktime when it is non-zero. Then,
 * and only then, the program reads the clock itself and records, per view,
 * the cached value and its own time. At completion a view whose stamp
 * equals the recorded cached value is timed from the recorded time.
 *
 * The record is a slot of a direct-mapped array indexed by a hash of the
 * request's address: no hashing helper, no allocation; a request whose slot
 * another took keeps the kernel's stamp, and its completion says so
 * (untrue_stamps). User space sizes the table (restamp_slots_log2) to eight
 * slots per request the disks can hold at once (src/core/mapsize.h), so
 * that takes every disk's every tag busy to cost one request in eight. In interrupt context the
 * kernel ignores the plug (in_task()), so a prediction made there does not match the stamp and is
 * not used. Two CPUs writing one slot at once may leave a mix of two
 * requests' records; the check of rq and of the cached value against the
 * stamp keeps that from timing a request by another's times unless both
 * came from one plug, a few microseconds apart at worst.
 */
/* The table as the object has it; the collector sizes it before load. */
#define RESTAMP_SLOTS 8192
/* cached[IOLAT_VIEW_TOTAL] when the creation found the plug's clock unset:
 * the kernel reads a fresh time for the start stamp, which is true. */
#define RESTAMP_FRESH 1

struct restamp_rec {
	__u64 rq;			/* the request (rq_id); 0: none */
	__u64 cached[IOLAT_VIEW_COUNT]; /* the stamp the kernel was about to write */
	__u64 now[IOLAT_VIEW_COUNT];	/* iolat's clock at the tracepoint */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RESTAMP_SLOTS);
	__type(key, __u32);
	__type(value, struct restamp_rec);
} restamps SEC(".maps");

/*
 * A number that names rq in the restamps table. raw_tp hands the address
 * over as a number; tp_btf as a typed pointer, on which the verifier allows
 * no arithmetic but the difference of two pointers (for a program that may
 * read kernel pointers, as tracing programs must): its distance from a
 * global of ours, the same for every request. One collector loads one form,
 * so its numbers never mix.
 */
static __always_inline __u64 rq_id(struct request *rq, bool direct)
{
	__u64 id = (__u64)rq;

	if (direct)
		asm volatile("%0 -= %1" : "+r"(id) : "r"(&zero_val));
	return id;
}

/* id's slot: Fibonacci hashing spreads the requests of a tag set (evenly
 * spaced addresses) over distinct slots. */
static __always_inline struct restamp_rec *restamp_slot(__u64 id)
{
	__u32 i = (__u32)((id * 0x9E3779B97F4A7C15ULL) >> (64 - restamp_slots_log2));

	return bpf_map_lookup_elem(&restamps, &i);
}

/* The plug's cached clock of the current task: 0 when it has no plug or
 * the plug holds no time (the kernel then reads a fresh one); -1 when it
 * has a plug without one yet (the next stamp is fresh and true). */
static __always_inline __u64 plug_cached_ns(bool direct)
{
	struct blk_plug *plug;
	__u64 cached;

	if (!bpf_core_field_exists(struct blk_plug, cur_ktime))
		return 0;
	if (direct) {
		plug = bpf_get_current_task_btf()->plug;
		if (!plug)
			return 0;
		cached = plug->cur_ktime;
		return cached ? cached : (__u64)-1;
	}
	plug = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), plug);
	if (!plug)
		return 0;
	cached = BPF_CORE_READ(plug, cur_ktime);
	return cached ? cached : (__u64)-1;
}

/* At the tracepoint before the kernel writes rq's stamp of `view`. */
static __always_inline void restamp_note(struct request *rq, int view, bool direct)
{
	__u64 cached = plug_cached_ns(direct), id;
	struct restamp_rec *r;

	if (!cached || (cached == (__u64)-1 && view != IOLAT_VIEW_TOTAL))
		return;
	id = rq_id(rq, direct);
	r = restamp_slot(id);
	if (!r)
		return;
	if (r->rq != id) {
		/* Another request's: this one's now. */
		r->rq = id;
		r->cached[IOLAT_VIEW_COUNT - 1 - view] = 0;
	}
	if (cached == (__u64)-1) {
		r->cached[view] = RESTAMP_FRESH;
		return;
	}
	r->cached[view] = cached;
	r->now[view] = bpf_ktime_get_ns();
}

static __always_inline __u32 lat_slot(__u64 ns)
{
#ifdef IOLAT_BENCH_WITHOUT_CELLS
	return iolat_bit_length(ns) & (IOLAT_LAT_SLOTS - 1);
#endif
	return iolat_slot_of(lat_cells, lat_bounds, IOLAT_LAT_SLOTS_LOG2, ns) &
	       (IOLAT_LAT_SLOTS - 1);
}

static __always_inline __u32 size_slot(__u64 bytes)
{
	return iolat_slot_of(size_cells, size_bounds, IOLAT_SIZE_SLOTS_LOG2, bytes) &
	       (IOLAT_SIZE_SLOTS - 1);
}

/*
 * A write with a preflush or FUA runs as a flush sequence (block/blk-flush.c)
 * when the device has a volatile write cache: its data step completes like
 * any request but with RQF_FLUSH_SEQ set, and once the sequence is over the
 * request is ended a second time, with no bytes left (and no bio since 6.x;
 * 6.1 puts the bio back first). The kernel counts the I/O at that second
 * end (blk_account_io_done skips flush-sequence requests), with its time
 * to the end of the sequence; so does iolat, taking the size and cgroup the
 * data step kept in the request map (flush_data_done).
 */
static __always_inline bool in_flush_seq(__u32 rq_flags)
{
	return rq_flags & rqf_flush_seq_mask;
}

/*
 * Whether this collector counts I/O that began at t (struct iolat_window).
 * Every collector handing over decides by the same t, read from the
 * request or the shared map entry, so exactly one of them counts it.
 */
static __always_inline bool in_window(__u64 t)
{
	__u64 until = window.until_ns;

	return t >= window.from_ns && (!until || t < until);
}

/*
 * Whether the collector's lease is over at now: until_ns is also the lease
 * that serve --handover renews while it runs (src/core/collector.h). Once
 * it passes, no run holds the collector: nothing that begins is counted
 * (in_window), and the programs do as little as they can until a
 * successor takes it or it is removed.
 */
static __always_inline bool lease_over(__u64 now)
{
	__u64 until = window.until_ns;

	return until && now >= until;
}

/* Adds one completion to view `view` of v: its time, or unseen without a start. */
static __always_inline void lat_add(struct iolat_kval *v, int view, __u64 start, __u64 now)
{
	__u64 ns;

	if (!start || start > now) {
		v->unseen[view]++;
		return;
	}
	ns = now - start;
	v->lat[view].sum_ns += ns;
	if (ns > v->lat[view].max_ns)
		v->lat[view].max_ns = ns;
	v->lat_slots[view][lat_slot(ns)]++;
}

struct io_done {
	__u64 now;
	__u64 start_ns; /* 0: not seen */
	__u64 issue_ns; /* 0: not seen */
	__u64 bytes;
	int error;
	__u32 queue; /* the request queue's id, with dense rows */
};

/* The request queue's id, which indexes disk_rows. */
static __always_inline __u32 queue_id(struct request_queue *q, bool direct)
{
	return direct ? (__u32)q->id : (__u32)BPF_CORE_READ(q, id);
}

/* Key's dense row, or NULL: none yet (asked for once), or its queue's id
 * is past the index. */
static __always_inline struct iolat_kval *row_of(const struct iolat_key *key, __u32 queue)
{
	void *map = shared_values ? (void *)&rows_shared : (void *)&rows;
	__u32 index = queue * IOLAT_ROW_OPS + (key->op & (IOLAT_ROW_OPS - 1)), row;
	struct iolat_wake ask = { .why = IOLAT_WAKE_ROW, .dev = key->dev };
	__u64 *entry, seen;

	if (queue >= IOLAT_ROW_QUEUES)
		return NULL;
	entry = bpf_map_lookup_elem(&disk_rows, &index);
	if (!entry)
		return NULL;
	seen = *(volatile __u64 *)entry;
	if ((seen >> 32) == key->dev) {
		if (!(__u32)seen)
			return NULL; /* asked for, not given (yet, or rows ran out) */
		row = (__u32)seen - 1;
		return bpf_map_lookup_elem(map, &row);
	}
	ask.index = index;
	if (!bpf_ringbuf_output(&wakeups, &ask, sizeof(ask), 0))
		*(volatile __u64 *)entry = IOLAT_ROW_ENTRY(key->dev, 0);
	return NULL;
}

/* The value of key in the map in use, created zeroed if new; NULL if full. */
static __always_inline struct iolat_kval *value_of(const struct iolat_key *key, __u32 queue)
{
	void *map = shared_values ? (void *)&hists_shared : (void *)&hists;
	struct iolat_kval *v = dense_rows ? row_of(key, queue) : NULL;

	if (v)
		return v;
	v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	bpf_map_update_elem(map, key, &zero_val, BPF_NOEXIST);
	v = bpf_map_lookup_elem(map, key);
	if (!v)
		stat_inc(&stats, IOLAT_STAT_HIST_FULL);
	return v;
}

static __always_inline void lat_add_shared(struct iolat_kval *v, int view, __u64 start, __u64 now)
{
	__u64 ns;

	if (!start || start > now) {
		__sync_fetch_and_add(&v->unseen[view], 1);
		return;
	}
	ns = now - start;
	__sync_fetch_and_add(&v->lat[view].sum_ns, ns);
	racy_max(&v->lat[view].max_ns, ns);
	__sync_fetch_and_add(&v->lat_slots[view][lat_slot(ns)], 1);
}

/* One completion: its size, status and both views' times. The I/O count is
 * not kept apart: user space has it from the device view (iolat.h). */
static __always_inline void account(const struct iolat_key *key, const struct io_done *c)
{
	struct iolat_kval *v = value_of(key, c->queue);
	__u32 slot = size_slot(c->bytes);

	if (!v)
		return;
	if (shared_values) {
		__sync_fetch_and_add(&v->bytes, c->bytes);
		if (c->error)
			__sync_fetch_and_add(&v->errors, 1);
		__sync_fetch_and_add(&v->size_slots[slot], 1);
		lat_add_shared(v, IOLAT_VIEW_DEVICE, c->issue_ns, c->now);
		lat_add_shared(v, IOLAT_VIEW_TOTAL, c->start_ns, c->now);
		return;
	}
	v->bytes += c->bytes;
	if (c->error)
		v->errors++;
	v->size_slots[slot]++;
	lat_add(v, IOLAT_VIEW_DEVICE, c->issue_ns, c->now);
	lat_add(v, IOLAT_VIEW_TOTAL, c->start_ns, c->now);
}

/* enum iolat_size_class of a request size. */
static __always_inline __u8 size_class_of(__u64 bytes)
{
	if (bytes <= 4096)
		return IOLAT_SIZE_4K;
	if (bytes <= 16384)
		return IOLAT_SIZE_16K;
	if (bytes <= 65536)
		return IOLAT_SIZE_64K;
	if (bytes <= 1048576)
		return IOLAT_SIZE_1M;
	return IOLAT_SIZE_LARGER;
}

/* Takes the fallback times for rq, its submitter (*tgid, 0 if unknown) and
 * a flush sequence's data (size, *cgroup), if the map holds any; false if
 * it holds nothing for rq. */
static __always_inline bool take_rq_start(struct request *rq, struct io_done *c, __u32 *tgid,
					  __u64 *cgroup)
{
	__u64 key = (__u64)rq;
	struct rq_times *s = bpf_map_lookup_elem(&rq_starts, &key);

	if (!s)
		return false;
	*tgid = s->tgid;
	*cgroup = s->cgroup;
	if (!c->start_ns)
		c->start_ns = s->start_ns;
	if (!c->issue_ns)
		c->issue_ns = s->issue_ns;
	if (s->bytes)
		c->bytes = s->bytes;
	bpf_map_delete_elem(&rq_starts, &key);
	return true;
}

/* Whether the kernel will stamp io_start_time_ns on this request itself. */
static __always_inline bool queue_stamps_issue(struct request *rq, bool direct)
{
	unsigned long qflags;

	if (force_rq_map || queue_stats_bit >= IOLAT_QUEUE_STATS_BIT_UNKNOWN)
		return false;
	qflags = direct ? rq->q->queue_flags : BPF_CORE_READ(rq, q, queue_flags);
	return (qflags >> queue_stats_bit) & 1;
}

/*
 * Whether the creation program kept something for rq: it was created after
 * that program's first run, and the program keeps every request's start
 * (forced) or submitter (keyed by process). The creation time is known only
 * from a real kernel stamp; without one, false.
 */
static __always_inline bool created_after_fill(struct request *rq, __u32 rq_flags, bool direct)
{
	__u64 since = rq_created_since_ns, start;

	if (!since || !(force_rq_map || key_process) || !start_stamped(rq_flags))
		return false;
	start = direct ? rq->start_time_ns : BPF_CORE_READ(rq, start_time_ns);
	return start > since;
}

/*
 * Whether the issue program kept something for rq: it was issued after that
 * program's first run, and is one the program keeps times for. The issue
 * time comes from the request timer, which blk_mq_start_request() arms
 * (deadline = jiffies + timeout, blk_add_timer()) for every request, right
 * after the issue tracepoint, stamped or not.
 */
static __always_inline bool issued_after_fill(struct request *rq, __u32 rq_flags, bool direct)
{
	__u64 since = rq_issued_since_jiffies;
	unsigned long deadline;
	unsigned int timeout;

	if (!since || !bpf_core_field_exists(rq->deadline))
		return false;
	if (queue_stamps_issue(rq, direct) && start_stamped(rq_flags))
		return false; /* on_rq_issue keeps nothing for it */
	deadline = direct ? rq->deadline : BPF_CORE_READ(rq, deadline);
	timeout = direct ? rq->timeout : BPF_CORE_READ(rq, timeout);
	return deadline - timeout > since;
}

/*
 * Counts what the request map failed to give a completion that asked it:
 * no entry, or one without a time this completion needed. Lost to the full
 * map (rq_map_full) when the filling programs saw the request; a plain miss
 * (rq_map_miss) for a request under way before they ran.
 */
static __always_inline void count_rq_map(struct request *rq, __u32 rq_flags,
					 const struct io_done *c, bool found, bool need_start,
					 bool need_issue, bool direct)
{
	bool short_start = need_start && !c->start_ns, short_issue = need_issue && !c->issue_ns;

	if (!found) {
		if (created_after_fill(rq, rq_flags, direct) ||
		    issued_after_fill(rq, rq_flags, direct))
			stat_inc(&stats, IOLAT_STAT_RQMAP_FULL);
		else
			stat_inc(&stats, IOLAT_STAT_RQMAP_MISS);
		return;
	}
	if ((short_start && created_after_fill(rq, rq_flags, direct)) ||
	    (short_issue && issued_after_fill(rq, rq_flags, direct)))
		stat_inc(&stats, IOLAT_STAT_RQMAP_FULL);
}

static __always_inline struct rq_times *rq_start_slot(struct request *rq)
{
	__u64 key = (__u64)rq;
	struct rq_times *s = bpf_map_lookup_elem(&rq_starts, &key);
	struct rq_times fresh = {};

	if (s)
		return s;
	bpf_map_update_elem(&rq_starts, &key, &fresh, BPF_ANY);
	return bpf_map_lookup_elem(&rq_starts, &key);
}

/* Whether rq completed in pieces before this last one. */
static __always_inline bool was_partial(struct request *rq)
{
	__u64 key = (__u64)rq;
	struct rq_times *s = bpf_map_lookup_elem(&rq_starts, &key);

	return s && s->partial;
}

/* Drops what the map holds for rq, if anything: it will not be asked. */
static __always_inline void forget_rq_start(struct request *rq)
{
	__u64 key = (__u64)rq;

	bpf_map_delete_elem(&rq_starts, &key);
}

/* The data step of a flush sequence completed: keep what the sequence's end
 * needs to count it (its size, whole even if it completed in pieces, and
 * its bio's cgroup, since the end may have no bio). */
static __always_inline void flush_data_done(struct request *rq, struct bio *bio, bool direct)
{
	struct rq_times *s = rq_start_slot(rq);
	__u32 sectors = direct ? rq->stats_sectors : BPF_CORE_READ(rq, stats_sectors);

	if (!s)
		return;
	if (sectors)
		s->bytes = (__u64)sectors << 9;
	else if (!s->bytes)
		s->bytes =
		    bio ? (direct ? bio->bi_iter.bi_size : BPF_CORE_READ(bio, bi_iter.bi_size)) : 0;
	s->partial = 0;
	if (bio && (key_cgroup || filter_cgroup))
		s->cgroup = bio_cgroup(bio, direct);
}

/* What a completion reads of its request, once. */
struct rq_facts {
	__u64 cmd_flags;
	__u32 rq_flags;
	__u32 remaining; /* bytes still to complete: this call's and any after */
	__u32 sectors;	 /* size at issue; written with io_start_time_ns */
	__u8 op;	 /* enum iolat_op */
	bool data;	 /* a read or a write */
	__u64 start_ns;	 /* the kernel's stamps; 0 where it wrote none */
	__u64 issue_ns;
	__u64 began_ns;	  /* start_time_ns as the request holds it, stamped or not:
			   * what every collector handing over decides by */
	bool same_stamps; /* the kernel's two stamps equal */
	bool restamped;	  /* a view's stamp replaced by iolat's time */
	bool untrue;	  /* issue stamp at or before the start stamp, not made true */
};

static __always_inline void read_rq(struct request *rq, struct rq_facts *f, bool direct)
{
	if (direct) {
		f->cmd_flags = rq->cmd_flags;
		f->rq_flags = rq->rq_flags;
		f->sectors = rq->stats_sectors;
		f->start_ns = rq->start_time_ns;
		f->issue_ns = rq->io_start_time_ns;
	} else {
		f->cmd_flags = BPF_CORE_READ(rq, cmd_flags);
		f->rq_flags = BPF_CORE_READ(rq, rq_flags);
		f->sectors = BPF_CORE_READ(rq, stats_sectors);
		f->start_ns = BPF_CORE_READ(rq, start_time_ns);
		f->issue_ns = BPF_CORE_READ(rq, io_start_time_ns);
	}
	f->op = op_of(f->cmd_flags);
	f->data = f->op == IOLAT_OP_READ || f->op == IOLAT_OP_WRITE;
	f->began_ns = f->start_ns;
	if (force_rq_map || !start_stamped(f->rq_flags))
		f->start_ns = 0;
	if (force_rq_map || !issue_stamped(f->rq_flags)) {
		f->issue_ns = 0;
		f->sectors = 0;
	}
	f->same_stamps = f->issue_ns && f->issue_ns == f->start_ns;
	f->untrue = f->issue_ns && f->start_ns && f->issue_ns <= f->start_ns;
	f->restamped = false;
}

/*
 * Restamping's completion side: each view whose stamp is the cached value
 * the tracepoint recorded for this request is timed from the tracepoint's
 * own time. Stamps out of order (issue at or before start: one cached
 * clock) stay untrue unless the issue stamp was replaced and the start
 * stamp was either replaced or a fresh read (RESTAMP_FRESH).
 */
static __always_inline void restamp_rq(struct request *rq, struct rq_facts *f, bool direct)
{
	__u64 id = rq_id(rq, direct);
	struct restamp_rec *r = restamp_slot(id);
	bool issue_fixed = false, start_true = false;

	if (!r || r->rq != id)
		return;
	if (f->issue_ns && r->cached[IOLAT_VIEW_DEVICE] == f->issue_ns) {
		f->issue_ns = r->now[IOLAT_VIEW_DEVICE];
		issue_fixed = true;
	}
	if (f->start_ns && r->cached[IOLAT_VIEW_TOTAL] == f->start_ns) {
		f->start_ns = r->now[IOLAT_VIEW_TOTAL];
		start_true = f->restamped = true;
	} else if (r->cached[IOLAT_VIEW_TOTAL] == RESTAMP_FRESH) {
		start_true = true;
	}
	f->restamped |= issue_fixed;
	if (issue_fixed && start_true)
		f->untrue = false;
}

/*
 * The common completion, counted from the request alone: both stamps the
 * kernel's, all of it completing now (its size at issue is what completes),
 * no flush sequence, and not keyed by process. Everything else asks the
 * request map (count_rq_other).
 */
static __always_inline bool rq_plain(const struct rq_facts *f)
{
	if (key_process || !f->start_ns || !f->issue_ns)
		return false;
	if (((__u64)f->sectors << 9) != f->remaining)
		return false;
	return !f->data || (f->remaining && !in_flush_seq(f->rq_flags));
}

/* The key's disk and cgroup; false if a filter leaves the completion out.
 * cgroup: a flush sequence's data step's, 0 to take the bio's. */
static __always_inline bool rq_key(struct request *rq, struct iolat_key *key, __u64 cgroup,
				   bool direct)
{
	key->dev = disk_dev(rq_disk(rq, direct), direct);
	if (filter_dev && key->dev != filter_dev)
		return false;
	if (key_cgroup || filter_cgroup) {
		key->cgroup =
		    cgroup ? cgroup : bio_cgroup(direct ? rq->bio : BPF_CORE_READ(rq, bio), direct);
		if (filter_cgroup && key->cgroup != filter_cgroup)
			return false;
		if (!key_cgroup)
			key->cgroup = 0;
	}
	return true;
}

/* The rest of the key, and the completion counted in it. */
static __always_inline void count_rq(struct iolat_key *key, const struct rq_facts *f,
				     const struct io_done *c)
{
#ifndef IOLAT_BENCH_WITHOUT_STAMP_STATS
	if (f->same_stamps)
		stat_inc(&stats, IOLAT_STAT_SAME_STAMPS);
	if (f->restamped)
		stat_inc(&stats, IOLAT_STAT_RESTAMPED);
	if (f->untrue)
		stat_inc(&stats, IOLAT_STAT_UNTRUE_STAMPS);
#endif
	key->op = f->op;
	if (key_flags)
		key->flags = flags_of(f->cmd_flags);
	if (key_size_class)
		key->size_class = size_class_of(c->bytes);
	account(key, c);
}

/* A completion that is not plain: pieces, flush sequences, stamps the
 * kernel did not write, or keyed by process. */
static __always_inline int count_rq_other(struct request *rq, const struct rq_facts *f, int error,
					  __u32 nr_bytes, bool direct)
{
	struct iolat_key key = {};
	struct io_done c = {}, seq = {};
	__u32 tgid = 0;
	bool need_start, need_issue, found, seq_found = false, partial, seq_end;
	__u64 seq_cgroup = 0;

	if (!in_window(f->began_ns))
		return 0; /* another collector's, map entries and all */
	if (f->data && in_flush_seq(f->rq_flags)) {
		flush_data_done(rq, direct ? rq->bio : BPF_CORE_READ(rq, bio), direct);
		return 0;
	}
	/* The end of a flush sequence: its data step's facts, if it had one. */
	seq_end = f->data && !nr_bytes && !f->remaining;
	if (seq_end)
		seq_found = take_rq_start(rq, &seq, &tgid, &seq_cgroup);
	if (!rq_key(rq, &key, seq_cgroup, direct))
		return 0;
	if (dense_rows)
		c.queue = queue_id(direct ? rq->q : BPF_CORE_READ(rq, q), direct);
	c.now = bpf_ktime_get_ns();
	c.error = error;
	c.start_ns = f->start_ns;
	c.issue_ns = f->issue_ns;
	/*
	 * The size is what completes now, unless earlier pieces completed
	 * already: then the size at issue (stats_sectors). The two also differ
	 * for some journal writes of ext4 (by 1 KiB, with no piece before), so
	 * the map is asked only when they differ.
	 */
	c.bytes = f->remaining;
	if (seq_found) {
		c.bytes = seq.bytes;
		if (!c.start_ns)
			c.start_ns = seq.start_ns;
		if (!c.issue_ns)
			c.issue_ns = seq.issue_ns;
	}
	partial =
	    f->sectors && ((__u64)f->sectors << 9) != f->remaining && !seq_end && was_partial(rq);
	if (partial)
		c.bytes = (__u64)f->sectors << 9;
	need_start = !c.start_ns;
	need_issue = !c.issue_ns;
	if ((need_start || need_issue) && !saw_unstamped) {
		__u32 why = IOLAT_WAKE_UNSTAMPED;

		saw_unstamped = true;
		bpf_ringbuf_output(&wakeups, &why, sizeof(why), 0);
	}
	if ((key_process || need_start || need_issue) && !seq_end) {
		found = take_rq_start(rq, &c, &tgid, &seq_cgroup);
		count_rq_map(rq, f->rq_flags, &c, found, need_start, need_issue, direct);
	} else if (partial) {
		forget_rq_start(rq); /* the slot the pieces made */
	}
	if (key_process)
		key.cgroup = IOLAT_KEY_PROCESS | tgid;
	count_rq(&key, f, &c);
	return 0;
}

static __always_inline int on_rq_complete(struct request *rq, int error, __u32 nr_bytes,
					  bool direct)
{
	struct iolat_key key = {};
	struct rq_facts f;
	struct io_done c;
	__u64 until = window.until_ns;

	/*
	 * Began at or after the window's end: another collector's (a handover)
	 * or nobody's (the lease is over). The same test in_window makes below,
	 * made first, so that a collector no run holds costs about as much as
	 * an empty program.
	 */
	if (until && (direct ? rq->start_time_ns : BPF_CORE_READ(rq, start_time_ns)) >= until)
		return 0;
	/* A request may complete in pieces; count it once, at the last piece. */
	f.remaining = direct ? rq->__data_len : BPF_CORE_READ(rq, __data_len);
	if (nr_bytes < f.remaining) {
		struct rq_times *s = rq_start_slot(rq);

		if (s)
			s->partial = 1;
		if (in_window(direct ? rq->start_time_ns : BPF_CORE_READ(rq, start_time_ns)))
			stat_inc(&stats, IOLAT_STAT_PARTIAL);
		return 0;
	}
	read_rq(rq, &f, direct);
#ifndef IOLAT_BENCH_WITHOUT_RESTAMP_READ
	if (restamp)
		restamp_rq(rq, &f, direct);
#endif
	if (!rq_plain(&f))
		return count_rq_other(rq, &f, error, nr_bytes, direct);
	if (!in_window(f.began_ns))
		return 0;
	if (!rq_key(rq, &key, 0, direct))
		return 0;
	c.queue = dense_rows ? queue_id(direct ? rq->q : BPF_CORE_READ(rq, q), direct) : 0;
	c.now = bpf_ktime_get_ns();
	c.start_ns = f.start_ns;
	c.issue_ns = f.issue_ns;
	c.bytes = f.remaining;
	c.error = error;
	count_rq(&key, &f, &c);
	return 0;
}

static __always_inline bool filtered_out(struct request *rq, bool direct)
{
	return filter_dev && disk_dev(rq_disk(rq, direct), direct) != filter_dev;
}

/* Keyed by process: who created the request, and its name. */
static __always_inline void note_submitter(struct rq_times *s)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct comm name;

	s->tgid = tgid;
	if (bpf_map_lookup_elem(&comms, &tgid))
		return;
	bpf_get_current_comm(name.comm, sizeof(name.comm));
	bpf_map_update_elem(&comms, &tgid, &name, BPF_ANY);
}

/*
 * Whether the request map is filled: keyed by process, forced, or once a
 * completion lacked a stamp. On plug-clock kernels the issue and creation
 * programs run from the start for restamping; the map's work waits for this.
 */
static __always_inline bool rq_map_wanted(void)
{
	return key_process || force_rq_map || saw_unstamped;
}

/* Request created (block_io_start, or block_rq_insert on older kernels),
 * in the submitter's context: block_io_start is (blk_mq_submit_bio), and
 * block_rq_insert mostly is (a plug flushed by its owner). at_creation: the
 * block_io_start one, which sees every request (block_rq_insert misses those
 * issued directly), so only it marks when the map's filling began. */
static __always_inline int on_rq_start(struct request *rq, bool direct, bool at_creation)
{
	bool stamped;
	struct rq_times *s;

	if (restamp && at_creation)
		restamp_note(rq, IOLAT_VIEW_TOTAL, direct);
	if (!rq_map_wanted())
		return 0;
	stamped =
	    !force_rq_map && start_stamped(direct ? rq->rq_flags : BPF_CORE_READ(rq, rq_flags));
	if (at_creation && !rq_created_since_ns)
		rq_created_since_ns = bpf_ktime_get_ns();
	if (stamped && !key_process)
		return 0;
	if (filtered_out(rq, direct))
		return 0;
	s = rq_start_slot(rq);
	if (!s)
		return 0;
	if (!stamped)
		s->start_ns = bpf_ktime_get_ns();
	if (key_process)
		note_submitter(s);
	return 0;
}

/* Request issued to the driver; also on re-issue after a requeue. */
static __always_inline int on_rq_issue(struct request *rq, bool direct)
{
	struct rq_times *s;

	if (restamp)
		restamp_note(rq, IOLAT_VIEW_DEVICE, direct);
	if (!rq_map_wanted())
		return 0;
	/* One jiffy later than now: a request whose tracepoint fired just
	 * before the attach can arm its timer a jiffy later. */
	if (!rq_issued_since_jiffies)
		rq_issued_since_jiffies = bpf_jiffies64() + 1;
	if (queue_stamps_issue(rq, direct) &&
	    start_stamped(direct ? rq->rq_flags : BPF_CORE_READ(rq, rq_flags))) {
		/*
		 * Since 6.10 the kernel marks a request's start as stamped
		 * (RQF_IO_STAT) just after block_io_start, so the creation
		 * program took it for unstamped and kept a start that no
		 * completion will ask for: drop it here, or the LRU fills
		 * with them (one per request on every such disk).
		 */
		if (rq_created_since_ns && !key_process)
			forget_rq_start(rq);
		return 0;
	}
	if (filtered_out(rq, direct))
		return 0;
	s = rq_start_slot(rq);
	if (!s)
		return 0;
	s->issue_ns = bpf_ktime_get_ns();
	s->bytes = direct ? rq->__data_len : BPF_CORE_READ(rq, __data_len);
	return 0;
}

static __always_inline int on_bio_queue(struct bio *bio, bool direct)
{
	struct gendisk *disk = bio_disk(bio, direct);
	struct bio_times s = {};
	__u64 key = (__u64)bio;

	if (!disk)
		return 0;
	if (!disk_bio_based(disk, direct))
		return 0;
	if (filter_dev && disk_dev(disk, direct) != filter_dev)
		return 0;
	if (key_cgroup || filter_cgroup) {
		s.cgroup = bio_cgroup(bio, direct);
		if (filter_cgroup && s.cgroup != filter_cgroup)
			return 0;
	}
	s.start_ns = bpf_ktime_get_ns();
	/* Not ours to count (another collector's, in a handover, which keeps
	 * its starts in the same map), or the lease is over. */
	if (!in_window(s.start_ns))
		return 0;
	s.bytes = direct ? bio->bi_iter.bi_size : BPF_CORE_READ(bio, bi_iter.bi_size);
	/* An LRU makes room by evicting older bios (their completions then
	 * count as bio_map_miss); it fails only when it cannot. */
	if (bpf_map_update_elem(&bio_starts, &key, &s, BPF_ANY))
		stat_inc(&stats, IOLAT_STAT_BIOMAP_FULL);
	return 0;
}

static __always_inline int on_bio_complete(struct request_queue *q, struct bio *bio, bool direct)
{
	struct iolat_key key = {};
	struct io_done c = {};
	struct bio_times *s;
	__u64 bkey = (__u64)bio;
	__u64 opf;

	if (!queue_bio_based(q, direct))
		return 0;
	key.dev = disk_dev(bio_disk(bio, direct), direct);
	if (filter_dev && key.dev != filter_dev)
		return 0;
	s = bpf_map_lookup_elem(&bio_starts, &bkey);
	if (!s) {
		/* Filtered out at queue time, or queued before iolat started. */
		if (!filter_cgroup && in_window(0) && !lease_over(bpf_ktime_get_ns()))
			stat_inc(&stats, IOLAT_STAT_BIOMAP_MISS);
		return 0;
	}
	if (!in_window(s->start_ns))
		return 0; /* another collector's: its entry stays for it */
	c.now = bpf_ktime_get_ns();
	c.start_ns = s->start_ns;
	/* No request layer: queue -> complete is both the device and the total time. */
	c.issue_ns = s->start_ns;
	c.bytes = s->bytes;
	key.cgroup = key_cgroup ? s->cgroup : 0;
	bpf_map_delete_elem(&bio_starts, &bkey);
	opf = direct ? bio->bi_opf : BPF_CORE_READ(bio, bi_opf);
	c.error = direct ? bio->bi_status : BPF_CORE_READ(bio, bi_status);
	key.op = op_of(opf);
	if (key_flags)
		key.flags = flags_of(opf);
	if (key_size_class)
		key.size_class = size_class_of(c.bytes);
	if (dense_rows)
		c.queue = queue_id(q, direct);
	account(&key, &c);
	return 0;
}

/*
 * Counts a run of program prog; returns the clock if this run is one to
 * time (the first of every IOLAT_SELFCOST_EVERY on this CPU), else 0. The
 * test is a mask on a per-CPU counter: a load, an add and a store.
 */
static __always_inline __u64 selfcost_run(__u32 prog)
{
	struct iolat_selfcost *s = bpf_map_lookup_elem(&selfcost, &prog);

	if (!s || (s->runs++ & (IOLAT_SELFCOST_EVERY - 1)))
		return 0;
	return bpf_ktime_get_ns();
}

/* The end of a timed run that began at from_ns. The slot is looked up
 * again rather than kept: nothing but the clock then lives across the
 * program's body, which spares the other runs a register or a spill. */
static __always_inline void selfcost_add(__u32 prog, __u64 from_ns)
{
	__u64 ns = bpf_ktime_get_ns() - from_ns;
	struct iolat_selfcost *s = bpf_map_lookup_elem(&selfcost, &prog);

	if (!s)
		return;
	s->sampled_ns += ns;
	s->sampled_runs++;
}

/*
 * SELF_TIMED(prog, call): call's value, the run counted and, one in
 * IOLAT_SELFCOST_EVERY, timed from just before call to just after it.
 * What the two reads cannot see (docs/serve.md, "BPF cost without
 * --bpf.stats"): the tracepoint's dispatch into the program, the program's
 * entry, the lookup and count above and the lookup and adds after the
 * second read; of the two reads' own cost about one read's worth is inside.
 * An interrupt's programs that run inside a timed run are in its time.
 */
#ifdef IOLAT_BENCH_WITHOUT_SELFCOST
#define SELF_TIMED(prog, call) (call)
#else
#define SELF_TIMED(prog, call)                                                                     \
	({                                                                                         \
		__u64 from_ = selfcost_run(prog);                                                  \
		int rc_ = (call);                                                                  \
                                                                                                   \
		if (from_)                                                                         \
			selfcost_add(prog, from_);                                                 \
		rc_;                                                                               \
	})
#endif

/* block_rq_complete and block_io_start are (rq, ...) on every kernel,
 * block_bio_complete is (q, bio). */
TP_PAIR(rq_complete, block_rq_complete,
	SELF_TIMED(IOLAT_PROG_RQ_COMPLETE, on_rq_complete((struct request *)ctx[0], (int)ctx[1],
							  (unsigned int)ctx[2], direct)))
TP_PAIR(rq_issue, block_rq_issue, SELF_TIMED(IOLAT_PROG_RQ_ISSUE, on_rq_issue(rq_arg(ctx), direct)))
TP_PAIR(io_start, block_io_start,
	SELF_TIMED(IOLAT_PROG_IO_START, on_rq_start((struct request *)ctx[0], direct, true)))
TP_PAIR(rq_insert, block_rq_insert,
	SELF_TIMED(IOLAT_PROG_RQ_INSERT, on_rq_start(rq_arg(ctx), direct, false)))
TP_PAIR(bio_queue, block_bio_queue,
	SELF_TIMED(IOLAT_PROG_BIO_QUEUE, on_bio_queue(bio_arg(ctx), direct)))
TP_PAIR(bio_complete, block_bio_complete,
	SELF_TIMED(IOLAT_PROG_BIO_COMPLETE,
		   on_bio_complete((struct request_queue *)ctx[0], (struct bio *)ctx[1], direct)))
