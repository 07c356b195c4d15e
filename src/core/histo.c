// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* histo.c - merge, delta and quantiles of collected series (histo.h). */
#include "core/histo.h"

/* A part with counts but max 0 has an unknown max, and so has the sum. */
static bool max_unknown(const struct iolat_lat *l)
{
	return l->count && !l->max_ns;
}

static void lat_add(struct iolat_lat *d, const struct iolat_lat *s)
{
	bool unknown = max_unknown(d) || max_unknown(s);

	d->count += s->count;
	d->unseen += s->unseen;
	d->sum_ns += s->sum_ns;
	d->max_ns = unknown ? 0 : s->max_ns > d->max_ns ? s->max_ns : d->max_ns;
	for (size_t i = 0; i < IOLAT_LAT_SLOTS; i++)
		d->slots[i] += s->slots[i];
}

void histo_add(struct iolat_val *dst, const struct iolat_val *src)
{
	dst->ios += src->ios;
	dst->bytes += src->bytes;
	dst->errors += src->errors;
	for (size_t i = 0; i < IOLAT_SIZE_SLOTS; i++)
		dst->size_slots[i] += src->size_slots[i];
	for (size_t v = 0; v < IOLAT_VIEW_COUNT; v++)
		lat_add(&dst->lat[v], &src->lat[v]);
}

/* acc's counter advanced to the 32-bit value now holds (mod 2^32). */
static void fold32(__u64 *acc, uint32_t now)
{
	*acc += (uint32_t)(now - (uint32_t)*acc);
}

void histo_kval_add(struct iolat_kval *dst, const struct iolat_kval *src)
{
	dst->bytes += src->bytes;
	dst->errors += src->errors;
	for (size_t i = 0; i < IOLAT_SIZE_SLOTS; i++)
		dst->size_slots[i] += src->size_slots[i];
	for (size_t v = 0; v < IOLAT_VIEW_COUNT; v++) {
		dst->unseen[v] += src->unseen[v];
		dst->lat[v].sum_ns += src->lat[v].sum_ns;
		if (src->lat[v].max_ns > dst->lat[v].max_ns)
			dst->lat[v].max_ns = src->lat[v].max_ns;
		for (size_t i = 0; i < IOLAT_LAT_SLOTS; i++)
			dst->lat_slots[v][i] += src->lat_slots[v][i];
	}
}

/* tot = the sum of n kernel values. */
static void kval_sum(struct iolat_kval *tot, const struct iolat_kval *raw, int n)
{
	*tot = raw[0];
	for (int cpu = 1; cpu < n; cpu++)
		histo_kval_add(tot, &raw[cpu]);
}

/* The span of the non-zero slots among n: [lo, hi), [n, n) if none. */
static void span_of(const __u64 *slots, size_t n, struct histo_span *out)
{
	size_t lo = 0, hi = n;

	/* Eight at a time first: a fold scans every key's 1 280 slots. */
	while (lo + 8 <= n && !(slots[lo] | slots[lo + 1] | slots[lo + 2] | slots[lo + 3] |
				slots[lo + 4] | slots[lo + 5] | slots[lo + 6] | slots[lo + 7]))
		lo += 8;
	while (lo < n && !slots[lo])
		lo++;
	while (hi >= lo + 8 && !(slots[hi - 1] | slots[hi - 2] | slots[hi - 3] | slots[hi - 4] |
				 slots[hi - 5] | slots[hi - 6] | slots[hi - 7] | slots[hi - 8]))
		hi -= 8;
	while (hi > lo && !slots[hi - 1])
		hi--;
	out->lo = (uint16_t)(lo < n ? lo : n);
	out->hi = (uint16_t)(lo < n ? hi : n);
}

void histo_fold_spans(struct iolat_val *acc, const struct iolat_kval *raw, int n,
		      struct histo_span spans[HISTO_SPANS])
{
	struct iolat_kval sum;
	const struct iolat_kval *tot = raw; /* one value (shared): as it is */

	if (n < 1)
		return;
	if (n > 1) {
		kval_sum(&sum, raw, n);
		tot = &sum;
	}
	acc->bytes = tot->bytes;
	fold32(&acc->errors, tot->errors);
	for (size_t i = 0; i < IOLAT_SIZE_SLOTS; i++)
		fold32(&acc->size_slots[i], tot->size_slots[i]);
	for (size_t v = 0; v < IOLAT_VIEW_COUNT; v++) {
		struct iolat_lat *l = &acc->lat[v];

		l->count = 0;
		for (size_t i = 0; i < IOLAT_LAT_SLOTS; i++) {
			fold32(&l->slots[i], tot->lat_slots[v][i]);
			l->count += l->slots[i];
		}
		fold32(&l->unseen, tot->unseen[v]);
		l->sum_ns = tot->lat[v].sum_ns;
		if (tot->lat[v].max_ns > l->max_ns)
			l->max_ns = tot->lat[v].max_ns;
	}
	acc->ios = acc->lat[IOLAT_VIEW_DEVICE].count + acc->lat[IOLAT_VIEW_DEVICE].unseen;
	if (!spans)
		return;
	/* While the slots are in the cache: a reader then need not touch the
	 * empty ones, most of 4 KiB per view. */
	for (size_t v = 0; v < IOLAT_VIEW_COUNT; v++)
		span_of(acc->lat[v].slots, IOLAT_LAT_SLOTS, &spans[v]);
	span_of(acc->size_slots, IOLAT_SIZE_SLOTS, &spans[HISTO_SPAN_SIZE]);
}

void histo_fold(struct iolat_val *acc, const struct iolat_kval *raw, int n)
{
	histo_fold_spans(acc, raw, n, NULL);
}

static void lat_sub(struct iolat_lat *o, const struct iolat_lat *n, const struct iolat_lat *b)
{
	o->count = n->count - b->count;
	o->unseen = n->unseen - b->unseen;
	o->sum_ns = n->sum_ns - b->sum_ns;
	/* The cumulative max grew only if this interval saw a larger value. */
	o->max_ns = n->max_ns > b->max_ns ? n->max_ns : 0;
	for (size_t i = 0; i < IOLAT_LAT_SLOTS; i++)
		o->slots[i] = n->slots[i] - b->slots[i];
}

void histo_sub(struct iolat_val *out, const struct iolat_val *now, const struct iolat_val *before)
{
	out->ios = now->ios - before->ios;
	out->bytes = now->bytes - before->bytes;
	out->errors = now->errors - before->errors;
	for (size_t i = 0; i < IOLAT_SIZE_SLOTS; i++)
		out->size_slots[i] = now->size_slots[i] - before->size_slots[i];
	for (size_t v = 0; v < IOLAT_VIEW_COUNT; v++)
		lat_sub(&out->lat[v], &now->lat[v], &before->lat[v]);
}

int histo_top_slot(const __u64 *slots, size_t nslots)
{
	for (size_t i = nslots; i > 0; i--)
		if (slots[i - 1])
			return (int)(i - 1);
	return -1;
}

double histo_quantile(const __u64 *slots, const struct bucket_table *t, double q, uint64_t max)
{
	uint64_t total = 0, seen = 0;
	double rank, lo, hi, v;
	size_t i;

	for (i = 0; i < t->nslots; i++)
		total += slots[i];
	if (!total)
		return 0;
	rank = q * (double)total;
	if (rank < 1)
		rank = 1;
	for (i = 0; i < t->nslots; i++) {
		if (slots[i] && (double)(seen + slots[i]) >= rank)
			break;
		seen += slots[i];
	}
	if (i == t->nslots)
		i = t->nslots - 1;
	lo = (double)buckets_lower(t, i);
	/* The overflow slot has no upper bound: only the max can close it. */
	hi = i >= t->nbounds ? (max ? (double)max : lo) : (double)buckets_upper(t, i);
	v = lo + (hi - lo) * (rank - (double)seen) / (double)slots[i];
	if (max && v > (double)max)
		v = (double)max;
	return v;
}

void histo_summarize(const struct iolat_lat *d, const struct bucket_table *t,
		     struct histo_summary *out)
{
	int top = histo_top_slot(d->slots, t->nslots);

	out->count = d->count;
	out->mean = d->count ? (double)d->sum_ns / (double)d->count : 0;
	/* The kept max is exact only if it lies in the top slot: shared values
	 * keep it by a plain store, which a race between CPUs can leave low. */
	out->max_exact = top >= 0 && d->max_ns && d->max_ns >= buckets_lower(t, (size_t)top);
	if (top < 0)
		out->max = 0;
	else if (out->max_exact)
		out->max = (double)d->max_ns;
	else
		out->max = (double)buckets_upper(t, (size_t)top);
	uint64_t cap = out->max_exact ? d->max_ns : 0;
	out->p50 = histo_quantile(d->slots, t, 0.50, cap);
	out->p90 = histo_quantile(d->slots, t, 0.90, cap);
	out->p99 = histo_quantile(d->slots, t, 0.99, cap);
	out->p999 = histo_quantile(d->slots, t, 0.999, cap);
}
