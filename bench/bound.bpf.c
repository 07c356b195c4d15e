// SPDX-License-Identifier: GPL-2.0
/*
 * bound.bpf.c - what the least a completion-time latency histogram can do
 * costs per I/O on this machine, for bench/cost.sh to set beside iolat.
 *
 * Each program is a lower bound for a part of iolat's work at
 * block_rq_complete, with nothing iolat does that it does not need:
 *
 *   bound_empty  nothing: what running any tp_btf program at this hook
 *                costs (with BPF stats on, their own two clock reads)
 *   bound_clock  one clock read, less the request's issue stamp: the one
 *                thing every latency needs that the kernel has not done yet
 *   bound_slot   that, plus one per-CPU counter picked by the latency's bit
 *                length: an exact histogram of a single series
 *   bound_disk   that, but the series found by disk and operation in a
 *                per-CPU hash: the least a per-disk, per-op histogram costs
 *
 * None of them is correct on every kernel (no flush sequences, partial
 * completions or unstamped requests): they only bound what is possible.
 * tests/helpers/bpfload.c loads one of them.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "block.h"
#include "slots.h"

char LICENSE[] SEC("license") = "GPL";

#define BOUND_SLOTS 64

struct slots {
	__u32 n[BOUND_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct slots);
} one SEC(".maps");

struct disk_op {
	__u32 dev;
	__u32 op;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 256);
	__type(key, struct disk_op);
	__type(value, struct slots);
} per_disk SEC(".maps");

static struct slots zero;

/* The issue-to-completion time: one clock read and one load. */
static __always_inline __u64 device_ns(struct request *rq)
{
	return bpf_ktime_get_ns() - rq->io_start_time_ns;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(bound_empty, struct request *rq, int error, unsigned int nr_bytes)
{
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(bound_clock, struct request *rq, int error, unsigned int nr_bytes)
{
	__u32 k = 0;
	struct slots *s = bpf_map_lookup_elem(&one, &k);

	/* Kept, so the compiler cannot drop the read. */
	if (s)
		s->n[0] = (__u32)device_ns(rq);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(bound_slot, struct request *rq, int error, unsigned int nr_bytes)
{
	__u32 k = 0;
	struct slots *s = bpf_map_lookup_elem(&one, &k);

	if (s)
		s->n[iolat_bit_length(device_ns(rq)) & (BOUND_SLOTS - 1)]++;
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(bound_disk, struct request *rq, int error, unsigned int nr_bytes)
{
	struct disk_op k = {
	    .dev = disk_dev(rq_disk(rq, true), true),
	    .op = op_of(rq->cmd_flags),
	};
	struct slots *s = bpf_map_lookup_elem(&per_disk, &k);

	if (!s) {
		bpf_map_update_elem(&per_disk, &k, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&per_disk, &k);
		if (!s)
			return 0;
	}
	s->n[iolat_bit_length(device_ns(rq)) & (BOUND_SLOTS - 1)]++;
	return 0;
}
