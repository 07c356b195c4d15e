/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * metrics.h - the metric model every exposition format renders from.
 *
 * A metric_set is a list of families (name, help, type), each holding
 * series (label values plus a value or a histogram). Histograms carry the
 * kernel's fine slots with their bucket table, cumulative since start, so
 * each format derives its own buckets exactly: classic `le` buckets at
 * table bounds, native (exponential) buckets through the table's native
 * mapping. Building a set never touches the kernel; see exporter.c.
 */
#ifndef IOLAT_METRICS_H
#define IOLAT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buckets.h"
#include <linux/types.h>

#define METRIC_MAX_LABELS 8

enum metric_type {
	METRIC_COUNTER,
	METRIC_GAUGE,
	METRIC_HISTOGRAM,
};

struct metric_hist {
	const struct bucket_table *table;
	/* table->nslots counts. Borrowed from the caller's data while the series
	 * has one source (the common case: no copy), owned once a second source
	 * is summed in. Borrowed slots must outlive the set's use. */
	const __u64 *slots;
	__u64 *owned;
	/* Every non-zero slot lies in [lo, hi); hi 0: any may be non-zero. */
	size_t lo, hi;
	uint64_t count;
	/* Table histograms add their sources' sums in raw units (ns, bytes)
	 * and derive sum from the total: added as doubles, the same total
	 * summed in another order could come out one rounding step lower, and
	 * Prometheus takes any decrease of a _sum for a counter reset. */
	uint64_t sum_raw;
	double sum; /* in base units (seconds, bytes) */
};

struct metric_series {
	char *values[METRIC_MAX_LABELS]; /* copies, in the family's blocks */
	double value;			 /* counters and gauges */
	struct metric_hist hist;	 /* histograms */
};

struct metric_family {
	const char *name;
	const char *help;
	enum metric_type type;
	const char *labels[METRIC_MAX_LABELS]; /* label names, NULL-terminated */
	int nlabels;
	/* Labels (bit k: labels[k]) left out of a series whose value is empty
	 * (Prometheus holds the two the same): ones only some series have,
	 * such as a workload's Kubernetes names. */
	uint32_t omit_empty;
	/* Classic `le` bounds in raw table units (ns, bytes), ascending; the
	 * +Inf bucket is implicit. Each must be a bound of the table. */
	const uint64_t *le;
	size_t nle;
	/* Histograms with buckets of their own (users' BPF maps, umetrics.c):
	 * `ule` ascending upper bounds in base units, nule of them. Their
	 * series have no table: they count into hist.owned[0..nule], the
	 * last one past every bound (+Inf). */
	const double *ule;
	size_t nule;
	struct metric_series *series;
	size_t n, cap;
	void *index; /* finds series by label values (metrics.c) */
	void *arena; /* holds the series' label values (metrics.c) */
	/* After metrics_reset: series the last scrape left in place, which
	 * this one takes again while its series come in the same order; and
	 * how many of this scrape's series the index holds (metrics.c). */
	size_t kept_n, indexed;
	/* The name of the family whose series were kept in this place: they
	 * are taken again unread (metrics_series_again) only by the same one. */
	const char *kept_name;
};

/* Families live in a fixed array, so a family pointer stays valid while the
 * set is built; series pointers are valid only until the next series is
 * added to the same family. */
#define METRIC_MAX_FAMILIES 256

struct metric_set {
	struct metric_family fam[METRIC_MAX_FAMILIES];
	size_t n;
	size_t nkept; /* fam[0..nkept) hold memory metrics_reset kept */
};

/* Adds a family (NULL when METRIC_MAX_FAMILIES are in use or labels names
 * more than METRIC_MAX_LABELS); name, help, labels and le must outlive the
 * set. */
struct metric_family *metrics_family(struct metric_set *set, const char *name, const char *help,
				     enum metric_type type, const char *const *labels);

/* The base unit f's name ends in ("seconds" for x_seconds and a counter
 * x_seconds_total), or NULL: what OpenMetrics' # UNIT line declares. */
const char *metrics_family_unit(const struct metric_family *f);

/*
 * The series of f with these label values (as many as f has labels),
 * created zeroed if new. For histograms, `table` gives the slots' table.
 * Returns NULL on allocation failure.
 */
struct metric_series *metrics_series(struct metric_family *f, const char *const *values,
				     const struct bucket_table *table);

/*
 * The next series of the last scrape's order (see metrics_reset), taken
 * again without its label values being compared: for a caller that knows
 * they are the same (users' maps: the same key bytes where the last scrape
 * had them, decoded by decoders that read nothing else). NULL when that
 * order no longer holds, or the series kept here were another family's
 * (another name pointer): then metrics_series.
 */
struct metric_series *metrics_series_again(struct metric_family *f,
					   const struct bucket_table *table);

/* Sets the value of f's series with these label values (created if new):
 * a counter's or gauge's one sample. f may be NULL (a metrics_family that
 * failed), so a caller can chain both. 0 or -ENOMEM. */
int metrics_set_value(struct metric_family *f, const char *const *values, double v);

/* Makes room for n series in f, so that adding them grows nothing (a
 * family the size of the previous scrape's). 0 or -ENOMEM. */
int metrics_reserve(struct metric_family *f, size_t n);

/* Adds counts into a histogram series; sum_raw in raw units (ns, bytes).
 * Its count becomes the sum of its slots (count is ignored, see metrics.c).
 * The first add borrows `slots` (see struct metric_hist). 0 or -ENOMEM. */
int metrics_hist_add(struct metric_series *s, const __u64 *slots, uint64_t count, uint64_t sum_raw);

/*
 * A source's slots (table->nslots) with what it knows of them: that every
 * non-zero one lies in [lo, hi) (hi 0: not known), and, when count_summed,
 * that count is their sum (a series folded in user space, whose count was
 * summed from the very slots given).
 */
struct metric_slots {
	const __u64 *slots;
	size_t lo, hi;
	uint64_t count;
	bool count_summed;
};

/* metrics_hist_add with that knowledge: the slots, 4 KiB a series that no
 * cache holds in a large scrape, are read only where they can be non-zero,
 * and only to add them to another source's or to sum them. 0 or -ENOMEM. */
int metrics_hist_add_slots(struct metric_series *s, const struct metric_slots *in,
			   uint64_t sum_raw);

/* Adds n observations to bucket `bucket` (0..nule; nule: past every bound)
 * of a series of a family with buckets of its own (`ule`). 0 or -ENOMEM. */
int metrics_uhist_add(const struct metric_family *f, struct metric_series *s, size_t bucket,
		      uint64_t n);

/* Frees every family and series; the set can be reused after. */
/* Samples a histogram series with nle classic bounds takes in the text
 * exposition: nle buckets, +Inf, _sum and _count. */
size_t metrics_hist_samples(size_t nle);

/* The series family f has now as a store holds them: classic, each of a
 * histogram's samples a series of its own; native, a histogram one. */
size_t metrics_family_series(const struct metric_family *f, bool native);

void metrics_clear(struct metric_set *set);

/*
 * Empties the set as metrics_clear does, but keeps each family's series
 * array, index and label blocks for the family added in its place next:
 * a scrape like the last one (serve's) then allocates and faults in no
 * new memory, and its index is warm. metrics_clear frees what it kept.
 */
void metrics_reset(struct metric_set *set);

/*
 * Cumulative count of a histogram series for classic bound `le` (raw
 * units): the slots whose upper bound is <= le.
 */
uint64_t metrics_hist_cumulative(const struct metric_series *s, uint64_t le);

/*
 * Native-histogram buckets of a series: calls emit(index, count) for each
 * non-empty native bucket in ascending index order, after reporting the
 * zero bucket's count in *zero_count. Used by the protobuf encoder.
 */
void metrics_hist_native(const struct metric_series *s, uint64_t *zero_count,
			 void (*emit)(void *ctx, int index, uint64_t count), void *ctx);

#endif
