// SPDX-License-Identifier: GPL-2.0
/*
 * trace.bpf.c - the kernel half of `iolat trace`: follows sampled bios
 * through the block layer's stages and emits one record per I/O, with every
 * stage's timestamp, to a ring buffer.
 *
 * block_bio_queue decides, once per bio, whether it is followed (filters,
 * then 1-in-N sampling); a followed bio's record lives in `bios`, keyed by
 * the bio, until its end. A request's events (insert, issue, requeue,
 * complete) walk the request's bios and stamp every followed one, so a bio
 * merged into a request, or one of many in it, has its own complete record.
 * A piece split off a followed bio is followed too, linked to it. On disks
 * without requests (dm, md, zram) a record has Q and C (block_bio_complete).
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

#include "block.h"
#include "iolat.h"
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

/* Followed bios and requests in flight: the lower stages' fast exit.
 * LRU evictions are not subtracted, so it can only err high (costing
 * lookups, never records). */
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

/* Per CPU, with syscall linkage: listed syscalls seen since the last one
 * followed; buffered writes (1) and file page faults (2) apart from the
 * rest (0), so that a program
 * alternating read and write (dd) does not have one kind always sampled and
 * the other never. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} sys_sample_count SEC(".maps");

/* Dirty folios of followed writes, by folio address, until a queued bio
 * carries them (then deleted). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TRACE_FOLIOS_MAX);
	__type(key, __u64);
	__type(value, struct trace_folio);
} folios SEC(".maps");

/* Dirty folios of followed writes per file (address_space pointer): the
 * walk's first filter. Entries stay at 0 rather than being deleted, which
 * would race with another CPU's increment and lose a file. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRACE_PC_FILES_MAX);
	__type(key, __u64);
	__type(value, __u64);
} pc_files SEC(".maps");

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

/* With syscall linkage the sampling is decided once, at a listed syscall's
 * entry, and holds for the bios queued inside it; bios queued outside any
 * (writeback, kernel threads) are sampled on their own. */
enum sys_turn {
	TURN_SAMPLE, /* not inside a listed syscall: the bio's own turn */
	TURN_FOLLOW, /* inside a followed one */
	TURN_SKIP,   /* inside one the sampling passed over */
	TURN_LINKED, /* carries followed writes' page-cache data: followed
		      * whatever the sampling and the filters on its own task
		      * and cgroup (the flusher's) say, since those writes
		      * passed them */
};

static __always_inline enum sys_turn sys_turn_of(const struct trace_sys_thread *st)
{
	if (!st)
		return TURN_SAMPLE;
	if (st->enter_ns)
		return TURN_FOLLOW;
	return st->unsampled ? TURN_SKIP : TURN_SAMPLE;
}

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

/* The folio a page belongs to: a tail page of a large folio points at its
 * head with bit 0 set (page_folio(), include/linux/page-flags.h). */
static __always_inline __u64 folio_of(struct page *page)
{
	unsigned long head = BPF_CORE_READ(page, compound_head);

	return head & 1 ? head - 1 : (__u64)page;
}

/*
 * Whether a bio the thread queues outside any listed syscall belongs to its
 * last file page fault: queued soon after it, for the same file (its first
 * page's mapping). mm_filemap_fault has no end to wait for, so the thread's
 * later I/O in an unlisted syscall (madvise, sendfile) for the same file
 * within the window would be taken for the fault's.
 */
static __always_inline bool in_fault(struct bio *bio, const struct trace_sys_thread *st, __u64 now)
{
	struct bio_vec *vec;
	struct page *page;

	if (!st || !st->fault_at || now - st->fault_at > TRACE_FAULT_WINDOW_NS)
		return false;
	vec = BPF_CORE_READ(bio, bi_io_vec);
	page = (struct page *)folio_of(BPF_CORE_READ(vec, bv_page));
	return (__u64)BPF_CORE_READ(page, mapping) == st->fault_mapping;
}

/* The thread's followed syscall, if it is inside one (--syscalls). */
static __always_inline void link_syscall(struct trace_record *r, struct trace_sys_thread *st)
{
	if (st && st->enter_ns) {
		r->sys_enter_ns = st->enter_ns;
		r->sys_nr = st->nr;
		st->bios++;
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

/*
 * The whole disk a file's page (or folio) will be written to: its file
 * system's device, or for a block device's own page cache that device (its
 * own number: a partition's is not its disk's). 0: none (tmpfs, a pipe).
 */
static __always_inline __u32 page_disk_dev(struct page *page)
{
	struct inode *host = BPF_CORE_READ(page, mapping, host);
	struct block_device *bdev = BPF_CORE_READ(host, i_sb, s_bdev);

	if (bdev)
		return disk_dev(BPF_CORE_READ(bdev, bd_disk), false);
	if ((BPF_CORE_READ(host, i_mode) & 0170000) == 0060000) /* S_ISBLK */
		return BPF_CORE_READ(host, i_rdev);
	return 0;
}

/* Adds delta (1 or -1) to a file's count of waiting folios. */
static __always_inline void pc_file_count(__u64 mapping, __s64 delta)
{
	__u64 *n = bpf_map_lookup_elem(&pc_files, &mapping), one = 1;

	if (n) {
		__sync_fetch_and_add(n, delta);
		return;
	}
	if (delta < 0)
		return;
	/* Another CPU may insert it first: then add to its entry. */
	if (bpf_map_update_elem(&pc_files, &mapping, &one, BPF_NOEXIST) == 0)
		return;
	n = bpf_map_lookup_elem(&pc_files, &mapping);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		pc_files_full = 1;
}

/* Forgets a followed write's folio (linked, or gone from the page cache);
 * false if it was not one. */
static __always_inline bool pc_forget(__u64 key, __u64 mapping)
{
	if (bpf_map_delete_elem(&folios, &key))
		return false;
	__sync_fetch_and_sub(&pc_in_flight, 1);
	pc_file_count(mapping, -1);
	return true;
}

/*
 * writeback_dirty_folio (writeback_dirty_page before 5.16): a folio of a
 * file or block device became dirty. Inside a followed buffered write, the
 * folio is remembered with the write, until the bio that writes it back is
 * queued. A folio dirty already when the write reaches it fires nothing: it
 * stays with the write that made it dirty.
 */
static __always_inline int on_dirty(void *folio)
{
	struct trace_sys_thread *st;
	struct trace_folio f = {};
	struct cgroup *cg;
	__u64 key = (__u64)folio, id;
	__u32 tid;

	if (!writers_active || !folio)
		return 0;
	id = bpf_get_current_pid_tgid();
	tid = (__u32)id;
	st = bpf_map_lookup_elem(&sys_threads, &tid);
	if (!st || !st->writing)
		return 0;
	if (filter_dev && page_disk_dev(folio) != filter_dev)
		return 0;
	cg = current_io_cgroup();
	if (filter_cgroup && (!cg || cgroup_ancestor_id(cg, filter_cgroup_level) != filter_cgroup))
		return 0;
	f.dirty_ns = bpf_ktime_get_ns();
	f.sys_enter_ns = st->enter_ns;
	f.sys_nr = st->nr;
	f.pid = id >> 32;
	f.tid = tid;
	f.cgroup = cgroup_id(cg, false);
	f.mapping = (__u64)BPF_CORE_READ((struct page *)folio, mapping);
	bpf_get_current_comm(f.comm, sizeof(f.comm));
	if (bpf_map_update_elem(&folios, &key, &f, BPF_NOEXIST) == 0) {
		__sync_fetch_and_add(&pc_in_flight, 1);
		pc_file_count(f.mapping, 1);
	} else {
		/* Written back unseen (a bio the walk does not reach) and
		 * dirty again: the newer write has it. */
		stat_inc(&stats, TRACE_STAT_PC_REDIRTIED);
		bpf_map_update_elem(&folios, &key, &f, BPF_ANY);
	}
	st->folios++;
	stat_inc(&stats, TRACE_STAT_PC_MARKED);
	return 0;
}

/*
 * mm_filemap_delete_from_page_cache: a folio leaves the page cache. One a
 * followed write dirtied and no bio carried (its file truncated or deleted
 * while dirty) is forgotten and counted, so that it neither waits in the
 * map nor keeps every write bio's walk going.
 */
static __always_inline int on_pc_delete(void *folio)
{
	__u64 key = (__u64)folio;
	struct trace_folio *f;

	if (!pc_in_flight)
		return 0;
	f = bpf_map_lookup_elem(&folios, &key);
	if (f && pc_forget(key, f->mapping))
		stat_inc(&stats, TRACE_STAT_PC_DROPPED);
	return 0;
}

/* What a bio's page-cache walk found. */
struct pc_sum {
	__u64 dirty_ns; /* the oldest linked folio's; 0: none linked */
	__u32 bytes;
	__u32 links;
};

/* Emits the run of folios built so far, and starts none. */
static __always_inline void pc_flush(struct trace_pc_link *run, struct pc_sum *sum)
{
	if (!run->folios)
		return;
	sum->links++;
	sum->bytes += run->bytes;
	if (!sum->dirty_ns || run->dirty_ns < sum->dirty_ns)
		sum->dirty_ns = run->dirty_ns;
	emit(run, sizeof(*run));
	run->folios = 0;
}

/* x86's page size: a bio vector's pages are walked one at a time. */
#define PC_PAGE_SHIFT 12
#define PC_PAGE_SIZE (1u << PC_PAGE_SHIFT)

/* A bio's walk, per CPU: the link being built (too big for a stack), and
 * the result the queue program takes (on_bio_queue_pc). The links name the
 * bio's record id and queue time (run.bio_id, run.queue_ns). */
struct pc_result {
	__u64 bio; /* the bio it is for; 0: none */
	struct pc_sum sum;
	struct trace_pc_link run;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pc_result);
} pc_results SEC(".maps");

/* The walk of one bio's pages (pc_step's ctx). */
struct pc_walk {
	struct bio_vec *vec;
	__u32 vcnt, i, off;
	bool loaded, last_linked;
	struct bio_vec bv;
	__u64 last; /* the previous page's folio */
	__u64 page_bytes;
	struct trace_pc_link *run;
	struct pc_sum *sum;
};

/*
 * One page of the walk: pages one at a time, since one vector may hold
 * several order-0 folios that happen to be contiguous, or part of a large
 * one. A folio a followed write dirtied joins the run of its write (a new
 * run starts at another write's) and is forgotten, so its data is linked
 * once. 1 ends the walk.
 */
static long pc_step(__u32 k, void *ctx)
{
	struct pc_walk *w = ctx;
	struct trace_pc_link *run = w->run;
	struct trace_folio *f;
	__u32 at, len;
	__u64 fk;

	if (!w->loaded) {
		if (w->i >= w->vcnt || w->i >= TRACE_BVEC_MAX ||
		    bpf_probe_read_kernel(&w->bv, sizeof(w->bv), w->vec + w->i))
			return 1;
		w->loaded = true;
		w->off = 0;
	}
	at = w->bv.bv_offset + w->off;
	len = PC_PAGE_SIZE - (at & (PC_PAGE_SIZE - 1));
	if (len > w->bv.bv_len - w->off)
		len = w->bv.bv_len - w->off;
	fk =
	    folio_of((struct page *)((__u64)w->bv.bv_page + (at >> PC_PAGE_SHIFT) * w->page_bytes));
	w->off += len;
	if (w->off >= w->bv.bv_len) {
		w->loaded = false;
		w->i++;
	}
	if (fk == w->last) {
		/* another page of a large folio */
		if (w->last_linked)
			run->bytes += len;
		return 0;
	}
	w->last = fk;
	w->last_linked = false;
	f = bpf_map_lookup_elem(&folios, &fk);
	if (!f)
		return 0;
	if (run->folios && (run->tid != f->tid || run->sys_enter_ns != f->sys_enter_ns))
		pc_flush(run, w->sum);
	if (!run->folios) {
		run->dirty_ns = f->dirty_ns;
		run->sys_enter_ns = f->sys_enter_ns;
		run->cgroup = f->cgroup;
		run->pid = f->pid;
		run->tid = f->tid;
		run->sys_nr = f->sys_nr;
		run->bytes = 0;
		__builtin_memcpy(run->comm, f->comm, sizeof(run->comm));
	}
	if (f->dirty_ns < run->dirty_ns)
		run->dirty_ns = f->dirty_ns;
	run->bytes += len;
	run->folios++;
	w->last_linked = true;
	pc_forget(fk, f->mapping);
	stat_inc(&stats, TRACE_STAT_PC_LINKED);
	return 0;
}

/*
 * Links the pages of a bio queued for writing to the followed writes that
 * dirtied them: one trace_pc_link per run of one write's folios, over the
 * bio's first TRACE_BIO_PAGES_MAX pages. Through
 * bpf_loop (5.17+): the verifier checks one step, not every iteration.
 */
static __always_inline void pc_walk(struct bio *bio, __u32 dev, struct pc_result *res)
{
	struct pc_walk w = {};

	res->bio = 0;
	__builtin_memset(&res->sum, 0, sizeof(res->sum));
	res->run.folios = 0;
	res->run.bio_id = next_id();
	res->run.queue_ns = bpf_ktime_get_ns();
	res->run.dev = dev;
	w.run = &res->run;
	w.sum = &res->sum;
	w.page_bytes = bpf_core_type_size(struct page);
	w.vec = BPF_CORE_READ(bio, bi_io_vec);
	w.vcnt = BPF_CORE_READ(bio, bi_vcnt);
	bpf_loop(TRACE_BIO_PAGES_MAX, pc_step, &w, 0);
	pc_flush(&res->run, &res->sum);
	if (res->sum.links)
		res->bio = (__u64)bio;
}

/*
 * The page-cache walk's own program on block_bio_queue (trace_pcq),
 * attached before the queue program so that it runs first: the queue
 * program takes its result for the same bio from `pc_results`. Apart, so
 * that kernels without bpf_loop (before 5.17, which also cannot load a
 * program naming a callback) still load the queue program.
 */
static __always_inline int on_bio_queue_pc(struct bio *bio, bool direct)
{
	struct pc_result *res;
	struct gendisk *disk;
	__u32 zero = 0, dev;
	__u64 opf;

	if (!pc_in_flight || !bio)
		return 0;
	opf = direct ? bio->bi_opf : BPF_CORE_READ(bio, bi_opf);
	disk = bio_disk(bio, direct);
	if (!disk || op_of(opf) != IOLAT_OP_WRITE)
		return 0;
	dev = disk_dev(disk, direct);
	if (filter_dev && dev != filter_dev)
		return 0;
	/* Writeback builds a bio from one file's pages: a file with no
	 * followed write's folio waiting costs one lookup, not a walk. */
	if (!pc_files_full) {
		struct bio_vec *vec = BPF_CORE_READ(bio, bi_io_vec);
		struct page *first = (struct page *)folio_of(BPF_CORE_READ(vec, bv_page));
		__u64 mapping = (__u64)BPF_CORE_READ(first, mapping);
		__u64 *n = bpf_map_lookup_elem(&pc_files, &mapping);

		if (!n || !*n)
			return 0;
	}
	res = bpf_map_lookup_elem(&pc_results, &zero);
	if (res)
		pc_walk(bio, dev, res);
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
SEC("tp_btf/block_bio_queue")
int trace_q_btf(unsigned long long *ctx)
{
	return on_bio_queue(bio_arg(ctx), true);
}

SEC("raw_tp/block_bio_queue")
int trace_q_raw(unsigned long long *ctx)
{
	return on_bio_queue(bio_arg(ctx), false);
}

SEC("tp_btf/block_bio_queue")
int trace_pcq_btf(unsigned long long *ctx)
{
	return on_bio_queue_pc(bio_arg(ctx), true);
}

SEC("raw_tp/block_bio_queue")
int trace_pcq_raw(unsigned long long *ctx)
{
	return on_bio_queue_pc(bio_arg(ctx), false);
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

/* block_bio_remap(bio, dev, from); (q, bio, dev, from) before 5.11 (commit
 * 1c02fca620f7, "block: remove the request_queue argument to the
 * block_bio_remap tracepoint"). */
static __always_inline int remap_args(unsigned long long *ctx)
{
	int at = bio_tp_has_queue ? 1 : 0;

	return on_remap((struct bio *)ctx_word(ctx, at), (__u32)ctx_word(ctx, at + 1),
			ctx_word(ctx, at + 2));
}

SEC("tp_btf/block_bio_remap")
int trace_rm_btf(unsigned long long *ctx)
{
	return remap_args(ctx);
}

SEC("raw_tp/block_bio_remap")
int trace_rm_raw(unsigned long long *ctx)
{
	return remap_args(ctx);
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
	return on_rq(rq_arg(ctx), RQ_INSERT);
}

SEC("raw_tp/block_rq_insert")
int trace_i_raw(unsigned long long *ctx)
{
	return on_rq(rq_arg(ctx), RQ_INSERT);
}

SEC("tp_btf/block_rq_issue")
int trace_d_btf(unsigned long long *ctx)
{
	return on_rq(rq_arg(ctx), RQ_ISSUE);
}

SEC("raw_tp/block_rq_issue")
int trace_d_raw(unsigned long long *ctx)
{
	return on_rq(rq_arg(ctx), RQ_ISSUE);
}

SEC("tp_btf/block_rq_requeue")
int trace_r_btf(unsigned long long *ctx)
{
	return on_rq(rq_arg(ctx), RQ_REQUEUE);
}

SEC("raw_tp/block_rq_requeue")
int trace_r_raw(unsigned long long *ctx)
{
	return on_rq(rq_arg(ctx), RQ_REQUEUE);
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

static __always_inline bool sys_writes(__u64 nr)
{
	return link_page_cache && nr < TRACE_SYS_MAX &&
	       ((sys_write_mask[nr / 64] >> (nr % 64)) & 1);
}

/* The thread leaves a followed buffered write (or its exit went unseen). */
static __always_inline void end_writing(struct trace_sys_thread *st)
{
	if (st->writing) {
		st->writing = 0;
		__sync_fetch_and_sub(&writers_active, 1);
	}
}

/* The thread's entry in sys_threads, made (zeroed) if it has none; NULL
 * if the map cannot take it. */
static __always_inline struct trace_sys_thread *thread_state(__u32 tid)
{
	struct trace_sys_thread *st = bpf_map_lookup_elem(&sys_threads, &tid), fresh = {};

	if (st)
		return st;
	bpf_map_update_elem(&sys_threads, &tid, &fresh, BPF_ANY);
	return bpf_map_lookup_elem(&sys_threads, &tid);
}

/* A listed syscall's entry: decides once whether it is followed. */
static __always_inline int on_sys_enter(long nr)
{
	struct trace_sys_thread *st;
	bool writes;
	__u64 id;
	__u32 tid;

	if (!sys_listed((__u64)nr))
		return 0;
	id = bpf_get_current_pid_tgid();
	if (not_followed_task(id))
		return 0;
	tid = (__u32)id;
	st = thread_state(tid);
	if (!st)
		return 0;
	end_writing(st);
	st->fault_at = 0; /* the last fault is over */
	writes = sys_writes((__u64)nr);
	st->nr = (__u32)nr;
	st->bios = 0;
	st->folios = 0;
	if (!turn_of(&sys_sample_count, writes ? 1 : 0)) {
		st->enter_ns = 0;
		st->unsampled = 1;
		return 0;
	}
	st->unsampled = 0;
	st->enter_ns = bpf_ktime_get_ns();
	if (writes) {
		st->writing = 1;
		__sync_fetch_and_add(&writers_active, 1);
	}
	return 0;
}

/*
 * mm_filemap_fault: the thread faults on a page of a mapped file (a user
 * fault on an mmap, or a kernel one inside a syscall, which the syscall
 * then keeps). Sampled like a syscall; the bios it queues are its own.
 */
static __always_inline int on_filemap_fault(struct address_space *mapping, __u64 index)
{
	struct trace_sys_thread *st;
	__u64 id = bpf_get_current_pid_tgid();

	if (not_followed_task(id))
		return 0;
	st = thread_state((__u32)id);
	if (!st)
		return 0;
	st->fault_at = bpf_ktime_get_ns();
	st->fault_sampled = turn_of(&sys_sample_count, 2);
	st->fault_mapping = (__u64)mapping;
	st->fault_ino = BPF_CORE_READ(mapping, host, i_ino);
	st->fault_index = index;
	return 0;
}

/* mm_filemap_fault(mapping, index), where the kernel has it (6.18 does;
 * Debian's 6.1 does not): without it, fault I/O stays unlinked. */
SEC("tp_btf/mm_filemap_fault")
int trace_ff_btf(unsigned long long *ctx)
{
	return on_filemap_fault((struct address_space *)ctx[0], ctx[1]);
}

SEC("raw_tp/mm_filemap_fault")
int trace_ff_raw(unsigned long long *ctx)
{
	return on_filemap_fault((struct address_space *)ctx[0], ctx[1]);
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
	if (pid_filtered_out(id))
		return 0;
	tid = (__u32)id;
	st = bpf_map_lookup_elem(&sys_threads, &tid);
	if (!st)
		return 0;
	st->unsampled = 0;
	end_writing(st);
	if (!st->enter_ns)
		return 0;
	if (!st->bios && !st->folios) {
		st->enter_ns = 0;
		return 0;
	}
	now = bpf_ktime_get_ns();
	/* Under a threshold: a syscall is at least as slow as any I/O in it,
	 * so one faster than the threshold has no record shown either; a
	 * buffered write's I/O comes later, linked to it. */
	if (min_ns && !st->folios && now - st->enter_ns < min_ns) {
		st->enter_ns = 0;
		return 0;
	}
	out = bpf_ringbuf_reserve(&records, sizeof(*out), 0);
	if (!out) {
		stat_inc(&stats, TRACE_STAT_LOST);
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
	out->folios = st->folios;
	out->pad = 0;
	out->cgroup = cgroup_id(current_io_cgroup(), false);
	bpf_get_current_comm(out->comm, sizeof(out->comm));
	st->enter_ns = 0;
	bpf_ringbuf_submit(out, wake_flag());
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

/* writeback_dirty_folio(folio, mapping) since 5.16 (renamed by "mm/writeback:
 * Convert tracing writeback_page_template to folios"); before, with the same
 * arguments, writeback_dirty_page(page, mapping). User space attaches the one
 * this kernel has. */
SEC("tp_btf/writeback_dirty_folio")
int trace_wd_btf(unsigned long long *ctx)
{
	return on_dirty((void *)ctx[0]);
}

SEC("raw_tp/writeback_dirty_folio")
int trace_wd_raw(unsigned long long *ctx)
{
	return on_dirty((void *)ctx[0]);
}

SEC("tp_btf/writeback_dirty_page")
int trace_wdp_btf(unsigned long long *ctx)
{
	return on_dirty((void *)ctx[0]);
}

SEC("raw_tp/writeback_dirty_page")
int trace_wdp_raw(unsigned long long *ctx)
{
	return on_dirty((void *)ctx[0]);
}

/* mm_filemap_delete_from_page_cache(folio); (page) before the folio
 * conversion: the same pointer either way. */
SEC("tp_btf/mm_filemap_delete_from_page_cache")
int trace_pd_btf(unsigned long long *ctx)
{
	return on_pc_delete((void *)ctx[0]);
}

SEC("raw_tp/mm_filemap_delete_from_page_cache")
int trace_pd_raw(unsigned long long *ctx)
{
	return on_pc_delete((void *)ctx[0]);
}
