// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_expo_text.c - text/OpenMetrics rendering, number format and Accept negotiation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "iolat.h"
#include "metrics/expo_text.h"
#include "serve/http.h"
#include <linux/types.h>

static uint64_t lat_store[IOLAT_LAT_SLOTS];
static struct bucket_table lat;
static const char *const labels[] = { "device", "op", NULL };

static int setup(void **state)
{
	(void)state;
	return buckets_build_latency(&lat, lat_store, NULL, 0);
}

static void test_format_double(void **state)
{
	char b[32];

	(void)state;
	expo_format_double(b, sizeof(b), 10);
	assert_string_equal(b, "10");
	expo_format_double(b, sizeof(b), 0.0001);
	assert_string_equal(b, "0.0001");
	expo_format_double(b, sizeof(b), 0.00025);
	assert_string_equal(b, "0.00025");
	expo_format_double(b, sizeof(b), 1.0 / 3);
	assert_string_equal(b, "0.3333333333333333");
	expo_format_double(b, sizeof(b), 1e20);
	assert_string_equal(b, "1e+20");
	expo_format_double(b, sizeof(b), 1.0 / 0.0);
	assert_string_equal(b, "+Inf");
}

/*
 * Table bounds print as plain decimals, shortest and exact, as written in
 * a config: "0.00003", not "3e-05"; the defaults as rules and the mixin
 * name them. Whatever the digits, strtod reads back the bound's double.
 */
static void test_format_fixed(void **state)
{
	static const struct {
		uint64_t num, den;
		const char *want;
	} cases[] = {
		{ 30000, 1000000000, "0.00003" },
		{ 5000, 1000000000, "0.000005" },
		{ 10000, 1000000000, "0.00001" },
		{ 25000, 1000000000, "0.000025" },
		{ 100000, 1000000000, "0.0001" },
		{ 250000, 1000000000, "0.00025" },
		{ 10000000, 1000000000, "0.01" },
		{ 1000000000, 1000000000, "1" },
		{ 2500000000, 1000000000, "2.5" },
		{ 10000000000, 1000000000, "10" },
		{ 29223, 1000000000, "0.000029223" },
		{ 1, 1000000000, "0.000000001" },
		{ 1234567891, 1000000000, "1.234567891" },
		{ 4096, 1, "4096" },
		{ 0, 1, "0" },
	};
	char b[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = expo_format_fixed(b, sizeof(b), cases[i].num, cases[i].den);

		assert_string_equal(b, cases[i].want);
		assert_int_equal(n, strlen(cases[i].want));
		assert_true(strtod(b, NULL) == (double)cases[i].num / (double)cases[i].den);
	}
	/* Cut to the room there is, NUL-terminated. */
	assert_int_equal(expo_format_fixed(b, 5, 30000, 1000000000), 4);
	assert_string_equal(b, "0.00");
}

/* A configured bound of 30 us, a slot boundary of its table, is the `le`
 * it was written as, and its bucket holds exactly what is at or below it. */
static void test_le_as_written(void **state)
{
	static const uint64_t extra[] = { 30000 }, le[] = { 30000, 100000 };
	static uint64_t store[IOLAT_LAT_SLOTS];
	static __u64 slots[IOLAT_LAT_SLOTS];
	static struct bucket_table t;
	struct metric_set set = { 0 };
	struct metric_family *h;
	struct buf out = { 0 };

	(void)state;
	assert_int_equal(buckets_build_latency(&t, store, extra, 1), 0);
	slots[buckets_slot_of(&t, 30000)] = 3; /* on the bound */
	slots[buckets_slot_of(&t, 30001)] = 4; /* 1 ns past it */
	h = metrics_family(&set, "x_seconds", "L.", METRIC_HISTOGRAM, NULL);
	h->le = le;
	h->nle = 2;
	metrics_hist_add(metrics_series(h, NULL, &t), slots, 0, 3 * 30000 + 4 * 30001);
	assert_int_equal(expo_text(&set, false, &out), 0);
	assert_non_null(strstr(out.data, "x_seconds_bucket{le=\"0.00003\"} 3\n"
					 "x_seconds_bucket{le=\"0.0001\"} 7\n"));
	buf_free(&out);
	metrics_clear(&set);
}

/* One counter with an escaped label and one histogram, in both formats. */
static void build(struct metric_set *set)
{
	static const uint64_t le[] = { 1000000, 10000000 }; /* 1 ms, 10 ms */
	struct metric_family *c, *h;
	struct metric_series *s;
	static __u64 slots[IOLAT_LAT_SLOTS]; /* borrowed by the series: must outlive it */

	c = metrics_family(set, "x_ios_total", "I/Os \\ done\nhere.", METRIC_COUNTER, labels);
	s = metrics_series(c, (const char *const[]){ "a\"b", "read" }, NULL);
	s->value = 7;
	h = metrics_family(set, "x_latency_seconds", "Latency.", METRIC_HISTOGRAM, labels);
	h->le = le;
	h->nle = 2;
	slots[buckets_slot_of(&lat, 500000)] = 2;   /* 0.5 ms */
	slots[buckets_slot_of(&lat, 5000000)] = 3;  /* 5 ms */
	slots[buckets_slot_of(&lat, 50000000)] = 1; /* 50 ms */
	s = metrics_series(h, (const char *const[]){ "vda", "write" }, &lat);
	metrics_hist_add(s, slots, 999 /* ignored: the slots decide */, 2500000000ULL);
	metrics_family(set, "x_empty", "Never seen.", METRIC_GAUGE, NULL);
}

static const char text_expected[] =
    "# HELP x_ios_total I/Os \\\\ done\\nhere.\n"
    "# TYPE x_ios_total counter\n"
    "x_ios_total{device=\"a\\\"b\",op=\"read\"} 7\n"
    "# HELP x_latency_seconds Latency.\n"
    "# TYPE x_latency_seconds histogram\n"
    "x_latency_seconds_bucket{device=\"vda\",op=\"write\",le=\"0.001\"} 2\n"
    "x_latency_seconds_bucket{device=\"vda\",op=\"write\",le=\"0.01\"} 5\n"
    "x_latency_seconds_bucket{device=\"vda\",op=\"write\",le=\"+Inf\"} 6\n"
    "x_latency_seconds_sum{device=\"vda\",op=\"write\"} 2.5\n"
    "x_latency_seconds_count{device=\"vda\",op=\"write\"} 6\n";

/* The fast sum (num / 10^k) spells every value as expo_format_double does:
 * fixed and exponent forms, trailing zeros, all magnitudes below 10^15. */
static void test_format_ratio(void **state)
{
	static const uint64_t dens[] = { 10, 1000, 1000000, 1000000000 };
	unsigned int seed = 3;
	char want[64], got[64];

	(void)state;
	assert_int_equal(expo_format_ratio(got, sizeof(got), 3000000000ULL, 1000000000), 0);
	assert_int_equal(expo_format_ratio(got, sizeof(got), 5, 1), 0);
	assert_int_equal(expo_format_ratio(got, sizeof(got), 5, 7), 0);
	assert_int_equal(expo_format_ratio(got, sizeof(got), 1000000000000000ULL, 10), 0);
	assert_int_equal(expo_format_ratio(got, 16, 5, 10), 0);
	for (int i = 0; i < 400000; i++) {
		uint64_t den = dens[i % 4], num = 0;
		int digits = 1 + (int)(rand_r(&seed) % 15), zeros = (int)(rand_r(&seed) % 6);
		size_t n;

		for (int d = 0; d < digits; d++)
			num = num * 10 + (uint64_t)(rand_r(&seed) % 10);
		for (int z = 0; z < zeros && num < 100000000000000ULL; z++)
			num *= 10;
		n = expo_format_ratio(got, sizeof(got), num, den);
		if (!num || num % den == 0) {
			assert_int_equal(n, 0);
			continue;
		}
		expo_format_double(want, sizeof(want), (double)num / (double)den);
		if (n != strlen(want) || strcmp(got, want))
			fail_msg("%llu / %llu: got \"%s\", want \"%s\"", (unsigned long long)num,
				 (unsigned long long)den, got, want);
	}
}

static void test_text(void **state)
{
	struct metric_set set = { 0 };
	struct buf out = { 0 };

	(void)state;
	build(&set);
	assert_int_equal(expo_text(&set, false, &out), 0);
	assert_string_equal(out.data, text_expected);
	buf_free(&out);
	metrics_clear(&set);
}

static void test_openmetrics(void **state)
{
	struct metric_set set = { 0 };
	struct buf out = { 0 };

	(void)state;
	build(&set);
	assert_int_equal(expo_text(&set, true, &out), 0);
	/* Family metadata without _total; HELP escapes quotes too; # EOF last. */
	assert_non_null(strstr(out.data,
			       "# HELP x_ios I/Os \\\\ done\\nhere.\n# TYPE x_ios counter\n"
			       "x_ios_total{device=\"a\\\"b\",op=\"read\"} 7\n"));
	assert_non_null(strstr(out.data, "# TYPE x_latency_seconds histogram\n"
					 "# UNIT x_latency_seconds seconds\n"
					 "x_latency_seconds_bucket{"));
	assert_null(strstr(out.data, "# UNIT x_ios"));
	assert_null(strstr(out.data, "x_empty"));
	assert_string_equal(out.data + out.len - 6, "# EOF\n");
	buf_free(&out);
	metrics_clear(&set);
}

/*
 * A series made of two sources (a workload's cgroups, a gone disk's kept
 * counts and its live ones) has the sum of their nanoseconds, converted
 * once: 100000000 ns + 333 ns added as seconds is one rounding step away
 * from 0.100000333, and a scrape that summed them the other way round
 * would seem to go backwards.
 */
static void test_sum_of_sources(void **state)
{
	static __u64 a[IOLAT_LAT_SLOTS], b[IOLAT_LAT_SLOTS];
	struct metric_set set = { 0 };
	struct metric_family *h;
	struct metric_series *s;

	(void)state;
	assert_true(100000000 / 1e9 + 333 / 1e9 != 100000333 / 1e9);
	h = metrics_family(&set, "x_seconds", "Latency.", METRIC_HISTOGRAM, labels);
	s = metrics_series(h, (const char *const[]){ "vda", "read" }, &lat);
	a[buckets_slot_of(&lat, 100000000)] = 1;
	b[buckets_slot_of(&lat, 333)] = 1;
	assert_int_equal(metrics_hist_add(s, a, 1, 100000000), 0);
	assert_int_equal(metrics_hist_add(s, b, 1, 333), 0);
	assert_true(s->hist.sum == 100000333 / 1e9);
	assert_int_equal(s->hist.count, 2);
	metrics_clear(&set);
}

/* Thousands of series, found again by their labels after the index and
 * the label blocks grew (from a reserved size, and past it), one label value
 * longer than a block: each keeps its own labels and value, and each is one
 * line of the text. */
static void test_many_series(void **state)
{
	static char big[100 * 1024];
	struct metric_set set = { 0 };
	struct metric_family *f;
	struct buf out = { 0 };
	char d[32], o[32];
	size_t lines = 0;

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	f = metrics_family(&set, "x_total", "Counts.", METRIC_COUNTER, labels);
	assert_int_equal(metrics_reserve(f, 1000), 0);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 5000; i++) {
			struct metric_series *s;

			snprintf(d, sizeof(d), "d%d", i);
			snprintf(o, sizeof(o), "op%d", i % 7);
			s = metrics_series(f, (const char *const[]){ d, i == 4321 ? big : o },
					   NULL);
			assert_non_null(s);
			s->value += i;
		}
	assert_int_equal(f->n, 5000);
	for (int i = 0; i < 5000; i++) {
		const struct metric_series *s = &f->series[i];

		snprintf(d, sizeof(d), "d%d", i);
		snprintf(o, sizeof(o), "op%d", i % 7);
		assert_string_equal(s->values[0], d);
		assert_string_equal(s->values[1], i == 4321 ? big : o);
		assert_true(s->value == 2.0 * i);
	}
	assert_int_equal(expo_text(&set, false, &out), 0);
	for (size_t i = 0; i < out.len; i++)
		lines += out.data[i] == '\n';
	assert_int_equal(lines, 5000 + 2);
	assert_non_null(strstr(out.data, "x_total{device=\"d4999\",op=\"op1\"} 9998\n"));
	buf_free(&out);
	metrics_clear(&set);
}

/* A body reserved at the last one's size is written without moving. */
static void test_reserve(void **state)
{
	struct buf b = { 0 };
	const char *at;

	(void)state;
	assert_true(buf_reserve(&b, 100000));
	at = b.data;
	for (int i = 0; i < 10000; i++)
		buf_append(&b, "0123456789", 10);
	assert_ptr_equal(b.data, at);
	assert_int_equal(b.len, 100000);
	buf_append(&b, "x", 1); /* past it: grows as before */
	assert_int_equal(b.len, 100001);
	assert_int_equal(b.data[100000], 'x');
	buf_free(&b);
}

static void native_bucket(void *ctx, int index, uint64_t count)
{
	struct buf *b = ctx;

	buf_printf(b, "%d:%llu ", index, (unsigned long long)count);
}

/* A series' text and native buckets, for comparing two sets. */
static void render_all(struct metric_set *set, struct buf *out)
{
	uint64_t zero;

	assert_int_equal(expo_text(set, false, out), 0);
	for (size_t i = 0; i < set->fam[0].n; i++) {
		metrics_hist_native(&set->fam[0].series[i], &zero, native_bucket, out);
		buf_printf(out, "zero %llu\n", (unsigned long long)zero);
	}
}

/* Sources that say where their slots may be non-zero (exactly, loosely,
 * not at all, or empty) and what they sum to give the same text and native
 * buckets as the same sources summed and scanned whole. */
static void test_slot_spans(void **state)
{
	static __u64 src[6][IOLAT_LAT_SLOTS];
	unsigned int seed = 9;

	(void)state;
	for (int round = 0; round < 300; round++) {
		struct metric_set with = { 0 }, without = { 0 };
		struct metric_family *fw, *fo;
		struct buf a = { 0 }, b = { 0 };
		int nsrc = 1 + (int)(rand_r(&seed) % 6);

		fw = metrics_family(&with, "x_seconds", "L.", METRIC_HISTOGRAM, labels);
		fo = metrics_family(&without, "x_seconds", "L.", METRIC_HISTOGRAM, labels);
		fw->le = fo->le = buckets_default_le_ns;
		fw->nle = fo->nle = buckets_default_le_count;
		for (int k = 0; k < nsrc; k++) {
			const char *const v[] = { k % 2 ? "vda" : "vdb", "read" };
			size_t lo = rand_r(&seed) % IOLAT_LAT_SLOTS, hi = lo;
			int kind = (int)(rand_r(&seed) % 4);
			struct metric_slots in = { .slots = src[k] };
			uint64_t count = 0;

			memset(src[k], 0, sizeof(src[k]));
			if (kind != 3) /* 3: an empty source */
				hi = lo + 1 + rand_r(&seed) % (IOLAT_LAT_SLOTS - lo);
			for (size_t i = lo; i < hi; i += 1 + rand_r(&seed) % 40)
				count += src[k][i] = 1 + rand_r(&seed) % 1000;
			in.lo = kind == 1 && lo ? lo - 1 : lo; /* 1: loose */
			in.hi = kind == 2 ? 0 : hi;	       /* 2: not known */
			if (kind == 3)
				in.lo = in.hi = IOLAT_LAT_SLOTS;
			in.count = count;
			in.count_summed = rand_r(&seed) % 2;
			assert_int_equal(metrics_hist_add_slots(metrics_series(fw, v, &lat), &in,
								(uint64_t)k * 1000),
					 0);
			assert_int_equal(metrics_hist_add(metrics_series(fo, v, &lat), src[k], 0,
							  (uint64_t)k * 1000),
					 0);
		}
		render_all(&with, &a);
		render_all(&without, &b);
		assert_string_equal(a.data, b.data);
		buf_free(&a);
		buf_free(&b);
		metrics_clear(&with);
		metrics_clear(&without);
	}
}

static void test_negotiate(void **state)
{
	(void)state;
	assert_int_equal(http_negotiate(NULL), EXPO_TEXT);
	assert_int_equal(http_negotiate("*/*"), EXPO_TEXT);
	assert_int_equal(http_negotiate("text/plain;version=0.0.4"), EXPO_TEXT);
	/* What Prometheus 2.42 sends by default, and with native histograms on. */
	assert_int_equal(
	    http_negotiate("application/openmetrics-text;version=1.0.0,application/"
			   "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
			   "q=0.5,*/*;q=0.1"),
	    EXPO_OPENMETRICS);
	assert_int_equal(
	    http_negotiate("application/vnd.google.protobuf;proto=io.prometheus.client."
			   "MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;"
			   "q=0.3,*/*;q=0.2"),
	    EXPO_PROTOBUF);
	/* Protobuf without delimited encoding is not what we send. */
	assert_int_equal(
	    http_negotiate("application/vnd.google.protobuf;proto=io.prometheus.client."
			   "MetricFamily;encoding=text"),
	    EXPO_TEXT);
	/* q decides. */
	assert_int_equal(http_negotiate("application/openmetrics-text;q=0.2,text/plain;q=0.9"),
			 EXPO_TEXT);
	assert_int_equal(http_negotiate("application/openmetrics-text;q=0"), EXPO_TEXT);
}

static void test_gzip_accept(void **state)
{
	(void)state;
	assert_false(http_accepts_gzip(NULL));
	assert_true(http_accepts_gzip("gzip"));
	assert_true(http_accepts_gzip("deflate, gzip;q=0.5"));
	assert_false(http_accepts_gzip("gzip;q=0"));
	assert_false(http_accepts_gzip("identity"));
}

/* A histogram with buckets of its own (a user program's exp2 map). */
static void test_own_buckets(void **state)
{
	static const double ule[] = { 0.000001, 0.000002, 0.000004 };
	static const char *const one[] = { "cpu", NULL };
	struct metric_set set = { 0 };
	struct metric_family *h;
	struct metric_series *s;
	struct buf b = { 0 };

	(void)state;
	h = metrics_family(&set, "u_seconds", "Own buckets.", METRIC_HISTOGRAM, one);
	h->ule = ule;
	h->nule = 3;
	s = metrics_series(h, (const char *const[]){ "0" }, NULL);
	assert_int_equal(metrics_uhist_add(h, s, 0, 2), 0);
	assert_int_equal(metrics_uhist_add(h, s, 2, 3), 0);
	assert_int_equal(metrics_uhist_add(h, s, 9, 1), 0); /* past the last bound */
	s->hist.sum = 0.5;
	assert_int_equal(expo_text(&set, false, &b), 0);
	assert_string_equal(b.data, "# HELP u_seconds Own buckets.\n"
				    "# TYPE u_seconds histogram\n"
				    "u_seconds_bucket{cpu=\"0\",le=\"1e-06\"} 2\n"
				    "u_seconds_bucket{cpu=\"0\",le=\"2e-06\"} 2\n"
				    "u_seconds_bucket{cpu=\"0\",le=\"4e-06\"} 5\n"
				    "u_seconds_bucket{cpu=\"0\",le=\"+Inf\"} 6\n"
				    "u_seconds_sum{cpu=\"0\"} 0.5\n"
				    "u_seconds_count{cpu=\"0\"} 6\n");
	buf_free(&b);
	metrics_clear(&set);
}

/*
 * A unit is a name's last word when it is a base unit: a counter's before
 * _total, never a word inside the name, never a whole name; text 0.0.4
 * has no # UNIT at all.
 */
static void test_units(void **state)
{
	static const struct {
		const char *name;
		enum metric_type type;
		const char *unit;
	} cases[] = {
		{ "iolat_block_bytes_total", METRIC_COUNTER, "bytes" },
		{ "process_cpu_seconds_total", METRIC_COUNTER, "seconds" },
		{ "iolat_block_device_latency_seconds", METRIC_HISTOGRAM, "seconds" },
		{ "iolat_bpf_map_fill_ratio", METRIC_GAUGE, "ratio" },
		{ "x_bytes_total", METRIC_GAUGE, NULL }, /* a gauge keeps _total */
		{ "iolat_block_completions_total", METRIC_COUNTER, NULL },
		{ "iolat_seconds_spent_total_x", METRIC_COUNTER, NULL },
		{ "x_kilobytes", METRIC_GAUGE, NULL }, /* bytes, but not a word of its own */
		{ "seconds", METRIC_GAUGE, NULL },
		{ "_seconds", METRIC_GAUGE, NULL },
	};
	struct metric_set set = { 0 };
	struct buf om = { 0 }, text = { 0 };
	struct metric_family *f;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		f = metrics_family(&set, cases[i].name, "h", cases[i].type, NULL);
		if (cases[i].unit)
			assert_string_equal(metrics_family_unit(f), cases[i].unit);
		else
			assert_null(metrics_family_unit(f));
	}
	set.n = 0;
	f = metrics_family(&set, "x_bytes_total", "Bytes.", METRIC_COUNTER, NULL);
	assert_int_equal(metrics_set_value(f, NULL, 3), 0);
	assert_int_equal(expo_text(&set, true, &om), 0);
	assert_string_equal(om.data, "# HELP x_bytes Bytes.\n# TYPE x_bytes counter\n"
				     "# UNIT x_bytes bytes\nx_bytes_total 3\n# EOF\n");
	assert_int_equal(expo_text(&set, false, &text), 0);
	assert_string_equal(
	    text.data,
	    "# HELP x_bytes_total Bytes.\n# TYPE x_bytes_total counter\nx_bytes_total 3\n");
	buf_free(&om);
	buf_free(&text);
	metrics_clear(&set);
}

/* A family with more labels than a series holds is refused, not cut. */
static void test_too_many_labels(void **state)
{
	static const char *const nine[] = { "a", "b", "c", "d", "e", "f", "g", "h", "i", NULL };
	static const char *const eight[] = { "a", "b", "c", "d", "e", "f", "g", "h", NULL };
	struct metric_set set = { 0 };
	struct metric_family *f;

	(void)state;
	assert_null(metrics_family(&set, "x_nine", "h", METRIC_GAUGE, nine));
	assert_int_equal(set.n, 0);
	f = metrics_family(&set, "x_eight", "h", METRIC_GAUGE, eight);
	assert_non_null(f);
	assert_int_equal(f->nlabels, 8);
	metrics_clear(&set);
}

/* A label of the family's omit_empty with an empty value is left out, as
 * Prometheus holds it absent; others stay, empty. A series with none left
 * has no braces, and its buckets only le. */
static void test_empty_labels(void **state)
{
	static const double ule[] = { 1 };
	static const char *const three[] = { "kind", "namespace", "pod", NULL };
	struct metric_set set = { 0 };
	struct metric_family *c, *h;
	struct metric_series *s;
	struct buf b = { 0 };

	(void)state;
	c = metrics_family(&set, "w_total", "W.", METRIC_COUNTER, three);
	c->omit_empty = 1u << 1 | 1u << 2; /* namespace, pod; not kind */
	metrics_series(c, (const char *const[]){ "pod", "shop", "web-0" }, NULL)->value = 1;
	metrics_series(c, (const char *const[]){ "service", "", "" }, NULL)->value = 2;
	metrics_series(c, (const char *const[]){ "", "", "" }, NULL)->value = 3;
	h = metrics_family(&set, "w_seconds", "S.", METRIC_HISTOGRAM, three);
	h->ule = ule;
	h->nule = 1;
	h->omit_empty = 7;
	s = metrics_series(h, (const char *const[]){ "", "", "" }, NULL);
	assert_int_equal(metrics_uhist_add(h, s, 0, 4), 0);
	assert_int_equal(expo_text(&set, false, &b), 0);
	assert_string_equal(b.data, "# HELP w_total W.\n"
				    "# TYPE w_total counter\n"
				    "w_total{kind=\"pod\",namespace=\"shop\",pod=\"web-0\"} 1\n"
				    "w_total{kind=\"service\"} 2\n"
				    "w_total{kind=\"\"} 3\n"
				    "# HELP w_seconds S.\n"
				    "# TYPE w_seconds histogram\n"
				    "w_seconds_bucket{le=\"1\"} 4\n"
				    "w_seconds_bucket{le=\"+Inf\"} 4\n"
				    "w_seconds_sum 0\n"
				    "w_seconds_count 4\n");
	buf_free(&b);
	metrics_clear(&set);
}

/*
 * Counter and gauge lines are built in one piece (expo_text.c's
 * put_simple_line), and a line too long for that takes the general path:
 * both must write what the general path always wrote. Values: whole ones
 * as digits (0, -0, 1e15 - 1), the rest as expo_format_double spells them;
 * label values escaped anywhere in them; no braces when every label is
 * left out.
 */
static void test_simple_lines(void **state)
{
	static const char *const one[] = { "v", NULL };
	struct metric_set set = { 0 };
	struct metric_family *c, *g;
	struct buf b = { 0 }, want = { 0 };
	char *longv = malloc(3001);

	(void)state;
	assert_non_null(longv);
	memset(longv, 'x', 3000);
	longv[3000] = '\0';
	longv[1500] = '"';
	c = metrics_family(&set, "c_total", "C.", METRIC_COUNTER, one);
	c->omit_empty = 1;
	metrics_series(c, (const char *const[]){ "\\a\"\nb\\" }, NULL)->value = 0;
	metrics_series(c, (const char *const[]){ "" }, NULL)->value = 999999999999999.0;
	metrics_series(c, (const char *const[]){ "big" }, NULL)->value = 1e15;
	metrics_series(c, (const char *const[]){ longv }, NULL)->value = 12;
	g = metrics_family(&set, "g", "G.", METRIC_GAUGE, labels);
	metrics_series(g, (const char *const[]){ "a", "" }, NULL)->value = -0.0;
	metrics_series(g, (const char *const[]){ "b", "x" }, NULL)->value = -3;
	metrics_series(g, (const char *const[]){ "c", "x" }, NULL)->value = 0.1;
	metrics_series(g, (const char *const[]){ "d", "x" }, NULL)->value = 1.0 / 0.0;
	metrics_series(g, (const char *const[]){ "e", "x" }, NULL)->value = 0.0 / 0.0;
	metrics_series(g, (const char *const[]){ "f", "x" }, NULL)->value = 1.5e300;
	assert_int_equal(expo_text(&set, false, &b), 0);
	memset(longv + 1500, 0, 1);
	buf_puts(&want, "# HELP c_total C.\n# TYPE c_total counter\n"
			"c_total{v=\"\\\\a\\\"\\nb\\\\\"} 0\n"
			"c_total 999999999999999\n"
			"c_total{v=\"big\"} 1e+15\n"
			"c_total{v=\"");
	buf_puts(&want, longv);
	buf_puts(&want, "\\\"");
	buf_puts(&want, longv + 1501);
	buf_puts(&want, "\"} 12\n"
			"# HELP g G.\n# TYPE g gauge\n"
			"g{device=\"a\",op=\"\"} 0\n"
			"g{device=\"b\",op=\"x\"} -3\n"
			"g{device=\"c\",op=\"x\"} 0.1\n"
			"g{device=\"d\",op=\"x\"} +Inf\n"
			"g{device=\"e\",op=\"x\"} NaN\n"
			"g{device=\"f\",op=\"x\"} 1.5e+300\n");
	assert_string_equal(b.data, want.data);
	free(longv);
	buf_free(&b);
	buf_free(&want);
	metrics_clear(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_double),  cmocka_unit_test(test_format_fixed),
		cmocka_unit_test(test_le_as_written),  cmocka_unit_test(test_text),
		cmocka_unit_test(test_sum_of_sources), cmocka_unit_test(test_openmetrics),
		cmocka_unit_test(test_negotiate),      cmocka_unit_test(test_gzip_accept),
		cmocka_unit_test(test_own_buckets),    cmocka_unit_test(test_many_series),
		cmocka_unit_test(test_units),	       cmocka_unit_test(test_too_many_labels),
		cmocka_unit_test(test_format_ratio),   cmocka_unit_test(test_slot_spans),
		cmocka_unit_test(test_reserve),	       cmocka_unit_test(test_empty_labels),
		cmocka_unit_test(test_simple_lines),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
