/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * umetrics.h - the map -> metric path: maps become metric families as a
 * config (uconfig.h) says. Each key is cut into its fields, each field
 * decoded into a label value (decoders.h); the value is a counter's, a
 * histogram bucket's count (the last key field being the bucket), or one of
 * iolat's own histograms (docs/userprogs.md).
 *
 * It serves users' programs (the maps of a loaded object) and iolat's own
 * block metrics (the configs in builtin/, over the collector's views)
 * alike: a source says where the maps are (a loaded object's:
 * uprog_source.h).
 */
#ifndef IOLAT_UMETRICS_H
#define IOLAT_UMETRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buckets.h"
#include "metrics/metrics.h"
#include "uprog/decoders.h"
#include "uprog/uconfig.h"
#include "uprog/uprog.h"
#include <linux/types.h>

/* A value as a source hands it out. */
struct uvalue {
	uint64_t u64; /* a counter, or a histogram bucket's count */
	/* iolat's histograms: the slots of the source's table for the map's
	 * bucket type, their count, and the sum in raw units (ns, bytes). */
	const __u64 *slots;
	uint64_t count, sum_raw;
	bool count_summed;	 /* count is the sum of the slots (else it is summed) */
	size_t slot_lo, slot_hi; /* every non-zero slot is in [lo, hi); hi 0: not known */
};

typedef int (*usource_fn)(void *arg, const void *key, const struct uvalue *v);

/* A map as a source describes it. */
struct umap {
	struct uprog_map m; /* fd: the source's own handle */
	bool iolat_hist;    /* values are iolat's histograms, not u64s */
};

/* Where a config's maps are. */
struct usource {
	void *ctx;
	/* The named map, or -1 with one line in err. */
	int (*map)(void *ctx, const char *name, struct umap *out, char *err, size_t errlen);
	/* Calls fn for every entry; 0, fn's nonzero return, or -1 with err. */
	int (*read)(void *ctx, const struct umap *m, usource_fn fn, void *arg, char *err,
		    size_t errlen);
	/* iolat's histograms: the table of t, and its classic `le` bounds (raw
	 * units, ascending, each a bound of the table). NULL: none here. */
	const struct bucket_table *(*table)(void *ctx, enum ubucket_type t);
	const uint64_t *(*le)(void *ctx, enum ubucket_type t, size_t *n);
};

struct umetrics;

/*
 * Checks every metric of c against the source (its map exists and holds
 * what the metric reads, the fields add up to the key) and compiles the
 * decoders. c, src->ctx and env must outlive the result. Returns 0, or
 * -errno with one line "file:line:col: what is wrong" in err.
 */
int umetrics_new(struct umetrics **out, const struct uconfig *c, const struct usource *src,
		 struct decoder_env *env, char *err, size_t errlen);
void umetrics_free(struct umetrics *u);

/* Reads the maps into families of set. 0, or -errno with err set (the
 * families made so far stay in set). */
int umetrics_collect(struct umetrics *u, struct metric_set *set, char *err, size_t errlen);

/* Entries read in the last collect that were left out: a regexp decoder
 * dropped them, or a field did not decode. */
size_t umetrics_dropped(const struct umetrics *u);

#endif /* IOLAT_UMETRICS_H */
