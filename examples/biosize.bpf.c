// SPDX-License-Identifier: GPL-2.0
/*
 * biosize.bpf.c - block I/O request sizes per disk: an exp2 histogram of
 * bytes at request issue, keyed by the disk's dev_t (biosize.yaml).
 */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "iolat_user.h"

char LICENSE[] SEC("license") = "GPL";

/* 2^24 bytes = 16 MiB; larger requests land there too. */
#define MAX_BUCKET 24

/* Kernels before 5.17 (commit f3fa33acca9f) kept the disk in the request. */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

struct size_key {
	__u32 dev; /* major << 20 | minor, the kernel's dev_t */
	__u32 bucket;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64 * (MAX_BUCKET + 2)); /* 64 disks */
	__type(key, struct size_key);
	__type(value, __u64);
} block_request_size_bytes SEC(".maps");

static __always_inline struct gendisk *disk_of(struct request *rq)
{
	if (bpf_core_field_exists(rq->q->disk))
		return BPF_CORE_READ(rq, q, disk);
	return BPF_CORE_READ((struct request___old *)rq, rq_disk);
}

/* Kernels 5.11+: before, block_rq_issue passed the queue first, (q, rq). */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(block_rq_issue, struct request *rq)
{
	struct gendisk *disk = disk_of(rq);
	struct size_key key = {};

	if (!disk)
		return 0;
	key.dev = (BPF_CORE_READ(disk, major) << 20) | BPF_CORE_READ(disk, first_minor);
	iolat_hist_add(&block_request_size_bytes, &key, &key.bucket, BPF_CORE_READ(rq, __data_len),
		       MAX_BUCKET);
	return 0;
}
