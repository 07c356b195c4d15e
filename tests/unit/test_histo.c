// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_histo.c - per-CPU merge, interval deltas, quantiles and summaries of series. */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "core/buckets.h"
#include "core/histo.h"
#include "iolat.h"
#include <linux/types.h>

#define NCPU 8
#define NSAMPLES 100000

static struct bucket_table lat;
static uint64_t lat_store[IOLAT_LAT_SLOTS];

/*
 * Not NULL: buckets_build_latency memcpy()s `extra` even when nextra is 0,
 * which UBSan stops on (test_buckets.c checks the NULL call on its own).
 */
static const uint64_t no_extra[1];

static int setup_table(void **state)
{
	(void)state;
	return buckets_build_latency(&lat, lat_store, no_extra, 0) ? -1 : 0;
}

/* cmocka 1.1 has no double compare; this one prints both sides on failure. */
static void assert_close(double got, double want, double eps)
{
	if (fabs(got - want) <= eps)
		return;
	print_error("got %.17g, want %.17g (eps %g)\n", got, want, eps);
	fail();
}

/* ---- merge and delta ---------------------------------------------------- */

/*
 * What CPU `cpu` holds, as a closed form so the sums over CPUs are known.
 * The view-0 max sits on CPU 3 and the view-1 max on CPU 6: the merge must
 * take each view's max separately.
 */
static void fill_cpu(struct iolat_val *v, unsigned int cpu)
{
	memset(v, 0, sizeof(*v));
	v->ios = 10 + cpu;
	v->bytes = 4096ULL * (cpu + 1);
	v->errors = cpu % 2;
	for (size_t i = 0; i < IOLAT_SIZE_SLOTS; i++)
		v->size_slots[i] = i * (cpu + 1);
	for (unsigned int w = 0; w < IOLAT_VIEW_COUNT; w++) {
		struct iolat_lat *l = &v->lat[w];

		l->count = 100ULL * (cpu + 1) + w;
		l->unseen = cpu;
		l->sum_ns = 1000ULL * cpu + w;
		if (w == 0)
			l->max_ns = cpu == 3 ? 9000000 : 1000ULL * (cpu + 1);
		else
			l->max_ns = cpu == 6 ? 77000000 : 5000000 - cpu;
		for (size_t i = 0; i < IOLAT_LAT_SLOTS; i++)
			l->slots[i] = i + cpu + w;
	}
}

/* Sums over cpu = 0..NCPU-1 of fill_cpu's fields (sum of cpu is 28). */
static void assert_merged(const struct iolat_val *v)
{
	assert_int_equal(v->ios, 10 * NCPU + 28);
	assert_int_equal(v->bytes, 4096ULL * 36);
	assert_int_equal(v->errors, 4);
	for (size_t i = 0; i < IOLAT_SIZE_SLOTS; i++)
		assert_int_equal(v->size_slots[i], i * 36);
	for (unsigned int w = 0; w < IOLAT_VIEW_COUNT; w++) {
		const struct iolat_lat *l = &v->lat[w];

		assert_int_equal(l->count, 100ULL * 36 + NCPU * w);
		assert_int_equal(l->unseen, 28);
		assert_int_equal(l->sum_ns, 28000ULL + NCPU * w);
		assert_int_equal(l->max_ns, w == 0 ? 9000000 : 77000000);
		for (size_t i = 0; i < IOLAT_LAT_SLOTS; i++)
			assert_int_equal(l->slots[i], NCPU * i + 28 + NCPU * w);
	}
}

static struct iolat_val cpus[NCPU], sum, sum_rev, tmp;

static void test_add_merges_cpus(void **state)
{
	(void)state;
	memset(&sum, 0, sizeof(sum));
	for (unsigned int c = 0; c < NCPU; c++) {
		fill_cpu(&cpus[c], c);
		histo_add(&sum, &cpus[c]);
	}
	assert_merged(&sum);
}

/* CPUs come back from the map in any order; the merge must not care. */
static void test_add_order_free(void **state)
{
	(void)state;
	memset(&sum, 0, sizeof(sum));
	memset(&sum_rev, 0, sizeof(sum_rev));
	for (unsigned int c = 0; c < NCPU; c++) {
		fill_cpu(&cpus[c], c);
		histo_add(&sum, &cpus[c]);
	}
	for (unsigned int c = NCPU; c > 0; c--)
		histo_add(&sum_rev, &cpus[c - 1]);
	assert_memory_equal(&sum, &sum_rev, sizeof(sum));
}

static void test_add_keeps_larger_max(void **state)
{
	(void)state;
	memset(&sum, 0, sizeof(sum));
	memset(&tmp, 0, sizeof(tmp));
	sum.lat[0].max_ns = 50;
	tmp.lat[0].max_ns = 20;
	tmp.lat[1].max_ns = 30;
	histo_add(&sum, &tmp);
	assert_int_equal(sum.lat[0].max_ns, 50);
	assert_int_equal(sum.lat[1].max_ns, 30);
}

/* ---- folding the kernel's 32-bit counters -------------------------------- */

/*
 * A simulated kernel: NCPU per-CPU values with 32-bit counters, driven by
 * completions whose true 64-bit totals the test keeps beside. Folds at
 * chosen points must give exactly those totals, across many wraps.
 */
static struct iolat_kval kcpu[NCPU];
static struct iolat_val truth, folded;

static void complete_on(unsigned int cpu, size_t slot, uint64_t ns, uint32_t n, bool timed_total)
{
	struct iolat_kval *k = &kcpu[cpu];

	k->bytes += 4096ULL * n;
	k->size_slots[slot % IOLAT_SIZE_SLOTS] += n;
	k->lat_slots[IOLAT_VIEW_DEVICE][slot] += n;
	k->lat[IOLAT_VIEW_DEVICE].sum_ns += ns * n;
	if (ns > k->lat[IOLAT_VIEW_DEVICE].max_ns)
		k->lat[IOLAT_VIEW_DEVICE].max_ns = ns;
	if (timed_total) {
		k->lat_slots[IOLAT_VIEW_TOTAL][slot] += n;
		k->lat[IOLAT_VIEW_TOTAL].sum_ns += 2 * ns * n;
	} else {
		k->unseen[IOLAT_VIEW_TOTAL] += n;
	}
	truth.ios += n;
	truth.bytes += 4096ULL * n;
	truth.size_slots[slot % IOLAT_SIZE_SLOTS] += n;
	truth.lat[IOLAT_VIEW_DEVICE].slots[slot] += n;
	truth.lat[IOLAT_VIEW_DEVICE].count += n;
	truth.lat[IOLAT_VIEW_DEVICE].sum_ns += ns * n;
	if (ns > truth.lat[IOLAT_VIEW_DEVICE].max_ns)
		truth.lat[IOLAT_VIEW_DEVICE].max_ns = ns;
	if (timed_total) {
		truth.lat[IOLAT_VIEW_TOTAL].slots[slot] += n;
		truth.lat[IOLAT_VIEW_TOTAL].count += n;
		truth.lat[IOLAT_VIEW_TOTAL].sum_ns += 2 * ns * n;
	} else {
		truth.lat[IOLAT_VIEW_TOTAL].unseen += n;
	}
}

/* Each fold sees every counter advanced by up to 2^32 - 1 in total since the
 * last: one slot's counter wraps on several CPUs between two folds, and the
 * totals pass 2^32 many times over. */
static void test_fold_wraps(void **state)
{
	(void)state;
	memset(kcpu, 0, sizeof(kcpu));
	memset(&truth, 0, sizeof(truth));
	memset(&folded, 0, sizeof(folded));
	for (unsigned int round = 0; round < 40; round++) {
		/* 0xfff00000 in one slot over all CPUs: just under 2^32 per fold. */
		for (unsigned int c = 0; c < NCPU; c++)
			complete_on(c, 100, 1000 + round, 0xfff00000u / NCPU, round % 3 != 0);
		complete_on(round % NCPU, 7 + round, 50000 + round, 12345, true);
		histo_fold(&folded, kcpu, NCPU);
		truth.lat[IOLAT_VIEW_TOTAL].max_ns = 0; /* the total view's max is not simulated */
		folded.lat[IOLAT_VIEW_TOTAL].max_ns = 0;
		assert_memory_equal(&folded, &truth, sizeof(truth));
	}
	assert_true(truth.lat[IOLAT_VIEW_DEVICE].slots[100] > 30 * (1ULL << 32));
}

/* A fold with nothing new changes nothing; a shared value is one "CPU". */
static void test_fold_idempotent_shared(void **state)
{
	(void)state;
	memset(kcpu, 0, sizeof(kcpu));
	memset(&truth, 0, sizeof(truth));
	memset(&folded, 0, sizeof(folded));
	kcpu[0].lat_slots[IOLAT_VIEW_DEVICE][3] = UINT32_MAX;
	kcpu[0].unseen[IOLAT_VIEW_DEVICE] = 2;
	kcpu[0].errors = 1;
	histo_fold(&folded, kcpu, 1);
	histo_fold(&folded, kcpu, 1);
	assert_int_equal(folded.lat[IOLAT_VIEW_DEVICE].slots[3], UINT32_MAX);
	assert_int_equal(folded.lat[IOLAT_VIEW_DEVICE].count, UINT32_MAX);
	assert_int_equal(folded.ios, (uint64_t)UINT32_MAX + 2);
	assert_int_equal(folded.errors, 1);
	kcpu[0].lat_slots[IOLAT_VIEW_DEVICE][3] += 3; /* wraps to 2 */
	histo_fold(&folded, kcpu, 1);
	assert_int_equal(folded.lat[IOLAT_VIEW_DEVICE].slots[3], (uint64_t)UINT32_MAX + 3);
	assert_int_equal(folded.ios, (uint64_t)UINT32_MAX + 5);
}

/* The span of n slots the slow way: [first non-zero, last + 1), [n, n). */
static void expect_span(const __u64 *slots, size_t n, const struct histo_span *got)
{
	size_t lo = n, hi = n;

	for (size_t i = 0; i < n; i++)
		if (slots[i]) {
			lo = lo == n ? i : lo;
			hi = i + 1;
		}
	if (lo == n)
		hi = n;
	assert_int_equal(got->lo, lo);
	assert_int_equal(got->hi, hi);
}

/* The fold's spans hold every non-zero slot and no more, as slots fill in
 * at both ends and stay empty in a view; the plain fold folds the same. */
static void test_fold_spans(void **state)
{
	static struct iolat_val plain;
	struct histo_span span[HISTO_SPANS];
	unsigned int seed = 5;

	(void)state;
	memset(kcpu, 0, sizeof(kcpu));
	memset(&folded, 0, sizeof(folded));
	memset(&plain, 0, sizeof(plain));
	for (int round = 0; round < 200; round++) {
		unsigned int c = (unsigned int)rand_r(&seed) % NCPU;

		if (round % 5)
			kcpu[c].lat_slots[IOLAT_VIEW_DEVICE][rand_r(&seed) % IOLAT_LAT_SLOTS]++;
		if (round > 100)
			kcpu[c].size_slots[rand_r(&seed) % IOLAT_SIZE_SLOTS] += 3;
		histo_fold_spans(&folded, kcpu, NCPU, span);
		histo_fold(&plain, kcpu, NCPU);
		assert_memory_equal(&folded, &plain, sizeof(plain));
		expect_span(folded.lat[IOLAT_VIEW_DEVICE].slots, IOLAT_LAT_SLOTS,
			    &span[IOLAT_VIEW_DEVICE]);
		expect_span(folded.lat[IOLAT_VIEW_TOTAL].slots, IOLAT_LAT_SLOTS,
			    &span[IOLAT_VIEW_TOTAL]);
		expect_span(folded.size_slots, IOLAT_SIZE_SLOTS, &span[HISTO_SPAN_SIZE]);
	}
	assert_int_equal(span[IOLAT_VIEW_TOTAL].lo, IOLAT_LAT_SLOTS); /* never used */
}

/*
 * now = before + one more CPU's worth, with a new max in each view: the delta
 * is that CPU's counts, and the max is now's (a max cannot be subtracted).
 */
static void test_sub_interval(void **state)
{
	struct iolat_val *before = &sum, *now = &sum_rev, *delta = &cpus[5];

	(void)state;
	memset(before, 0, sizeof(*before));
	for (unsigned int c = 0; c < NCPU; c++) {
		fill_cpu(&cpus[c], c);
		histo_add(before, &cpus[c]);
	}
	memcpy(now, before, sizeof(*now));
	histo_add(now, delta);
	now->lat[0].max_ns = 123456789;
	now->lat[1].max_ns = 987654321;
	histo_sub(&tmp, now, before);
	assert_int_equal(tmp.ios, delta->ios);
	assert_int_equal(tmp.bytes, delta->bytes);
	assert_int_equal(tmp.errors, delta->errors);
	assert_memory_equal(tmp.size_slots, delta->size_slots, sizeof(tmp.size_slots));
	for (unsigned int w = 0; w < IOLAT_VIEW_COUNT; w++) {
		assert_int_equal(tmp.lat[w].count, delta->lat[w].count);
		assert_int_equal(tmp.lat[w].unseen, delta->lat[w].unseen);
		assert_int_equal(tmp.lat[w].sum_ns, delta->lat[w].sum_ns);
		assert_int_equal(tmp.lat[w].max_ns, now->lat[w].max_ns);
		assert_memory_equal(tmp.lat[w].slots, delta->lat[w].slots,
				    sizeof(tmp.lat[w].slots));
	}
}

static void test_sub_no_change(void **state)
{
	(void)state;
	fill_cpu(&sum, 4);
	histo_sub(&tmp, &sum, &sum);
	assert_int_equal(tmp.ios, 0);
	assert_int_equal(tmp.lat[1].count, 0);
	/* The max did not grow: this interval's max is unknown. */
	assert_int_equal(tmp.lat[1].max_ns, 0);
	assert_int_equal(histo_top_slot(tmp.lat[0].slots, IOLAT_LAT_SLOTS), -1);
}

/* A cumulative max that did not grow leaves the interval's max unknown (0),
 * and a sum over series with one unknown max has an unknown max. */
static void test_sub_max_unknown_propagates(void **state)
{
	struct iolat_val a, b;

	(void)state;
	fill_cpu(&a, 1);
	fill_cpu(&b, 2);
	histo_sub(&tmp, &a, &a);
	tmp.lat[0].count = 5; /* counts, but the max did not grow */
	assert_int_equal(tmp.lat[0].max_ns, 0);
	memset(&sum, 0, sizeof(sum));
	histo_add(&sum, &b);
	assert_int_equal(sum.lat[0].max_ns, b.lat[0].max_ns);
	histo_add(&sum, &tmp);
	assert_int_equal(sum.lat[0].max_ns, 0);
	histo_add(&sum, &b);
	assert_int_equal(sum.lat[0].max_ns, 0);
}

/* ---- quantiles against exact percentiles -------------------------------- */

static uint64_t seed;

static uint64_t xorshift64(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

/* Uniform in (0, 1]: never 0, so log() below stays finite. */
static double unit_rand(void)
{
	return ((double)(xorshift64() >> 11) + 1.0) / 9007199254740992.0;
}

static uint64_t uniform(uint64_t lo, uint64_t hi)
{
	return lo + xorshift64() % (hi - lo + 1);
}

static uint64_t gen_uniform(void)
{
	return uniform(10000, 10000000);
}

/* Box-Muller normal in log space: median 1 ms, spread e^1. */
static uint64_t gen_lognormal(void)
{
	double z = sqrt(-2 * log(unit_rand())) * cos(2 * M_PI * unit_rand());

	return (uint64_t)exp(log(1e6) + z);
}

static uint64_t gen_point(void)
{
	return 5000000;
}

/* Fast cache hits and slow seeks: 70 % near 200 us, 30 % near 20 ms. */
static uint64_t gen_bimodal(void)
{
	if (xorshift64() % 10 < 7)
		return uniform(150000, 250000);
	return uniform(15000000, 25000000);
}

static uint64_t gen_exponential(void)
{
	return (uint64_t)(-log(unit_rand()) * 2e6);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t samples[NSAMPLES];
static __u64 slots[IOLAT_LAT_SLOTS];

/* Fills samples (sorted) and slots from gen; returns the largest sample. */
static uint64_t generate(uint64_t (*gen)(void))
{
	seed = 0x2545f4914f6cdd1dULL;
	memset(slots, 0, sizeof(slots));
	for (size_t n = 0; n < NSAMPLES; n++) {
		samples[n] = gen();
		slots[buckets_slot_of(&lat, samples[n])]++;
	}
	qsort(samples, NSAMPLES, sizeof(samples[0]), cmp_u64);
	return samples[NSAMPLES - 1];
}

/* Nearest-rank percentile, in integer arithmetic: the ceil(q n)-th smallest. */
static uint64_t exact_permille(unsigned int permille)
{
	size_t rank = ((size_t)NSAMPLES * permille + 999) / 1000;

	return samples[rank - 1];
}

/*
 * The estimate must lie in the slot holding the exact value (that slot is
 * the one the cumulative count crosses the rank in) and within 5 %.
 */
static void assert_estimate(unsigned int permille, uint64_t max)
{
	uint64_t exact = exact_permille(permille);
	size_t s = buckets_slot_of(&lat, exact);
	double est = histo_quantile(slots, &lat, permille / 1000.0, max);

	if (est >= (double)buckets_lower(&lat, s) && est <= (double)buckets_upper(&lat, s) &&
	    fabs(est - (double)exact) <= 0.05 * (double)exact && (!max || est <= (double)max))
		return;
	print_error("p%.1f: estimate %.1f, exact %" PRIu64 " in slot %zu [%" PRIu64 ", %" PRIu64
		    "], max %" PRIu64 "\n",
		    permille / 10.0, est, exact, s, buckets_lower(&lat, s), buckets_upper(&lat, s),
		    max);
	fail();
}

static void check_distribution(uint64_t (*gen)(void))
{
	static const unsigned int permille[] = { 500, 900, 990, 999 };
	uint64_t max = generate(gen);

	for (size_t k = 0; k < sizeof(permille) / sizeof(permille[0]); k++) {
		assert_estimate(permille[k], max);
		assert_estimate(permille[k], 0);
	}
}

static void test_quantile_uniform(void **state)
{
	(void)state;
	check_distribution(gen_uniform);
}

static void test_quantile_lognormal(void **state)
{
	(void)state;
	check_distribution(gen_lognormal);
}

static void test_quantile_point_mass(void **state)
{
	(void)state;
	check_distribution(gen_point);
	/* With the max known, q = 1 is the value itself. */
	assert_close(histo_quantile(slots, &lat, 1.0, 5000000), 5000000, 0);
}

static void test_quantile_bimodal(void **state)
{
	(void)state;
	check_distribution(gen_bimodal);
}

static void test_quantile_exponential(void **state)
{
	(void)state;
	check_distribution(gen_exponential);
}

/* Estimates never go down as q goes up, and q = 1 reaches the max. */
static void test_quantile_monotonic(void **state)
{
	uint64_t max = generate(gen_lognormal);
	double prev = 0;

	(void)state;
	for (int k = 1; k <= 1000; k++) {
		double v = histo_quantile(slots, &lat, k / 1000.0, max);

		assert_true(v >= prev);
		prev = v;
	}
	assert_close(prev, (double)max, 0);
}

/* ---- quantile edge cases ------------------------------------------------ */

static void test_quantile_empty(void **state)
{
	(void)state;
	memset(slots, 0, sizeof(slots));
	assert_close(histo_quantile(slots, &lat, 0.5, 0), 0, 0);
	assert_close(histo_quantile(slots, &lat, 1.0, 12345), 0, 0);
	assert_int_equal(histo_top_slot(slots, IOLAT_LAT_SLOTS), -1);
}

/* One 3 ms sample: any q gives its slot's top, or the max when it is known. */
static void test_quantile_single_value(void **state)
{
	size_t s = buckets_slot_of(&lat, 3000000);
	double hi = (double)buckets_upper(&lat, s);

	(void)state;
	memset(slots, 0, sizeof(slots));
	slots[s] = 1;
	assert_true(hi > 3000000);
	assert_close(histo_quantile(slots, &lat, 0.5, 0), hi, 0);
	assert_close(histo_quantile(slots, &lat, 0.001, 0), hi, 0);
	assert_close(histo_quantile(slots, &lat, 1.0, 0), hi, 0);
	assert_close(histo_quantile(slots, &lat, 0.5, 3000000), 3000000, 0);
	assert_close(histo_quantile(slots, &lat, 0.999, 3000000), 3000000, 0);
}

/* Linear interpolation inside one slot. */
static void test_quantile_interpolates(void **state)
{
	size_t s = buckets_slot_of(&lat, 1000000);
	double lo = (double)buckets_lower(&lat, s), hi = (double)buckets_upper(&lat, s);

	(void)state;
	memset(slots, 0, sizeof(slots));
	slots[s] = 4;
	assert_close(hi, 1000000, 0);
	assert_close(histo_quantile(slots, &lat, 0.25, 0), lo + (hi - lo) * 0.25, 1e-6);
	assert_close(histo_quantile(slots, &lat, 0.5, 0), lo + (hi - lo) * 0.5, 1e-6);
	assert_close(histo_quantile(slots, &lat, 1.0, 0), hi, 0);
}

/* The overflow slot has no upper bound: the max closes it, or it collapses to lo. */
static void test_quantile_overflow(void **state)
{
	size_t s = lat.nbounds;
	double lo = (double)buckets_lower(&lat, s), max = 200e9;

	(void)state;
	memset(slots, 0, sizeof(slots));
	slots[s] = 4;
	assert_int_equal(buckets_slot_of(&lat, 200000000000ULL), s);
	assert_int_equal(histo_top_slot(slots, IOLAT_LAT_SLOTS), (int)s);
	assert_close(histo_quantile(slots, &lat, 0.5, 200000000000ULL), lo + (max - lo) * 0.5,
		     1e-3);
	assert_close(histo_quantile(slots, &lat, 1.0, 200000000000ULL), max, 0);
	assert_close(histo_quantile(slots, &lat, 0.5, 0), lo, 0);
}

/* One value at 1 ms, one in overflow: the median is the 1 ms slot's top. */
static void test_quantile_mixed_overflow(void **state)
{
	(void)state;
	memset(slots, 0, sizeof(slots));
	slots[buckets_slot_of(&lat, 1000000)] = 1;
	slots[lat.nbounds] = 1;
	assert_close(histo_quantile(slots, &lat, 0.5, 200000000000ULL), 1000000, 0);
	assert_close(histo_quantile(slots, &lat, 1.0, 200000000000ULL), 200e9, 0);
}

static void test_top_slot(void **state)
{
	(void)state;
	memset(slots, 0, sizeof(slots));
	slots[0] = 1;
	assert_int_equal(histo_top_slot(slots, IOLAT_LAT_SLOTS), 0);
	slots[77] = 3;
	assert_int_equal(histo_top_slot(slots, IOLAT_LAT_SLOTS), 77);
	slots[IOLAT_LAT_SLOTS - 1] = 1;
	assert_int_equal(histo_top_slot(slots, IOLAT_LAT_SLOTS), IOLAT_LAT_SLOTS - 1);
	/* nslots limits the search. */
	assert_int_equal(histo_top_slot(slots, 77), 0);
}

/* ---- summaries ---------------------------------------------------------- */

static struct iolat_lat delta;

/* 10 at 100 us, 5 at 2 ms, 1 at 7.1 ms; mean 1234567 ns by construction. */
static void fill_delta(uint64_t max_ns)
{
	memset(&delta, 0, sizeof(delta));
	delta.slots[buckets_slot_of(&lat, 100000)] = 10;
	delta.slots[buckets_slot_of(&lat, 2000000)] = 5;
	delta.slots[buckets_slot_of(&lat, 7100000)] = 1;
	delta.count = 16;
	delta.sum_ns = 16ULL * 1234567;
	delta.max_ns = max_ns;
}

static void test_summarize_empty(void **state)
{
	struct histo_summary s;

	(void)state;
	memset(&delta, 0, sizeof(delta));
	/* A quiet interval after a busy one still carries the cumulative max. */
	delta.max_ns = 5000000;
	histo_summarize(&delta, &lat, &s);
	assert_int_equal(s.count, 0);
	assert_close(s.mean, 0, 0);
	assert_close(s.max, 0, 0);
	assert_false(s.max_exact);
	assert_close(s.p50, 0, 0);
	assert_close(s.p999, 0, 0);
}

/* The cumulative max lies in the interval's top slot: it is the max. */
static void test_summarize_max_exact(void **state)
{
	struct histo_summary s;

	(void)state;
	fill_delta(7100000);
	histo_summarize(&delta, &lat, &s);
	assert_int_equal(s.count, 16);
	assert_close(s.mean, 1234567, 0);
	assert_true(s.max_exact);
	assert_close(s.max, 7100000, 0);
	/* Capped by the exact max: rank 15.984 is in the top slot. */
	assert_close(s.p999, histo_quantile(delta.slots, &lat, 0.999, 7100000), 0);
	assert_true(s.p999 <= 7100000);
	assert_close(s.p50, histo_quantile(delta.slots, &lat, 0.5, 7100000), 0);
	assert_true(s.p50 <= (double)buckets_upper(&lat, buckets_slot_of(&lat, 100000)));
	assert_true(s.p90 >= (double)buckets_lower(&lat, buckets_slot_of(&lat, 2000000)));
	assert_true(s.p90 <= (double)buckets_upper(&lat, buckets_slot_of(&lat, 2000000)));
}

/*
 * The cumulative max came from an earlier interval (0.9 s, far above this
 * interval's top slot): the max is only known to be <= the top slot's bound.
 */
static void test_summarize_max_not_exact(void **state)
{
	size_t top = buckets_slot_of(&lat, 7100000);
	struct histo_summary s;

	(void)state;
	fill_delta(900000000);
	delta.max_ns = 0; /* the interval's max is unknown */
	histo_summarize(&delta, &lat, &s);
	assert_false(s.max_exact);
	assert_close(s.max, (double)buckets_upper(&lat, top), 0);
	assert_close(s.p999, histo_quantile(delta.slots, &lat, 0.999, 0), 0);
	assert_true(s.p999 >= (double)buckets_lower(&lat, top));
	assert_true(s.p999 <= s.max);
}

/* A max below the top slot (a shared value's max lost a race between two
 * CPUs): not exact, so neither the max nor the percentiles are taken from
 * it. */
static void test_summarize_max_below_top_slot(void **state)
{
	size_t top = buckets_slot_of(&lat, 7100000);
	struct histo_summary s;

	(void)state;
	fill_delta(7100000);
	delta.max_ns = 3000000; /* in a lower slot than the top one */
	histo_summarize(&delta, &lat, &s);
	assert_false(s.max_exact);
	assert_close(s.max, (double)buckets_upper(&lat, top), 0);
	assert_true(s.p999 >= (double)buckets_lower(&lat, top));
}

/* All values beyond the last finite bound, with the max known. */
static void test_summarize_overflow(void **state)
{
	double lo = (double)buckets_lower(&lat, lat.nbounds);
	struct histo_summary s;

	(void)state;
	memset(&delta, 0, sizeof(delta));
	delta.slots[lat.nbounds] = 3;
	delta.count = 3;
	delta.sum_ns = 3ULL * 250000000000ULL;
	delta.max_ns = 300000000000ULL;
	histo_summarize(&delta, &lat, &s);
	assert_true(s.max_exact);
	assert_close(s.max, 300e9, 0);
	assert_close(s.mean, 250e9, 0);
	assert_close(s.p50, lo + (300e9 - lo) * 0.5, 1e-3);
	assert_close(s.p999, lo + (300e9 - lo) * 0.999, 1e-3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_merges_cpus),
		cmocka_unit_test(test_add_order_free),
		cmocka_unit_test(test_add_keeps_larger_max),
		cmocka_unit_test(test_sub_interval),
		cmocka_unit_test(test_fold_wraps),
		cmocka_unit_test(test_fold_idempotent_shared),
		cmocka_unit_test(test_fold_spans),
		cmocka_unit_test(test_sub_no_change),
		cmocka_unit_test(test_quantile_uniform),
		cmocka_unit_test(test_quantile_lognormal),
		cmocka_unit_test(test_quantile_point_mass),
		cmocka_unit_test(test_quantile_bimodal),
		cmocka_unit_test(test_quantile_exponential),
		cmocka_unit_test(test_quantile_monotonic),
		cmocka_unit_test(test_quantile_empty),
		cmocka_unit_test(test_quantile_single_value),
		cmocka_unit_test(test_quantile_interpolates),
		cmocka_unit_test(test_quantile_overflow),
		cmocka_unit_test(test_quantile_mixed_overflow),
		cmocka_unit_test(test_top_slot),
		cmocka_unit_test(test_summarize_empty),
		cmocka_unit_test(test_summarize_max_exact),
		cmocka_unit_test(test_summarize_max_below_top_slot),
		cmocka_unit_test(test_summarize_max_not_exact),
		cmocka_unit_test(test_sub_max_unknown_propagates),
		cmocka_unit_test(test_summarize_overflow),
	};

	return cmocka_run_group_tests(tests, setup_table, NULL);
}
