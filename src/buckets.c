// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* buckets.c - builds the bucket tables the kernel counts into (buckets.h). */
#include "buckets.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
#include "iolat.h"

const uint64_t buckets_default_le_ns[] = {
	100000,	    250000,	500000,	    1000000,	 2500000,     5000000,
	10000000,   25000000,	50000000,   100000000,	 250000000,   500000000,
	1000000000, 2500000000, 5000000000, 10000000000,
};
const size_t buckets_default_le_count =
	sizeof(buckets_default_le_ns) / sizeof(buckets_default_le_ns[0]);

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
	return 0;
}

uint64_t buckets_native_bound_ns(int index)
{
	long double s = exp2l((long double)index / (1 << LAT_NATIVE_SCHEMA));

	return (uint64_t)floorl(s * 1e9L);
}

int buckets_build_latency(struct bucket_table *t, uint64_t *b, const uint64_t *extra,
			  size_t nextra)
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
	err = finish(t, tmp, n, IOLAT_LAT_SLOTS);
	if (!err)
		memcpy(b, tmp, IOLAT_LAT_SLOTS * sizeof(*b));
	free(tmp);
	t->bound = b;
	return err;
}

int buckets_build_size(struct bucket_table *t, uint64_t *b)
{
	size_t n = 0;
	uint64_t tmp[IOLAT_SIZE_SLOTS * 2];
	int i;

	tmp[n++] = 0;
	for (i = 9 * 8; i <= 27 * 8; i++)
		tmp[n++] = (uint64_t)floorl(exp2l((long double)i / 8));
	/* bitesize rows: KiB [2^k, 2^(k+1)), as bytes. */
	for (i = 10; i <= 28; i++)
		tmp[n++] = (1ULL << i) - 1;
	if (finish(t, tmp, n, IOLAT_SIZE_SLOTS))
		return -E2BIG;
	memcpy(b, tmp, IOLAT_SIZE_SLOTS * sizeof(*b));
	t->bound = b;
	return 0;
}

size_t buckets_slot_of(const struct bucket_table *t, uint64_t v)
{
	size_t i = 0;

	for (size_t step = t->nslots / 2; step > 0; step /= 2)
		if (t->bound[i + step - 1] < v)
			i += step;
	return i;
}

uint64_t buckets_lower(const struct bucket_table *t, size_t slot)
{
	return slot == 0 ? 0 : t->bound[slot - 1] + 1;
}

uint64_t buckets_upper(const struct bucket_table *t, size_t slot)
{
	return t->bound[slot];
}
