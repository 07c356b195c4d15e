// SPDX-License-Identifier: GPL-2.0
/*
 * many.bpf.c - maps with many entries, filled from user space (bpftool
 * batch), for the scrape-cost benchmark (bench/userprogs.sh) and the
 * exactness test of wide maps (test_userprogs.sh): `many_counts` holds up
 * to 16384 counters by id, `many_hists` exp2 histograms by id.
 *
 * Its one program never runs on its own (an unused tracepoint); it is there
 * because an object needs a program to be loaded by iolat.
 */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct hist_key {
	__u32 id;
	__u32 bucket;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} many_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct hist_key);
	__type(value, __u64);
} many_hists SEC(".maps");

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(many_requeue, struct request *rq)
{
	__u32 id = 0;
	__u64 one = 1;

	bpf_map_update_elem(&many_counts, &id, &one, BPF_NOEXIST);
	return 0;
}
