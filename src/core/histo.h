/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * histo.h - arithmetic on collected series: per-CPU merge, interval deltas,
 * and percentiles read off the bucket table.
 */
#ifndef IOLAT_HISTO_H
#define IOLAT_HISTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buckets.h"
#include "iolat.h"
#include <linux/types.h>

/*
 * dst += src, field by field; max fields take the larger. A view with counts
 * and max 0 has an unknown max (see histo_sub), which the sum inherits.
 */
void histo_add(struct iolat_val *dst, const struct iolat_val *src);

/* dst += src, for kernel values (struct iolat_kval): counters mod 2^32, as
 * the kernel's wrap; sums; maxima the larger. */
void histo_kval_add(struct iolat_kval *dst, const struct iolat_kval *src);

/*
 * Advances acc, the series a kernel value has counted so far, to what the
 * kernel values raw[0..n) (one per CPU, or one shared) hold now: each
 * 32-bit counter by its difference mod 2^32 from acc's low 32 bits (acc
 * started at zero with the kernel value and only ever moves this way, so
 * the two agree mod 2^32), the 64-bit sums by assignment, maxima by the
 * larger. Exact as long as no counter advanced 2^32 or more since the last
 * fold (iolat.h). Then the counts the kernel does not keep: each view's
 * count, the sum of its slots, and the I/Os, the device view's count plus
 * its unseen.
 */
void histo_fold(struct iolat_val *acc, const struct iolat_kval *raw, int n);

/*
 * Where a histogram's non-zero slots lie: all in [lo, hi) ([n, n) when
 * none). hi 0: not known, any slot may be non-zero (so zeroed is safe).
 */
struct histo_span {
	uint16_t lo, hi;
};

/* A series' spans: each latency view's (enum iolat_view), then the sizes'. */
#define HISTO_SPAN_SIZE IOLAT_VIEW_COUNT
#define HISTO_SPANS (IOLAT_VIEW_COUNT + 1)

/* histo_fold, and the spans of acc's slots after it into spans. */
void histo_fold_spans(struct iolat_val *acc, const struct iolat_kval *raw, int n,
		      struct histo_span spans[HISTO_SPANS]);

/*
 * out = now - before (counters are cumulative). The kernel keeps only the
 * max since start, so the interval's max is known only when that grew in
 * the interval: then max_ns is it, else 0 (unknown).
 */
void histo_sub(struct iolat_val *out, const struct iolat_val *now, const struct iolat_val *before);

/*
 * The q-quantile (0 < q <= 1) of the values counted in slots, interpolated
 * linearly inside the slot that holds it; never above max_ns when max_ns is
 * non-zero. Returns 0 for an empty histogram.
 */
double histo_quantile(const __u64 *slots, const struct bucket_table *t, double q, uint64_t max);

/* Highest non-empty slot, or -1. */
int histo_top_slot(const __u64 *slots, size_t nslots);

struct histo_summary {
	uint64_t count;
	double mean;
	double p50, p90, p99, p999;
	double max; /* exact when max_exact, else the top slot's upper bound */
	bool max_exact;
};

/*
 * Summary of one latency view over an interval (a histo_sub result). The max
 * is exact when known, else the upper bound of the top non-empty slot.
 */
void histo_summarize(const struct iolat_lat *delta, const struct bucket_table *t,
		     struct histo_summary *out);

#endif
