// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_metrics.c - a metric set emptied with metrics_reset and built again
 * renders what a new set would, and reuses the memory it kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "metrics/expo_text.h"
#include "metrics/metrics.h"
#include "util/buf.h"

static const char *const two[] = { "device", "op", NULL };
static const char *const one[] = { "cpu", NULL };
static const double ule[] = { 0.001, 0.002 };

/* One scrape's families: `counters` series of a counter (each label value
 * once, values from `seed`), a histogram with buckets of its own and a
 * gauge; the histogram first when hist_first, so that it takes the place
 * a counter family had. */
static void build(struct metric_set *set, int counters, int seed, bool hist_first)
{
	char d[32], o[32];

	for (int part = 0; part < 2; part++) {
		bool hist = (part == 0) == hist_first;

		if (hist) {
			struct metric_family *h = metrics_family(set, "lat_seconds", "Own buckets.",
								 METRIC_HISTOGRAM, one);
			struct metric_series *s;

			assert_non_null(h);
			h->ule = ule;
			h->nule = 2;
			s = metrics_series(h, (const char *const[]){ "0" }, NULL);
			assert_non_null(s);
			assert_int_equal(metrics_uhist_add(h, s, 0, (uint64_t)seed), 0);
			assert_int_equal(metrics_uhist_add(h, s, 2, 3), 0);
			s->hist.sum = 0.25;
			continue;
		}
		struct metric_family *c =
		    metrics_family(set, "reads_total", "Reads.", METRIC_COUNTER, two);

		assert_non_null(c);
		assert_int_equal(metrics_reserve(c, (size_t)counters), 0);
		for (int i = 0; i < counters; i++) {
			struct metric_series *s;

			snprintf(d, sizeof(d), "disk%d", i * seed);
			snprintf(o, sizeof(o), "op%d", i % 3);
			s = metrics_series(c, (const char *const[]){ d, o }, NULL);
			assert_non_null(s);
			s->value += i + seed;
		}
	}
	assert_int_equal(
	    metrics_set_value(metrics_family(set, "up", "Up.", METRIC_GAUGE, NULL), NULL, seed), 0);
}

/* The text of a new set built as build() says. */
static void fresh_text(struct buf *out, int counters, int seed, bool hist_first)
{
	struct metric_set set = { 0 };

	build(&set, counters, seed, hist_first);
	assert_int_equal(expo_text(&set, false, out), 0);
	metrics_clear(&set);
}

static void assert_renders_as(struct metric_set *set, int counters, int seed, bool hist_first)
{
	struct buf got = { 0 }, want = { 0 };

	assert_int_equal(expo_text(set, false, &got), 0);
	fresh_text(&want, counters, seed, hist_first);
	assert_int_equal(got.len, want.len);
	assert_string_equal(got.data, want.data);
	buf_free(&got);
	buf_free(&want);
}

/* Built again after a reset, in another shape and then the first one
 * again, the set renders exactly as a new one would: no series, label or
 * bucket of the scrape before shows. */
static void test_reset_renders_as_new(void **state)
{
	struct metric_set set = { 0 };

	(void)state;
	build(&set, 5000, 1, false);
	assert_renders_as(&set, 5000, 1, false);
	metrics_reset(&set);
	assert_int_equal(set.n, 0);
	build(&set, 40, 7, true); /* fewer series; the histogram where the counters were */
	assert_renders_as(&set, 40, 7, true);
	metrics_reset(&set);
	build(&set, 6000, 2, false); /* more than any scrape before */
	assert_renders_as(&set, 6000, 2, false);
	metrics_clear(&set);
	assert_int_equal(set.n, 0);
	assert_int_equal(set.nkept, 0);
}

/* A scrape like the last one takes the series array the last one had: no
 * allocation, no page faulted in. */
static void test_reset_keeps_memory(void **state)
{
	struct metric_set set = { 0 };
	const struct metric_series *series;
	size_t cap;

	(void)state;
	build(&set, 3000, 1, false);
	series = set.fam[0].series;
	cap = set.fam[0].cap;
	metrics_reset(&set);
	assert_int_equal(set.nkept, 3);
	build(&set, 3000, 5, false);
	assert_ptr_equal(set.fam[0].series, series);
	assert_int_equal(set.fam[0].cap, cap);
	assert_int_equal(set.fam[0].n, 3000);
	assert_renders_as(&set, 3000, 5, false);
	/* Fewer families than were kept: the rest are freed by metrics_clear
	 * all the same (the sanitizer build checks). */
	metrics_reset(&set);
	assert_non_null(metrics_family(&set, "up", "Up.", METRIC_GAUGE, NULL));
	metrics_clear(&set);
}

/* A counter family whose series are labels[0..n) in that order, with the
 * label at `dup` counted once more at the end (-1: none). */
static void build_order(struct metric_set *set, const char *const *names, int n, int dup)
{
	struct metric_family *f = metrics_family(set, "reads_total", "Reads.", METRIC_COUNTER, one);

	assert_non_null(f);
	for (int i = 0; i <= n; i++) {
		struct metric_series *s;

		if (i == n && dup < 0)
			break;
		s = metrics_series(f, (const char *const[]){ names[i == n ? dup : i] }, NULL);
		assert_non_null(s);
		s->value += i + 1;
	}
}

static void assert_same_text(struct metric_set *got, struct metric_set *want)
{
	struct buf a = { 0 }, b = { 0 };

	assert_int_equal(expo_text(got, false, &a), 0);
	assert_int_equal(expo_text(want, false, &b), 0);
	assert_string_equal(a.data, b.data);
	buf_free(&a);
	buf_free(&b);
}

/* A scrape takes the last one's series in order while they come in it
 * (no index): one that comes out of order, one added in the middle and one
 * seen again after them are found and counted as a new set counts them. */
static void test_reset_out_of_order(void **state)
{
	static const char *const first[] = { "a", "b", "c", "d", "e" };
	static const char *const second[] = { "a", "b", "x", "c", "d", "e" };
	static const char *const third[] = { "a", "a", "b" };
	struct metric_set set = { 0 }, fresh = { 0 };

	(void)state;
	build_order(&set, first, 5, -1);
	metrics_reset(&set);
	build_order(&set, second, 6, 1); /* "x" breaks the order; "b" again at the end */
	build_order(&fresh, second, 6, 1);
	assert_int_equal(set.fam[0].n, 6);
	assert_true(set.fam[0].series[1].value == 2 + 7);
	assert_same_text(&set, &fresh);
	metrics_reset(&set);
	metrics_clear(&fresh);
	build_order(&set, first, 5, 0); /* in order, then "a" again: one series */
	build_order(&fresh, first, 5, 0);
	assert_int_equal(set.fam[0].n, 5);
	assert_true(set.fam[0].series[0].value == 1 + 6);
	assert_same_text(&set, &fresh);
	metrics_reset(&set);
	metrics_clear(&fresh);
	build_order(&set, third, 3, -1); /* a series twice in a row, taken in order */
	build_order(&fresh, third, 3, -1);
	assert_int_equal(set.fam[0].n, 2);
	assert_same_text(&set, &fresh);
	metrics_clear(&set);
	metrics_clear(&fresh);
}

/* metrics_series_again: the last scrape's series in order, unread, while
 * that order holds and only for the family that made them. */
static void test_series_again(void **state)
{
	static const char *const names[] = { "a", "b", "c" };
	struct metric_set set = { 0 }, fresh = { 0 };
	struct metric_family *f;
	struct metric_series *s;

	(void)state;
	build_order(&set, names, 3, -1);
	metrics_reset(&set);
	/* The first two again, unread; the third as a new one. */
	f = metrics_family(&set, "reads_total", "Reads.", METRIC_COUNTER, one);
	for (int i = 0; i < 2; i++) {
		s = metrics_series_again(f, NULL);
		assert_ptr_equal(s, &f->series[i]);
		assert_string_equal(s->values[0], names[i]);
		assert_true(s->value == 0);
		s->value = i + 1;
	}
	s = metrics_series(f, (const char *const[]){ "c" }, NULL);
	assert_ptr_equal(s, &f->series[2]);
	s->value = 3;
	assert_null(metrics_series_again(f, NULL)); /* past what was kept */
	build_order(&fresh, names, 3, -1);
	assert_same_text(&set, &fresh);
	/* Another family in its place takes nothing unread. */
	metrics_reset(&set);
	f = metrics_family(&set, "writes_total", "Writes.", METRIC_COUNTER, one);
	assert_null(metrics_series_again(f, NULL));
	assert_non_null(metrics_series(f, (const char *const[]){ "x" }, NULL));
	assert_non_null(metrics_series(f, (const char *const[]){ "y" }, NULL));
	/* Nor does one whose order broke: "z" where "x" was. */
	metrics_reset(&set);
	f = metrics_family(&set, "writes_total", "Writes.", METRIC_COUNTER, one);
	assert_non_null(metrics_series(f, (const char *const[]){ "z" }, NULL));
	assert_null(metrics_series_again(f, NULL));
	metrics_clear(&set);
	metrics_clear(&fresh);
}

/* A family without labels in the place of one that kept three series: its
 * calls all find its one series (a user program's histogram without
 * labels sums every bucket key into it). */
static void test_reset_no_labels(void **state)
{
	static const char *const names[] = { "a", "b", "c" };
	struct metric_set set = { 0 };
	struct metric_family *f;

	(void)state;
	build_order(&set, names, 3, -1);
	metrics_reset(&set);
	f = metrics_family(&set, "runs_total", "Runs.", METRIC_COUNTER, NULL);
	for (int i = 0; i < 3; i++)
		assert_ptr_equal(metrics_series(f, NULL, NULL), &f->series[0]);
	assert_int_equal(f->n, 1);
	metrics_clear(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reset_renders_as_new),
		cmocka_unit_test(test_reset_keeps_memory),
		cmocka_unit_test(test_reset_out_of_order),
		cmocka_unit_test(test_series_again),
		cmocka_unit_test(test_reset_no_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
