// SPDX-License-Identifier: GPL-2.0
/*
 * bad_verifier.bpf.c - a BPF object the verifier must reject, for
 * test_uprog.sh: uprog_open reports the log's tail and leaves nothing
 * loaded, not even the good program loaded before the bad one.
 */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("tp_btf/block_rq_issue")
int uprog_t_good(void *ctx)
{
	return 0;
}

/* Reads 8 bytes at offset 16 of an 8-byte map value. */
SEC("tp_btf/block_rq_complete")
int uprog_t_oob(void *ctx)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&counts, &zero);

	return v ? (int)v[2] : 0;
}
