/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * trace.h - the record `iolat trace` gets from the kernel (bpf/trace.bpf.c)
 * for each sampled block I/O, and the tracer's counters.
 *
 * Fixed-width types only: compiled by clang for the BPF target and by the
 * host compiler, and the layouts must agree.
 */
#ifndef IOLAT_TRACE_H
#define IOLAT_TRACE_H

#include "iolat.h" /* enum iolat_op, enum iolat_flag, IOLAT_COMM_LEN */

/* Followed bios in flight the kernel keeps (`bios`, an LRU): past this, the
 * oldest are evicted and their records lost (tracer_in_flight counts them). */
#define TRACE_BIOS_MAX 16384

/* Bios of one request walked at its events: a request holds at most
 * max_segments bios (128 on most disks); past this, bios are not seen. */
#define TRACE_WALK_MAX 256

/* The ring buffer's size unless user space sets another (--ringbuf-kib). */
#define TRACE_RINGBUF_DEFAULT_BYTES (256u * 1024)

/*
 * The stages a sampled bio can go through, in blktrace's letters. Each is a
 * bpf_ktime_get_ns() (CLOCK_MONOTONIC) timestamp in ns; 0: not seen.
 */
enum trace_stage {
	TRACE_Q = 0, /* block_bio_queue: the bio entered the block layer */
	TRACE_G,     /* block_getrq: a request was allocated for it */
	TRACE_M,     /* block_bio_backmerge/frontmerge: it joined a request */
	TRACE_I,     /* block_rq_insert: its request went to the scheduler/queue */
	TRACE_D,     /* block_rq_issue: issued to the driver (the last issue) */
	TRACE_R,     /* block_rq_requeue: put back by the driver (the last one) */
	TRACE_C,     /* block_rq_complete: the part of the request holding the
		      * bio completed (block_bio_complete on a disk without
		      * requests, or for a bio that failed before its request) */
	TRACE_STAGES,
};

/* trace_record.flags */
#define TRACE_F_MERGED 1u /* joined an existing request (has M) */
#define TRACE_F_BIO_DONE                                                                           \
	2u		 /* completed at the bio layer before it got a                             \
			  * request (an early failure) */
#define TRACE_F_SPLIT 4u /* a piece split off a followed bio (`parent`) */
#define TRACE_F_BIO_BASED                                                                          \
	8u /* the disk takes bios, not requests (dm, md,                                           \
	    * zram): only Q and C exist */
#define TRACE_F_REMAP                                                                              \
	16u /* a bio a followed dm or md bio was remapped to,                                      \
	     * on the device below (`parent`); followed                                            \
	     * whatever the sampling */

struct trace_record {
	__u64 ts[TRACE_STAGES];
	__u64 id;     /* unique per followed bio, from 1 */
	__u64 parent; /* a split piece or remapped bio: its parent's id; else 0 */
	/* The request the bio was issued in, at its (last) issue: its first
	 * sector and size. Bios of one request share dev, rq_sector and C. */
	__u64 rq_sector;
	__u32 rq_bytes;
	__u32 pad3;
	__u64 cgroup; /* the bio's blkcg's cgroup id (0: none) */
	__u64 sector; /* first sector, at queue time */
	__u32 bytes;  /* the bio's size at queue time, less pieces split off */
	__u32 dev;    /* whole disk, major << 20 | minor */
	__u32 pid;    /* tgid of the task that queued the bio */
	__u32 tid;
	__u32 splits; /* pieces split off the bio (block_split) */
	__u32 requeues;
	__s32 error; /* completion status (blk_status_t), 0: ok */
	__u16 flags; /* TRACE_F_* */
	__u8 op;     /* enum iolat_op (iolat.h) */
	__u8 pad;
	__u32 rq_flags; /* enum iolat_flag bits (iolat.h), all IOLAT_F_COUNT of them */
	char comm[IOLAT_COMM_LEN];
	/* With syscall linkage: the listed syscall the queueing thread was in
	 * (its number and entry time); sys_enter_ns 0: none. */
	__u64 sys_enter_ns;
	__u32 sys_nr;
	__u32 pad2;
	/* The kernel's own stamps of the request, read at its completion: what
	 * `hist` and `serve` time from (start_time_ns: created; io_start_time_ns:
	 * issued). 0: not stamped. Beside G and D they show how far the two
	 * clocks are apart (since 6.9 a plug's cached time). */
	__u64 k_start_ns;
	__u64 k_issue_ns;
	/* Page-cache linkage (--syscalls): data of sampled write syscalls this
	 * bio carries from the page cache (trace_pc_link records, emitted when
	 * it was queued, name the writes). pc_dirty_ns: when the oldest of it
	 * became dirty (0: none linked). */
	__u64 pc_dirty_ns;
	__u32 pc_bytes;
	__u32 pc_links; /* trace_pc_link records: runs of one write's data */
	/* Queued inside a followed page fault on a file (sys_nr
	 * TRACE_SYS_FAULT, sys_enter_ns its time): the file's inode number and
	 * the page the fault was for. */
	__u64 fault_ino;
	__u64 fault_index;
};

/* trace_record.sys_nr of I/O queued inside a page fault on a mapped file
 * (a number no syscall has). */
#define TRACE_SYS_FAULT 1000u
/* A fault's I/O is queued right away (readahead, then the fault waits for
 * it): a bio of the faulting thread later than this is not the fault's. */
#define TRACE_FAULT_WINDOW_NS (100ull * 1000 * 1000)

/*
 * With syscall linkage, one per listed syscall (read, pread64, fsync...) in
 * which at least one followed bio was queued, emitted at the syscall's exit.
 * Its block records carry (tid, sys_enter_ns). The ring buffer holds both
 * kinds; a sample's length tells them apart (the sizes differ).
 */
struct trace_syscall {
	__u64 enter_ns; /* bpf_ktime_get_ns() at sys_enter */
	__u64 exit_ns;	/* ... at sys_exit */
	__s64 ret;	/* the syscall's return value */
	__u32 pid;
	__u32 tid;
	__u32 nr;     /* syscall number (the kernel's own ABI) */
	__u32 bios;   /* followed bios queued inside it */
	__u32 folios; /* page-cache folios it made dirty (buffered writes):
		       * their bios come later, through trace_pc_link */
	__s32 fd;     /* its file descriptor; -1: the syscall takes none */
	__u64 cgroup; /* the thread's io (blkio) cgroup id */
	char comm[IOLAT_COMM_LEN];
	/* The file it read or wrote, at its entry (what a join of a guest's
	 * trace with its host's needs: an offset on the VM's image). file_dev
	 * is the file system's device (the inode's i_sb->s_dev), file_rdev
	 * the device a block-device file is (0 for other files), both
	 * major << 20 | minor; 0 and 0: no file. */
	__s64 pos;	/* file offset it started at; -1: none (fsync) */
	__u64 file_ino; /* inode number */
	__u32 file_dev;
	__u32 file_rdev;
};

/* trace_bpf rodata sys_file: what a listed syscall's arguments say about
 * the file it works on (its first argument is the descriptor). */
enum trace_sys_file {
	TRACE_FILE_NONE = 0, /* no file (io_submit, io_uring_enter) */
	TRACE_FILE_ONLY,     /* a file, no offset (fsync, fdatasync) */
	TRACE_FILE_FPOS,     /* at the file's position (read, write, readv...) */
	TRACE_FILE_ARG4,     /* at its 4th argument (pread64, preadv, ...; -1
			      * for preadv2/pwritev2: the file's position) */
};

/*
 * Page-cache linkage: a bio that carries data a sampled write syscall left
 * dirty in the page cache, queued later by writeback, sync, fsync or
 * memory pressure, from whatever thread. One record per run of the bio's
 * folios dirtied by the same syscall, emitted when the bio is queued: a
 * write whose data went out in several bios has a link to each, a bio
 * carrying several writes has a link per write. (tid, sys_enter_ns) is the
 * trace_syscall's key, bio_id the trace_record's.
 */
struct trace_pc_link {
	__u64 bio_id;
	__u64 queue_ns;	    /* the bio's Q */
	__u64 dirty_ns;	    /* when the run's oldest folio became dirty */
	__u64 sys_enter_ns; /* the write syscall's entry */
	__u64 cgroup;	    /* the writer's io (blkio) cgroup id */
	__u32 pid;
	__u32 tid;
	__u32 sys_nr;
	__u32 bytes;  /* of the bio's data in this run */
	__u32 folios; /* folios in this run */
	__u32 dev;    /* the bio's disk */
	char comm[IOLAT_COMM_LEN];
};

/* Per thread, while it is inside a listed syscall. */
struct trace_sys_thread {
	__u64 enter_ns; /* 0: not inside a followed (sampled) syscall */
	__u32 nr;
	__u32 bios;
	__u32 folios;	    /* folios it dirtied (page-cache linkage) */
	__u8 unsampled;	    /* inside a listed syscall the sampling passed over:
			     * its bios are not followed either */
	__u8 writing;	    /* inside a followed buffered-write syscall
			     * (counted in writers_active) */
	__u8 fault_sampled; /* the last file fault was followed */
	__u8 pad;
	/* The followed syscall's file and offset (trace_syscall's). */
	__s64 pos;
	__u64 file_ino;
	__u32 file_dev;
	__u32 file_rdev;
	__s32 fd;
	__u32 pad2;
	/* The thread's last page fault on a mapped file (mm_filemap_fault),
	 * until its next listed syscall: when, the file and page. */
	__u64 fault_at;
	__u64 fault_mapping;
	__u64 fault_ino;
	__u64 fault_index;
};

/* The state kept per dirty folio of a followed write, until a bio carries it. */
struct trace_folio {
	__u64 dirty_ns;
	__u64 sys_enter_ns;
	__u64 cgroup;
	__u64 mapping; /* its file's address_space (pc_files' key) */
	__u32 pid;
	__u32 tid;
	__u32 sys_nr;
	__u32 pad;
	char comm[IOLAT_COMM_LEN];
};

/* Dirty folios of followed writes the kernel keeps (`folios`, an LRU): 128
 * MiB of 4 KiB pages waiting for writeback. Past it the oldest are evicted,
 * counted (tracer_page_cache), and their bios are not linked. */
#define TRACE_FOLIOS_MAX 32768

/* Files (address spaces) with dirty folios of followed writes, counted: a
 * write bio of another file is not walked. Past this many files the filter
 * is off and every write bio is walked while folios wait (never a miss). */
#define TRACE_PC_FILES_MAX 8192

/* Bio vectors of one bio walked for page-cache linkage: a bio holds at most
 * BIO_MAX_VECS (256) of them. */
#define TRACE_BVEC_MAX 256
/* Pages of one bio walked for it (8 MiB of 4 KiB pages); a larger bio's
 * pages past these are not linked. */
#define TRACE_BIO_PAGES_MAX 2048

/* Syscall numbers below this can be listed (trace_bpf rodata sys_mask). */
#define TRACE_SYS_MAX 512

/* Tracer-wide counters (per-CPU array, one slot each). */
enum trace_stat {
	TRACE_STAT_LOST = 0,	 /* record not emitted: ring buffer full */
	TRACE_STAT_FAST,	 /* dropped at completion: faster than the threshold */
	TRACE_STAT_STALE,	 /* entry whose end was not seen, found stale: dropped */
	TRACE_STAT_PC_MARKED,	 /* folios dirtied by a followed write */
	TRACE_STAT_PC_LINKED,	 /* ... of them found in a queued bio */
	TRACE_STAT_PC_REDIRTIED, /* ... dirtied again before a followed bio
				  * carried them (written back unseen) */
	TRACE_STAT_PC_DROPPED,	 /* ... removed from the page cache unwritten
				  * (truncated, deleted) */
	TRACE_STAT_COUNT,
};

/* Op filter (filter_op). */
enum trace_op_filter {
	TRACE_OP_ANY = 0,
	TRACE_OP_READ,
	TRACE_OP_WRITE,
};

#endif /* IOLAT_TRACE_H */
