// SPDX-License-Identifier: GPL-2.0
/*
 * timers.bpf.c - kernel timers started, by callback function: a counter
 * keyed by the function's address, which the ksym decoder turns into its
 * name (timers.yaml). A classic tracepoint: its fields are read through
 * CO-RE, so one object runs on kernels whose timer_start record differs.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "iolat_user.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64); /* the callback's address */
	__type(value, __u64);
} timer_starts SEC(".maps");

SEC("tracepoint/timer/timer_start")
int timer_start(struct trace_event_raw_timer_start *ctx)
{
	__u64 function = (__u64)BPF_CORE_READ(ctx, function);

	iolat_count(&timer_starts, &function, 1);
	return 0;
}
