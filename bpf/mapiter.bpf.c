// SPDX-License-Identifier: GPL-2.0
/*
 * mapiter.bpf.c - copies every element of one map (key, then value) into
 * the iterator's seq_file, for src/uprog/mapiter.c: a scrape reads a whole map
 * with a few read() calls, where BPF_MAP_LOOKUP_BATCH takes and drops each
 * hash bucket's lock and copies each bucket out on its own.
 *
 * The sizes are set per map before load: the kernel checks at attach that
 * the program reads no more of a key or value than the map has.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 key_size = 1;
/* Per-CPU maps: every possible CPU's value, each rounded up to 8 bytes. */
const volatile __u32 value_size = 1;

SEC("iter/bpf_map_elem")
int dump_elem(struct bpf_iter__bpf_map_elem *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	void *key = ctx->key, *value = ctx->value;

	if (!key || !value)
		return 0;
	bpf_seq_write(seq, key, key_size);
	bpf_seq_write(seq, value, value_size);
	return 0;
}
