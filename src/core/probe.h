/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * probe.h - what the running kernel offers iolat: BTF, block tracepoints,
 * their argument layouts, and the queue flag behind request timestamps.
 * Asks the kernel's BTF and kallsyms; never compares version numbers.
 */
#ifndef IOLAT_PROBE_H
#define IOLAT_PROBE_H

#include <stdbool.h>
#include <stdint.h>

struct btf;

enum probe_tp {
	TP_RQ_COMPLETE = 0,
	TP_RQ_ISSUE,
	TP_IO_START,
	TP_RQ_INSERT,
	TP_BIO_QUEUE,
	TP_BIO_COMPLETE,
	TP_COUNT,
};

/* Which field of struct bio holds its blk-cgroup submit stamp. */
enum probe_bio_stamp {
	PROBE_BIO_STAMP_NONE = 0,      /* neither: a kernel without CONFIG_BLK_CGROUP */
	PROBE_BIO_STAMP_BI_ISSUE,      /* bio.bi_issue (struct bio_issue), before 6.18 */
	PROBE_BIO_STAMP_ISSUE_TIME_NS, /* bio.issue_time_ns, 6.18 and later */
};

struct probe_result {
	bool btf; /* kernel BTF readable */
	char btf_path[256];
	bool tp_exists[TP_COUNT]; /* the tracepoint is in this kernel */
	bool tp_btf[TP_COUNT];	  /* and BTF describes it (tp_btf can attach) */
	bool rq_tp_has_queue;	  /* block_rq_issue(q, rq): kernels before 5.11 */
	bool bio_tp_has_queue;	  /* block_bio_queue(q, bio): the same (kernels
				   * with only one of the two changes exist:
				   * Debian's 5.10 has (rq) and (q, bio)) */
	int queue_stats_bit;	  /* QUEUE_FLAG_STATS, or -1 if BTF does not say */
	/* The block layer caches the clock for the length of a plug (6.9+,
	 * blk_plug.cur_ktime): a request created and issued inside one plug
	 * gets one time for both, and its total time is its device time. */
	bool plug_clock;
	/* Request flag bits, by enumerator name (-1: none); rqf_enum false on
	 * kernels whose flags are macros (bpf/block.h). */
	bool rqf_enum;
	int rqf_io_stat_bit, rqf_use_sched_bit, rqf_stats_bit, rqf_flush_seq_bit;
	/* The bio's submit stamp blk-cgroup keeps (only `iolat check` reports
	 * it: none of these predates blk-throttle's wait, cmd_check.c says
	 * where each is written). */
	enum probe_bio_stamp bio_stamp;
	bool bio_stamp_flag;	 /* QUEUE_FLAG_BIO_ISSUE_TIME: stamped only on
				  * queues with io.latency (6.18) */
	bool bio_noacct_nocheck; /* submit_bio_noacct_nocheck() exists (5.18+) */
};

/* A request flag's mask (rq_flags is 32 bits), 0 for a flag this kernel
 * lacks (-1). */
static inline uint32_t probe_rqf_mask(int bit)
{
	return bit >= 0 && bit < 32 ? (uint32_t)1 << bit : 0;
}

/* RQF_FLUSH_SEQ's mask: bit 4 while the flags were macros. */
static inline uint32_t probe_rqf_flush_seq_mask(const struct probe_result *pr)
{
	return pr->rqf_enum ? probe_rqf_mask(pr->rqf_flush_seq_bit) : (uint32_t)1 << 4;
}

/*
 * Hands the kernel's layout facts to a BPF object's constants (bpf/block.h
 * declares them for both objects; their rodata structs differ in type, not
 * in these fields), before it is loaded.
 */
#define PROBE_SET_BLOCK_RODATA(ro, pr)                                                             \
	do {                                                                                       \
		(ro)->rq_tp_has_queue = (pr)->rq_tp_has_queue;                                     \
		(ro)->bio_tp_has_queue = (pr)->bio_tp_has_queue;                                   \
		(ro)->rqf_enum = (pr)->rqf_enum;                                                   \
		(ro)->rqf_start_mask = probe_rqf_mask((pr)->rqf_io_stat_bit) |                     \
				       probe_rqf_mask((pr)->rqf_use_sched_bit);                    \
		(ro)->rqf_issue_mask = probe_rqf_mask((pr)->rqf_stats_bit);                        \
		(ro)->rqf_flush_seq_mask = probe_rqf_flush_seq_mask(pr);                           \
	} while (0)

/* Parameters of tracepoint tp's BTF prototype (its context pointer
 * included), or -1 if BTF does not describe it. */
int probe_tp_params(const struct btf *btf, const char *tp);

/* Name of a tracepoint, without the "block/" prefix. */
const char *probe_tp_name(enum probe_tp tp);

/*
 * Fills r from the kernel's BTF at btf_path, or /sys/kernel/btf/vmlinux if
 * NULL (the commands pass their tests' IOLAT_BTF, to simulate a kernel
 * without BTF). Returns 0, or -errno if no BTF could be read.
 */
int probe_kernel_at(struct probe_result *r, const char *btf_path);

#endif
