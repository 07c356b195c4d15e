/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * buckets.h - the one histogram definition every iolat view shares.
 *
 * A bucket table is a sorted list of inclusive upper bounds (integers: ns
 * for latency, bytes for size). The kernel counts into it; every view
 * (biolatency-style log2 rows, Prometheus classic `le` buckets, native
 * exponential buckets, percentiles) is an exact merge of its slots, because
 * the table is built as the union of all the boundaries those views need.
 */
#ifndef IOLAT_BUCKETS_H
#define IOLAT_BUCKETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bucket_table {
	uint64_t *bound; /* bound[i]: inclusive upper bound of slot i; UINT64_MAX pads */
	size_t nslots;	 /* power of two: the kernel's slot count */
	size_t nbounds;	 /* finite bounds in use; slot nbounds is the overflow slot */
	/*
	 * The Prometheus native-histogram buckets the table is exact for: bucket
	 * i holds (base^(i-1), base^i] in base units, base = 2^(2^-schema), for
	 * native_min < i <= native_max; values up to base^native_min are the
	 * zero bucket. A raw value (ns, bytes) over `per_base` is in base units
	 * (seconds, bytes).
	 */
	int native_schema;
	int native_min, native_max;
	uint64_t per_base;
	int16_t native_of[1 << 9]; /* each slot's native bucket, computed once */
};

/* Native-histogram schema the latency table is exact for (2^(1/16): 4.4 %). */
#define LAT_NATIVE_SCHEMA 4
#define LAT_NATIVE_MIN_INDEX (-320) /* 2^-20 s, just under 1 us */
#define LAT_NATIVE_MAX_INDEX 112    /* 2^7 s = 128 s */

/* Sizes: schema 3 (2^(1/8): 9 %), from 512 B to 128 MiB. */
#define SIZE_NATIVE_SCHEMA 3
#define SIZE_NATIVE_MIN_INDEX 72  /* 2^9 B */
#define SIZE_NATIVE_MAX_INDEX 216 /* 2^27 B */

/*
 * Latency table (ns): native schema-4 bounds from 2^-20 s to 2^7 s,
 * biolatency's usec and msec log2 rows, the default classic `le` set, and
 * `extra` further bounds (ns): serve's configured classic bounds, so each
 * is a slot boundary and its `le` bucket exact (IOLAT_LAT_SLOTS - 1 bounds
 * in all; the fixed ones leave about 17 for bounds of one's own). Fills `out` (storage of
 * IOLAT_LAT_SLOTS). Returns 0, or -E2BIG if the union does not fit.
 */
int buckets_build_latency(struct bucket_table *out, uint64_t *storage, const uint64_t *extra,
			  size_t nextra);

/* Size table (bytes): schema-3 bounds from 512 B to 128 MiB, bitesize's
 * KiB log2 rows, 0 on its own (flushes carry no data), the default classic
 * `le` set and `extra` further bounds. Returns 0, or -E2BIG as above. */
int buckets_build_size(struct bucket_table *out, uint64_t *storage, const uint64_t *extra,
		       size_t nextra);

/* Whether v is one of t's finite bounds: a classic `le` there is exact. */
bool buckets_has_bound(const struct bucket_table *t, uint64_t v);

/* t's finite bounds nearest v, other than v: the largest below (0 if none)
 * and the smallest above (0 if none). For messages that name exact ones. */
void buckets_nearest(const struct bucket_table *t, uint64_t v, uint64_t *below, uint64_t *above);

/* The slot v falls in, by a halving search (bpf/slots.h's, which the
 * kernel's cell lookup matches; tests/unit/test_buckets.c). */
size_t buckets_slot_of(const struct bucket_table *t, uint64_t v);

/*
 * Fills cells[IOLAT_CELL_TABLE] (bpf/slots.h) for table t: each cell's first slot
 * and how many of t's bounds lie inside it, so iolat_slot_of finds a slot
 * with at most two compares (or, in a crowded cell, by the search).
 */
void buckets_cells(const struct bucket_table *t, uint32_t *cells);

/* Smallest value slot i holds (0 for slot 0). */
uint64_t buckets_lower(const struct bucket_table *t, size_t slot);

/* Largest value slot i holds (UINT64_MAX for the overflow slot). */
uint64_t buckets_upper(const struct bucket_table *t, size_t slot);

/* Inclusive upper bound (ns) of native-histogram bucket `index` at schema 4. */
uint64_t buckets_native_bound_ns(int index);

/*
 * The native bucket that slot `slot` lies in: an index in
 * (native_min, native_max], native_min for the zero bucket, or
 * native_max + 1 for the overflow slot (values beyond the table, which no
 * finite native bucket of the table's range holds exactly).
 */
int buckets_native_index(const struct bucket_table *t, size_t slot);

/* Zero-bucket threshold in base units: base^native_min. */
double buckets_native_zero_threshold(const struct bucket_table *t);

/* Default classic `le` bounds, in ns, for exporters and tests. */
extern const uint64_t buckets_default_le_ns[];
extern const size_t buckets_default_le_count;
/* And of request sizes, in bytes. */
/* The per-workload histograms' default classic `le` set: fewer bounds, each
 * one of the default set's (a host has hundreds of workloads; see
 * docs/sizing.md): 100 us to 250 ms, with the mixin's thresholds among them. */
extern const uint64_t buckets_workload_le_ns[];
extern const size_t buckets_workload_le_count;

extern const uint64_t buckets_default_size_le[];
extern const size_t buckets_default_size_le_count;

#endif
