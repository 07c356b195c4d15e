// SPDX-License-Identifier: GPL-2.0
/*
 * maptypes.bpf.c - one counter in every map type uprog_map_read walks
 * (array, per-CPU array, LRU hash, LRU per-CPU hash), for test_uprog.sh:
 * each counts requests issued to loop devices, by the loop's minor, so N
 * reads on one loop device grow that entry by N in all four.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "iolat_user.h"

char LICENSE[] SEC("license") = "GPL";

#define LOOP_MAJOR 7
#define SLOTS 16

#define COUNTER_MAP(NAME, TYPE)                                                                    \
	struct {                                                                                   \
		__uint(type, TYPE);                                                                \
		__uint(max_entries, SLOTS);                                                        \
		__type(key, __u32);                                                                \
		__type(value, __u64);                                                              \
	} NAME SEC(".maps")

COUNTER_MAP(loop_array, BPF_MAP_TYPE_ARRAY);
COUNTER_MAP(loop_percpu_array, BPF_MAP_TYPE_PERCPU_ARRAY);
COUNTER_MAP(loop_lru, BPF_MAP_TYPE_LRU_HASH);
COUNTER_MAP(loop_lru_percpu, BPF_MAP_TYPE_LRU_PERCPU_HASH);

/* A map no metric can read (16-byte values): the config loader refuses it. */
struct wide_value {
	__u64 count, bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SLOTS);
	__type(key, __u32);
	__type(value, struct wide_value);
} loop_wide SEC(".maps");

SEC("tp_btf/block_rq_issue")
int BPF_PROG(uprog_t_maps, struct request *rq)
{
	struct gendisk *disk = BPF_CORE_READ(rq, q, disk);
	__u32 slot;

	if (!disk || BPF_CORE_READ(disk, major) != LOOP_MAJOR)
		return 0;
	slot = (__u32)BPF_CORE_READ(disk, first_minor) % SLOTS;
	iolat_count(&loop_array, &slot, 1);
	iolat_count(&loop_percpu_array, &slot, 1);
	iolat_count(&loop_lru, &slot, 1);
	iolat_count(&loop_lru_percpu, &slot, 1);
	bpf_map_update_elem(&loop_wide, &slot, &(struct wide_value){ 1, 0 }, BPF_ANY);
	return 0;
}
