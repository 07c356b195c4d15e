/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * block.h - block-layer reads both BPF objects make (iolat.bpf.c, trace.bpf.c):
 * operations, flag bits, the disk of a request or bio, cgroup ids, and the
 * older kernels' layouts they need through CO-RE. `direct`: typed loads
 * (tp_btf) rather than probe reads (raw_tp).
 */
#ifndef IOLAT_BLOCK_H
#define IOLAT_BLOCK_H

/* Kernels before 5.17 kept the disk in the request; later ones in its queue. */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

/* Kernels before 5.12 pointed bios at the disk, not the block device. */
struct bio___old {
	struct gendisk *bi_disk;
} __attribute__((preserve_access_index));

/* Kernels before 6.2 (commit 7f203bc89eb6) kept ancestor ids, not pointers. */
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
static __always_inline bool rqf(__u32 flags, int bit)
{
	return bit >= 0 && ((flags >> bit) & 1);
}

/*
 * The request flags' bit numbers, which user space reads from BTF by
 * enumerator name (probe.c): CO-RE enum relocations need the enum's name,
 * and the kernel named it rqf_flags only after 6.12, whose enum is
 * anonymous. -1: this kernel has no such enumerator. Kernels whose flags
 * are still macros (rqf_enum false) zeroed the stamps they did not write,
 * and kept RQF_FLUSH_SEQ at bit 4.
 */
const volatile bool rqf_enum = false;
const volatile int rqf_io_stat_bit = -1;
const volatile int rqf_use_sched_bit = -1;
const volatile int rqf_stats_bit = -1;
const volatile int rqf_flush_seq_bit = -1;

static __always_inline bool start_stamped(__u32 rq_flags)
{
	if (!rqf_enum)
		return true; /* older kernels: unwritten stamps are zero */
	return rqf(rq_flags, rqf_io_stat_bit) || rqf(rq_flags, rqf_use_sched_bit);
}

static __always_inline bool issue_stamped(__u32 rq_flags)
{
	if (!rqf_enum)
		return true;
	return rqf(rq_flags, rqf_stats_bit);
}

/*
 * Tracepoint arguments. block_rq_issue, block_rq_insert, block_bio_queue and
 * their kin lost their request-queue argument in 5.11 (commit a54895fa057c
 * and its series); user space reads which layout this kernel has from BTF.
 */
const volatile bool rq_tp_has_queue = false; /* rq events: (q, rq) */
const volatile bool bio_tp_has_queue = false; /* bio events: (q, bio) */

static __always_inline struct request *rq_arg(unsigned long long *ctx)
{
	return (struct request *)ctx_word(ctx, rq_tp_has_queue ? 1 : 0);
}

static __always_inline struct bio *bio_arg(unsigned long long *ctx)
{
	return (struct bio *)ctx_word(ctx, bio_tp_has_queue ? 1 : 0);
}

static __always_inline __u8 op_of(__u64 cmd_flags)
{
	/* REQ_OP_* numbers, include/linux/blk_types.h; stable since 4.10. */
	switch (cmd_flags & 0xff) {
	case 0: return IOLAT_OP_READ;
	case 1: return IOLAT_OP_WRITE;
	case 2: return IOLAT_OP_FLUSH;
	case 3: return IOLAT_OP_DISCARD;
	case 9: return IOLAT_OP_WRITE_ZEROES;
	default: return IOLAT_OP_OTHER;
	}
}

static __always_inline __u32 flag_if(__u64 cmd_flags, __u32 kbit, __u32 ours)
{
	return (cmd_flags >> kbit) & 1 ? ours : 0;
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

static __always_inline __u64 cgroup_id(struct cgroup *cg)
{
	return BPF_CORE_READ(cg, kn, id);
}

/*
 * The id of cg's ancestor at `level` (cg itself at its own level), so that
 * a filter on a parent cgroup takes in its children; 0 when cg is above
 * that level. cgroup->ancestors replaced ancestor_ids in 6.1: CO-RE picks.
 */
static __always_inline __u64 cgroup_ancestor_id(struct cgroup *cg, int level)
{
	if (BPF_CORE_READ(cg, level) < level)
		return 0;
	if (bpf_core_field_exists(cg->ancestors)) {
		struct cgroup *anc = NULL;

		bpf_core_read(&anc, sizeof(anc), &cg->ancestors[level & 0xff]);
		return anc ? cgroup_id(anc) : 0;
	} else {
		struct cgroup___old *old = (void *)cg;
		__u64 id = 0;

		bpf_core_read(&id, sizeof(id), &old->ancestor_ids[level & 0xff]);
		return id;
	}
}

#endif /* IOLAT_BLOCK_H */
