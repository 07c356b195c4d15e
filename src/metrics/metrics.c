// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* metrics.c - the metric model the exposition formats render (metrics.h). */
#include "metrics/metrics.h"

#include "util/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Series are found by label values through an open-addressed index. Each
 * slot keeps its series' hash (the low 32 bits, which place it too): a
 * probe compares hashes and reads a series' strings only on a match, and
 * growing rehashes no string. 8 bytes a slot, at most 70 % full: 10 000
 * series take 128 KiB, which a cache holds, where random probes into
 * twice that went to memory.
 */
struct index_slot {
	uint32_t hash;
	uint32_t n; /* series number + 1; 0 = empty */
};

/* Whether an index of cap slots holds n series without growing. */
static bool index_fits(size_t n, size_t cap)
{
	return n * 10 <= cap * 7;
}

struct series_index {
	struct index_slot *slot;
	size_t cap;
};

/*
 * A family's label values live in blocks that never move (series point into
 * them), filled one after the other and freed together: a scrape of 10 000
 * series would otherwise make and free a string per label of each.
 */
struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	char data[];
};

#define ARENA_FIRST 512
#define ARENA_MAX (64 * 1024)

static char *arena_copy(struct metric_family *f, const char *s)
{
	struct arena_block *b = f->arena;
	size_t n = strlen(s) + 1;
	char *p;

	if (!b || b->cap - b->used < n) {
		size_t cap = b ? (b->cap < ARENA_MAX ? b->cap * 2 : b->cap) : ARENA_FIRST;
		struct arena_block *nb;

		if (cap < n)
			cap = n;
		nb = malloc(sizeof(*nb) + cap);
		if (!nb)
			return NULL;
		nb->next = b;
		nb->used = 0;
		nb->cap = cap;
		f->arena = b = nb;
	}
	p = b->data + b->used;
	memcpy(p, s, n);
	b->used += n;
	return p;
}

static void arena_free(struct metric_family *f)
{
	for (struct arena_block *b = f->arena, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	f->arena = NULL;
}

/* Empties f's blocks for the next scrape: one block as big as all of them,
 * so a family like the last one fits in it without a malloc. */
static void arena_reset(struct metric_family *f)
{
	struct arena_block *b = f->arena;
	size_t cap = 0;

	if (b && !b->next) {
		b->used = 0;
		return;
	}
	for (; b; b = b->next)
		cap += b->cap;
	arena_free(f);
	b = cap ? malloc(sizeof(*b) + cap) : NULL;
	if (!b)
		return; /* arena_copy makes one when needed */
	b->next = NULL;
	b->used = 0;
	b->cap = cap;
	f->arena = b;
}

static uint64_t hash_values(const char *const *values, int n)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (int i = 0; i < n; i++) {
		for (const char *p = values[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		h = (h ^ 0xff) * 1099511628211ULL; /* separator */
	}
	/* FNV's low bits, which place a series, are weak on short values: mix. */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

struct metric_family *metrics_family(struct metric_set *set, const char *name, const char *help,
				     enum metric_type type, const char *const *labels)
{
	struct metric_family *f;
	size_t nlabels = 0;

	while (labels && labels[nlabels])
		nlabels++;
	/* A family with more labels than a series holds is a bug in its caller:
	 * fail it (the scrape says so) rather than drop labels without a word. */
	if (set->n == METRIC_MAX_FAMILIES || nlabels > METRIC_MAX_LABELS)
		return NULL;
	f = &set->fam[set->n];
	if (set->n < set->nkept) { /* metrics_reset's: emptied, kept */
		struct metric_family kept = *f;

		memset(f, 0, sizeof(*f));
		f->series = kept.series;
		f->cap = kept.cap;
		f->index = kept.index;
		f->arena = kept.arena;
		f->kept_n = kept.kept_n;
		f->kept_name = kept.name;
	} else {
		memset(f, 0, sizeof(*f));
	}
	set->n++;
	f->name = name;
	f->help = help;
	f->type = type;
	for (; f->nlabels < (int)nlabels; f->nlabels++)
		f->labels[f->nlabels] = labels[f->nlabels];
	return f;
}

/*
 * The unit a family's name ends in, as Prometheus' naming conventions spell
 * base units: OpenMetrics wants it declared (# UNIT) and requires it to be
 * the name's suffix, a counter's taken without _total. Derived from the
 * name, not declared beside it, so no family can say one unit and be named
 * for another, and users' families (umetrics.c) get theirs with no key of
 * their own.
 */
const char *metrics_family_unit(const struct metric_family *f)
{
	static const char *const base_units[] = { "seconds", "bytes",  "ratio", "celsius", "volts",
						  "amperes", "joules", "grams", "meters" };
	size_t n = strlen(f->name);

	if (f->type == METRIC_COUNTER && n > 6 && !strcmp(f->name + n - 6, "_total"))
		n -= 6;
	for (size_t i = 0; i < sizeof(base_units) / sizeof(base_units[0]); i++) {
		size_t u = strlen(base_units[i]);

		/* "_UNIT" at the end, with a name before it: "seconds" alone has no unit. */
		if (n > u + 1 && f->name[n - u - 1] == '_' &&
		    !strncmp(f->name + n - u, base_units[i], u))
			return base_units[i];
	}
	return NULL;
}

static struct series_index *index_of(struct metric_family *f)
{
	return f->index;
}

/* Makes the index at least cap slots (a power of two), or twice as many as
 * it has. */
static int index_grow(struct metric_family *f, size_t cap)
{
	struct series_index *ix = index_of(f);
	struct index_slot *slot;

	if (ix && ix->cap * 2 > cap)
		cap = ix->cap * 2;
	slot = calloc(cap, sizeof(*slot));

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
	for (size_t i = 0; i < ix->cap; i++) {
		size_t h;

		if (!ix->slot[i].n)
			continue;
		for (h = ix->slot[i].hash & (cap - 1); slot[h].n; h = (h + 1) & (cap - 1))
			;
		slot[h] = ix->slot[i];
	}
	free(ix->slot);
	ix->slot = slot;
	ix->cap = cap;
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
		s->values[k] = arena_copy(f, values[k]);
		if (!s->values[k])
			return NULL; /* what was copied goes with the family */
	}
	s->hist.table = table;
	f->n++;
	return s;
}

/*
 * The next series as the last scrape had it in the same place, if its label
 * values are these: the scrape so far came in the last one's order, whose
 * series were distinct, so it is no series of this scrape yet and needs no
 * index. Its values stay where they are, the arena's next bytes (laid out
 * in the same order); NULL when anything differs. values NULL: the caller
 * knows they are the same (metrics_series_again), only where they lie is
 * checked.
 */
static struct metric_series *take_kept(struct metric_family *f, const char *const *values,
				       const struct bucket_table *table)
{
	struct metric_series *s = &f->series[f->n];
	struct arena_block *b = f->arena;
	size_t at = b ? b->used : 0;

	for (int k = 0; k < f->nlabels; k++) {
		size_t n;

		if (!b || s->values[k] != b->data + at)
			return NULL;
		n = strlen(values ? values[k] : s->values[k]) + 1;
		if (n > b->cap - at || (values && memcmp(s->values[k], values[k], n)))
			return NULL;
		at += n;
	}
	if (b)
		b->used = at;
	s->value = 0;
	memset(&s->hist, 0, sizeof(s->hist));
	s->hist.table = table;
	f->n++;
	return s;
}

struct metric_series *metrics_series_again(struct metric_family *f,
					   const struct bucket_table *table)
{
	if (f->n >= f->kept_n || f->kept_name != f->name)
		return NULL;
	return take_kept(f, NULL, table);
}

/* Indexes the series taken in order (take_kept), once one came out of it. */
static int index_catch_up(struct metric_family *f)
{
	struct series_index *ix = index_of(f);

	if ((!ix || !index_fits(f->n + 1, ix->cap)) && index_grow(f, 64))
		return -1;
	ix = index_of(f);
	for (; f->indexed < f->n; f->indexed++) {
		const struct metric_series *s = &f->series[f->indexed];
		uint64_t hash = hash_values((const char *const *)s->values, f->nlabels);
		size_t h;

		for (h = hash & (ix->cap - 1); ix->slot[h].n; h = (h + 1) & (ix->cap - 1))
			;
		ix->slot[h] = (struct index_slot){ (uint32_t)hash, (uint32_t)(f->indexed + 1) };
	}
	return 0;
}

struct metric_series *metrics_series(struct metric_family *f, const char *const *values,
				     const struct bucket_table *table)
{
	struct series_index *ix;
	uint64_t hash;
	struct metric_series *s;
	size_t h;

	if (f->n >= UINT32_MAX)
		return NULL;
	/* A family without labels has one series: every call after the first
	 * finds it, whatever the family in this place kept (take_kept would
	 * compare no values, and take the next kept one as a second). */
	if (f->n < f->kept_n && (f->nlabels || !f->n)) {
		s = take_kept(f, values, table);
		if (s)
			return s;
		f->kept_n = 0; /* out of order from here: through the index */
	}
	if (index_catch_up(f))
		return NULL;
	ix = index_of(f);
	hash = hash_values(values, f->nlabels);
	for (h = hash & (ix->cap - 1); ix->slot[h].n; h = (h + 1) & (ix->cap - 1)) {
		s = &f->series[ix->slot[h].n - 1];
		if (ix->slot[h].hash == (uint32_t)hash && same_values(f, s, values))
			return s;
	}
	s = append_series(f, values, table);
	if (s) {
		ix->slot[h] = (struct index_slot){ (uint32_t)hash, (uint32_t)f->n };
		f->indexed = f->n;
	}
	return s;
}

int metrics_set_value(struct metric_family *f, const char *const *values, double v)
{
	struct metric_series *s = f ? metrics_series(f, values, NULL) : NULL;

	if (!s)
		return -ENOMEM;
	s->value = v;
	return 0;
}

int metrics_reserve(struct metric_family *f, size_t n)
{
	struct series_index *ix = index_of(f);
	size_t cap = 64;
	void *p;

	while (!index_fits(n + 1, cap))
		cap *= 2;
	if ((!ix || ix->cap < cap) && index_grow(f, cap))
		return -ENOMEM;
	if (n <= f->cap)
		return 0;
	p = realloc(f->series, n * sizeof(*f->series));
	if (!p)
		return -ENOMEM;
	f->series = p;
	f->cap = n;
	return 0;
}

/* The end of the slots of h that may be non-zero. */
static size_t hist_end(const struct metric_hist *h)
{
	return h->hi ? h->hi : h->table->nslots;
}

int metrics_hist_add_slots(struct metric_series *s, const struct metric_slots *in, uint64_t sum_raw)
{
	const struct bucket_table *t = s->hist.table;
	struct metric_hist *h = &s->hist;
	size_t lo = in->lo, hi = in->hi && in->hi <= t->nslots ? in->hi : t->nslots;
	uint64_t count = in->count;

	if (lo > hi)
		lo = hi;
	if (h->slots && !h->owned) { /* a second source: sum into our own copy */
		h->owned = calloc(t->nslots, sizeof(*h->owned));
		if (!h->owned)
			return -ENOMEM;
		for (size_t i = h->lo; i < hist_end(h); i++)
			h->owned[i] = h->slots[i];
		h->slots = h->owned;
	}
	if (!in->count_summed) {
		/* In a local: h->count may alias slots for the compiler, which
		 * would then load and store it at every slot. */
		count = 0;
		for (size_t i = lo; i < hi; i++)
			count += in->slots[i];
	}
	h->count += count;
	if (h->owned) {
		for (size_t i = lo; i < hi; i++)
			h->owned[i] += in->slots[i];
		/* The union of both spans; an empty one adds nothing. */
		if (lo < hi && h->lo >= hist_end(h)) {
			h->lo = lo;
			h->hi = hi;
		} else if (lo < hi) {
			h->hi = hi > hist_end(h) ? hi : hist_end(h);
			h->lo = lo < h->lo ? lo : h->lo;
		}
	} else {
		h->slots = in->slots;
		h->lo = lo;
		h->hi = hi;
	}
	h->sum_raw += sum_raw;
	h->sum = (double)h->sum_raw / (double)t->per_base;
	return 0;
}

int metrics_hist_add(struct metric_series *s, const __u64 *slots, uint64_t count, uint64_t sum_raw)
{
	/*
	 * The count is the sum of the slots, not the kernel's own counter: a
	 * scrape can read a CPU's value between the two increments, and
	 * Prometheus rejects a histogram whose buckets do not add up.
	 */
	const struct metric_slots in = { .slots = slots };

	(void)count;
	return metrics_hist_add_slots(s, &in, sum_raw);
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

/* Frees what f's histogram series own (their summed slots). */
static void free_owned(struct metric_family *f)
{
	/* Only histograms own memory: no walk of 10 000 counters. */
	for (size_t k = 0; f->type == METRIC_HISTOGRAM && k < f->n; k++)
		free(f->series[k].hist.owned);
}

void metrics_clear(struct metric_set *set)
{
	size_t n = set->n > set->nkept ? set->n : set->nkept;

	for (size_t i = 0; i < n; i++) {
		struct metric_family *f = &set->fam[i];
		struct series_index *ix = index_of(f);

		if (i < set->n)
			free_owned(f);
		free(f->series);
		f->series = NULL;
		arena_free(f);
		if (ix)
			free(ix->slot);
		free(ix);
		f->index = NULL;
	}
	set->n = set->nkept = 0;
}

void metrics_reset(struct metric_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		struct metric_family *f = &set->fam[i];
		struct series_index *ix = index_of(f);

		free_owned(f);
		if (ix && f->indexed)
			memset(ix->slot, 0, ix->cap * sizeof(*ix->slot));
		/* One block kept as it was: the series' values are still in it,
		 * for the next scrape to take in the same order. */
		f->kept_n = f->arena && !((struct arena_block *)f->arena)->next ? f->n : 0;
		arena_reset(f);
		f->n = 0;
		f->indexed = 0;
	}
	if (set->n > set->nkept)
		set->nkept = set->n;
	set->n = 0;
}

uint64_t metrics_hist_cumulative(const struct metric_series *s, uint64_t le)
{
	const struct bucket_table *t = s->hist.table;
	/* In locals: slots are u64s like the fields the loop would otherwise
	 * read again at every step (the compiler cannot tell them apart). */
	const __u64 *slots = s->hist.slots;
	const uint64_t *bound = t->bound;
	size_t end = hist_end(&s->hist) < t->nbounds ? hist_end(&s->hist) : t->nbounds;
	uint64_t sum = 0;

	for (size_t i = s->hist.lo; slots && i < end && bound[i] <= le; i++)
		sum += slots[i];
	return sum;
}

void metrics_hist_native(const struct metric_series *s, uint64_t *zero_count,
			 void (*emit)(void *ctx, int index, uint64_t count), void *ctx)
{
	const struct bucket_table *t = s->hist.table;
	int cur = t->native_min;
	uint64_t acc = 0;
	size_t end;

	*zero_count = 0;
	if (!s->hist.slots)
		return;
	/* Slots ascend, and so do their native indexes: merge runs. */
	end = hist_end(&s->hist) <= t->nbounds ? hist_end(&s->hist) : t->nbounds + 1;
	for (size_t i = s->hist.lo; i < end; i++) {
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

size_t metrics_hist_samples(size_t nle)
{
	return nle + 3;
}

size_t metrics_family_series(const struct metric_family *f, bool native)
{
	if (f->type != METRIC_HISTOGRAM || native)
		return f->n;
	return f->n * metrics_hist_samples(f->ule ? f->nule : f->nle);
}
