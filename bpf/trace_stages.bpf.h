/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace_stages.bpf.h - trace.bpf.c's block stages: a bio's way from queue
 * to completion, and its record.
 *
 * block_bio_queue decides, once per bio, whether it is followed (filters,
 * then 1-in-N sampling); a followed bio's record lives in `bios`, keyed by
 * the bio, until its end. A request's events (insert, issue, requeue,
 * complete) walk the request's bios and stamp every followed one, so a bio
 * merged into a request, or one of many in it, has its own complete record.
 * A piece split off a followed bio is followed too, linked to it. On disks
 * without requests (dm, md, zram) a record has Q and C (block_bio_complete).
 *
 * Included once, by trace.bpf.c, last: the queue program links a bio to
 * its syscall (trace_syscalls.bpf.h) and to the page-cache walk's result
 * (trace_pagecache.bpf.h).
 */

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TRACE_BIOS_MAX);
	__type(key, __u64);
	__type(value, struct trace_record);
} bios SEC(".maps");

/* Followed bios of bio-based disks (dm, md), by disk and first sector:
 * what block_bio_remap names, to link the bios they are remapped to. */
struct upper_key {
	__u64 sector;
	__u32 dev;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct upper_key);
	__type(value, __u64); /* the followed bio's record id */
} uppers SEC(".maps");

/* Per CPU: bios seen since the last one followed. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sample_count SEC(".maps");

/* What the queue program learns of a bio before deciding to follow it. */
struct queued {
	__u64 id; /* pid_tgid */
	__u64 opf;
	__u64 own_cgroup;
	__u32 dev;
	__u8 op;
	bool bio_based;
};

/*
 * Whether the bio is followed: the filters first, then the sampling turn.
 * `direct` (tp_btf, typed pointers) loads fields without a helper call each.
 */
static __always_inline bool follows(struct bio *bio, bool direct, struct queued *q,
				    enum sys_turn turn)
{
	struct gendisk *disk = bio_disk(bio, direct);
	struct cgroup *cg = NULL;

	if (!disk)
		return false;
	q->dev = disk_dev(disk, direct);
	if (filter_dev && q->dev != filter_dev)
		return false;
	q->id = bpf_get_current_pid_tgid();
	if (turn != TURN_LINKED && pid_filtered_out(q->id))
		return false;
	q->opf = direct ? bio->bi_opf : BPF_CORE_READ(bio, bi_opf);
	q->op = op_of(q->opf);
	if ((filter_op == TRACE_OP_READ && q->op != IOLAT_OP_READ) ||
	    (filter_op == TRACE_OP_WRITE && q->op != IOLAT_OP_WRITE))
		return false;
	/* The record keeps the bio's own cgroup; the filter compares its
	 * ancestor at the filter's level. */
	if (filter_cgroup) {
		cg = bio_blkcg_cgroup(bio, false);
		if (turn != TURN_LINKED &&
		    (!cg || cgroup_ancestor_id(cg, filter_cgroup_level) != filter_cgroup))
			return false;
	}
	if (turn == TURN_SKIP || (turn == TURN_SAMPLE && !turn_of(&sample_count, 0)))
		return false;
	if (!filter_cgroup)
		cg = bio_blkcg_cgroup(bio, false);
	q->own_cgroup = cgroup_id(cg, false);
	q->bio_based = disk_bio_based(disk, direct);
	return true;
}

/* Stops following the bio at `key`; false if it was not followed. */
static __always_inline bool unfollow(__u64 key)
{
	if (bpf_map_delete_elem(&bios, &key))
		return false;
	__sync_fetch_and_sub(&in_flight, 1);
	return true;
}

/*
 * An entry under the address of a bio that is not followed belongs to an
 * earlier bio whose end was never seen (a completion BPF missed): were it
 * left, this bio's request events would be taken for its. Only while
 * something is followed, so unsampled I/O pays nothing otherwise.
 */
static __always_inline void forget_stale(__u64 key)
{
	if (in_flight && unfollow(key))
		stat_inc(&stats, TRACE_STAT_STALE);
}

/* Starts following the bio at `key` with record r (with a new id unless r
 * has one); replaces (and counts) an entry left by an earlier bio at the
 * same address. */
static __always_inline void follow(__u64 key, struct trace_record *r)
{
	if (!r->id)
		r->id = next_id();
	if (bpf_map_update_elem(&bios, &key, r, BPF_NOEXIST) == 0) {
		__sync_fetch_and_add(&in_flight, 1);
	} else {
		stat_inc(&stats, TRACE_STAT_STALE);
		bpf_map_update_elem(&bios, &key, r, BPF_ANY);
	}
}

/* A bio remapped from a followed one is queued on the device below: its
 * queue time is now, whatever the sampling said. */
static __always_inline bool queue_remapped(__u64 key)
{
	struct trace_record *r;

	if (!in_flight)
		return false;
	r = bpf_map_lookup_elem(&bios, &key);
	if (!r || !(r->flags & TRACE_F_REMAP) || r->ts[TRACE_Q])
		return false;
	r->ts[TRACE_Q] = bpf_ktime_get_ns();
	return true;
}

/*
 * block_bio_remap: dm or md sends bio (a clone, or the bio itself) to the
 * device below, for sector `from` of disk `dev` above. If a followed bio
 * sits there, the remapped one is followed too, as its child: one chain
 * from the dm/md device to the request on each leg (raid1 writes: one per
 * leg).
 */
static __always_inline int on_remap(struct bio *bio, __u32 dev, __u64 from)
{
	struct upper_key u = { .sector = from, .dev = dev };
	struct trace_record r;
	struct gendisk *disk;
	__u64 *parent, opf;

	if (!in_flight || !bio)
		return 0;
	parent = bpf_map_lookup_elem(&uppers, &u);
	if (!parent)
		return 0;
	disk = bio_disk(bio, false);
	__builtin_memset(&r, 0, sizeof(r));
	r.parent = *parent;
	r.flags = TRACE_F_REMAP;
	r.dev = disk_dev(disk, false);
	if (disk_bio_based(disk, false))
		r.flags |= TRACE_F_BIO_BASED;
	opf = BPF_CORE_READ(bio, bi_opf);
	r.op = op_of(opf);
	r.rq_flags = flags_of(opf);
	r.cgroup = cgroup_id(bio_blkcg_cgroup(bio, false), false);
	r.pid = bpf_get_current_pid_tgid() >> 32;
	r.tid = (__u32)bpf_get_current_pid_tgid();
	r.sector = BPF_CORE_READ(bio, bi_iter.bi_sector);
	r.bytes = BPF_CORE_READ(bio, bi_iter.bi_size);
	bpf_get_current_comm(r.comm, sizeof(r.comm));
	follow((__u64)bio, &r);
	return 0;
}

/*
 * Queue: the one program every I/O pays for fully, so the filters come
 * first, the sampling decision next, and the record is built only for a
 * bio that is followed. A write carrying followed writes' dirty data is
 * followed whatever the sampling says (those writes were sampled).
 */
static __always_inline int on_bio_queue(struct bio *bio, bool direct)
{
	struct trace_sys_thread *st = NULL;
	struct pc_sum pc = {};
	struct trace_record r;
	struct queued q = {};
	__u64 key = (__u64)bio, pc_id = 0, now;
	enum sys_turn turn;
	bool fault;

	if (queue_remapped(key))
		return 0;
	if (link_syscalls) {
		__u32 tid = (__u32)bpf_get_current_pid_tgid();

		st = bpf_map_lookup_elem(&sys_threads, &tid);
	}
	now = bpf_ktime_get_ns();
	if (link_page_cache) {
		__u32 zero = 0;
		struct pc_result *res = bpf_map_lookup_elem(&pc_results, &zero);

		/* The walk (trace_pcq, which runs first) linked this bio. */
		if (res && res->bio == key) {
			pc = res->sum;
			pc_id = res->run.bio_id;
			now = res->run.queue_ns;
			res->bio = 0;
		}
	}
	turn = pc.links ? TURN_LINKED : sys_turn_of(st);
	fault = turn == TURN_SAMPLE && in_fault(bio, st, now);
	if (fault)
		turn = st->fault_sampled ? TURN_FOLLOW : TURN_SKIP;
	if (!follows(bio, direct, &q, turn)) {
		forget_stale(key);
		return 0;
	}
	__builtin_memset(&r, 0, sizeof(r));
	r.id = pc_id;
	r.ts[TRACE_Q] = now;
	r.dev = q.dev;
	r.op = q.op;
	r.rq_flags = flags_of(q.opf);
	r.flags = q.bio_based ? TRACE_F_BIO_BASED : 0;
	r.cgroup = q.own_cgroup;
	r.pid = q.id >> 32;
	r.tid = (__u32)q.id;
	r.sector = BPF_CORE_READ(bio, bi_iter.bi_sector);
	r.bytes = BPF_CORE_READ(bio, bi_iter.bi_size);
	r.pc_dirty_ns = pc.dirty_ns;
	r.pc_bytes = pc.bytes;
	r.pc_links = pc.links;
	bpf_get_current_comm(r.comm, sizeof(r.comm));
	if (fault && st) {
		r.sys_enter_ns = st->fault_at;
		r.sys_nr = TRACE_SYS_FAULT;
		r.fault_ino = st->fault_ino;
		r.fault_index = st->fault_index;
	} else if (link_syscalls) {
		link_syscall(&r, st);
	}
	follow(key, &r);
	if (q.bio_based) {
		struct upper_key u = { .sector = r.sector, .dev = r.dev };

		bpf_map_update_elem(&uppers, &u, &r.id, BPF_ANY);
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

/*
 * A piece (`split`) was cut off the front of a followed bio, which carries
 * on with the rest (split->bi_private is the bio, bio_chain()). The piece
 * gets its own record, linked to the bio's by `parent`, and goes through
 * its own request; the bio's record keeps the rest's bytes.
 */
static __always_inline int on_split(struct bio *split)
{
	struct trace_record *r, piece;

	if (!in_flight || !split)
		return 0;
	r = bio_entry(BPF_CORE_READ(split, bi_private));
	if (!r)
		return 0;
	__builtin_memcpy(&piece, r, sizeof(piece));
	piece.parent = r->id;
	piece.flags |= TRACE_F_SPLIT;
	piece.splits = 0;
	piece.sector = BPF_CORE_READ(split, bi_iter.bi_sector);
	piece.bytes = BPF_CORE_READ(split, bi_iter.bi_size);
	r->splits++;
	r->bytes -= piece.bytes < r->bytes ? piece.bytes : r->bytes;
	r->sector += piece.bytes >> 9;
	follow((__u64)split, &piece);
	return 0;
}

/* A followed bio's end: emitted unless the threshold drops it. */
static __always_inline void finish(__u64 key, struct trace_record *r, __u64 now, int error)
{
	r->ts[TRACE_C] = now;
	r->error = error;
	if (min_ns && now - r->ts[TRACE_Q] < min_ns)
		stat_inc(&stats, TRACE_STAT_FAST);
	else
		emit(r, sizeof(*r));
	unfollow(key);
}

/* A request's events, applied to each followed bio it holds. */
enum rq_event {
	RQ_INSERT,
	RQ_ISSUE,
	RQ_REQUEUE,
	RQ_COMPLETE,
};

/*
 * Request structures and bios are reused. An entry that was issued already
 * and not requeued since, seen at an insert or issue, belongs to an earlier
 * life whose completion BPF did not see (README: "Known error bounds and
 * misses"): dropped and counted, not mixed into this I/O.
 */
static __always_inline bool stale_at_start(__u64 key, struct trace_record *r)
{
	if (!r->ts[TRACE_D] || r->ts[TRACE_R] >= r->ts[TRACE_D])
		return false;
	if (unfollow(key))
		stat_inc(&stats, TRACE_STAT_STALE);
	return true;
}

struct rq_walk {
	enum rq_event ev;
	__u64 now;
	__u64 rq_sector;
	__u32 rq_bytes;
	__u32 nr_bytes; /* RQ_COMPLETE: bytes completing, from the front */
	int error;
	__u64 k_start_ns, k_issue_ns; /* RQ_COMPLETE: the request's own stamps */
};

static __always_inline void rq_apply(const struct rq_walk *w, __u64 key, struct trace_record *r)
{
	switch (w->ev) {
	case RQ_INSERT:
		/* The first insert: a requeued request is inserted again. */
		if (!stale_at_start(key, r) && !r->ts[TRACE_I])
			r->ts[TRACE_I] = w->now;
		break;
	case RQ_ISSUE:
		if (stale_at_start(key, r))
			break;
		r->ts[TRACE_D] = w->now;
		r->rq_sector = w->rq_sector;
		r->rq_bytes = w->rq_bytes;
		break;
	case RQ_REQUEUE:
		r->ts[TRACE_R] = w->now;
		r->requeues++;
		break;
	case RQ_COMPLETE:
		r->k_start_ns = w->k_start_ns;
		r->k_issue_ns = w->k_issue_ns;
		finish(key, r, w->now, w->error);
		break;
	}
}

/*
 * Walks the request's bios (rq->bio, then bi_next) and applies the event to
 * every followed one, so each bio of a multi-bio request, merged ones
 * included, has its own record. A completion may be partial: it covers
 * nr_bytes from the front, so the walk stops at the first bio not wholly
 * inside them (at the tracepoint the bios are not ended yet).
 */
static __always_inline int on_rq_event(struct request *rq, struct rq_walk *w)
{
	struct bio *bio;
	__u64 done = 0;

	if (!in_flight)
		return 0;
	w->now = bpf_ktime_get_ns();
	if (w->ev == RQ_ISSUE) {
		w->rq_sector = BPF_CORE_READ(rq, __sector);
		w->rq_bytes = BPF_CORE_READ(rq, __data_len);
	}
	bio = BPF_CORE_READ(rq, bio);
	for (int i = 0; i < TRACE_WALK_MAX && bio; i++) {
		struct bio *next = BPF_CORE_READ(bio, bi_next);
		__u64 key = (__u64)bio;
		struct trace_record *r;

		if (w->ev == RQ_COMPLETE) {
			done += BPF_CORE_READ(bio, bi_iter.bi_size);
			if (done > w->nr_bytes)
				break;
		}
		r = bpf_map_lookup_elem(&bios, &key);
		if (r)
			rq_apply(w, key, r);
		bio = next;
	}
	return 0;
}

static __always_inline int on_rq(struct request *rq, enum rq_event ev)
{
	struct rq_walk w = { .ev = ev };

	return on_rq_event(rq, &w);
}

static __always_inline int on_rq_complete(struct request *rq, int error, __u32 nr_bytes)
{
	struct rq_walk w = { .ev = RQ_COMPLETE, .error = error, .nr_bytes = nr_bytes };
	__u32 rq_flags;

	if (!in_flight)
		return 0;
	rq_flags = BPF_CORE_READ(rq, rq_flags);
	if (start_stamped(rq_flags))
		w.k_start_ns = BPF_CORE_READ(rq, start_time_ns);
	if (issue_stamped(rq_flags))
		w.k_issue_ns = BPF_CORE_READ(rq, io_start_time_ns);
	return on_rq_event(rq, &w);
}

/* The bio joined a request that exists already: its request's events find
 * it in the request's bio list from now on. */
static __always_inline int on_merge(struct bio *bio)
{
	struct trace_record *r = bio_entry(bio);

	if (r) {
		r->ts[TRACE_M] = bpf_ktime_get_ns();
		r->flags |= TRACE_F_MERGED;
	}
	return 0;
}

/*
 * Fires for bios of disks without requests, and for request-based bios that
 * failed before they got a request (blk_update_request clears the flag that
 * makes the others fire it).
 */
static __always_inline int on_bio_complete(struct bio *bio)
{
	struct trace_record *r = bio_entry(bio);

	if (!r)
		return 0;
	if (r->flags & TRACE_F_BIO_BASED) {
		struct upper_key u = { .sector = r->sector, .dev = r->dev };

		bpf_map_delete_elem(&uppers, &u);
	}
	if (!(r->flags & TRACE_F_BIO_BASED))
		r->flags |= TRACE_F_BIO_DONE;
	finish((__u64)bio, r, bpf_ktime_get_ns(), BPF_CORE_READ(bio, bi_status));
	return 0;
}

/* block_bio_backmerge/frontmerge were (q, rq, bio) before 5.11 (commit
 * e8a676d61c07, block.h); bio_tp_has_queue says which this kernel has. */
static __always_inline struct bio *merge_arg(unsigned long long *ctx)
{
	return (struct bio *)ctx_word(ctx, bio_tp_has_queue ? 2 : 0);
}

/* One program per stage and attach mode; user space loads one mode. */
TP_PAIR(trace_q, block_bio_queue, on_bio_queue(bio_arg(ctx), direct))
TP_PAIR(trace_g, block_getrq, on_getrq(bio_arg(ctx)))
TP_PAIR(trace_x, block_split, on_split(bio_arg(ctx)))

/* block_bio_remap(bio, dev, from); (q, bio, dev, from) before 5.11 (commit
 * 1c02fca620f7, "block: remove the request_queue argument to the
 * block_bio_remap tracepoint"). */
static __always_inline int remap_args(unsigned long long *ctx)
{
	int at = bio_tp_has_queue ? 1 : 0;

	return on_remap((struct bio *)ctx_word(ctx, at), (__u32)ctx_word(ctx, at + 1),
			ctx_word(ctx, at + 2));
}

TP_PAIR(trace_rm, block_bio_remap, remap_args(ctx))
TP_PAIR(trace_mb, block_bio_backmerge, on_merge(merge_arg(ctx)))
TP_PAIR(trace_mf, block_bio_frontmerge, on_merge(merge_arg(ctx)))
TP_PAIR(trace_i, block_rq_insert, on_rq(rq_arg(ctx), RQ_INSERT))
TP_PAIR(trace_d, block_rq_issue, on_rq(rq_arg(ctx), RQ_ISSUE))
TP_PAIR(trace_r, block_rq_requeue, on_rq(rq_arg(ctx), RQ_REQUEUE))

/* block_rq_complete has always been (rq, error, nr_bytes). */
TP_PAIR(trace_c, block_rq_complete,
	on_rq_complete((struct request *)ctx[0], (int)ctx[1], (__u32)ctx[2]))

/* block_bio_complete is (q, bio) on every kernel. */
TP_PAIR(trace_bc, block_bio_complete, on_bio_complete((struct bio *)ctx[1]))
