/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace_pagecache.bpf.h - trace.bpf.c's page-cache linkage: the folios a
 * followed buffered write dirties (writeback_dirty_folio), remembered until
 * a bio queued for writing carries them (a page walk at block_bio_queue, in
 * a program of its own, trace_pcq, through bpf_loop), or until they leave
 * the page cache unwritten. Included once, by trace.bpf.c, after
 * trace_syscalls.bpf.h (the writing threads).
 */

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

TP_PAIR(trace_pcq, block_bio_queue, on_bio_queue_pc(bio_arg(ctx), direct))

/* writeback_dirty_folio(folio, mapping) since 5.16 (renamed by "mm/writeback:
 * Convert tracing writeback_page_template to folios"); before, with the same
 * arguments, writeback_dirty_page(page, mapping). User space attaches the one
 * this kernel has. */
TP_PAIR(trace_wd, writeback_dirty_folio, on_dirty((void *)ctx[0]))
TP_PAIR(trace_wdp, writeback_dirty_page, on_dirty((void *)ctx[0]))

/* mm_filemap_delete_from_page_cache(folio); (page) before the folio
 * conversion: the same pointer either way. */
TP_PAIR(trace_pd, mm_filemap_delete_from_page_cache, on_pc_delete((void *)ctx[0]))
