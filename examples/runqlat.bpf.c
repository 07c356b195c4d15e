// SPDX-License-Identifier: GPL-2.0
/*
 * runqlat.bpf.c - run-queue latency: how long a runnable task waits for a
 * CPU, from its wakeup (or its preemption) to the switch that runs it; an
 * exp2 histogram in microseconds (runqlat.yaml). tp_btf programs: typed
 * task_struct pointers, no probe reads.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "iolat_user.h"

char LICENSE[] SEC("license") = "GPL";

/* 2^26 us is about 67 s; anything longer lands there too. */
#define MAX_BUCKET 26

/* Kernels before 5.14 (commit 2f064a59a11f) named task_struct's state `state`. */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

struct hist_key {
	__u32 bucket;
};

/* When each runnable task was queued, by pid; LRU so lost wakeups age out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} queued_at SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_BUCKET + 2); /* buckets 0..MAX_BUCKET and the sum */
	__type(key, struct hist_key);
	__type(value, __u64);
} run_queue_latency SEC(".maps");

static __always_inline void enqueued(struct task_struct *p)
{
	__u32 pid = BPF_CORE_READ(p, pid);
	__u64 now = bpf_ktime_get_ns();

	if (pid) /* the idle task never waits in a queue */
		bpf_map_update_elem(&queued_at, &pid, &now, BPF_ANY);
}

static __always_inline bool still_runnable(struct task_struct *p)
{
	if (bpf_core_field_exists(p->__state))
		return BPF_CORE_READ(p, __state) == 0; /* TASK_RUNNING */
	return BPF_CORE_READ((struct task_struct___old *)p, state) == 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup, struct task_struct *p)
{
	enqueued(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new, struct task_struct *p)
{
	enqueued(p);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct hist_key key = {};
	__u32 pid = BPF_CORE_READ(next, pid);
	__u64 *at;

	/* A preempted task goes straight back into the queue. */
	if (still_runnable(prev))
		enqueued(prev);
	at = bpf_map_lookup_elem(&queued_at, &pid);
	if (!at)
		return 0;
	iolat_hist_add(&run_queue_latency, &key, &key.bucket, (bpf_ktime_get_ns() - *at) / 1000,
		       MAX_BUCKET);
	bpf_map_delete_elem(&queued_at, &pid);
	return 0;
}
