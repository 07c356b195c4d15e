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
 *   bound_dense  bound_disk with the series found in a per-CPU array by the
 *                request queue's id (q->id, which the kernel hands out
 *                densely from an ida) and the operation: direct indexing,
 *                the alternative to the hash
 *   bound_kval   bound_disk with iolat's key and value (struct iolat_key,
 *                16 bytes; struct iolat_kval, 5 KiB): what iolat's shapes
 *                cost the hash and the caches, with the same one counter
 *   bound_views  bound_kval adding what iolat's account() adds for one
 *                completion: both views' slots, sums and maxima, the size
 *                slot and bytes (slots by bit length, not iolat's cells)
 *   bound_views_dense  bound_views with the series found by direct index,
 *                as iolat's dense rows do: a shared array by q->id x 8 + op
 *                names the disk and its row, a per-CPU array holds the rows:
 *                the floor of iolat's work with a dense index
 *   bound_cgroup bound_views keyed by the bio's cgroup too, in one shared
 *                value per key with atomic adds: the least serve's
 *                per-workload keys cost
 *   bound_restamp_start, _issue, _complete  three programs: the clock read
 *                at creation and issue where a plug caches the kernel's
 *                stamps (6.9+), and bound_views_dense timed from them: the
 *                least that keeps both views true there (below)
 *
 * Between bound_views and iolat's `hist -D -O` lie only iolat's path: the
 * window and stamp tests, the cell lookups, its own cost counters.
 *
 * None of them is correct on every kernel (no flush sequences, partial
 * completions or unstamped requests): they only bound what is possible.
 * tests/helpers/bpfload.c loads one of them (the restamp set: all three).
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

/* Queue ids below this are indexed directly; iolat's maps hold 256 keys by
 * default, and the ida gives out the lowest free id. */
#define DENSE_QUEUES 64
/* Slots per queue: enum iolat_op fits in 8. */
#define DENSE_OPS 8

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DENSE_QUEUES * DENSE_OPS);
	__type(key, __u32);
	__type(value, struct slots);
} per_queue SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 256);
	__type(key, struct iolat_key);
	__type(value, struct iolat_kval);
} per_key SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct iolat_key);
	__type(value, struct iolat_kval);
} per_key_shared SEC(".maps");

static struct iolat_kval zero_kval;

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

SEC("tp_btf/block_rq_complete")
int BPF_PROG(bound_dense, struct request *rq, int error, unsigned int nr_bytes)
{
	__u32 q = rq->q->id, k;
	struct slots *s;

	if (q >= DENSE_QUEUES)
		return 0;
	k = q * DENSE_OPS + op_of(rq->cmd_flags);
	s = bpf_map_lookup_elem(&per_queue, &k);
	if (s)
		s->n[iolat_bit_length(device_ns(rq)) & (BOUND_SLOTS - 1)]++;
	return 0;
}

/* The value of key in map (per_key or per_key_shared), created zeroed if new. */
static __always_inline struct iolat_kval *kval_of(void *map, const struct iolat_key *key)
{
	struct iolat_kval *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	bpf_map_update_elem(map, key, &zero_kval, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

static __always_inline __u32 lat_bit_slot(__u64 ns)
{
	return iolat_bit_length(ns) & (IOLAT_LAT_SLOTS - 1);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(bound_kval, struct request *rq, int error, unsigned int nr_bytes)
{
	struct iolat_key k = {
	    .dev = disk_dev(rq_disk(rq, true), true),
	    .op = op_of(rq->cmd_flags),
	};
	struct iolat_kval *v = kval_of(&per_key, &k);

	if (v)
		v->lat_slots[IOLAT_VIEW_DEVICE][lat_bit_slot(device_ns(rq))]++;
	return 0;
}

/* Both views (device time dev, total time tot), the size and the sums and
 * maxima of one completion, per CPU. */
static __always_inline void views_add_ns(struct iolat_kval *v, __u64 dev, __u64 tot, __u64 bytes)
{
	v->bytes += bytes;
	v->size_slots[iolat_bit_length(bytes) & (IOLAT_SIZE_SLOTS - 1)]++;
	v->lat[IOLAT_VIEW_DEVICE].sum_ns += dev;
	if (dev > v->lat[IOLAT_VIEW_DEVICE].max_ns)
		v->lat[IOLAT_VIEW_DEVICE].max_ns = dev;
	v->lat_slots[IOLAT_VIEW_DEVICE][lat_bit_slot(dev)]++;
	v->lat[IOLAT_VIEW_TOTAL].sum_ns += tot;
	if (tot > v->lat[IOLAT_VIEW_TOTAL].max_ns)
		v->lat[IOLAT_VIEW_TOTAL].max_ns = tot;
	v->lat_slots[IOLAT_VIEW_TOTAL][lat_bit_slot(tot)]++;
}

/* views_add_ns timed from the kernel's stamps. */
static __always_inline void views_add(struct iolat_kval *v, struct request *rq, __u64 bytes)
{
	__u64 now = bpf_ktime_get_ns();

	views_add_ns(v, now - rq->io_start_time_ns, now - rq->start_time_ns, bytes);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(bound_views, struct request *rq, int error, unsigned int nr_bytes)
{
	struct iolat_key k = {
	    .dev = disk_dev(rq_disk(rq, true), true),
	    .op = op_of(rq->cmd_flags),
	};
	struct iolat_kval *v = kval_of(&per_key, &k);

	if (v)
		views_add(v, rq, nr_bytes);
	return 0;
}

/* A dense index entry: the disk a queue id's op slot belongs to, its row + 1. */
struct dense_entry {
	__u32 dev;
	__u32 row1;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DENSE_QUEUES * DENSE_OPS);
	__type(key, __u32);
	__type(value, struct dense_entry);
} dense_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DENSE_QUEUES * DENSE_OPS);
	__type(key, __u32);
	__type(value, struct iolat_kval);
} dense_rows SEC(".maps");

/* No user space assigns rows here: the first completion of a (disk, op)
 * names itself in the index (a bench has one disk; a race only makes two
 * writers agree). The dev check stays, as iolat's must. */
static __always_inline struct iolat_kval *dense_row_of(struct request *rq)
{
	__u32 q = rq->q->id, dev = disk_dev(rq_disk(rq, true), true), k, row;
	struct dense_entry *e;

	if (q >= DENSE_QUEUES)
		return NULL;
	k = q * DENSE_OPS + op_of(rq->cmd_flags);
	e = bpf_map_lookup_elem(&dense_index, &k);
	if (!e)
		return NULL;
	if (e->row1 == 0 || e->dev != dev) {
		e->dev = dev;
		e->row1 = k + 1;
	}
	row = e->row1 - 1;
	return bpf_map_lookup_elem(&dense_rows, &row);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(bound_views_dense, struct request *rq, int error, unsigned int nr_bytes)
{
	struct iolat_kval *v = dense_row_of(rq);

	if (v)
		views_add(v, rq, nr_bytes);
	return 0;
}

/*
 * The restamp bound. Since 6.9 the block layer stamps a request with the
 * time its submitter's plug cached, so requests made and issued in one
 * plug share stamps that are not their own; true views need a clock read
 * at creation and at issue, kept until the completion. bound_restamp_start
 * (block_io_start) and bound_restamp_issue (block_rq_issue) read the clock
 * only when the task's plug holds a cached time, and keep it with that time
 * in a slot picked by the request's address; bound_restamp_complete is
 * bound_views_dense timed from a slot whose cached time is the request's
 * stamp. The three together: the least a tool that keeps both views true
 * on such kernels runs per I/O, against biolatency's two programs.
 */
#define RESTAMP_LOG2 13

struct restamp {
	__u64 rq;
	__u64 cached[IOLAT_VIEW_COUNT];
	__u64 now[IOLAT_VIEW_COUNT];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1u << RESTAMP_LOG2);
	__type(key, __u32);
	__type(value, struct restamp);
} restamps SEC(".maps");

/* Pointer arithmetic on a typed pointer is refused; the distance of two
 * pointers is not: a number per request, the same offset for all. */
static __u64 anchor;

static __always_inline __u64 rq_number(struct request *rq)
{
	__u64 id = (__u64)rq;

	asm volatile("%0 -= %1" : "+r"(id) : "r"(&anchor));
	return id;
}

static __always_inline struct restamp *restamp_of(__u64 id)
{
	__u32 i = (__u32)((id * 0x9E3779B97F4A7C15ULL) >> (64 - RESTAMP_LOG2));

	return bpf_map_lookup_elem(&restamps, &i);
}

static __always_inline void restamp_note(struct request *rq, int view)
{
	struct blk_plug *plug = bpf_get_current_task_btf()->plug;
	struct restamp *r;
	__u64 cached, id;

	if (!plug)
		return;
	cached = plug->cur_ktime;
	if (!cached)
		return;
	id = rq_number(rq);
	r = restamp_of(id);
	if (!r)
		return;
	if (r->rq != id) {
		r->rq = id;
		r->cached[IOLAT_VIEW_COUNT - 1 - view] = 0;
	}
	r->cached[view] = cached;
	r->now[view] = bpf_ktime_get_ns();
}

SEC("tp_btf/block_io_start")
int BPF_PROG(bound_restamp_start, struct request *rq)
{
	restamp_note(rq, IOLAT_VIEW_TOTAL);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(bound_restamp_issue, struct request *rq)
{
	restamp_note(rq, IOLAT_VIEW_DEVICE);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(bound_restamp_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	__u64 now = bpf_ktime_get_ns(), id = rq_number(rq);
	__u64 issue = rq->io_start_time_ns, start = rq->start_time_ns;
	struct iolat_kval *v = dense_row_of(rq);
	struct restamp *r = restamp_of(id);

	if (!v)
		return 0;
	if (r && r->rq == id) {
		if (r->cached[IOLAT_VIEW_DEVICE] == issue)
			issue = r->now[IOLAT_VIEW_DEVICE];
		if (r->cached[IOLAT_VIEW_TOTAL] == start)
			start = r->now[IOLAT_VIEW_TOTAL];
	}
	views_add_ns(v, now - issue, now - start, nr_bytes);
	return 0;
}

/* views_add for a value all CPUs share: atomic adds, a racy maximum. */
static __always_inline void views_add_shared(struct iolat_kval *v, struct request *rq, __u64 bytes)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 dev = now - rq->io_start_time_ns, tot = now - rq->start_time_ns;

	__sync_fetch_and_add(&v->bytes, bytes);
	__sync_fetch_and_add(&v->size_slots[iolat_bit_length(bytes) & (IOLAT_SIZE_SLOTS - 1)], 1);
	__sync_fetch_and_add(&v->lat[IOLAT_VIEW_DEVICE].sum_ns, dev);
	if (dev > *(volatile __u64 *)&v->lat[IOLAT_VIEW_DEVICE].max_ns)
		*(volatile __u64 *)&v->lat[IOLAT_VIEW_DEVICE].max_ns = dev;
	__sync_fetch_and_add(&v->lat_slots[IOLAT_VIEW_DEVICE][lat_bit_slot(dev)], 1);
	__sync_fetch_and_add(&v->lat[IOLAT_VIEW_TOTAL].sum_ns, tot);
	if (tot > *(volatile __u64 *)&v->lat[IOLAT_VIEW_TOTAL].max_ns)
		*(volatile __u64 *)&v->lat[IOLAT_VIEW_TOTAL].max_ns = tot;
	__sync_fetch_and_add(&v->lat_slots[IOLAT_VIEW_TOTAL][lat_bit_slot(tot)], 1);
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(bound_cgroup, struct request *rq, int error, unsigned int nr_bytes)
{
	struct iolat_key k = {
	    .cgroup = bio_cgroup(rq->bio, true),
	    .dev = disk_dev(rq_disk(rq, true), true),
	    .op = op_of(rq->cmd_flags),
	};
	struct iolat_kval *v = kval_of(&per_key_shared, &k);

	if (v)
		views_add_shared(v, rq, nr_bytes);
	return 0;
}
