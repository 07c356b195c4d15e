// SPDX-License-Identifier: GPL-2.0
/*
 * sysio.bpf.c - the time the host takes to serve each workload's positional
 * file I/O system calls (pread64, pwrite64, preadv, pwritev, preadv2,
 * pwritev2), entry to exit, in histograms keyed by the calling thread's io
 * cgroup and op: a VM's disk I/O as qemu (aio=threads, its default) asks
 * the host for it, charged to the VM the way its bios are.
 *
 * These calls take a file offset, so they cannot be made on pipes, sockets
 * or eventfds: what they time is file and block-device I/O. Their own
 * tracepoints (syscalls:sys_enter_X / sys_exit_X) fire for them alone, so
 * every other system call costs nothing, as it would with raw_syscalls.
 * A separate object from iolat.bpf.c, loaded only when asked for (serve's
 * syscall families, top --syscalls): without it, nothing of this is attached.
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "block.h"
#include "iolat.h"
#include "slots.h"
#include "sysio.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space between open and load: the collector's latency table
 * (src/core/buckets.h), so these histograms merge into its views. */
const volatile __u64 lat_bounds[IOLAT_LAT_SLOTS] = {};
const volatile __u32 lat_cells[IOLAT_CELL_TABLE] = {};
const volatile bool key_process = false; /* calling process, not its cgroup */

/* Threads that made one of the calls: tid -> entry time, 0 once it
 * returned. An entry stays after the call, so that a thread's next call
 * costs a lookup, not an insert and a delete (the two cost most of a call's
 * time here: BENCHMARKS.md); LRU keeps the threads that come and go
 * bounded, and each CPU's own free list spares the inserts a shared lock. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} sysio_starts SEC(".maps");

/* Preallocated: a tracepoint program may not allocate before 6.1. User
 * space sizes it (src/core/systimes.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct sysio_key);
	__type(value, struct sysio_val);
} sysio_hists SEC(".maps");

/* Calls lost because sysio_hists was full (a per-CPU counter, slot 0). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sysio_full SEC(".maps");

/* Source of a zeroed value when a key is first seen (too big for the stack). */
static struct sysio_val zero_val;

/*
 * The io (blkio) cgroup of the current task: on cgroup v2 its own (or the
 * nearest ancestor with io on), on v1 its blkio one, which is where
 * blk-cgroup charges the bios the task issues itself (blkcg_css()). The
 * walk trace.bpf.c's current_io_cgroup makes, but through the typed task
 * (bpf_get_current_task_btf, 5.11): its loads are the verifier's checked
 * direct loads, not a helper call each, which took ~100 ns of a call here.
 * NULL without CONFIG_BLK_CGROUP.
 */
static __always_inline struct cgroup *task_io_cgroup(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct cgroup_subsys_state *css;
	struct css_set *cset;

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, io_cgrp_id))
		return NULL;
	cset = task->cgroups;
	if (!cset)
		return NULL;
	css = cset->subsys[bpf_core_enum_value(enum cgroup_subsys_id, io_cgrp_id) & 0x3f];
	return css ? css->cgroup : NULL;
}

/* The series' cgroup field, as the collector's key has it for a bio of this
 * thread (bio_cgroup in block.h; keyed by process, the process, filtered
 * by its cgroup); false if the cgroup filter leaves the call out. */
static __always_inline bool key_of(struct sysio_key *key)
{
	struct cgroup *cg;
	__u64 id = 0;

	if (!key_process || filter_cgroup) {
		cg = task_io_cgroup();
		if (!filter_cgroup)
			id = cgroup_id(cg, true);
		else if (!cg || cgroup_ancestor_id(cg, filter_cgroup_level) != filter_cgroup)
			return false;
		else
			id = filter_cgroup;
	}
	key->cgroup = key_process ? IOLAT_KEY_PROCESS | (bpf_get_current_pid_tgid() >> 32) : id;
	return true;
}

static __always_inline int on_enter(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns(), *start = bpf_map_lookup_elem(&sysio_starts, &tid);

	if (start)
		*start = now;
	else
		bpf_map_update_elem(&sysio_starts, &tid, &now, BPF_ANY);
	return 0;
}

static __always_inline int on_exit(long ret, __u8 op)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), slot;
	struct sysio_key key = { .op = op };
	struct sysio_val *v;
	__u64 *start, ns;

	start = bpf_map_lookup_elem(&sysio_starts, &tid);
	if (!start || !*start)
		return 0; /* entered before the programs were attached */
	ns = bpf_ktime_get_ns() - *start;
	*start = 0;
	if (!key_of(&key))
		return 0;
	v = bpf_map_lookup_elem(&sysio_hists, &key);
	if (!v) {
		bpf_map_update_elem(&sysio_hists, &key, &zero_val, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&sysio_hists, &key);
	}
	if (!v) {
		stat_inc(&sysio_full, 0);
		return 0;
	}
	slot =
	    iolat_slot_of(lat_cells, lat_bounds, IOLAT_LAT_SLOTS_LOG2, ns) & (IOLAT_LAT_SLOTS - 1);
	__sync_fetch_and_add(&v->calls, 1);
	__sync_fetch_and_add(&v->slots[slot], 1);
	__sync_fetch_and_add(&v->sum_ns, ns);
	racy_max(&v->max_ns, ns);
	if (ret > 0)
		__sync_fetch_and_add(&v->bytes, (__u64)ret);
	else if (ret < 0)
		__sync_fetch_and_add(&v->errors, 1);
	return 0;
}

/* SYSIO_CALL(name, op): the entry and exit programs of system call `name`.
 * User space finds them as enter_name and exit_name. */
#define SYSIO_CALL(name, op)                                                                       \
	SEC("tracepoint/syscalls/sys_enter_" #name)                                                \
	int enter_##name(void *ctx)                                                                \
	{                                                                                          \
		return on_enter();                                                                 \
	}                                                                                          \
                                                                                                   \
	SEC("tracepoint/syscalls/sys_exit_" #name)                                                 \
	int exit_##name(struct trace_event_raw_sys_exit *ctx)                                      \
	{                                                                                          \
		return on_exit(ctx->ret, op);                                                      \
	}

SYSIO_CALL(pread64, IOLAT_OP_READ)
SYSIO_CALL(preadv, IOLAT_OP_READ)
SYSIO_CALL(preadv2, IOLAT_OP_READ)
SYSIO_CALL(pwrite64, IOLAT_OP_WRITE)
SYSIO_CALL(pwritev, IOLAT_OP_WRITE)
SYSIO_CALL(pwritev2, IOLAT_OP_WRITE)
