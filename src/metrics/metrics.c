// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* metrics.c - the metric model the exposition formats render (metrics.h). */
#include "metrics/metrics.h"

#include "util/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Series are found by label values through an open-addressed index. */
struct series_index {
	size_t *slot; /* series number + 1; 0 = empty */
	size_t cap;
};

static uint64_t hash_values(const char *const *values, int n)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (int i = 0; i < n; i++) {
		for (const char *p = values[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		h = (h ^ 0xff) * 1099511628211ULL; /* separator */
	}
	return h;
}

struct metric_family *metrics_family(struct metric_set *set, const char *name, const char *help,
				     enum metric_type type, const char *const *labels)
{
	struct metric_family *f;

	if (set->n == METRIC_MAX_FAMILIES)
		return NULL;
	f = &set->fam[set->n++];
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->help = help;
	f->type = type;
	for (; labels && labels[f->nlabels] && f->nlabels < METRIC_MAX_LABELS; f->nlabels++)
		f->labels[f->nlabels] = labels[f->nlabels];
	return f;
}

static struct series_index *index_of(struct metric_family *f)
{
	return f->index;
}

static int index_grow(struct metric_family *f)
{
	struct series_index *ix = index_of(f);
	size_t cap = ix && ix->cap ? ix->cap * 2 : 64;
	size_t *slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return -1;
	if (!ix) {
		ix = calloc(1, sizeof(*ix));
		if (!ix) {
			free(slot);
			return -1;
		}
		f->index = ix;
	}
	free(ix->slot);
	ix->slot = slot;
	ix->cap = cap;
	for (size_t i = 0; i < f->n; i++) {
		const char *vals[METRIC_MAX_LABELS];
		size_t h;

		for (int k = 0; k < f->nlabels; k++)
			vals[k] = f->series[i].values[k];
		h = hash_values(vals, f->nlabels) & (cap - 1);
		while (slot[h])
			h = (h + 1) & (cap - 1);
		slot[h] = i + 1;
	}
	return 0;
}

static bool same_values(const struct metric_family *f, const struct metric_series *s,
			const char *const *values)
{
	for (int k = 0; k < f->nlabels; k++)
		if (strcmp(s->values[k], values[k]))
			return false;
	return true;
}

static struct metric_series *append_series(struct metric_family *f, const char *const *values,
					   const struct bucket_table *table)
{
	struct metric_series *s;

	if (array_make_room((void **)&f->series, &f->cap, f->n, sizeof(*f->series), 16))
		return NULL;
	s = &f->series[f->n];
	memset(s, 0, sizeof(*s));
	for (int k = 0; k < f->nlabels; k++) {
		s->values[k] = strdup(values[k]);
		if (!s->values[k]) {
			while (k--)
				free(s->values[k]);
			return NULL;
		}
	}
	s->hist.table = table;
	f->n++;
	return s;
}

struct metric_series *metrics_series(struct metric_family *f, const char *const *values,
				     const struct bucket_table *table)
{
	struct series_index *ix = index_of(f);
	struct metric_series *s;
	size_t h;

	if ((!ix || (f->n + 1) * 2 > ix->cap) && index_grow(f))
		return NULL;
	ix = index_of(f);
	h = hash_values(values, f->nlabels) & (ix->cap - 1);
	for (; ix->slot[h]; h = (h + 1) & (ix->cap - 1)) {
		s = &f->series[ix->slot[h] - 1];
		if (same_values(f, s, values))
			return s;
	}
	s = append_series(f, values, table);
	if (s)
		ix->slot[h] = f->n;
	return s;
}

int metrics_hist_add(struct metric_series *s, const __u64 *slots, uint64_t count, uint64_t sum_raw)
{
	const struct bucket_table *t = s->hist.table;
	struct metric_hist *h = &s->hist;

	/*
	 * The count is the sum of the slots, not the kernel's own counter: a
	 * scrape can read a CPU's value between the two increments, and
	 * Prometheus rejects a histogram whose buckets do not add up.
	 */
	(void)count;
	if (h->slots && !h->owned) { /* a second source: sum into our own copy */
		h->owned = malloc(t->nslots * sizeof(*h->owned));
		if (!h->owned)
			return -ENOMEM;
		memcpy(h->owned, h->slots, t->nslots * sizeof(*h->owned));
		h->slots = h->owned;
	}
	for (size_t i = 0; i < t->nslots; i++)
		h->count += slots[i];
	if (h->owned)
		for (size_t i = 0; i < t->nslots; i++)
			h->owned[i] += slots[i];
	else
		h->slots = slots;
	h->sum_raw += sum_raw;
	h->sum = (double)h->sum_raw / (double)t->per_base;
	return 0;
}

int metrics_uhist_add(const struct metric_family *f, struct metric_series *s, size_t bucket,
		      uint64_t n)
{
	struct metric_hist *h = &s->hist;

	if (!h->owned) {
		h->owned = calloc(f->nule + 1, sizeof(*h->owned));
		if (!h->owned)
			return -ENOMEM;
	}
	h->owned[bucket < f->nule ? bucket : f->nule] += n;
	h->count += n;
	return 0;
}

void metrics_clear(struct metric_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		struct metric_family *f = &set->fam[i];
		struct series_index *ix = index_of(f);

		for (size_t k = 0; k < f->n; k++) {
			free(f->series[k].hist.owned);
			for (int l = 0; l < f->nlabels; l++)
				free(f->series[k].values[l]);
		}
		free(f->series);
		if (ix)
			free(ix->slot);
		free(ix);
	}
	set->n = 0;
}

size_t metrics_series_count(const struct metric_set *set)
{
	size_t n = 0;

	for (size_t i = 0; i < set->n; i++)
		n += set->fam[i].n;
	return n;
}

uint64_t metrics_hist_cumulative(const struct metric_series *s, uint64_t le)
{
	const struct bucket_table *t = s->hist.table;
	uint64_t sum = 0;

	for (size_t i = 0; s->hist.slots && i < t->nbounds && t->bound[i] <= le; i++)
		sum += s->hist.slots[i];
	return sum;
}

void metrics_hist_native(const struct metric_series *s, uint64_t *zero_count,
			 void (*emit)(void *ctx, int index, uint64_t count), void *ctx)
{
	const struct bucket_table *t = s->hist.table;
	int cur = t->native_min;
	uint64_t acc = 0;

	*zero_count = 0;
	if (!s->hist.slots)
		return;
	/* Slots ascend, and so do their native indexes: merge runs. */
	for (size_t i = 0; i <= t->nbounds && i < t->nslots; i++) {
		int idx;

		if (!s->hist.slots[i])
			continue;
		idx = buckets_native_index(t, i);
		if (idx == t->native_min) {
			*zero_count += s->hist.slots[i];
			continue;
		}
		if (idx != cur && acc) {
			emit(ctx, cur, acc);
			acc = 0;
		}
		cur = idx;
		acc += s->hist.slots[i];
	}
	if (acc)
		emit(ctx, cur, acc);
}
