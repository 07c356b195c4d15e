// SPDX-License-Identifier: GPL-2.0
/*
 * syscalls.bpf.c - system calls by number and errno, counted at
 * raw_syscalls:sys_exit (syscalls.yaml). Per-CPU counters: every CPU makes
 * syscalls all the time, and one shared counter per key would bounce its
 * cache line between them; `iolat serve` sums the CPUs' values.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "iolat_user.h"

char LICENSE[] SEC("license") = "GPL";

struct syscall_key {
	__u32 nr;
	__u32 err; /* errno, 0 for success; no padding: 8 bytes, 4-aligned */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct syscall_key);
	__type(value, __u64);
} syscalls_total SEC(".maps");

/* The syscall number as the entry code saved it: the ABI's register. */
static __always_inline long syscall_nr(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return BPF_CORE_READ(regs, orig_ax);
#elif defined(__TARGET_ARCH_arm64)
	return BPF_CORE_READ((struct user_pt_regs *)regs, regs[8]);
#else
#error "syscalls.bpf.c: add this architecture's syscall number register"
#endif
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	struct syscall_key key = {};
	long nr = syscall_nr(regs);

	if (nr < 0) /* not a syscall: a signal return restarting nothing */
		return 0;
	key.nr = (__u32)nr;
	/* Only -4095..-1 are errors; a large "negative" mmap address is not. */
	key.err = ret < 0 && ret >= -4095 ? (__u32)-ret : 0;
	iolat_count(&syscalls_total, &key, 1);
	return 0;
}
