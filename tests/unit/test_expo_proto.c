// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_expo_proto.c - the protobuf exposition: builds metric sets by hand,
 * encodes them, decodes the delimited stream with the generated unpackers
 * and checks every field against values computed here independently
 * (native indexes by brute force over buckets_native_bound_ns, classic
 * counts straight from the observed values).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "core/buckets.h"
#include "iolat.h"
#include "metrics/expo_proto.h"
#include "metrics/metrics.h"
#include "prometheus.pb-c.h"
#include "util/buf.h"
#include <linux/types.h>

typedef Io__Prometheus__Client__MetricFamily pb_family;
typedef Io__Prometheus__Client__Metric pb_metric;
typedef Io__Prometheus__Client__Histogram pb_hist;

#define NS_PER_S 1000000000ULL
#define MAX_FAMS 8
/* Native indexes a latency series can report: the zero bucket to overflow. */
#define NATIVE_SPAN (LAT_NATIVE_MAX_INDEX - LAT_NATIVE_MIN_INDEX + 2)

/* Built once per run; tests only read it. */
static struct bucket_table lat;
static uint64_t lat_store[IOLAT_LAT_SLOTS];
static const uint64_t no_extra[1];

/* An observed latency and how many times it was seen. */
struct obs {
	uint64_t ns;
	uint64_t times;
};

/* A decoded stream: the families in the order they arrived. */
struct stream {
	pb_family *fam[MAX_FAMS];
	size_t n;
};

static int setup_table(void **state)
{
	(void)state;
	return buckets_build_latency(&lat, lat_store, no_extra, 0) ? -1 : 0;
}

/*
 * The native bucket of a value (ns), by scanning bounds upward: the zero
 * bucket up to 2^-20 s, then the first bucket whose bound holds it. Past
 * the table's range, metrics.h documents that the overflow goes to
 * native_max + 1.
 */
static int brute_native_index(uint64_t ns)
{
	if (ns <= buckets_native_bound_ns(LAT_NATIVE_MIN_INDEX))
		return LAT_NATIVE_MIN_INDEX;
	for (int i = LAT_NATIVE_MIN_INDEX + 1; i <= LAT_NATIVE_MAX_INDEX; i++)
		if (ns <= buckets_native_bound_ns(i))
			return i;
	return LAT_NATIVE_MAX_INDEX + 1;
}

/* Counts the observations into a histogram series through the table. */
static void observe(struct metric_series *s, const struct obs *o, size_t n)
{
	/* A series borrows its first slots (metrics.h): each call gets its own. */
	static __u64 pool[64][IOLAT_LAT_SLOTS];
	static size_t used;
	__u64 *slots = pool[used++ % 64];
	uint64_t count = 0, sum = 0;

	memset(slots, 0, sizeof(pool[0]));
	for (size_t i = 0; i < n; i++) {
		slots[buckets_slot_of(&lat, o[i].ns)] += o[i].times;
		count += o[i].times;
		sum += o[i].ns * o[i].times;
	}
	assert_int_equal(metrics_hist_add(s, slots, count, sum), 0);
}

/* Reads one base-128 varint at *pos; fails the test if it runs off the end. */
static uint64_t read_varint(const uint8_t *p, size_t len, size_t *pos)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		assert_true(*pos < len);
		b = p[(*pos)++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	fail_msg("varint longer than 10 bytes");
	return 0;
}

/* Splits a delimited stream into families; every byte must belong to one. */
static void decode(const struct buf *b, struct stream *st)
{
	const uint8_t *p = (const uint8_t *)b->data;
	size_t pos = 0;

	st->n = 0;
	while (pos < b->len) {
		uint64_t len = read_varint(p, b->len, &pos);

		assert_true(len <= b->len - pos);
		assert_true(st->n < MAX_FAMS);
		st->fam[st->n] = io__prometheus__client__metric_family__unpack(NULL, len, p + pos);
		assert_non_null(st->fam[st->n]);
		st->n++;
		pos += len;
	}
	assert_int_equal(pos, b->len);
}

static void stream_free(struct stream *st)
{
	for (size_t i = 0; i < st->n; i++)
		io__prometheus__client__metric_family__free_unpacked(st->fam[i], NULL);
	st->n = 0;
}

static void assert_label(const pb_metric *m, size_t k, const char *name, const char *value)
{
	assert_true(k < m->n_label);
	assert_string_equal(m->label[k]->name, name);
	assert_string_equal(m->label[k]->value, value);
}

/*
 * Rebuilds per-index counts from spans and deltas into counts[index -
 * native_min], checking the encoding is canonical on the way: no negative
 * buckets, no empty span, gaps between spans (adjacent buckets share one),
 * one delta per bucket and no bucket of count 0.
 */
static void native_counts(const pb_hist *h, uint64_t *counts)
{
	size_t d = 0;
	int64_t cur = 0;
	int index = 0;

	memset(counts, 0, NATIVE_SPAN * sizeof(*counts));
	assert_int_equal(h->n_negative_span, 0);
	assert_int_equal(h->n_negative_delta, 0);
	assert_int_equal(h->n_positive_count, 0);
	for (size_t sp = 0; sp < h->n_positive_span; sp++) {
		const Io__Prometheus__Client__BucketSpan *s = h->positive_span[sp];

		assert_true(s->length > 0);
		if (sp == 0)
			index = s->offset;
		else
			assert_true(s->offset > 0);
		if (sp > 0)
			index += s->offset;
		for (uint32_t k = 0; k < s->length; k++, index++) {
			assert_true(d < h->n_positive_delta);
			cur += h->positive_delta[d++];
			assert_true(cur > 0);
			assert_true(index > LAT_NATIVE_MIN_INDEX);
			assert_true(index <= LAT_NATIVE_MAX_INDEX + 1);
			counts[index - LAT_NATIVE_MIN_INDEX] = (uint64_t)cur;
		}
	}
	assert_int_equal(d, h->n_positive_delta);
}

/*
 * Checks a decoded histogram against the observations: count, sum, the
 * classic buckets at the default `le` set, and the native buckets.
 */
static void assert_hist(const pb_hist *h, const struct obs *o, size_t n)
{
	uint64_t want[NATIVE_SPAN] = { 0 }, got[NATIVE_SPAN];
	uint64_t count = 0, sum = 0;

	for (size_t i = 0; i < n; i++) {
		want[brute_native_index(o[i].ns) - LAT_NATIVE_MIN_INDEX] += o[i].times;
		count += o[i].times;
		sum += o[i].ns * o[i].times;
	}
	assert_true(h->has_sample_count);
	assert_int_equal(h->sample_count, count);
	assert_true(h->has_sample_sum);
	assert_true(h->sample_sum == (double)sum / (double)NS_PER_S);

	/* Classic: exactly the configured bounds, no +Inf bucket. */
	assert_int_equal(h->n_bucket, buckets_default_le_count);
	for (size_t b = 0; b < h->n_bucket; b++) {
		uint64_t le = buckets_default_le_ns[b], cum = 0;

		for (size_t i = 0; i < n; i++)
			if (o[i].ns <= le)
				cum += o[i].times;
		assert_true(h->bucket[b]->has_cumulative_count);
		assert_int_equal(h->bucket[b]->cumulative_count, cum);
		assert_true(h->bucket[b]->upper_bound == (double)le / (double)NS_PER_S);
		assert_false(h->bucket[b]->has_cumulative_count_float);
	}

	/* Native: always announced, so Prometheus reads it as native. */
	assert_true(h->has_schema);
	assert_int_equal(h->schema, 4);
	assert_true(h->has_zero_threshold);
	assert_true(h->zero_threshold == ldexp(1.0, -20));
	assert_true(h->has_zero_count);
	assert_int_equal(h->zero_count, want[0]);
	assert_false(h->has_sample_count_float);
	assert_false(h->has_zero_count_float);
	native_counts(h, got);
	for (int i = 1; i < NATIVE_SPAN; i++)
		if (want[i] != got[i])
			fail_msg("native bucket %d: want %llu, got %llu", i + LAT_NATIVE_MIN_INDEX,
				 (unsigned long long)want[i], (unsigned long long)got[i]);
}

/* Zero bucket (<= 953 ns), adjacent and gapped native buckets, overflow. */
static const struct obs lat_obs[] = {
	{ 0, 1 },
	{ 500, 2 },
	{ 953, 3 },		  /* the zero bucket's last value */
	{ 954, 4 },		  /* index -319, adjacent to the zero bucket */
	{ 996, 5 },		  /* -318: same span as -319 */
	{ 1500, 1 },		  /* a gap before it */
	{ 100000, 6 },		  /* on a classic bound */
	{ 100001, 1 },		  /* just past it */
	{ NS_PER_S, 7 },	  /* exactly 2^0 s: top of index 0 */
	{ NS_PER_S + 1, 8 },	  /* index 1, adjacent to 0 */
	{ 3 * NS_PER_S, 2 },	  /* between classic bounds */
	{ 128 * NS_PER_S, 1 },	  /* the last finite native bound */
	{ 200 * NS_PER_S, 9 },	  /* overflow slot */
	{ UINT64_MAX / 1000, 1 }, /* overflow slot, far out */
};

static const char *const counter_labels[] = { "disk", "op", NULL };
static const char *const disk_label[] = { "disk", NULL };

/* A counter with labels, a gauge without, and one histogram series. */
static void test_families(void **state)
{
	struct metric_set set = { 0 };
	struct metric_family *f;
	struct metric_series *s;
	struct buf out = { 0 };
	struct stream st;
	const pb_metric *m;

	(void)state;
	f = metrics_family(&set, "iolat_requests_total", "Requests completed.", METRIC_COUNTER,
			   counter_labels);
	assert_non_null(f);
	s = metrics_series(f, (const char *const[]){ "sda", "read" }, NULL);
	assert_non_null(s);
	s->value = 42;
	s = metrics_series(f, (const char *const[]){ "nvme0n1", "write" }, NULL);
	assert_non_null(s);
	s->value = 7.5;
	f = metrics_family(&set, "iolat_disks", "Disks watched.", METRIC_GAUGE, NULL);
	assert_non_null(f);
	s = metrics_series(f, NULL, NULL);
	assert_non_null(s);
	s->value = 3;
	f = metrics_family(&set, "iolat_latency_seconds", "Completion latency.", METRIC_HISTOGRAM,
			   disk_label);
	assert_non_null(f);
	f->le = buckets_default_le_ns;
	f->nle = buckets_default_le_count;
	s = metrics_series(f, (const char *const[]){ "sda" }, &lat);
	assert_non_null(s);
	observe(s, lat_obs, sizeof(lat_obs) / sizeof(lat_obs[0]));

	assert_int_equal(expo_proto(&set, &out), 0);
	decode(&out, &st);
	assert_int_equal(st.n, 3);

	assert_string_equal(st.fam[0]->name, "iolat_requests_total");
	assert_string_equal(st.fam[0]->help, "Requests completed.");
	assert_true(st.fam[0]->has_type);
	assert_int_equal(st.fam[0]->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER);
	assert_null(st.fam[0]->unit); /* no unit in its name */
	assert_int_equal(st.fam[0]->n_metric, 2);
	m = st.fam[0]->metric[0];
	assert_int_equal(m->n_label, 2);
	assert_label(m, 0, "disk", "sda");
	assert_label(m, 1, "op", "read");
	assert_non_null(m->counter);
	assert_null(m->gauge);
	assert_null(m->histogram);
	assert_true(m->counter->has_value);
	assert_true(m->counter->value == 42);
	m = st.fam[0]->metric[1];
	assert_label(m, 0, "disk", "nvme0n1");
	assert_label(m, 1, "op", "write");
	assert_true(m->counter->value == 7.5);

	assert_string_equal(st.fam[1]->name, "iolat_disks");
	assert_int_equal(st.fam[1]->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE);
	assert_int_equal(st.fam[1]->n_metric, 1);
	m = st.fam[1]->metric[0];
	assert_int_equal(m->n_label, 0);
	assert_null(m->counter);
	assert_non_null(m->gauge);
	assert_true(m->gauge->has_value);
	assert_true(m->gauge->value == 3);

	assert_string_equal(st.fam[2]->name, "iolat_latency_seconds");
	assert_string_equal(st.fam[2]->help, "Completion latency.");
	assert_string_equal(st.fam[2]->unit, "seconds");
	assert_int_equal(st.fam[2]->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM);
	assert_int_equal(st.fam[2]->n_metric, 1);
	m = st.fam[2]->metric[0];
	assert_int_equal(m->n_label, 1);
	assert_label(m, 0, "disk", "sda");
	assert_null(m->counter);
	assert_non_null(m->histogram);
	assert_hist(m->histogram, lat_obs, sizeof(lat_obs) / sizeof(lat_obs[0]));
	/* Spot checks that do not lean on the brute-force helper. */
	assert_int_equal(m->histogram->zero_count, 6);
	assert_int_equal(m->histogram->positive_span[0]->offset, -319);
	assert_int_equal(m->histogram->positive_span[0]->length, 2);
	assert_int_equal(m->histogram->positive_delta[0], 4);
	assert_int_equal(m->histogram->positive_delta[1], 1);
	/* le 5 us: everything up to 1500 ns; le 100 us (the fifth) adds 100 us. */
	assert_int_equal(m->histogram->bucket[0]->cumulative_count, 6 + 4 + 5 + 1);
	assert_true(m->histogram->bucket[4]->upper_bound == 0.0001);
	assert_int_equal(m->histogram->bucket[4]->cumulative_count, 6 + 4 + 5 + 1 + 6);

	stream_free(&st);
	buf_free(&out);
	metrics_clear(&set);
}

/* Two histogram series (one never observed) around an empty family. */
/* A label of the family's omit_empty with an empty value is left out, as
 * in the text; others stay, empty. */
static void test_empty_labels(void **state)
{
	struct metric_set set = { 0 };
	struct metric_family *f;
	struct buf out = { 0 };
	struct stream st;

	(void)state;
	f = metrics_family(&set, "iolat_requests_total", "Requests.", METRIC_COUNTER,
			   counter_labels);
	assert_non_null(f);
	f->omit_empty = 1u << 1; /* op */
	metrics_series(f, (const char *const[]){ "sda", "" }, NULL)->value = 1;
	metrics_series(f, (const char *const[]){ "", "" }, NULL)->value = 2;
	assert_int_equal(expo_proto(&set, &out), 0);
	decode(&out, &st);
	assert_int_equal(st.n, 1);
	assert_int_equal(st.fam[0]->n_metric, 2);
	assert_int_equal(st.fam[0]->metric[0]->n_label, 1);
	assert_label(st.fam[0]->metric[0], 0, "disk", "sda");
	assert_int_equal(st.fam[0]->metric[1]->n_label, 1);
	assert_label(st.fam[0]->metric[1], 0, "disk", "");
	assert_true(st.fam[0]->metric[1]->counter->value == 2);
	stream_free(&st);
	buf_free(&out);
	metrics_clear(&set);
}

static void test_two_series_empty_family(void **state)
{
	static const struct obs a[] = {
		{ 10, 3 },		    /* zero bucket only... */
		{ 5 * NS_PER_S / 1000, 2 }, /* ...and one bucket: 5 ms */
	};
	struct metric_set set = { 0 };
	struct metric_family *f;
	struct metric_series *s;
	struct buf out = { 0 };
	struct stream st;
	const pb_hist *h;

	(void)state;
	f = metrics_family(&set, "iolat_empty_total", "Never set.", METRIC_COUNTER, disk_label);
	assert_non_null(f);
	f = metrics_family(&set, "iolat_latency_seconds", "Completion latency.", METRIC_HISTOGRAM,
			   disk_label);
	assert_non_null(f);
	f->le = buckets_default_le_ns;
	f->nle = buckets_default_le_count;
	s = metrics_series(f, (const char *const[]){ "sda" }, &lat);
	assert_non_null(s);
	observe(s, a, 2);
	assert_non_null(metrics_series(f, (const char *const[]){ "sdb" }, &lat));
	f = metrics_family(&set, "iolat_also_empty", "Never set.", METRIC_GAUGE, NULL);
	assert_non_null(f);

	assert_int_equal(expo_proto(&set, &out), 0);
	decode(&out, &st);
	assert_int_equal(st.n, 1);
	assert_string_equal(st.fam[0]->name, "iolat_latency_seconds");
	assert_int_equal(st.fam[0]->n_metric, 2);

	assert_label(st.fam[0]->metric[0], 0, "disk", "sda");
	h = st.fam[0]->metric[0]->histogram;
	assert_non_null(h);
	assert_hist(h, a, 2);
	assert_int_equal(h->zero_count, 3);
	assert_int_equal(h->n_positive_span, 1);
	assert_int_equal(h->positive_span[0]->offset, brute_native_index(5000000));
	assert_int_equal(h->positive_span[0]->length, 1);
	assert_int_equal(h->n_positive_delta, 1);
	assert_int_equal(h->positive_delta[0], 2);

	/* Never observed: still a native histogram, with nothing in it. */
	assert_label(st.fam[0]->metric[1], 0, "disk", "sdb");
	h = st.fam[0]->metric[1]->histogram;
	assert_non_null(h);
	assert_hist(h, NULL, 0);
	assert_int_equal(h->n_positive_span, 0);
	for (size_t b = 0; b < h->n_bucket; b++)
		assert_int_equal(h->bucket[b]->cumulative_count, 0);

	stream_free(&st);
	buf_free(&out);
	metrics_clear(&set);
}

/* Nothing to send is an empty body, not an error. */
static void test_empty_set(void **state)
{
	struct metric_set set = { 0 };
	struct buf out = { 0 };

	(void)state;
	assert_non_null(metrics_family(&set, "iolat_x", "x", METRIC_GAUGE, NULL));
	assert_int_equal(expo_proto(&set, &out), 0);
	assert_int_equal(out.len, 0);
	buf_free(&out);
	metrics_clear(&set);
}

/* Observation k of series i: indexes -100 up, 1 to 3 apart, so spans vary. */
static struct obs series_obs(int i, int k)
{
	return (struct obs){ buckets_native_bound_ns(k * (i % 3 + 1) - 100), (uint64_t)k + 1 };
}

/*
 * Many series with adjacent native buckets each: the per-family arrays are
 * sliced per series, so one series' spans must not bleed into the next.
 */
static void test_many_series(void **state)
{
	struct metric_set set = { 0 };
	struct metric_family *f;
	struct buf out = { 0 };
	struct stream st;
	char name[16];
	struct obs o[40];

	(void)state;
	f = metrics_family(&set, "iolat_latency_seconds", "Completion latency.", METRIC_HISTOGRAM,
			   disk_label);
	assert_non_null(f);
	f->le = buckets_default_le_ns;
	f->nle = buckets_default_le_count;
	for (int i = 0; i < 40; i++) {
		struct metric_series *s;

		snprintf(name, sizeof(name), "d%d", i);
		s = metrics_series(f, (const char *const[]){ name }, &lat);
		assert_non_null(s);
		/* Series i: i + 1 values, one in each of i + 1 buckets. */
		for (int k = 0; k <= i; k++)
			o[k] = series_obs(i, k);
		observe(s, o, (size_t)i + 1);
	}
	assert_int_equal(expo_proto(&set, &out), 0);
	decode(&out, &st);
	assert_int_equal(st.n, 1);
	assert_int_equal(st.fam[0]->n_metric, 40);
	for (int i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		assert_label(st.fam[0]->metric[i], 0, "disk", name);
		for (int k = 0; k <= i; k++)
			o[k] = series_obs(i, k);
		assert_hist(st.fam[0]->metric[i]->histogram, o, (size_t)i + 1);
	}
	stream_free(&st);
	buf_free(&out);
	metrics_clear(&set);
}

/*
 * Values between 128 s (the last native bound of the table) and the
 * table's last finite bound, 134.2 s: they belong to native bucket 113 or
 * beyond, never to bucket 112 whose top is 128 s.
 */
static void test_beyond_last_native_bound(void **state)
{
	static const struct obs o[] = { { 130 * NS_PER_S, 1 }, { 133 * NS_PER_S, 1 } };
	struct metric_set set = { 0 };
	struct metric_family *f;
	struct metric_series *s;
	struct buf out = { 0 };
	struct stream st;

	(void)state;
	f = metrics_family(&set, "iolat_latency_seconds", "Completion latency.", METRIC_HISTOGRAM,
			   disk_label);
	assert_non_null(f);
	f->le = buckets_default_le_ns;
	f->nle = buckets_default_le_count;
	s = metrics_series(f, (const char *const[]){ "sda" }, &lat);
	assert_non_null(s);
	observe(s, o, 2);
	assert_int_equal(expo_proto(&set, &out), 0);
	decode(&out, &st);
	assert_int_equal(st.n, 1);
	assert_hist(st.fam[0]->metric[0]->histogram, o, 2);
	stream_free(&st);
	buf_free(&out);
	metrics_clear(&set);
}

static void test_content_type(void **state)
{
	(void)state;
	assert_string_equal(EXPO_PROTO_CONTENT_TYPE,
			    "application/vnd.google.protobuf; "
			    "proto=io.prometheus.client.MetricFamily; encoding=delimited");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_empty_labels),
		cmocka_unit_test(test_two_series_empty_family),
		cmocka_unit_test(test_empty_set),
		cmocka_unit_test(test_many_series),
		cmocka_unit_test(test_beyond_last_native_bound),
		cmocka_unit_test(test_content_type),
	};

	return cmocka_run_group_tests(tests, setup_table, NULL);
}
