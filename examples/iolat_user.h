/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * iolat_user.h - helpers for BPF programs that `iolat serve` exports
 * (docs/userprogs.md). Include it after vmlinux.h and bpf_helpers.h.
 *
 * Every map value is one u64. A histogram's key ends with its bucket
 * field; for exp2 buckets, bucket b counts the values v with
 * 2^(b-1) < v <= 2^b (b = 0 takes v <= 1), values past the last bucket go
 * into the last one, and the key with bucket = max + 1 holds the sum of the
 * values. Rounding up, not down as bcc does, makes bucket b's upper bound
 * exactly 2^b: Prometheus' `le`.
 */
#ifndef IOLAT_USER_H
#define IOLAT_USER_H

/* ceil(log2(v)), 0 for v <= 1: a fixed sequence of shifts, no loop. */
static __always_inline __u32 iolat_log2_ceil(__u64 v)
{
	__u32 r, s;

	if (v <= 1)
		return 0;
	v--; /* floor(log2(v - 1)) + 1 == ceil(log2(v)) for v >= 2 */
	r = (v > 0xffffffffULL) << 5;
	v >>= r;
	s = (v > 0xffff) << 4;
	v >>= s;
	r |= s;
	s = (v > 0xff) << 3;
	v >>= s;
	r |= s;
	s = (v > 0xf) << 2;
	v >>= s;
	r |= s;
	s = (v > 0x3) << 1;
	v >>= s;
	r |= s;
	r |= (__u32)(v >> 1);
	return r + 1;
}

/* The exp2 bucket of v, with buckets 0..max. */
static __always_inline __u32 iolat_exp2_bucket(__u64 v, __u32 max)
{
	__u32 b = iolat_log2_ceil(v);

	return b > max ? max : b;
}

/*
 * The map's u64 for key, created as 0 if missing; NULL only when the map
 * is full. BPF_NOEXIST: of two CPUs racing to create it, one wins, and
 * the other's lookup finds the winner's value.
 */
static __always_inline __u64 *iolat_lookup_or_init(void *map, const void *key)
{
	__u64 zero = 0, *v;

	v = bpf_map_lookup_elem(map, key);
	if (v)
		return v;
	bpf_map_update_elem(map, key, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

/* Adds n to key's counter; atomic, so shared (non-per-CPU) maps stay exact. */
static __always_inline void iolat_count(void *map, const void *key, __u64 n)
{
	__u64 *v = iolat_lookup_or_init(map, key);

	if (v)
		__sync_fetch_and_add(v, n);
}

/*
 * Adds value to an exp2 histogram: key's bucket field (a __u32 inside
 * *key) is set to value's bucket, that counter grows by one, then to
 * max + 1, the sum key, which grows by value. *bucket is left at max + 1.
 */
static __always_inline void iolat_hist_add(void *map, void *key, __u32 *bucket, __u64 value,
					   __u32 max)
{
	*bucket = iolat_exp2_bucket(value, max);
	iolat_count(map, key, 1);
	*bucket = max + 1;
	iolat_count(map, key, value);
}

#endif /* IOLAT_USER_H */
