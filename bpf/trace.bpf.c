// SPDX-License-Identifier: GPL-2.0
/*
 * trace.bpf.c - the kernel half of `iolat trace`: follows sampled bios
 * through the block layer's stages and emits one record per I/O, with every
 * stage's timestamp, to a ring buffer.
 *
 * block_bio_queue decides, once per bio, whether it is followed (filters,
 * then 1-in-N sampling); a followed bio waits in `bios`, keyed by the bio.
 * At its request's first request-level event (insert, issue, requeue,
 * complete) it is found through rq->bio, the request's first bio, and moves
 * to `rqs`, keyed by the request; at completion the record is emitted. A
 * bio merged into an existing request ends its record at the merge (M).
 *
 * Unsampled I/O stays cheap: every stage below the queue returns before any
 * map lookup while no followed bio is in flight (`in_flight`).
 *
 * Every program exists twice, tp_btf and raw_tp; user space loads one set.
 * Both read through BPF_CORE_READ (probe reads): the cost is the sampled
 * path's, not every I/O's.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "iolat.h"
#include "trace.h"
#include "block.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space between open and load. */
const volatile __u32 filter_dev = 0;	  /* 0: every disk */
const volatile __u64 filter_cgroup = 0;	  /* 0: every cgroup */
const volatile __s32 filter_cgroup_level = 0;
const volatile __u32 filter_pid = 0;	  /* tgid; 0: every process */
const volatile __u32 filter_op = TRACE_OP_ANY;
const volatile __u32 sample_every = 1;	  /* follow 1 bio in N (per CPU) */
const volatile __u64 min_ns = 0;	  /* emit only Q2C >= min_ns; 0: all */
const volatile __u64 wake_bytes = 0;	  /* wake the reader at this much data */
/* Before 5.11 (commit a54895fa057c and its series) the block tracepoints
 * took the request queue first: rq events (q, rq), bio events (q, bio),
 * the bio merges (q, rq, bio). User space reads the layouts from BTF. */
const volatile bool rq_tp_has_queue = false;
const volatile bool bio_tp_has_queue = false;
/* Syscall linkage (--syscalls): the syscall numbers to link, a bit each.
 * The sys_enter/sys_exit programs are loaded only when it is on. */
const volatile bool link_syscalls = false;
const volatile __u64 sys_mask[TRACE_SYS_MAX / 64] = {};

/* Followed bios and requests in flight: the lower stages' fast exit.
 * LRU evictions are not subtracted, so it can only err high (costing
 * lookups, never records). */
__u64 in_flight = 0;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct trace_record);
} bios SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct trace_record);
} rqs SEC(".maps");

/* Threads inside a listed syscall, by tid. An entry is kept after the
 * syscall (enter_ns 0) so that the next one costs a lookup, not an insert;
 * LRU keeps the threads that come and go bounded. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct trace_sys_thread);
} sys_threads SEC(".maps");

/* Per CPU: bios seen since the last one followed. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sample_count SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TRACE_STAT_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Sized by user space (--ringbuf-kib). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} records SEC(".maps");

static __always_inline void stat_inc(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&stats, &which);

	if (c)
		*c += 1;
}



/* The kernel's __REQ_* bits (they moved between releases), via CO-RE. */
static __always_inline __u32 flags_of(__u64 f)
{
	__u32 out = 0;

	out |= flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC), IOLAT_F_SYNC);
	out |= flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_META), IOLAT_F_META);
	out |= flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_FUA), IOLAT_F_FUA);
	out |= flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH), IOLAT_F_PREFLUSH);
	out |= flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_RAHEAD), IOLAT_F_RAHEAD);
	return out;
}




/*
 * The cgroup a bio was issued for (its blkcg's cgroup); with a cgroup
 * filter, its ancestor at the filter's level, so a parent takes in its
 * children. 0 when the bio has no association.
 */
static __always_inline __u64 bio_cgroup(struct bio *bio, __u64 *own)
{
	struct cgroup *cg;
	int level;

	*own = 0;
	if (!bpf_core_field_exists(bio->bi_blkg))
		return 0;
	cg = BPF_CORE_READ(bio, bi_blkg, blkcg, css.cgroup);
	if (!cg)
		return 0;
	*own = cgroup_id(cg);
	if (!filter_cgroup)
		return *own;
	level = BPF_CORE_READ(cg, level);
	if (level < filter_cgroup_level)
		return 0;
	if (bpf_core_field_exists(cg->ancestors)) {
		struct cgroup *anc = NULL;

		bpf_core_read(&anc, sizeof(anc), &cg->ancestors[filter_cgroup_level & 0xff]);
		return anc ? cgroup_id(anc) : 0;
	} else {
		struct cgroup___old *old = (void *)cg;
		__u64 id = 0;

		bpf_core_read(&id, sizeof(id), &old->ancestor_ids[filter_cgroup_level & 0xff]);
		return id;
	}
}

/* Whether this CPU's turn to follow a bio has come (1 in sample_every). */
static __always_inline bool sampled(void)
{
	__u32 zero = 0;
	__u64 *n;

	if (sample_every <= 1)
		return true;
	n = bpf_map_lookup_elem(&sample_count, &zero);
	if (!n)
		return false;
	if (++*n < sample_every)
		return false;
	*n = 0;
	return true;
}

/*
 * Queue: the one program every I/O pays for fully, so the filters come
 * first, the sampling decision next, and the record is built only for a
 * bio that is followed. `direct` (tp_btf, typed pointers) loads fields
 * without a helper call each.
 */
static __always_inline int on_bio_queue(struct bio *bio, bool direct)
{
	struct gendisk *disk = NULL;
	struct trace_record r;
	__u64 key = (__u64)bio, id, cg = 0, own = 0, opf;
	__u32 dev;
	__u8 op;

	if (direct && bpf_core_field_exists(bio->bi_bdev))
		disk = bio->bi_bdev ? bio->bi_bdev->bd_disk : NULL;
	else
		disk = bio_disk(bio, false);
	if (!disk)
		return 0;
	/* Bio-based disks (dm, md, zram) make no request events: not traced. */
	if (!(direct ? disk->queue->mq_ops : BPF_CORE_READ(disk, queue, mq_ops)))
		return 0;
	if (direct)
		dev = ((__u32)disk->major << 20) | (__u32)disk->first_minor;
	else
		dev = disk_dev(disk, false);
	if (filter_dev && dev != filter_dev)
		return 0;
	id = bpf_get_current_pid_tgid();
	if (filter_pid && (__u32)(id >> 32) != filter_pid)
		return 0;
	opf = direct ? bio->bi_opf : BPF_CORE_READ(bio, bi_opf);
	op = op_of(opf);
	if ((filter_op == TRACE_OP_READ && op != IOLAT_OP_READ) ||
	    (filter_op == TRACE_OP_WRITE && op != IOLAT_OP_WRITE))
		return 0;
	if (filter_cgroup) {
		cg = bio_cgroup(bio, &own);
		if (cg != filter_cgroup)
			return 0;
	}
	if (!sampled())
		return 0;
	__builtin_memset(&r, 0, sizeof(r));
	r.ts[TRACE_Q] = bpf_ktime_get_ns();
	r.dev = dev;
	r.op = op;
	r.rq_flags = flags_of(opf);
	if (!filter_cgroup)
		bio_cgroup(bio, &own);
	r.cgroup = own;
	r.pid = id >> 32;
	r.tid = (__u32)id;
	r.sector = BPF_CORE_READ(bio, bi_iter.bi_sector);
	r.bytes = BPF_CORE_READ(bio, bi_iter.bi_size);
	bpf_get_current_comm(r.comm, sizeof(r.comm));
	if (link_syscalls) {
		__u32 tid = (__u32)id;
		struct trace_sys_thread *st = bpf_map_lookup_elem(&sys_threads, &tid);

		if (st && st->enter_ns) {
			r.sys_enter_ns = st->enter_ns;
			r.sys_nr = st->nr;
			st->bios++;
		}
	}
	/*
	 * An entry left under this bio's address belongs to an earlier bio whose
	 * end was never seen (a completion BPF missed, or a bio front-merged
	 * ahead of it so that its request's events never found it): replace
	 * it, counted as dropped.
	 */
	if (bpf_map_update_elem(&bios, &key, &r, BPF_NOEXIST) == 0) {
		__sync_fetch_and_add(&in_flight, 1);
	} else {
		stat_inc(TRACE_STAT_STALE);
		bpf_map_update_elem(&bios, &key, &r, BPF_ANY);
	}
	return 0;
}

/* The followed bio's entry, or NULL; no lookup while nothing is in flight. */
static __always_inline struct trace_record *bio_entry(struct bio *bio)
{
	__u64 key = (__u64)bio;

	if (!in_flight || !bio)
		return NULL;
	return bpf_map_lookup_elem(&bios, &key);
}

static __always_inline int on_getrq(struct bio *bio)
{
	struct trace_record *r = bio_entry(bio);

	if (r)
		r->ts[TRACE_G] = bpf_ktime_get_ns();
	return 0;
}

/* A piece was split off the front of the bio: the piece (`split`) is chained
 * to the bio (split->bi_private), which carries on with the rest. The record
 * follows the rest; the pieces are only counted. */
static __always_inline int on_split(struct bio *split)
{
	struct trace_record *r;

	if (!in_flight || !split)
		return 0;
	r = bio_entry(BPF_CORE_READ(split, bi_private));
	if (r)
		r->splits++;
	return 0;
}

/*
 * The request's record: in `rqs` already, or moved there from `bios` if
 * its first bio is followed. NULL for a request nobody follows.
 *
 * Request structures are reused, so an entry whose completion BPF did not
 * see (README: "Known error bounds and misses") would be taken for the
 * next request in the same structure. At an insert or issue (`starts`), an
 * entry that was issued already and not requeued since belongs to such an
 * earlier life: it is dropped and counted, not mixed into this request.
 */
static __always_inline struct trace_record *rq_entry(struct request *rq, bool starts)
{
	__u64 key = (__u64)rq, bkey;
	struct trace_record *r;

	if (!in_flight)
		return NULL;
	r = bpf_map_lookup_elem(&rqs, &key);
	if (r && starts && r->ts[TRACE_D] && r->ts[TRACE_R] < r->ts[TRACE_D]) {
		if (bpf_map_delete_elem(&rqs, &key) == 0) {
			__sync_fetch_and_sub(&in_flight, 1);
			stat_inc(TRACE_STAT_STALE);
		}
		r = NULL;
	}
	if (r)
		return r;
	bkey = (__u64)BPF_CORE_READ(rq, bio);
	if (!bkey)
		return NULL;
	r = bpf_map_lookup_elem(&bios, &bkey);
	if (!r)
		return NULL;
	if (bpf_map_update_elem(&rqs, &key, r, BPF_ANY))
		return NULL;
	bpf_map_delete_elem(&bios, &bkey);
	return bpf_map_lookup_elem(&rqs, &key);
}

static __always_inline int on_rq_insert(struct request *rq)
{
	struct trace_record *r = rq_entry(rq, true);

	/* The first insert: a requeued request is inserted again. */
	if (r && !r->ts[TRACE_I])
		r->ts[TRACE_I] = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int on_rq_issue(struct request *rq)
{
	struct trace_record *r = rq_entry(rq, true);

	if (r)
		r->ts[TRACE_D] = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int on_rq_requeue(struct request *rq)
{
	struct trace_record *r = rq_entry(rq, false);

	if (r) {
		r->ts[TRACE_R] = bpf_ktime_get_ns();
		r->requeues++;
	}
	return 0;
}

/* Copies r to the ring buffer, or counts it lost. */
static __always_inline void submit(const struct trace_record *r)
{
	struct trace_record *out = bpf_ringbuf_reserve(&records, sizeof(*out), 0);

	if (!out) {
		stat_inc(TRACE_STAT_LOST);
		return;
	}
	__builtin_memcpy(out, r, sizeof(*out));
	/*
	 * Waking the reader per record costs an interrupt (irq_work) per I/O:
	 * measured at ~8 us per completion here. Wake it once a quarter of the
	 * buffer is waiting; it also polls on a short timer for the rest.
	 */
	bpf_ringbuf_submit(out, bpf_ringbuf_query(&records, BPF_RB_AVAIL_DATA) >= wake_bytes
					? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

/* Emits r (completed now) unless the threshold drops it. */
static __always_inline void emit(struct trace_record *r, __u64 now, int error)
{
	r->ts[TRACE_C] = now;
	r->error = error;
	if (min_ns && now - r->ts[TRACE_Q] < min_ns) {
		stat_inc(TRACE_STAT_FAST);
		return;
	}
	submit(r);
}

/*
 * The bio joined a request that exists already. Back-merged, it is not the
 * request's first bio, so the request's events will not find it; front-
 * merged, the request is followed (or not) through its earlier first bio.
 * And block_bio_complete does not fire for bios that end with a request
 * (blk_update_request clears BIO_TRACE_COMPLETION). So its record ends here,
 * with Q and M: per-bio completion of merged bios is future work. Under a
 * threshold there is no Q2C to judge it by: counted, not shown.
 */
static __always_inline int on_merge(struct bio *bio)
{
	struct trace_record *r = bio_entry(bio);
	__u64 key = (__u64)bio;

	if (!r)
		return 0;
	r->ts[TRACE_M] = bpf_ktime_get_ns();
	r->flags |= TRACE_F_MERGED;
	if (min_ns)
		stat_inc(TRACE_STAT_MERGED_HIDDEN);
	else
		submit(r);
	if (bpf_map_delete_elem(&bios, &key) == 0)
		__sync_fetch_and_sub(&in_flight, 1);
	return 0;
}

static __always_inline int on_rq_complete(struct request *rq, int error, __u32 nr_bytes)
{
	struct trace_record *r;
	__u64 key = (__u64)rq;

	if (!in_flight)
		return 0;
	/* A request may complete in pieces: it is done at the last one. */
	if (nr_bytes < BPF_CORE_READ(rq, __data_len))
		return 0;
	r = rq_entry(rq, false);
	if (!r)
		return 0;
	emit(r, bpf_ktime_get_ns(), error);
	if (bpf_map_delete_elem(&rqs, &key) == 0)
		__sync_fetch_and_sub(&in_flight, 1);
	return 0;
}

/* A followed bio still in `bios` at its end never got a request: it failed
 * before (request-based bios that got one do not fire block_bio_complete). */
static __always_inline int on_bio_complete(struct bio *bio)
{
	struct trace_record *r = bio_entry(bio);
	__u64 key = (__u64)bio;

	if (!r)
		return 0;
	r->flags |= TRACE_F_BIO_DONE;
	emit(r, bpf_ktime_get_ns(), BPF_CORE_READ(bio, bi_status));
	if (bpf_map_delete_elem(&bios, &key) == 0)
		__sync_fetch_and_sub(&in_flight, 1);
	return 0;
}

static __always_inline struct request *rq_arg(unsigned long long *ctx)
{
	return (struct request *)(rq_tp_has_queue ? ctx[1] : ctx[0]);
}

static __always_inline struct bio *bio_arg(unsigned long long *ctx)
{
	return (struct bio *)(bio_tp_has_queue ? ctx[1] : ctx[0]);
}

/* block_bio_backmerge/frontmerge were (q, rq, bio) before 5.11. */
static __always_inline struct bio *merge_arg(unsigned long long *ctx)
{
	return (struct bio *)(bio_tp_has_queue ? ctx[2] : ctx[0]);
}

/* One program per stage and attach mode; user space loads one mode. */
SEC("tp_btf/block_bio_queue")
int BPF_PROG(trace_q_btf, struct bio *bio)
{
	/* Typed loads need the typed argument: (bio) since 5.11 only. */
	if (bio_tp_has_queue)
		return on_bio_queue(bio_arg(ctx), false);
	return on_bio_queue(bio, true);
}

SEC("raw_tp/block_bio_queue")
int trace_q_raw(unsigned long long *ctx)
{
	return on_bio_queue(bio_arg(ctx), false);
}

SEC("tp_btf/block_getrq")
int trace_g_btf(unsigned long long *ctx)
{
	return on_getrq(bio_arg(ctx));
}

SEC("raw_tp/block_getrq")
int trace_g_raw(unsigned long long *ctx)
{
	return on_getrq(bio_arg(ctx));
}

SEC("tp_btf/block_split")
int trace_x_btf(unsigned long long *ctx)
{
	return on_split(bio_arg(ctx));
}

SEC("raw_tp/block_split")
int trace_x_raw(unsigned long long *ctx)
{
	return on_split(bio_arg(ctx));
}

SEC("tp_btf/block_bio_backmerge")
int trace_mb_btf(unsigned long long *ctx)
{
	return on_merge(merge_arg(ctx));
}

SEC("raw_tp/block_bio_backmerge")
int trace_mb_raw(unsigned long long *ctx)
{
	return on_merge(merge_arg(ctx));
}

SEC("tp_btf/block_bio_frontmerge")
int trace_mf_btf(unsigned long long *ctx)
{
	return on_merge(merge_arg(ctx));
}

SEC("raw_tp/block_bio_frontmerge")
int trace_mf_raw(unsigned long long *ctx)
{
	return on_merge(merge_arg(ctx));
}

SEC("tp_btf/block_rq_insert")
int trace_i_btf(unsigned long long *ctx)
{
	return on_rq_insert(rq_arg(ctx));
}

SEC("raw_tp/block_rq_insert")
int trace_i_raw(unsigned long long *ctx)
{
	return on_rq_insert(rq_arg(ctx));
}

SEC("tp_btf/block_rq_issue")
int trace_d_btf(unsigned long long *ctx)
{
	return on_rq_issue(rq_arg(ctx));
}

SEC("raw_tp/block_rq_issue")
int trace_d_raw(unsigned long long *ctx)
{
	return on_rq_issue(rq_arg(ctx));
}

SEC("tp_btf/block_rq_requeue")
int trace_r_btf(unsigned long long *ctx)
{
	return on_rq_requeue(rq_arg(ctx));
}

SEC("raw_tp/block_rq_requeue")
int trace_r_raw(unsigned long long *ctx)
{
	return on_rq_requeue(rq_arg(ctx));
}

/* block_rq_complete has always been (rq, error, nr_bytes). */
SEC("tp_btf/block_rq_complete")
int trace_c_btf(unsigned long long *ctx)
{
	return on_rq_complete((struct request *)ctx[0], (int)ctx[1], (__u32)ctx[2]);
}

SEC("raw_tp/block_rq_complete")
int trace_c_raw(unsigned long long *ctx)
{
	return on_rq_complete((struct request *)ctx[0], (int)ctx[1], (__u32)ctx[2]);
}

/* block_bio_complete is (q, bio) on every kernel. */
SEC("tp_btf/block_bio_complete")
int trace_bc_btf(unsigned long long *ctx)
{
	return on_bio_complete((struct bio *)ctx[1]);
}

SEC("raw_tp/block_bio_complete")
int trace_bc_raw(unsigned long long *ctx)
{
	return on_bio_complete((struct bio *)ctx[1]);
}

/*
 * Syscall linkage. raw_syscalls:sys_enter and sys_exit fire for every
 * syscall on the machine, so both return after a bit test (and the pid
 * filter) for syscalls not listed; a listed one costs a hash lookup at
 * each end. The number is the kernel's own ABI: a 32-bit (compat) task's
 * numbers are another table's, and are taken as the native ones.
 */
static __always_inline bool sys_listed(__u64 nr)
{
	if (nr >= TRACE_SYS_MAX)
		return false;
	return (sys_mask[nr / 64] >> (nr % 64)) & 1;
}

static __always_inline int on_sys_enter(long nr)
{
	struct trace_sys_thread *st, fresh = {};
	__u64 id;
	__u32 tid;

	if (!sys_listed((__u64)nr))
		return 0;
	id = bpf_get_current_pid_tgid();
	if (filter_pid && (__u32)(id >> 32) != filter_pid)
		return 0;
	tid = (__u32)id;
	st = bpf_map_lookup_elem(&sys_threads, &tid);
	if (st) {
		st->nr = (__u32)nr;
		st->bios = 0;
		st->enter_ns = bpf_ktime_get_ns();
		return 0;
	}
	fresh.nr = (__u32)nr;
	fresh.enter_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&sys_threads, &tid, &fresh, BPF_ANY);
	return 0;
}

/*
 * The number of the syscall ending, from the registers (sys_exit does not
 * pass it), or -1 where this architecture's register is not read here.
 */
static __always_inline long exit_nr(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	/* syscall_get_nr(), arch/x86/include/asm/syscall.h */
	return BPF_CORE_READ(regs, orig_ax);
#else
	/* Not done for other architectures yet: every exit then costs the
	 * thread lookup. */
	(void)regs;
	return -1;
#endif
}

/* The syscall's record, if a followed bio was queued inside it. */
static __always_inline int on_sys_exit(struct pt_regs *regs, long ret)
{
	struct trace_sys_thread *st;
	struct trace_syscall *out;
	__u64 id, now;
	long nr = exit_nr(regs);
	__u32 tid;

	/* Unlisted syscalls return before the map: every syscall passes here. */
	if (nr >= 0 && !sys_listed((__u64)nr))
		return 0;
	id = bpf_get_current_pid_tgid();
	if (filter_pid && (__u32)(id >> 32) != filter_pid)
		return 0;
	tid = (__u32)id;
	st = bpf_map_lookup_elem(&sys_threads, &tid);
	if (!st || !st->enter_ns)
		return 0;
	if (!st->bios) {
		st->enter_ns = 0;
		return 0;
	}
	now = bpf_ktime_get_ns();
	/* Under a threshold: a syscall is at least as slow as any I/O in it,
	 * so one faster than the threshold has no record shown either. */
	if (min_ns && now - st->enter_ns < min_ns) {
		st->enter_ns = 0;
		return 0;
	}
	out = bpf_ringbuf_reserve(&records, sizeof(*out), 0);
	if (!out) {
		stat_inc(TRACE_STAT_LOST);
		st->enter_ns = 0;
		return 0;
	}
	out->enter_ns = st->enter_ns;
	out->exit_ns = now;
	out->ret = ret;
	out->pid = id >> 32;
	out->tid = tid;
	out->nr = st->nr;
	out->bios = st->bios;
	bpf_get_current_comm(out->comm, sizeof(out->comm));
	st->enter_ns = 0;
	bpf_ringbuf_submit(out, bpf_ringbuf_query(&records, BPF_RB_AVAIL_DATA) >= wake_bytes
					? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}

/* raw_syscalls: sys_enter is (regs, id), sys_exit (regs, ret). The exit
 * does not carry the number: the thread's entry has it. */
SEC("tp_btf/sys_enter")
int trace_se_btf(unsigned long long *ctx)
{
	return on_sys_enter((long)ctx[1]);
}

SEC("raw_tp/sys_enter")
int trace_se_raw(unsigned long long *ctx)
{
	return on_sys_enter((long)ctx[1]);
}

SEC("tp_btf/sys_exit")
int trace_sx_btf(unsigned long long *ctx)
{
	return on_sys_exit((struct pt_regs *)ctx[0], (long)ctx[1]);
}

SEC("raw_tp/sys_exit")
int trace_sx_raw(unsigned long long *ctx)
{
	return on_sys_exit((struct pt_regs *)ctx[0], (long)ctx[1]);
}
