// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_render.c - exact text and JSON output of the JSON writer and the renderers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "cli/render.h"
#include "core/buckets.h"
#include "iolat.h"
#include "util/json.h"
#include <linux/types.h>

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

/*
 * Each test writes into a memory stream; teardown frees it, so a failed
 * assertion leaks nothing under ASan.
 */
struct capture {
	char *buf;
	size_t len;
	FILE *f;
};

static int cap_open(void **state)
{
	struct capture *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	c->f = open_memstream(&c->buf, &c->len);
	if (!c->f) {
		free(c);
		return -1;
	}
	*state = c;
	return 0;
}

static int cap_close(void **state)
{
	struct capture *c = *state;

	fclose(c->f);
	free(c->buf);
	free(c);
	return 0;
}

/* What was written so far (the stream publishes buf on fflush). */
static const char *captured(void **state)
{
	struct capture *c = *state;

	fflush(c->f);
	return c->buf;
}

static FILE *cap_file(void **state)
{
	return ((struct capture *)*state)->f;
}

#define TEST(fn) cmocka_unit_test_setup_teardown(fn, cap_open, cap_close)

/* ---- JSON writer -------------------------------------------------------- */

static void test_json_empty_containers(void **state)
{
	struct json j;

	json_init(&j, cap_file(state));
	json_begin_array(&j);
	json_begin_object(&j);
	json_end_object(&j);
	json_begin_array(&j);
	json_end_array(&j);
	json_end_array(&j);
	assert_string_equal(captured(state), "[{},[]]");
}

static void test_json_nested(void **state)
{
	struct json j;

	json_init(&j, cap_file(state));
	json_begin_object(&j);
	json_kv_uint(&j, "a", 1);
	json_key(&j, "b");
	json_begin_array(&j);
	json_uint(&j, 1);
	json_string(&j, "two");
	json_begin_object(&j);
	json_kv_bool(&j, "c", true);
	json_key(&j, "d");
	json_begin_array(&j);
	json_end_array(&j);
	json_key(&j, "e");
	json_begin_object(&j);
	json_end_object(&j);
	json_end_object(&j);
	json_begin_array(&j);
	json_bool(&j, false);
	json_end_array(&j);
	json_end_array(&j);
	json_kv_double(&j, "f", 0.5);
	json_kv_string(&j, "g", "");
	json_end_object(&j);
	assert_string_equal(captured(state),
			    "{\"a\":1,\"b\":[1,\"two\",{\"c\":true,\"d\":[],\"e\":{}},[false]],"
			    "\"f\":0.5,\"g\":\"\"}");
}

/* Quotes and backslashes get a backslash, control bytes \u00XX, the rest is raw. */
static void test_json_escaping(void **state)
{
	struct json j;

	json_init(&j, cap_file(state));
	json_begin_object(&j);
	json_kv_string(&j, "k\"\\", "q\"b\\s\n\t\r\x01\x1f\x7f \xc3\xa9 /");
	json_end_object(&j);
	assert_string_equal(captured(state),
			    "{\"k\\\"\\\\\":"
			    "\"q\\\"b\\\\s\\u000a\\u0009\\u000d\\u0001\\u001f\x7f \xc3\xa9 /\"}");
}

static void test_json_numbers(void **state)
{
	struct json j;

	json_init(&j, cap_file(state));
	json_begin_array(&j);
	json_uint(&j, 0);
	json_uint(&j, UINT64_MAX);
	json_double(&j, 0.5);
	json_double(&j, -0.25);
	json_double(&j, 123456789);
	json_double(&j, 1e10);
	json_double(&j, 1234567.891);
	json_double(&j, 0);
	json_end_array(&j);
	assert_string_equal(captured(state),
			    "[0,18446744073709551615,0.5,-0.25,123456789,1e+10,1234567.89,0]");
}

/* JSON has no NaN or Infinity: they become null. */
static void test_json_non_finite(void **state)
{
	struct json j;

	json_init(&j, cap_file(state));
	json_begin_object(&j);
	json_kv_double(&j, "nan", NAN);
	json_kv_double(&j, "inf", INFINITY);
	json_kv_double(&j, "ninf", -INFINITY);
	json_end_object(&j);
	assert_string_equal(captured(state), "{\"nan\":null,\"inf\":null,\"ninf\":null}");
}

/* As deep as the writer tracks: a value before and after every inner level. */
static void test_json_max_depth(void **state)
{
	char want[512] = "", *p = want;
	const int levels = JSON_MAX_DEPTH - 1;
	struct json j;

	json_init(&j, cap_file(state));
	for (int d = 0; d < levels; d++) {
		json_begin_array(&j);
		json_uint(&j, (uint64_t)d);
		p += sprintf(p, "%s[%d", d ? "," : "", d);
	}
	for (int d = levels - 1; d >= 0; d--) {
		json_end_array(&j);
		p += sprintf(p, "]");
		if (d > 0) {
			json_uint(&j, 100 + (uint64_t)d);
			p += sprintf(p, ",%d", 100 + d);
		}
	}
	assert_string_equal(captured(state), want);
}

/* ---- names -------------------------------------------------------------- */

static void test_op_names(void **state)
{
	(void)state;
	assert_string_equal(render_op_name(IOLAT_OP_READ), "read");
	assert_string_equal(render_op_name(IOLAT_OP_WRITE), "write");
	assert_string_equal(render_op_name(IOLAT_OP_FLUSH), "flush");
	assert_string_equal(render_op_name(IOLAT_OP_DISCARD), "discard");
	assert_string_equal(render_op_name(IOLAT_OP_WRITE_ZEROES), "write_zeroes");
	assert_string_equal(render_op_name(IOLAT_OP_OTHER), "other");
	assert_string_equal(render_op_name(-1), "all");
	assert_string_equal(render_op_name(IOLAT_OP_COUNT), "all");
	assert_string_equal(render_op_name(1000), "all");
}

static void test_flags(void **state)
{
	char buf[128];

	(void)state;
	render_flags(0, buf, sizeof(buf));
	assert_string_equal(buf, "none");
	render_flags(IOLAT_F_SYNC | IOLAT_F_FUA, buf, sizeof(buf));
	assert_string_equal(buf, "sync|fua");
	render_flags(IOLAT_F_NOWAIT, buf, sizeof(buf));
	assert_string_equal(buf, "nowait");
	render_flags((1 << IOLAT_F_COUNT) - 1, buf, sizeof(buf));
	assert_string_equal(buf,
			    "sync|meta|prio|nomerge|idle|fua|preflush|rahead|background|nowait");
	/* Bits the collector never sets name nothing. */
	render_flags(1 << IOLAT_F_COUNT, buf, sizeof(buf));
	assert_string_equal(buf, "none");
}

/* A short buffer gets a terminated prefix, and nothing past its end. */
static void test_flags_truncated(void **state)
{
	char buf[16];

	(void)state;
	memset(buf, 'X', sizeof(buf));
	render_flags(IOLAT_F_SYNC | IOLAT_F_META | IOLAT_F_FUA, buf, 8);
	assert_true(strlen(buf) < 8);
	assert_memory_equal(buf, "sync|meta", strlen(buf));
	for (size_t i = 8; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 'X');
}

/* ---- text --------------------------------------------------------------- */

#define LAT_HEADER(unit) "          " unit "          : count    distribution\n"
#define ROW(lo, hi, n, bar) lo " -> " hi " : " n " |" bar "|\n"
#define BAR0 "                                        "
#define BAR4 "****                                    "
#define BAR13 "*************                           "
#define BAR20 "********************                    "
#define BAR27 "***************************             "
#define BAR40 "****************************************"

static struct iolat_lat l;

/* 1 at 0.5 us, 5 at 5 us, 10 at 300 us; max 303 us, in the top slot. */
static void test_latency_text_usecs(void **state)
{
	(void)state;
	memset(&l, 0, sizeof(l));
	l.slots[buckets_slot_of(&lat, 500)] = 1;
	l.slots[buckets_slot_of(&lat, 5000)] = 5;
	l.slots[buckets_slot_of(&lat, 300000)] = 10;
	l.count = 16;
	l.sum_ns = 500 + 5 * 5000 + 10 * 300000;
	l.max_ns = 303000;
	render_latency_text(cap_file(state), &l, &lat, false);
	assert_string_equal(
	    captured(state),
	    LAT_HEADER("usecs") ROW("         0", "1         ", "1       ", BAR4) ROW(
		"         2", "3         ", "0       ",
		BAR0) ROW("         4", "7         ", "5       ",
			  BAR20) ROW("         8", "15        ", "0       ",
				     BAR0) ROW("        16", "31        ", "0       ",
					       BAR0) ROW("        32", "63        ", "0       ",
							 BAR0) ROW("        64", "127       ",
								   "0       ", BAR0)
		ROW("       128", "255       ", "0       ", BAR0) ROW(
		    "       256", "511       ", "10      ",
		    BAR40) "\n  count 16  avg 189.1  p50 292.9  p90 301.1  p99 303.0  p99.9 303.0"
			   "  max 303.0 usecs\n");
}

/*
 * 3 at 5 ms and 1 at 1.5 s, with a cumulative max of 20 s from an earlier
 * interval: the max is only bounded, and the untimed completions show.
 * msecs print three decimals, so sub-ms values stay readable.
 */
static void test_latency_text_msecs(void **state)
{
	(void)state;
	memset(&l, 0, sizeof(l));
	l.slots[buckets_slot_of(&lat, 5000000)] = 3;
	l.slots[buckets_slot_of(&lat, 1500000000)] = 1;
	l.count = 4;
	l.unseen = 7;
	l.sum_ns = 3 * 5000000 + 1500000000;
	l.max_ns = 0; /* unknown this interval: printed as a bound */
	render_latency_text(cap_file(state), &l, &lat, true);
	assert_string_equal(
	    captured(state),
	    LAT_HEADER("msecs") ROW("         0", "1         ", "0       ",
				    BAR0) ROW("         2", "3         ", "0       ", BAR0)
		ROW("         4", "7         ", "3       ",
		    BAR40) ROW("         8", "15        ", "0       ",
			       BAR0) ROW("        16", "31        ", "0       ",
					 BAR0) ROW("        32", "63        ", "0       ", BAR0)
		    ROW("        64", "127       ", "0       ",
			BAR0) ROW("       128", "255       ", "0       ",
				  BAR0) ROW("       256", "511       ", "0       ",
					    BAR0) ROW("       512", "1023      ", "0       ", BAR0)
			ROW("      1024", "2047      ", "1       ",
			    BAR13) "\n  count 4  avg 378.750  p50 4.950  p90 1516.057  p99 1539.595"
				   "  p99.9 1541.949  max <=1542.211 msecs  (7 not timed: start "
				   "not seen)\n");
}

static void test_latency_text_empty(void **state)
{
	(void)state;
	memset(&l, 0, sizeof(l));
	l.max_ns = 5000000;
	render_latency_text(cap_file(state), &l, &lat, false);
	assert_string_equal(captured(state),
			    LAT_HEADER("usecs") "\n  count 0  avg 0.0  p50 0.0  p90 0.0  p99 0.0  "
						"p99.9 0.0  max 0.0 usecs\n");
}

/* 1 at 512 B, 3 at 4 KiB, 2 at 64 KiB. */
static void test_size_text(void **state)
{
	__u64 slots[IOLAT_SIZE_SLOTS] = { 0 };

	slots[buckets_slot_of(&size, 512)] = 1;
	slots[buckets_slot_of(&size, 4096)] = 3;
	slots[buckets_slot_of(&size, 65536)] = 2;
	render_size_text(cap_file(state), slots, &size);
	assert_string_equal(captured(state),
			    "          kbytes         : count    distribution\n" ROW(
				"         0", "1         ", "1       ",
				BAR13) ROW("         2", "3         ", "0       ", BAR0)
				ROW("         4", "7         ", "3       ", BAR40)
				    ROW("         8", "15        ", "0       ", BAR0)
					ROW("        16", "31        ", "0       ", BAR0)
					    ROW("        32", "63        ", "0       ", BAR0)
						ROW("        64", "127       ", "2       ", BAR27));
}

static struct shown_series series;

static void set_labels(const char *disk, int op, int flags, bool bio_layer)
{
	memset(&series, 0, sizeof(series));
	snprintf(series.disk, sizeof(series.disk), "%s", disk);
	series.op = op;
	series.flags = flags;
	series.size_class = -1; /* not split by size */
	series.bio_layer = bio_layer;
}

/* Split by size class: the label is named in text and JSON. */
static void test_labels_size_class(void **state)
{
	set_labels("vda", IOLAT_OP_READ, -1, false);
	series.size_class = IOLAT_SIZE_64K;
	render_labels_text(cap_file(state), &series);
	assert_string_equal(captured(state), "disk = vda  op = read  size = 16-64KiB\n");
	assert_string_equal(render_size_class_name(IOLAT_SIZE_4K), "<=4KiB");
	assert_string_equal(render_size_class_name(IOLAT_SIZE_LARGER), ">1MiB");
	assert_string_equal(render_size_class_name(-1), "all");
}

static void test_labels_all(void **state)
{
	set_labels("vda", IOLAT_OP_READ, IOLAT_F_SYNC, false);
	render_labels_text(cap_file(state), &series);
	assert_string_equal(captured(state), "disk = vda  op = read  flags = sync\n");
}

static void test_labels_partial(void **state)
{
	set_labels("zram0", -1, -1, true);
	render_labels_text(cap_file(state), &series);
	set_labels("", IOLAT_OP_FLUSH, -1, false);
	render_labels_text(cap_file(state), &series);
	set_labels("", -1, 0, false);
	render_labels_text(cap_file(state), &series);
	set_labels("", -1, -1, false);
	render_labels_text(cap_file(state), &series);
	assert_string_equal(captured(state),
			    "disk = zram0 (bio layer)\nop = flush\nflags = none\n\n");
}

/* ---- series JSON -------------------------------------------------------- */

/*
 * device: 2 at 1 ms (slot 976563..1000000) and 1 at 1999999 ns, the max.
 * total: 1 beyond the last bound (200 s), so its slot has no "hi".
 * Expected numbers computed independently from the same bounds.
 */
static void fill_series(void)
{
	struct iolat_lat *dev = &series.val.lat[IOLAT_VIEW_DEVICE];
	struct iolat_lat *tot = &series.val.lat[IOLAT_VIEW_TOTAL];

	set_labels("vda", IOLAT_OP_WRITE, IOLAT_F_SYNC | IOLAT_F_FUA, false);
	series.val.ios = 3;
	series.val.bytes = 12288;
	series.val.errors = 1;
	series.val.size_slots[buckets_slot_of(&size, 4096)] = 3;
	dev->slots[buckets_slot_of(&lat, 1000000)] = 2;
	dev->slots[buckets_slot_of(&lat, 1999999)] = 1;
	dev->count = 3;
	dev->sum_ns = 3999999;
	dev->max_ns = 1999999;
	tot->slots[lat.nbounds] = 1;
	tot->count = 1;
	tot->unseen = 2;
	tot->sum_ns = 200000000000ULL;
	tot->max_ns = 200000000000ULL;
}

static void test_series_json(void **state)
{
	struct json j;

	fill_series();
	json_init(&j, cap_file(state));
	render_series_json(&j, &series, &lat, &size);
	assert_string_equal(
	    captured(state),
	    "{\"disk\":\"vda\",\"layer\":\"request\",\"on\":[],\"under\":[],\"op\":\"write\","
	    "\"flags\":\"sync|fua\","
	    "\"ios\":3,\"bytes\":12288,\"errors\":1,"
	    "\"device\":{\"count\":3,\"unseen\":0,\"sum_ns\":3999999,\"mean_ns\":1333333,"
	    "\"p50_ns\":994140.75,\"p90_ns\":1985937.1,\"p99_ns\":1998592.81,"
	    "\"p999_ns\":1999858.38,\"max_ns\":1999999,\"max_exact\":true,"
	    "\"slots\":[{\"lo\":976563,\"hi\":1000000,\"count\":2},"
	    "{\"lo\":1953126,\"hi\":1999999,\"count\":1}]},"
	    "\"total\":{\"count\":1,\"unseen\":2,\"sum_ns\":200000000000,\"mean_ns\":2e+11,"
	    "\"p50_ns\":2e+11,\"p90_ns\":2e+11,\"p99_ns\":2e+11,\"p999_ns\":2e+11,"
	    "\"max_ns\":2e+11,\"max_exact\":true,"
	    "\"slots\":[{\"lo\":134217728000,\"count\":1}]},"
	    "\"size_slots\":[{\"lo\":4096,\"hi\":4096,\"count\":3}]}");
}

/* Summed labels are left out; an empty view lists no slots. */
static void test_series_json_summed(void **state)
{
	struct json j;

	set_labels("", -1, -1, false);
	json_init(&j, cap_file(state));
	render_series_json(&j, &series, &lat, &size);
	assert_string_equal(
	    captured(state),
	    "{\"ios\":0,\"bytes\":0,\"errors\":0,"
	    "\"device\":{\"count\":0,\"unseen\":0,\"sum_ns\":0,\"mean_ns\":0,\"p50_ns\":0,"
	    "\"p90_ns\":0,\"p99_ns\":0,\"p999_ns\":0,\"max_ns\":0,\"max_exact\":false,"
	    "\"slots\":[]},"
	    "\"total\":{\"count\":0,\"unseen\":0,\"sum_ns\":0,\"mean_ns\":0,\"p50_ns\":0,"
	    "\"p90_ns\":0,\"p99_ns\":0,\"p999_ns\":0,\"max_ns\":0,\"max_exact\":false,"
	    "\"slots\":[]},"
	    "\"size_slots\":[]}");
}

static void assert_starts_with(const char *s, const char *prefix)
{
	assert_true(strlen(s) >= strlen(prefix));
	assert_memory_equal(s, prefix, strlen(prefix));
}

static void assert_ends_with(const char *s, const char *suffix)
{
	assert_true(strlen(s) >= strlen(suffix));
	assert_string_equal(s + strlen(s) - strlen(suffix), suffix);
}

/* Series in an array, as cmd_hist writes them: commas between, layer "bio". */
static void test_series_json_array(void **state)
{
	const char *out;
	struct json j;

	json_init(&j, cap_file(state));
	json_begin_array(&j);
	set_labels("zram0", -1, -1, true);
	render_series_json(&j, &series, &lat, &size);
	set_labels("", IOLAT_OP_DISCARD, 0, false);
	render_series_json(&j, &series, &lat, &size);
	json_end_array(&j);
	out = captured(state);
	assert_starts_with(
	    out, "[{\"disk\":\"zram0\",\"layer\":\"bio\",\"on\":[],\"under\":[],\"ios\":0,");
	assert_non_null(strstr(out, "\"size_slots\":[]},{\"op\":\"discard\",\"flags\":\"none\","
				    "\"ios\":0,"));
	assert_ends_with(out, "\"size_slots\":[]}]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(test_json_empty_containers),
		TEST(test_json_nested),
		TEST(test_json_escaping),
		TEST(test_json_numbers),
		TEST(test_json_non_finite),
		TEST(test_json_max_depth),
		cmocka_unit_test(test_op_names),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_flags_truncated),
		TEST(test_latency_text_usecs),
		TEST(test_latency_text_msecs),
		TEST(test_latency_text_empty),
		TEST(test_size_text),
		TEST(test_labels_all),
		TEST(test_labels_partial),
		TEST(test_labels_size_class),
		TEST(test_series_json),
		TEST(test_series_json_summed),
		TEST(test_series_json_array),
	};

	return cmocka_run_group_tests(tests, setup_tables, NULL);
}
