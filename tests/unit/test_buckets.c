// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_buckets.c - the bucket tables: shape, required bounds, slot search, widths. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "core/buckets.h"
#include "core/handover_bounds.h"
#include "iolat.h"
#include "slots.h"
#include <linux/types.h>

#define NS_PER_US 1000ULL
#define NS_PER_S 1000000000ULL

/* Built once per run: every test reads them, none changes them. */
static struct bucket_table lat, size;
static uint64_t lat_store[IOLAT_LAT_SLOTS], size_store[IOLAT_SIZE_SLOTS];

/*
 * Not NULL: buckets_build_latency memcpy()s `extra` even when nextra is 0,
 * which UBSan stops on (test_buckets.c checks the NULL call on its own).
 */
static const uint64_t no_extra[1];

static int setup_tables(void **state)
{
	(void)state;
	if (buckets_build_latency(&lat, lat_store, no_extra, 0))
		return -1;
	return buckets_build_size(&size, size_store, NULL, 0) ? -1 : 0;
}

/* The reference answer slot_of must match: how many finite bounds lie below v. */
static size_t brute_slot(const struct bucket_table *t, uint64_t v)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nbounds; i++)
		if (t->bound[i] < v)
			n++;
	return n;
}

static int has_default_le(uint64_t v)
{
	for (size_t k = 0; k < buckets_default_le_count; k++)
		if (buckets_default_le_ns[k] == v)
			return 1;
	return 0;
}

static int has_bound(const struct bucket_table *t, uint64_t v)
{
	for (size_t i = 0; i < t->nbounds; i++)
		if (t->bound[i] == v)
			return 1;
	return 0;
}

/* A fixed-seed PRNG of our own, so a failure reproduces on every libc. */
static uint64_t xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Sorted, strictly increasing finite bounds, then UINT64_MAX up to nslots. */
static void assert_table_shape(const struct bucket_table *t, size_t nslots)
{
	assert_int_equal(t->nslots, nslots);
	assert_true(t->nbounds > 0);
	assert_true(t->nbounds < t->nslots);
	for (size_t i = 1; i < t->nbounds; i++)
		assert_true(t->bound[i - 1] < t->bound[i]);
	assert_true(t->bound[t->nbounds - 1] < UINT64_MAX);
	for (size_t i = t->nbounds; i < t->nslots; i++)
		assert_true(t->bound[i] == UINT64_MAX);
}

static void test_latency_shape(void **state)
{
	(void)state;
	assert_table_shape(&lat, IOLAT_LAT_SLOTS);
	assert_ptr_equal(lat.bound, lat_store);
	/* Native 2^-20 s is the smallest bound; biolatency's 2^27 us row the largest. */
	assert_true(lat.bound[0] == 953);
	assert_true(lat.bound[lat.nbounds - 1] == (2000ULL << 26) - 1);
}

static void test_size_shape(void **state)
{
	(void)state;
	assert_table_shape(&size, IOLAT_SIZE_SLOTS);
	assert_ptr_equal(size.bound, size_store);
	assert_true(size.bound[0] == 0);
	assert_true(size.bound[size.nbounds - 1] == (1ULL << 28) - 1);
}

static void test_latency_has_usec_rows(void **state)
{
	(void)state;
	for (int k = 0; k <= 26; k++)
		assert_true(has_bound(&lat, (2000ULL << k) - 1));
}

static void test_latency_has_msec_rows(void **state)
{
	(void)state;
	for (int k = 0; k <= 16; k++)
		assert_true(has_bound(&lat, (2000000ULL << k) - 1));
}

static void test_latency_has_default_le(void **state)
{
	(void)state;
	assert_int_equal(buckets_default_le_count, 20);
	for (size_t k = 0; k < buckets_default_le_count; k++)
		assert_true(has_bound(&lat, buckets_default_le_ns[k]));
	/* NVMe reads (tens of us) need bounds under 100 us: the lowest is 5 us. */
	assert_true(buckets_default_le_ns[0] == 5 * NS_PER_US);
	assert_true(buckets_default_le_ns[1] == 10 * NS_PER_US);
	/* The ones rules and the mixin's SLO name stay: 100 us, 10 ms, 1 s, 10 s. */
	assert_true(has_default_le(100 * NS_PER_US));
	assert_true(has_default_le(10000 * NS_PER_US));
	assert_true(has_default_le(NS_PER_S));
	assert_true(buckets_default_le_ns[buckets_default_le_count - 1] == 10 * NS_PER_S);
}

/* The fixed bounds leave 17 latency slots (and 90 size slots) for one's
 * own bounds; docs/serve.md and iolat.yml(5) say so. */
static void test_room_for_own_bounds(void **state)
{
	(void)state;
	assert_int_equal(IOLAT_LAT_SLOTS - 1 - lat.nbounds, 17);
	assert_int_equal(IOLAT_SIZE_SLOTS - 1 - size.nbounds, 90);
}

static void test_size_has_default_le(void **state)
{
	(void)state;
	for (size_t k = 0; k < buckets_default_size_le_count; k++)
		assert_true(has_bound(&size, buckets_default_size_le[k]));
}

/* 30 us is no fixed bound (the le="2.9223e-05" was the one under
 * it); given as extra, it is one, and 30 us and 30 us + 1 ns fall on each
 * side of it, by the search and by the kernel's cells alike. */
static void test_extra_bound_exact(void **state)
{
	const uint64_t extra[] = { 30 * NS_PER_US };
	uint64_t store[IOLAT_LAT_SLOTS], below, above;
	uint32_t cells[IOLAT_CELL_TABLE];
	struct bucket_table t;
	size_t at;

	(void)state;
	assert_false(buckets_has_bound(&lat, 30 * NS_PER_US));
	buckets_nearest(&lat, 30 * NS_PER_US, &below, &above);
	assert_true(below == 29223 && above == 30517);
	assert_int_equal(buckets_build_latency(&t, store, extra, 1), 0);
	assert_int_equal(t.nbounds, lat.nbounds + 1);
	assert_true(buckets_has_bound(&t, 30 * NS_PER_US));
	at = buckets_slot_of(&t, 30 * NS_PER_US);
	assert_true(buckets_upper(&t, at) == 30 * NS_PER_US);
	assert_true(buckets_lower(&t, at + 1) == 30 * NS_PER_US + 1);
	buckets_cells(&t, cells);
	for (uint64_t v = 29224; v <= 30517; v++)
		assert_int_equal(
		    iolat_slot_of(cells, (const __u64 *)t.bound, IOLAT_LAT_SLOTS_LOG2, v),
		    v <= 30 * NS_PER_US ? at : at + 1);
}

static void test_size_extra_bound_exact(void **state)
{
	const uint64_t extra[] = { 1000, 3000 };
	uint64_t store[IOLAT_SIZE_SLOTS], below, above;
	struct bucket_table t;

	(void)state;
	buckets_nearest(&size, 1000, &below, &above);
	assert_true(below == 939 && above == 1023);
	assert_int_equal(buckets_build_size(&t, store, extra, 2), 0);
	assert_int_equal(t.nbounds, size.nbounds + 2);
	assert_true(buckets_has_bound(&t, 1000) && buckets_has_bound(&t, 3000));
	assert_true(buckets_upper(&t, buckets_slot_of(&t, 1000)) == 1000);
	assert_true(buckets_lower(&t, buckets_slot_of(&t, 1001)) == 1001);
}

/* Nearest at the edges: nothing below the first bound, the neighbours of
 * a bound itself, nothing above the last. */
static void test_nearest_edges(void **state)
{
	uint64_t below, above;

	(void)state;
	buckets_nearest(&lat, 1, &below, &above);
	assert_true(below == 0 && above == 953);
	buckets_nearest(&lat, 100 * NS_PER_US, &below, &above);
	assert_true(below == 98296 && above == 102648);
	buckets_nearest(&lat, lat.bound[lat.nbounds - 1], &below, &above);
	assert_true(below == lat.bound[lat.nbounds - 2] && above == 0);
	assert_false(buckets_has_bound(&lat, UINT64_MAX));
}

static void test_latency_has_native_bounds(void **state)
{
	(void)state;
	for (int i = LAT_NATIVE_MIN_INDEX; i <= LAT_NATIVE_MAX_INDEX; i++)
		assert_true(has_bound(&lat, buckets_native_bound_ns(i)));
}

static void test_size_has_bitesize_rows(void **state)
{
	(void)state;
	for (int k = 10; k <= 28; k++)
		assert_true(has_bound(&size, (1ULL << k) - 1));
	/* Schema 3 from 512 B to 128 MiB: the powers of two are among them. */
	for (int k = 9; k <= 27; k++)
		assert_true(has_bound(&size, 1ULL << k));
}

/* Expected values computed independently, at 60-digit decimal precision. */
static void test_native_bound_values(void **state)
{
	(void)state;
	assert_true(buckets_native_bound_ns(0) == 1000000000ULL);
	assert_true(buckets_native_bound_ns(-16) == 500000000ULL);
	assert_true(buckets_native_bound_ns(16) == 2000000000ULL);
	assert_true(buckets_native_bound_ns(LAT_NATIVE_MIN_INDEX) == 953);
	assert_true(buckets_native_bound_ns(LAT_NATIVE_MAX_INDEX) == 128000000000ULL);
	assert_true(buckets_native_bound_ns(-161) == 935159);
	assert_true(buckets_native_bound_ns(-1) == 957603280);
	assert_true(buckets_native_bound_ns(1) == 1044273782);
	assert_true(buckets_native_bound_ns(8) == 1414213562);
	assert_true(buckets_native_bound_ns(100) == 76109255360ULL);
}

static void test_native_bounds_increase(void **state)
{
	(void)state;
	for (int i = LAT_NATIVE_MIN_INDEX + 1; i <= LAT_NATIVE_MAX_INDEX; i++)
		assert_true(buckets_native_bound_ns(i - 1) < buckets_native_bound_ns(i));
}

/* For each finite bound b at slot i: b, b - 1 and b + 1 land where a scan says. */
static void assert_slot_of_at_bounds(const struct bucket_table *t)
{
	for (size_t i = 0; i < t->nbounds; i++) {
		uint64_t b = t->bound[i];

		assert_int_equal(buckets_slot_of(t, b), i);
		assert_int_equal(buckets_slot_of(t, b + 1), i + 1);
		assert_int_equal(buckets_slot_of(t, b + 1), brute_slot(t, b + 1));
		if (b == 0)
			continue;
		assert_int_equal(buckets_slot_of(t, b - 1), brute_slot(t, b - 1));
		/* b - 1 is in slot i unless b - 1 is itself the previous bound. */
		if (i > 0 && t->bound[i - 1] == b - 1)
			assert_int_equal(buckets_slot_of(t, b - 1), i - 1);
		else
			assert_int_equal(buckets_slot_of(t, b - 1), i);
	}
}

static void test_slot_of_latency_bounds(void **state)
{
	(void)state;
	assert_slot_of_at_bounds(&lat);
}

static void test_slot_of_size_bounds(void **state)
{
	(void)state;
	assert_slot_of_at_bounds(&size);
}

static void test_slot_of_extremes(void **state)
{
	(void)state;
	assert_int_equal(buckets_slot_of(&lat, 0), 0);
	assert_int_equal(buckets_slot_of(&lat, UINT64_MAX), lat.nbounds);
	assert_int_equal(buckets_slot_of(&lat, UINT64_MAX - 1), lat.nbounds);
	/* Size slot 0 holds 0 alone: flushes. */
	assert_int_equal(buckets_slot_of(&size, 0), 0);
	assert_int_equal(buckets_slot_of(&size, 1), 1);
	assert_int_equal(buckets_slot_of(&size, UINT64_MAX), size.nbounds);
}

/* Random values of every magnitude, from a fixed seed. */
static void test_slot_of_random(void **state)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (int n = 0; n < 20000; n++) {
		uint64_t r = xorshift64(&seed);
		uint64_t v = r >> (r % 64);

		assert_int_equal(buckets_slot_of(&lat, v), brute_slot(&lat, v));
		assert_int_equal(buckets_slot_of(&size, v), brute_slot(&size, v));
	}
}

/* ---- slots by cell (bpf/slots.h), the kernel's lookup --------------------- */

static void test_bit_length(void **state)
{
	(void)state;
	assert_int_equal(iolat_bit_length(0), 0);
	for (int b = 0; b < 64; b++) {
		assert_int_equal(iolat_bit_length(1ULL << b), b + 1);
		assert_int_equal(iolat_bit_length((1ULL << b) | 1), b + 1);
		assert_int_equal(iolat_bit_length(b == 63 ? UINT64_MAX : (2ULL << b) - 1), b + 1);
	}
}

/* Cells tile the value range in order: each one's low end maps back to it,
 * and the value just below the next cell's low end too. */
static void test_cells_tile(void **state)
{
	(void)state;
	assert_int_equal(iolat_cell_low(0), 0);
	for (uint32_t c = 0; c + 1 < IOLAT_CELLS; c++) {
		uint64_t lo = iolat_cell_low(c), next = iolat_cell_low(c + 1);

		assert_true(lo < next);
		assert_int_equal(iolat_cell_of(lo), c);
		assert_int_equal(iolat_cell_of(next - 1), c);
		/* At most 1/32 of the cell's low end wide (exact below 32). */
		assert_true(next - lo <=
			    (lo < IOLAT_CELLS_PER_OCTAVE ? 1 : lo / IOLAT_CELLS_PER_OCTAVE));
	}
	assert_int_equal(iolat_cell_of(UINT64_MAX), IOLAT_CELLS - 1);
}

static int log2_of(size_t n)
{
	return __builtin_ctzl(n);
}

/* iolat_slot_of, with t's cells, at v: the brute-force answer. */
static void assert_cell_slot(const struct bucket_table *t, const uint32_t *cells, uint64_t v)
{
	uint32_t got = iolat_slot_of(cells, (const __u64 *)t->bound, log2_of(t->nslots), v);

	if (got != brute_slot(t, v)) {
		print_error("v=%llu: cell slot %u, want %zu\n", (unsigned long long)v, got,
			    brute_slot(t, v));
		fail();
	}
}

/* Every cell edge, every bound and its neighbours, the extremes and 10^6
 * random values of every magnitude. */
static void assert_cells_exact(const struct bucket_table *t)
{
	static uint32_t cells[IOLAT_CELL_TABLE];
	uint64_t seed = 0x2545f4914f6cdd1dULL;

	buckets_cells(t, cells);
	for (uint32_t c = 0; c < IOLAT_CELLS; c++) {
		uint64_t lo = iolat_cell_low(c);

		assert_cell_slot(t, cells, lo);
		assert_cell_slot(t, cells, lo + 1);
		if (lo)
			assert_cell_slot(t, cells, lo - 1);
	}
	for (size_t i = 0; i < t->nbounds; i++) {
		assert_cell_slot(t, cells, t->bound[i] - 1);
		assert_cell_slot(t, cells, t->bound[i]);
		assert_cell_slot(t, cells, t->bound[i] + 1);
	}
	assert_cell_slot(t, cells, 0);
	assert_cell_slot(t, cells, UINT64_MAX);
	for (int n = 0; n < 1000000; n++) {
		uint64_t r = xorshift64(&seed);

		assert_cell_slot(t, cells, r >> (r % 64));
	}
}

/* No cell of the built-in tables holds more than two bounds: the kernel
 * never falls back to the search with them. */
static void assert_no_crowded_cell(const struct bucket_table *t)
{
	static uint32_t cells[IOLAT_CELL_TABLE];

	buckets_cells(t, cells);
	for (uint32_t c = 0; c < IOLAT_CELLS; c++)
		assert_true(IOLAT_CELL_INSIDE(cells[c]) <= IOLAT_CELL_MAX_INSIDE);
}

static void test_cells_latency(void **state)
{
	(void)state;
	assert_no_crowded_cell(&lat);
	assert_cells_exact(&lat);
}

static void test_cells_size(void **state)
{
	(void)state;
	assert_no_crowded_cell(&size);
	assert_cells_exact(&size);
}

/* A user's bounds ten nanoseconds apart crowd one cell: exact still (the
 * search), and the cells around it stay fast. */
static void test_cells_crowded(void **state)
{
	uint64_t extra[12], store[IOLAT_LAT_SLOTS];
	static uint32_t cells[IOLAT_CELL_TABLE];
	struct bucket_table t;

	(void)state;
	for (size_t k = 0; k < 12; k++)
		extra[k] = 3000000 + 10 * k;
	assert_int_equal(buckets_build_latency(&t, store, extra, 12), 0);
	buckets_cells(&t, cells);
	assert_true(IOLAT_CELL_INSIDE(cells[iolat_cell_of(3000000)]) > IOLAT_CELL_MAX_INSIDE);
	assert_cells_exact(&t);
}

/* Slots tile the value range: no gap, no overlap, overflow up to UINT64_MAX. */
static void assert_lower_upper(const struct bucket_table *t)
{
	assert_true(buckets_lower(t, 0) == 0);
	for (size_t i = 1; i <= t->nbounds; i++)
		assert_true(buckets_lower(t, i) == buckets_upper(t, i - 1) + 1);
	for (size_t i = 0; i <= t->nbounds; i++) {
		assert_true(buckets_lower(t, i) <= buckets_upper(t, i));
		assert_int_equal(buckets_slot_of(t, buckets_lower(t, i)), i);
		assert_int_equal(buckets_slot_of(t, buckets_upper(t, i)), i);
	}
	assert_true(buckets_upper(t, t->nbounds) == UINT64_MAX);
}

static void test_lower_upper_latency(void **state)
{
	(void)state;
	assert_lower_upper(&lat);
}

static void test_lower_upper_size(void **state)
{
	(void)state;
	assert_lower_upper(&size);
}

/*
 * Width relative to the previous bound, for every slot from 1 us to 60 s.
 * Native schema 4 spaces bounds 2^(1/16) apart; flooring to whole ns can
 * add at most 2 ns over the previous bound.
 */
static void test_latency_relative_width(void **state)
{
	const double native = exp2(1.0 / 16) - 1;
	size_t checked = 0;

	(void)state;
	for (size_t i = 1; i < lat.nbounds; i++) {
		uint64_t prev = lat.bound[i - 1], b = lat.bound[i];
		double rel = (double)(b - prev) / (double)prev;

		if (prev + 1 < NS_PER_US || b > 60 * NS_PER_S)
			continue;
		assert_true(rel <= 0.125);
		assert_true(rel <= native + 2.0 / (double)prev);
		checked++;
	}
	/* log2(60e6) * 16 native slots, at least. */
	assert_true(checked >= 400);
}

/* Rows render.c sums slots into: no slot may straddle two of them. */
static int row_of(uint64_t units)
{
	int r = 0;

	while (units >= 2) {
		units >>= 1;
		r++;
	}
	return r;
}

static void assert_rows_exact(const struct bucket_table *t, uint64_t unit)
{
	for (size_t i = 0; i < t->nbounds; i++)
		assert_int_equal(row_of(buckets_lower(t, i) / unit),
				 row_of(buckets_upper(t, i) / unit));
}

static void test_rows_exact(void **state)
{
	(void)state;
	assert_rows_exact(&lat, 1000);
	assert_rows_exact(&lat, 1000000);
	assert_rows_exact(&size, 1024);
}

static void test_extra_bounds_included(void **state)
{
	static const uint64_t extra[] = { 7, 1234567, 99999999999ULL, 300 * NS_PER_S };
	uint64_t store[IOLAT_LAT_SLOTS];
	struct bucket_table t;

	(void)state;
	assert_int_equal(buckets_build_latency(&t, store, extra, 4), 0);
	assert_table_shape(&t, IOLAT_LAT_SLOTS);
	assert_int_equal(t.nbounds, lat.nbounds + 4);
	for (size_t k = 0; k < 4; k++) {
		size_t s = buckets_slot_of(&t, extra[k]);

		assert_true(t.bound[s] == extra[k]);
		assert_int_equal(buckets_slot_of(&t, extra[k] + 1), s + 1);
	}
	assert_true(t.bound[0] == 7);
	assert_true(t.bound[t.nbounds - 1] == 300 * NS_PER_S);
	/* The default bounds are all still there. */
	for (size_t i = 0; i < lat.nbounds; i++)
		assert_true(has_bound(&t, lat.bound[i]));
}

/* Bounds the table already has, or given twice, take no slot. */
static void test_extra_duplicates_merge(void **state)
{
	static const uint64_t extra[] = { 1000000000, 1999, 42, 42 };
	uint64_t store[IOLAT_LAT_SLOTS];
	struct bucket_table t;

	(void)state;
	assert_int_equal(buckets_build_latency(&t, store, extra, 4), 0);
	assert_int_equal(t.nbounds, lat.nbounds + 1);
	assert_table_shape(&t, IOLAT_LAT_SLOTS);
}

/* Distinct bounds above every default one: each takes exactly one slot. */
static void fill_new_bounds(uint64_t *extra, size_t n)
{
	for (size_t k = 0; k < n; k++)
		extra[k] = 1000 * NS_PER_S + k;
}

static void test_extra_fill_to_capacity(void **state)
{
	size_t room = IOLAT_LAT_SLOTS - 1 - lat.nbounds;
	uint64_t extra[IOLAT_LAT_SLOTS], store[IOLAT_LAT_SLOTS];
	struct bucket_table t;

	(void)state;
	fill_new_bounds(extra, room + 1);
	assert_int_equal(buckets_build_latency(&t, store, extra, room), 0);
	assert_int_equal(t.nbounds, IOLAT_LAT_SLOTS - 1);
	assert_table_shape(&t, IOLAT_LAT_SLOTS);
	assert_int_equal(buckets_slot_of(&t, UINT64_MAX), IOLAT_LAT_SLOTS - 1);
	assert_int_equal(buckets_build_latency(&t, store, extra, room + 1), -E2BIG);
}

static void test_extra_far_too_many(void **state)
{
	static uint64_t extra[2 * IOLAT_LAT_SLOTS];
	uint64_t store[IOLAT_LAT_SLOTS];
	struct bucket_table t;

	(void)state;
	fill_new_bounds(extra, 2 * IOLAT_LAT_SLOTS);
	assert_int_equal(buckets_build_latency(&t, store, extra, 2 * IOLAT_LAT_SLOTS), -E2BIG);
	assert_int_equal(buckets_build_latency(&t, store, extra, 100), -E2BIG);
}

/*
 * No extra bounds, called the way collector.c calls it (NULL, 0): the same
 * table as with an empty array. Under UBSan this also checks that NULL is
 * never handed to memcpy().
 */
static void test_latency_null_extra(void **state)
{
	uint64_t store[IOLAT_LAT_SLOTS];
	struct bucket_table t;

	(void)state;
	assert_int_equal(buckets_build_latency(&t, store, NULL, 0), 0);
	assert_int_equal(t.nbounds, lat.nbounds);
	assert_memory_equal(store, lat_store, sizeof(store));
}

/*
 * A handover from a collector of the fixed bounds to one with 30 us more:
 * each of its slots goes to ours of the same upper bound (one further up
 * from 30 us on), the overflow to the overflow, and nothing is lost. Alike
 * tables map each slot to itself.
 */
static void test_handover_slot_map(void **state)
{
	static const uint64_t extra[] = { 30 * NS_PER_US };
	static uint64_t store[IOLAT_LAT_SLOTS];
	static struct handover_slot_map m;
	static struct iolat_val v;
	struct bucket_table ours;
	size_t at = buckets_slot_of(&lat, 30517), total = 0;

	(void)state;
	assert_int_equal(buckets_build_latency(&ours, store, extra, 1), 0);
	handover_bounds_map(&m, lat.bound, size.bound, &ours, &size);
	for (size_t i = 0; i < IOLAT_LAT_SLOTS; i++)
		assert_int_equal(m.lat[i], i < at ? i : i < lat.nbounds ? i + 1 : ours.nbounds);
	for (size_t i = 0; i < IOLAT_SIZE_SLOTS; i++)
		assert_int_equal(m.size[i], i < size.nbounds ? i : size.nbounds);
	for (size_t i = 0; i < IOLAT_LAT_SLOTS; i++)
		v.lat[IOLAT_VIEW_TOTAL].slots[i] = i + 1;
	v.size_slots[3] = 9;
	handover_bounds_apply(&m, &v);
	assert_int_equal(v.lat[IOLAT_VIEW_TOTAL].slots[at], 0); /* ours (29223, 30000]: none */
	assert_int_equal(v.lat[IOLAT_VIEW_TOTAL].slots[at + 1], at + 1);
	assert_int_equal(v.lat[IOLAT_VIEW_TOTAL].slots[at - 1], at);
	for (size_t i = 0; i < IOLAT_LAT_SLOTS; i++)
		total += v.lat[IOLAT_VIEW_TOTAL].slots[i];
	assert_int_equal(total, IOLAT_LAT_SLOTS * (IOLAT_LAT_SLOTS + 1) / 2);
	assert_int_equal(v.size_slots[3], 9);
	handover_bounds_map(&m, lat.bound, size.bound, &lat, &size);
	for (size_t i = 0; i < IOLAT_LAT_SLOTS; i++)
		assert_int_equal(m.lat[i], i < lat.nbounds ? i : lat.nbounds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_latency_shape),
		cmocka_unit_test(test_size_shape),
		cmocka_unit_test(test_latency_has_usec_rows),
		cmocka_unit_test(test_latency_has_msec_rows),
		cmocka_unit_test(test_latency_has_default_le),
		cmocka_unit_test(test_room_for_own_bounds),
		cmocka_unit_test(test_size_has_default_le),
		cmocka_unit_test(test_extra_bound_exact),
		cmocka_unit_test(test_size_extra_bound_exact),
		cmocka_unit_test(test_nearest_edges),
		cmocka_unit_test(test_handover_slot_map),
		cmocka_unit_test(test_latency_has_native_bounds),
		cmocka_unit_test(test_size_has_bitesize_rows),
		cmocka_unit_test(test_native_bound_values),
		cmocka_unit_test(test_native_bounds_increase),
		cmocka_unit_test(test_slot_of_latency_bounds),
		cmocka_unit_test(test_slot_of_size_bounds),
		cmocka_unit_test(test_slot_of_extremes),
		cmocka_unit_test(test_slot_of_random),
		cmocka_unit_test(test_bit_length),
		cmocka_unit_test(test_cells_tile),
		cmocka_unit_test(test_cells_latency),
		cmocka_unit_test(test_cells_size),
		cmocka_unit_test(test_cells_crowded),
		cmocka_unit_test(test_lower_upper_latency),
		cmocka_unit_test(test_lower_upper_size),
		cmocka_unit_test(test_latency_relative_width),
		cmocka_unit_test(test_rows_exact),
		cmocka_unit_test(test_extra_bounds_included),
		cmocka_unit_test(test_extra_duplicates_merge),
		cmocka_unit_test(test_extra_fill_to_capacity),
		cmocka_unit_test(test_extra_far_too_many),
		cmocka_unit_test(test_latency_null_extra),
	};

	return cmocka_run_group_tests(tests, setup_tables, NULL);
}
