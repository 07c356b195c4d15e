/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * block.h - what both BPF objects (iolat.bpf.c, trace.bpf.c) read from the
 * block layer, once: tracepoint arguments, operations and flag bits, the
 * disk of a request or bio, a bio's cgroup, the request stamps' validity,
 * and the older kernels' layouts all of that needs through CO-RE; and the
 * counter bump both objects' `stats` maps take. Each helper that exists
 * because kernels differ names the kernel change it follows. `direct`:
 * typed loads (tp_btf) rather than probe reads (raw_tp).
 *
 * Kernels supported: 5.10 and later with BTF (tests/integration/
 * test_kernels.sh loads both objects on 5.10, 6.1 and 6.12).
 */
#ifndef IOLAT_BLOCK_H
#define IOLAT_BLOCK_H

/* After vmlinux.h and libbpf's headers, which the including program has
 * first. */
#include "iolat.h" /* enum iolat_op, enum iolat_flag */

/*
 * Kernels before 5.17 kept the disk in the request (rq->rq_disk); since
 * commit f3fa33acca9f ("block: remove the ->rq_disk field in struct
 * request") it is rq->q->disk.
 */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

/*
 * Kernels before 5.12 pointed bios at the disk (bio->bi_disk); since commit
 * 309dca309fc3 ("block: store a block_device pointer in struct bio") at the
 * block device, whose bd_disk is the disk.
 */
struct bio___old {
	struct gendisk *bi_disk;
} __attribute__((preserve_access_index));

/*
 * Kernels before 6.1 kept each cgroup's ancestors' ids (ancestor_ids[]);
 * since commit 7f203bc89eb6 ("cgroup: Replace cgroup->ancestor_ids[] with
 * ->ancestors[]") pointers to the ancestors themselves.
 */
struct cgroup___old {
	int level;
	__u64 ancestor_ids[];
} __attribute__((preserve_access_index));

/*
 * Word i (0-3) of a tracepoint's context. Where an argument sits depends on
 * the kernel (the block tracepoints lost their request-queue argument in
 * 5.11), so the index comes from a constant user space sets at load. Each
 * load is an instruction of its own at a fixed offset: the verifier refuses
 * context reads at computed offsets, which is what the compiler makes of
 * plain ctx[a ? 1 : 0]; and the load in a branch the constant rules out is
 * never checked, so a tp_btf program may name an argument its kernel lacks.
 */
static __always_inline __u64 ctx_word(unsigned long long *ctx, int i)
{
	__u64 v;

	if (i == 3)
		asm volatile("%0 = *(u64 *)(%1 + 24)" : "=r"(v) : "r"(ctx));
	else if (i == 2)
		asm volatile("%0 = *(u64 *)(%1 + 16)" : "=r"(v) : "r"(ctx));
	else if (i == 1)
		asm volatile("%0 = *(u64 *)(%1 + 8)" : "=r"(v) : "r"(ctx));
	else
		asm volatile("%0 = *(u64 *)(%1 + 0)" : "=r"(v) : "r"(ctx));
	return v;
}

/*
 * Whether the kernel wrote a request's timestamps. It zeroed the unwritten
 * ones up to 6.x, but now leaves them as they were from the request
 * structure's previous use (blk_mq_rq_ctx_init writes start_time_ns only when
 * blk_mq_need_time_stamp()), so a non-zero value proves nothing; the request
 * flags that made the kernel write them do. start_time_ns is written at
 * creation when iostats or a scheduler is on (RQF_IO_STAT, RQF_USE_SCHED),
 * io_start_time_ns at issue when the queue keeps stats (RQF_STATS).
 */
/*
 * The request flags as masks, which user space builds from the bit numbers
 * it reads from BTF by enumerator name (probe.c): CO-RE enum relocations
 * need the enum's name, and the kernel named it rqf_flags only after 6.12,
 * whose enum is anonymous. Masks, not bit numbers, so that each test on the
 * completion path is one AND (0: this kernel has no such flag). Kernels
 * whose flags are still macros (rqf_enum false) zeroed the stamps they did
 * not write, and kept RQF_FLUSH_SEQ at bit 4.
 */
const volatile bool rqf_enum = false;
const volatile __u32 rqf_start_mask = 0;     /* RQF_IO_STAT | RQF_USE_SCHED */
const volatile __u32 rqf_issue_mask = 0;     /* RQF_STATS */
const volatile __u32 rqf_flush_seq_mask = 0; /* RQF_FLUSH_SEQ */

static __always_inline bool start_stamped(__u32 rq_flags)
{
	/* older kernels: unwritten stamps are zero */
	return !rqf_enum || (rq_flags & rqf_start_mask);
}

static __always_inline bool issue_stamped(__u32 rq_flags)
{
	return !rqf_enum || (rq_flags & rqf_issue_mask);
}

/*
 * Tracepoint arguments. The block tracepoints lost their request-queue
 * argument in 5.11: the request events (block_rq_insert, _issue, _requeue)
 * in commit a54895fa057c ("block: remove the request_queue to argument
 * request based tracepoints"), the bio events (block_bio_queue, block_getrq,
 * the merges) in commit e8a676d61c07 ("block: simplify and extend the
 * block_bio_merge tracepoint class"), block_split and block_bio_remap in
 * eb6f7f7cd3af and 1c02fca620f7. The two layouts are separate flags because
 * a kernel can have one without the other: Debian's 5.10 (5.10.0-46) has
 * block_rq_issue(rq) but block_bio_queue(q, bio). User space reads which
 * layouts this kernel has from BTF.
 */
const volatile bool rq_tp_has_queue = false;  /* rq events: (q, rq) */
const volatile bool bio_tp_has_queue = false; /* bio events: (q, bio) */

static __always_inline struct request *rq_arg(unsigned long long *ctx)
{
	return (struct request *)ctx_word(ctx, rq_tp_has_queue ? 1 : 0);
}

static __always_inline struct bio *bio_arg(unsigned long long *ctx)
{
	return (struct bio *)ctx_word(ctx, bio_tp_has_queue ? 1 : 0);
}

/*
 * enum iolat_op of a bio's bi_opf or a request's cmd_flags. The operation
 * has been the low 8 bits, with these numbers, since 4.10 (commit
 * ef295ecf090d, "block: better op and flags encoding"); the enum holding them
 * was renamed (req_opf, then req_op in 6.0), so the numbers are written here
 * rather than relocated by the enum's name.
 */
static __always_inline __u8 op_of(__u64 cmd_flags)
{
	switch (cmd_flags & 0xff) {
	case 0:
		return IOLAT_OP_READ;
	case 1:
		return IOLAT_OP_WRITE;
	case 2:
		return IOLAT_OP_FLUSH;
	case 3:
		return IOLAT_OP_DISCARD;
	case 9:
		return IOLAT_OP_WRITE_ZEROES;
	default:
		return IOLAT_OP_OTHER;
	}
}

static __always_inline __u32 flag_if(__u64 cmd_flags, __u32 kbit, __u32 ours)
{
	return (cmd_flags >> kbit) & 1 ? ours : 0;
}

_Static_assert(IOLAT_F_COUNT <= 16, "enum iolat_flag must fit iolat_key.flags (__u16)");

/*
 * enum iolat_flag bits of a bio's bi_opf or a request's cmd_flags. The
 * kernel's __REQ_* bits are numbered by position in enum req_flag_bits, so
 * they move whenever a flag is added or removed before them: they sat just
 * above the 8 operation bits from 4.10 (ef295ecf090d), and later kernels
 * added, renamed and dropped flags around them (e.g. REQ_HIPRI became
 * REQ_POLLED in 5.16, commit 6ce913fe3eee). The ten mapped here sat at the
 * same positions (11-21) in 5.10, 6.1, 6.12 and 6.18 (checked in their
 * BTF), but CO-RE reads each one from the running kernel's BTF rather than
 * trusting that to last. __REQ_NOWAIT is the newest of them (4.13, commit
 * 03a07c92a9ed, "block: return on congested block device"), so only it is
 * checked for.
 */
static __always_inline __u16 flags_of(__u64 f)
{
	__u16 out = 0;

	out |= flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_SYNC), IOLAT_F_SYNC);
	out |= flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_META), IOLAT_F_META);
	out |= flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_PRIO), IOLAT_F_PRIO);
	out |= flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_NOMERGE), IOLAT_F_NOMERGE);
	out |= flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_IDLE), IOLAT_F_IDLE);
	out |= flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_FUA), IOLAT_F_FUA);
	out |=
	    flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH), IOLAT_F_PREFLUSH);
	out |= flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_RAHEAD), IOLAT_F_RAHEAD);
	out |= flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_BACKGROUND),
		       IOLAT_F_BACKGROUND);
	if (bpf_core_enum_value_exists(enum req_flag_bits, __REQ_NOWAIT))
		out |= flag_if(f, bpf_core_enum_value(enum req_flag_bits, __REQ_NOWAIT),
			       IOLAT_F_NOWAIT);
	return out;
}

static __always_inline __u32 disk_dev(struct gendisk *disk, bool direct)
{
	int major, minor;

	if (!disk)
		return 0;
	if (direct) {
		major = disk->major;
		minor = disk->first_minor;
	} else {
		major = BPF_CORE_READ(disk, major);
		minor = BPF_CORE_READ(disk, first_minor);
	}
	return ((__u32)major << 20) | (__u32)minor;
}

static __always_inline struct gendisk *rq_disk(struct request *rq, bool direct)
{
	if (bpf_core_field_exists(rq->q->disk))
		return direct ? rq->q->disk : BPF_CORE_READ(rq, q, disk);
	/* Read the same way as the caller's other reads: a tp_btf program may
	 * only follow pointers whose type the verifier knows from BTF. */
	return direct ? ((struct request___old *)rq)->rq_disk
		      : BPF_CORE_READ((struct request___old *)rq, rq_disk);
}

static __always_inline struct gendisk *bio_disk(struct bio *bio, bool direct)
{
	if (bpf_core_field_exists(bio->bi_bdev))
		return direct ? bio->bi_bdev->bd_disk : BPF_CORE_READ(bio, bi_bdev, bd_disk);
	return direct ? ((struct bio___old *)bio)->bi_disk
		      : BPF_CORE_READ((struct bio___old *)bio, bi_disk);
}

/*
 * A cgroup's id, the inode number user space sees: kernfs_node->id, a u64
 * since 5.5 (commit 67c0496e87d1, "kernfs: convert kernfs_node->id from
 * union kernfs_node_id to u64"). 0 for no cgroup.
 */
static __always_inline __u64 cgroup_id(struct cgroup *cg, bool direct)
{
	if (!cg)
		return 0;
	if (direct) /* tp_btf: typed loads, no helper call per pointer */
		return cg->kn ? cg->kn->id : 0;
	return BPF_CORE_READ(cg, kn, id);
}

/*
 * The id of cg's ancestor at `level` (cg itself at its own level), so that
 * a filter on a parent cgroup takes in its children; 0 when cg is above
 * that level. cgroup->ancestors replaced ancestor_ids in 6.1 (cgroup___old,
 * above): CO-RE picks.
 */
static __always_inline __u64 cgroup_ancestor_id(struct cgroup *cg, int level)
{
	if (BPF_CORE_READ(cg, level) < level)
		return 0;
	if (bpf_core_field_exists(cg->ancestors)) {
		struct cgroup *anc = NULL;

		bpf_core_read(&anc, sizeof(anc), &cg->ancestors[level & 0xff]);
		return cgroup_id(anc, false);
	} else {
		struct cgroup___old *old = (void *)cg;
		__u64 id = 0;

		bpf_core_read(&id, sizeof(id), &old->ancestor_ids[level & 0xff]);
		return id;
	}
}

/*
 * The cgroup filter both objects take (0: none): a cgroup id and its level,
 * so that a bio's cgroup is compared at that level (cgroup_ancestor_id).
 */
const volatile __u64 filter_cgroup = 0;
const volatile __s32 filter_cgroup_level = 0;

/*
 * The cgroup a bio was issued for: its blkcg's. Bios have pointed at a blkg
 * (blkcg_gq) since 5.0, commit c839e7a03f92 ("blkcg: remove bio->bi_css and
 * instead use bio->bi_blkg"). Kernels built without CONFIG_BLK_CGROUP have
 * no bi_blkg: no cgroup, but the program must still load. NULL: none.
 */
static __always_inline struct cgroup *bio_blkcg_cgroup(struct bio *bio, bool direct)
{
	struct blkcg_gq *blkg;

	if (!bio || !bpf_core_field_exists(bio->bi_blkg))
		return NULL;
	if (!direct)
		return BPF_CORE_READ(bio, bi_blkg, blkcg, css.cgroup);
	blkg = bio->bi_blkg;
	if (!blkg || !blkg->blkcg)
		return NULL;
	return blkg->blkcg->css.cgroup;
}

/*
 * The id of the cgroup a bio was issued for, as the filter compares it: with
 * a filter set, its ancestor at the filter's level, so that filtering on a
 * parent cgroup takes in its children. 0 when the bio has no association.
 */
static __always_inline __u64 bio_cgroup(struct bio *bio, bool direct)
{
	struct cgroup *cg = bio_blkcg_cgroup(bio, direct);

	if (!cg)
		return 0;
	if (!filter_cgroup)
		return cgroup_id(cg, direct);
	return cgroup_ancestor_id(cg, filter_cgroup_level);
}

/* Whether a queue takes bios itself (dm, md, zram: no blk-mq, so no request
 * events; its bios complete through block_bio_complete). */
static __always_inline bool queue_bio_based(struct request_queue *q, bool direct)
{
	return !(direct ? q->mq_ops : BPF_CORE_READ(q, mq_ops));
}

static __always_inline bool disk_bio_based(struct gendisk *disk, bool direct)
{
	return queue_bio_based(direct ? disk->queue : BPF_CORE_READ(disk, queue), direct);
}

/*
 * A shared value's running maximum, by a plain store: atomics that return
 * a value (compare-and-swap) exist only from 5.12, and before that the
 * verifier refuses a program that holds one anywhere, run or not. Two CPUs
 * raising the maximum of one key in the same instant may leave the smaller
 * of the two; counts, sums and buckets are atomic adds and stay exact. (iolat.bpf.c's
 * shared values, sysio.bpf.c's.)
 */
static __always_inline void racy_max(__u64 *p, __u64 v)
{
	if (v > *(volatile __u64 *)p)
		*(volatile __u64 *)p = v;
}

/* Adds one to slot `which` of a per-CPU array of counters (the objects'
 * `stats` maps). */
static __always_inline void stat_inc(void *stats_map, __u32 which)
{
	__u64 *c = bpf_map_lookup_elem(stats_map, &which);

	if (c)
		*c += 1;
}

#endif /* IOLAT_BLOCK_H */
