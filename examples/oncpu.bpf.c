// SPDX-License-Identifier: GPL-2.0
/*
 * oncpu.bpf.c - what the CPUs are doing in the kernel: a cpu-clock perf
 * event (oncpu.yaml's perf_events) samples every CPU 49 times a second,
 * and each sample counts the kernel stack it caught, by stack id; the
 * kstack decoder turns the id into the stack's symbols.
 *
 * A sample taken in user space has no kernel stack: bpf_get_stackid fails
 * and the sample counts under the error's (negative) id, which the decoder
 * shows as [unknown]. 49 Hz, not 50 or 100, so sampling does not run in
 * step with timers.
 */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "iolat_user.h"

char LICENSE[] SEC("license") = "GPL";

#define MAX_STACKS 4096
#define MAX_DEPTH 127 /* PERF_MAX_STACK_DEPTH */

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, MAX_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, MAX_DEPTH * sizeof(__u64));
} kernel_stacks SEC(".maps");

/* Stack id -> samples. Stack ids are stable, so the map stays bounded by
 * the stack map's size. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_STACKS + 64);
	__type(key, __s32);
	__type(value, __u64);
} cpu_samples SEC(".maps");

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx)
{
	__s32 id = (__s32)bpf_get_stackid(ctx, &kernel_stacks, 0);

	iolat_count(&cpu_samples, &id, 1);
	return 0;
}
