/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace_syscalls.bpf.h - trace.bpf.c's syscall and fault linkage
 * (--syscalls): which listed syscall or file page fault a thread is in, the
 * sampling decided once at its start for the bios queued inside it, and the
 * syscall's own record at its end. Included once, by trace.bpf.c, after
 * the parts' shared settings, maps and helpers.
 */

/* Threads inside a listed syscall, by tid. An entry is kept after the
 * syscall (enter_ns 0) so that the next one costs a lookup, not an insert;
 * LRU keeps the threads that come and go bounded. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct trace_sys_thread);
} sys_threads SEC(".maps");

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

/*
 * The file a followed syscall works on, from its arguments (x86-64's
 * registers: di the descriptor, r10 the 4th argument) and the thread's
 * descriptor table, as the syscall itself will find it: the descriptor,
 * the inode, and the offset it starts at. Only x86-64 is read here yet;
 * elsewhere the record says no file.
 */
static __always_inline void note_file(struct trace_sys_thread *st, struct pt_regs *regs, long nr)
{
	__u8 how = sys_file[nr & (TRACE_SYS_MAX - 1)];
	struct task_struct *task;
	struct fdtable *fdt;
	struct file *file = NULL, **fds;
	struct inode *inode;
	__s64 arg4 = -1;
	int fd = -1;

	st->fd = -1;
	st->pos = -1;
	st->file_ino = 0;
	st->file_dev = 0;
	st->file_rdev = 0;
#if defined(__TARGET_ARCH_x86)
	if (how == TRACE_FILE_NONE)
		return;
	fd = (int)BPF_CORE_READ(regs, di);
	arg4 = (__s64)BPF_CORE_READ(regs, r10);
#else
	(void)regs;
	return;
#endif
	st->fd = fd;
	task = (void *)bpf_get_current_task();
	fdt = BPF_CORE_READ(task, files, fdt);
	if (fd < 0 || !fdt || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_core_read(&file, sizeof(file), fds + fd) || !file)
		return;
	inode = BPF_CORE_READ(file, f_inode);
	st->file_ino = BPF_CORE_READ(inode, i_ino);
	st->file_dev = BPF_CORE_READ(inode, i_sb, s_dev);
	if ((BPF_CORE_READ(inode, i_mode) & 0170000) == 0060000) /* S_ISBLK */
		st->file_rdev = BPF_CORE_READ(inode, i_rdev);
	if (how == TRACE_FILE_ARG4 && arg4 != -1)
		st->pos = arg4;
	else if (how != TRACE_FILE_ONLY)
		st->pos = BPF_CORE_READ(file, f_pos);
}

/* A listed syscall's entry: decides once whether it is followed. */
static __always_inline int on_sys_enter(struct pt_regs *regs, long nr)
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
	note_file(st, regs, nr);
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
TP_PAIR(trace_ff, mm_filemap_fault, on_filemap_fault((struct address_space *)ctx[0], ctx[1]))

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

/*
 * A positional read or write (pread64, preadv, ...): file I/O by its kind,
 * never a socket's or a pipe's. Following one process (-p), each gets a
 * record even when it queued no block I/O (served from the page cache, or
 * from a file's unwritten extents): what a join with a VM's trace needs
 * for every request of the VM.
 */
static __always_inline bool positional(__u32 nr)
{
	return sys_file[nr & (TRACE_SYS_MAX - 1)] == TRACE_FILE_ARG4;
}

/* The syscall's record, if a followed bio was queued inside it (or, with
 * -p, if it is a positional read or write). */
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
	if (!st->bios && !st->folios && !(filter_pid && positional(st->nr))) {
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
	out->fd = st->fd;
	out->pos = st->pos;
	out->file_ino = st->file_ino;
	out->file_dev = st->file_dev;
	out->file_rdev = st->file_rdev;
	out->cgroup = cgroup_id(current_io_cgroup(), false);
	bpf_get_current_comm(out->comm, sizeof(out->comm));
	st->enter_ns = 0;
	bpf_ringbuf_submit(out, wake_flag());
	return 0;
}

/* raw_syscalls: sys_enter is (regs, id), sys_exit (regs, ret). The exit
 * does not carry the number: the thread's entry has it. */
TP_PAIR(trace_se, sys_enter, on_sys_enter((struct pt_regs *)ctx[0], (long)ctx[1]))
TP_PAIR(trace_sx, sys_exit, on_sys_exit((struct pt_regs *)ctx[0], (long)ctx[1]))
