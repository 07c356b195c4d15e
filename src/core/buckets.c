// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* buckets.c - builds the bucket tables the kernel counts into (buckets.h). */
#include "core/buckets.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "iolat.h"
#include "slots.h"
#include <linux/types.h>

/* From 5 us, so an NVMe disk's reads (tens of us) spread over buckets; the
 * rest as before this, so dashboards' and rules' `le` values stay. */
const uint64_t buckets_default_le_ns[] = {
	5000,	   10000,     25000,	  50000,      100000,	  250000,      500000,
	1000000,   2500000,   5000000,	  10000000,   25000000,	  50000000,    100000000,
	250000000, 500000000, 1000000000, 2500000000, 5000000000, 10000000000,
};
const size_t buckets_default_le_count =
    sizeof(buckets_default_le_ns) / sizeof(buckets_default_le_ns[0]);

const uint64_t buckets_workload_le_ns[] = {
	100000, 250000, 500000, 1000000, 2500000, 10000000, 50000000, 250000000,
};
const size_t buckets_workload_le_count =
    sizeof(buckets_workload_le_ns) / sizeof(buckets_workload_le_ns[0]);

const uint64_t buckets_default_size_le[] = {
	512, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 4194304,
};
const size_t buckets_default_size_le_count =
    sizeof(buckets_default_size_le) / sizeof(buckets_default_size_le[0]);

static int native_index_of(const struct bucket_table *t, size_t slot);

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts and de-duplicates n bounds, pads to nslots; the last slot overflows. */
static int finish(struct bucket_table *t, uint64_t *b, size_t n, size_t nslots)
{
	size_t i, out = 0;

	qsort(b, n, sizeof(*b), cmp_u64);
	for (i = 0; i < n; i++)
		if (out == 0 || b[i] != b[out - 1])
			b[out++] = b[i];
	if (out > nslots - 1)
		return -E2BIG;
	for (i = out; i < nslots; i++)
		b[i] = UINT64_MAX;
	t->bound = b;
	t->nslots = nslots;
	t->nbounds = out;
	for (i = 0; i < nslots && i < sizeof(t->native_of) / sizeof(t->native_of[0]); i++)
		t->native_of[i] = (int16_t)native_index_of(t, i);
	return 0;
}

/* Inclusive upper bound, in raw units, of native bucket `index` of t. */
static uint64_t native_bound(const struct bucket_table *t, int index)
{
	long double b = exp2l((long double)index / (1 << t->native_schema));

	return (uint64_t)floorl(b * (long double)t->per_base);
}

uint64_t buckets_native_bound_ns(int index)
{
	struct bucket_table t = { .native_schema = LAT_NATIVE_SCHEMA, .per_base = 1000000000 };

	return native_bound(&t, index);
}

int buckets_native_index(const struct bucket_table *t, size_t slot)
{
	return slot < t->nslots ? t->native_of[slot] : t->native_max + 1;
}

/* The native bucket of one slot, by search: done once per slot at build. */
static int native_index_of(const struct bucket_table *t, size_t slot)
{
	uint64_t upper;
	int lo, hi;

	if (slot >= t->nbounds)
		return t->native_max + 1;
	upper = t->bound[slot];
	/* Rows beyond the native range (biolatency's top rows) overflow too. */
	if (upper > native_bound(t, t->native_max))
		return t->native_max + 1;
	if (upper <= native_bound(t, t->native_min))
		return t->native_min;
	/* Smallest i with upper <= bound(i): bounds grow with i. */
	lo = t->native_min + 1;
	hi = t->native_max;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (upper <= native_bound(t, mid))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

double buckets_native_zero_threshold(const struct bucket_table *t)
{
	return (double)exp2l((long double)t->native_min / (1 << t->native_schema));
}

int buckets_build_latency(struct bucket_table *t, uint64_t *b, const uint64_t *extra, size_t nextra)
{
	size_t n = 0, cap = IOLAT_LAT_SLOTS + nextra;
	uint64_t *tmp = calloc(cap, sizeof(*tmp));
	int i, err;

	if (!tmp)
		return -ENOMEM;
	for (i = LAT_NATIVE_MIN_INDEX; i <= LAT_NATIVE_MAX_INDEX; i++)
		tmp[n++] = buckets_native_bound_ns(i);
	/* biolatency rows: usecs [2^k, 2^(k+1)) and msecs likewise. */
	for (i = 0; i <= 26; i++)
		tmp[n++] = (2000ULL << i) - 1;
	for (i = 0; i <= 16; i++)
		tmp[n++] = (2000000ULL << i) - 1;
	for (size_t k = 0; k < buckets_default_le_count; k++)
		tmp[n++] = buckets_default_le_ns[k];
	/* UINT64_MAX is the overflow slot's own bound, not a finite one. */
	for (size_t k = 0; k < nextra; k++)
		if (extra[k] != UINT64_MAX)
			tmp[n++] = extra[k];
	t->native_schema = LAT_NATIVE_SCHEMA;
	t->native_min = LAT_NATIVE_MIN_INDEX;
	t->native_max = LAT_NATIVE_MAX_INDEX;
	t->per_base = 1000000000;
	err = finish(t, tmp, n, IOLAT_LAT_SLOTS);
	if (!err)
		memcpy(b, tmp, IOLAT_LAT_SLOTS * sizeof(*b));
	free(tmp);
	t->bound = b;
	return err;
}

int buckets_build_size(struct bucket_table *t, uint64_t *b, const uint64_t *extra, size_t nextra)
{
	size_t n = 0, cap = IOLAT_SIZE_SLOTS * 2 + nextra;
	uint64_t *tmp = calloc(cap, sizeof(*tmp));
	int i, err;

	if (!tmp)
		return -ENOMEM;

	t->native_schema = SIZE_NATIVE_SCHEMA;
	t->native_min = SIZE_NATIVE_MIN_INDEX;
	t->native_max = SIZE_NATIVE_MAX_INDEX;
	t->per_base = 1;
	tmp[n++] = 0;
	for (i = SIZE_NATIVE_MIN_INDEX; i <= SIZE_NATIVE_MAX_INDEX; i++)
		tmp[n++] = native_bound(t, i);
	/* bitesize rows: KiB [2^k, 2^(k+1)), as bytes. */
	for (i = 10; i <= 28; i++)
		tmp[n++] = (1ULL << i) - 1;
	for (size_t k = 0; k < buckets_default_size_le_count; k++)
		tmp[n++] = buckets_default_size_le[k];
	for (size_t k = 0; k < nextra; k++)
		if (extra[k] != UINT64_MAX)
			tmp[n++] = extra[k];
	err = finish(t, tmp, n, IOLAT_SIZE_SLOTS);
	if (!err)
		memcpy(b, tmp, IOLAT_SIZE_SLOTS * sizeof(*b));
	free(tmp);
	t->bound = b;
	return err;
}

bool buckets_has_bound(const struct bucket_table *t, uint64_t v)
{
	size_t i = buckets_slot_of(t, v);

	return i < t->nbounds && t->bound[i] == v;
}

void buckets_nearest(const struct bucket_table *t, uint64_t v, uint64_t *below, uint64_t *above)
{
	size_t i = buckets_slot_of(t, v); /* the first bound >= v */

	*below = i > 0 ? t->bound[i - 1] : 0;
	*above = i < t->nbounds ? t->bound[i] : 0;
	if (*above == v && i + 1 < t->nbounds)
		*above = t->bound[i + 1];
	else if (*above == v)
		*above = 0;
}

size_t buckets_slot_of(const struct bucket_table *t, uint64_t v)
{
	/* uint64_t and __u64 are one type to the machine, two to C. */
	return iolat_slot_search((const __u64 *)t->bound, __builtin_ctzl(t->nslots), v);
}

void buckets_cells(const struct bucket_table *t, uint32_t *cells)
{
	size_t first = 0, end;

	for (uint32_t c = 0; c < IOLAT_CELLS; c++) {
		uint64_t lo = iolat_cell_low(c);
		uint64_t hi = c + 1 < IOLAT_CELLS ? iolat_cell_low(c + 1) - 1 : UINT64_MAX;

		while (first < t->nslots && t->bound[first] < lo)
			first++;
		/* Bounds in [lo, hi): a value of the cell may lie above them. */
		for (end = first; end < t->nslots && t->bound[end] < hi; end++)
			;
		cells[c] = IOLAT_CELL_ENTRY(first, end - first);
	}
	for (uint32_t c = IOLAT_CELLS; c < IOLAT_CELL_TABLE; c++)
		cells[c] = 0; /* no value falls here */
}

uint64_t buckets_lower(const struct bucket_table *t, size_t slot)
{
	return slot == 0 ? 0 : t->bound[slot - 1] + 1;
}

uint64_t buckets_upper(const struct bucket_table *t, size_t slot)
{
	return t->bound[slot];
}
