// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_uconfig.c - the user-program config parser: a config with every
 * decoder and bucket type read into the exact structs, then one case per
 * kind of error with its line, column and message.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "uprog/builtin_configs.h"
#include "uprog/uconfig.h"

static char err[1024];

/* Every decoder kind, every bucket type, all optional fields. */
static const char full[] = "name: demo\n"						    /* 1 */
			   "object: demo.bpf.o\n"					    /* 2 */
			   "metrics:\n"							    /* 3 */
			   "  counters:\n"						    /* 4 */
			   "    - name: demo_events_total\n"				    /* 5 */
			   "      help: Events by everything\n"				    /* 6 */
			   "      map: events\n"					    /* 7 */
			   "      labels:\n"						    /* 8 */
			   "        - name: cpu\n"					    /* 9 */
			   "          size: 4\n"					    /* 10 */
			   "          padding: 4\n"					    /* 11 */
			   "          decoders:\n"					    /* 12 */
			   "            - name: uint\n"					    /* 13 */
			   "        - name: addr\n"					    /* 14 */
			   "          size: 8\n"					    /* 15 */
			   "          decoders: [{name: hex}]\n"			    /* 16 */
			   "        - name: comm\n"					    /* 17 */
			   "          size: 16\n"					    /* 18 */
			   "          decoders:\n"					    /* 19 */
			   "            - name: string\n"				    /* 20 */
			   "            - name: regexp\n"				    /* 21 */
			   "              regexp: '^(kworker)/[0-9]+'\n"		    /* 22 */
			   "              replace: '\\1'\n"				    /* 23 */
			   "        - name: function\n"					    /* 24 */
			   "          size: 8\n"					    /* 25 */
			   "          decoders: [{name: ksym}]\n"			    /* 26 */
			   "        - name: disk\n"					    /* 27 */
			   "          size: 4\n"					    /* 28 */
			   "          decoders: [{name: majorminor}]\n"			    /* 29 */
			   "        - name: cgroup\n"					    /* 30 */
			   "          size: 8\n"					    /* 31 */
			   "          decoders: [{name: cgroup}]\n"			    /* 32 */
			   "        - name: op\n"					    /* 33 */
			   "          size: 1\n"					    /* 34 */
			   "          padding: 3\n"					    /* 35 */
			   "          decoders:\n"					    /* 36 */
			   "            - name: uint\n"					    /* 37 */
			   "            - name: static_map\n"				    /* 38 */
			   "              allow_unknown: true\n"			    /* 39 */
			   "              static_map:\n"				    /* 40 */
			   "                0: read\n"					    /* 41 */
			   "                1: write\n"					    /* 42 */
			   "        - name: syscall\n"					    /* 43 */
			   "          size: 4\n"					    /* 44 */
			   "          decoders: [{name: syscall}]\n"			    /* 45 */
			   "        - name: error\n"					    /* 46 */
			   "          size: 4\n"					    /* 47 */
			   "          decoders: [{name: errno}]\n"			    /* 48 */
			   "    - name: demo_stacks_total\n"				    /* 49 */
			   "      help: Stacks\n"					    /* 50 */
			   "      map: stack_counts\n"					    /* 51 */
			   "      labels:\n"						    /* 52 */
			   "        - name: stack\n"					    /* 53 */
			   "          size: 4\n"					    /* 54 */
			   "          decoders:\n"					    /* 55 */
			   "            - {name: kstack, stack_map: stack_traces}\n"	    /* 56 */
			   "  histograms:\n"						    /* 57 */
			   "    - name: demo_latency_seconds\n"				    /* 58 */
			   "      help: Latency\n"					    /* 59 */
			   "      map: latency\n"					    /* 60 */
			   "      bucket_type: exp2\n"					    /* 61 */
			   "      bucket_multiplier: 0.000001\n"			    /* 62 */
			   "      bucket_min: 0\n"					    /* 63 */
			   "      bucket_max: 26\n"					    /* 64 */
			   "      labels:\n"						    /* 65 */
			   "        - name: bucket\n"					    /* 66 */
			   "          size: 8\n"					    /* 67 */
			   "          decoders: [{name: uint}]\n"			    /* 68 */
			   "    - name: demo_size_blocks\n"				    /* 69 */
			   "      help: Sizes\n"					    /* 70 */
			   "      map: sizes\n"						    /* 71 */
			   "      bucket_type: linear\n"				    /* 72 */
			   "      bucket_min: 1\n"					    /* 73 */
			   "      bucket_max: 10\n"					    /* 74 */
			   "      labels:\n"						    /* 75 */
			   "        - {name: op, size: 4, decoders: [{name: uint}]}\n"	    /* 76 */
			   "        - {name: bucket, size: 4, decoders: [{name: uint}]}\n"  /* 77 */
			   "    - name: demo_wait_seconds\n"				    /* 78 */
			   "      help: Waits\n"					    /* 79 */
			   "      map: waits\n"						    /* 80 */
			   "      bucket_type: fixed\n"					    /* 81 */
			   "      bucket_multiplier: 0.001\n"				    /* 82 */
			   "      bucket_keys: [1, 5, 10.5, 100]\n"			    /* 83 */
			   "      labels:\n"						    /* 84 */
			   "        - {name: bucket, size: 1, decoders: [{name: uint}]}\n"; /* 85 */

static void assert_pos(int line, int col, int want_line, int want_col)
{
	assert_int_equal(line, want_line);
	assert_int_equal(col, want_col);
}

static void assert_label(const struct ulabel_conf *l, const char *name, unsigned size,
			 unsigned padding, size_t ndec, int line, int col)
{
	assert_string_equal(l->name, name);
	assert_int_equal(l->size, size);
	assert_int_equal(l->padding, padding);
	assert_int_equal(l->ndec, ndec);
	assert_pos(l->line, l->col, line, col);
}

/* A decoder with no options: kind and position only. */
static void assert_plain(const struct udec_conf *d, enum udec_kind kind, int line, int col)
{
	assert_int_equal(d->kind, kind);
	assert_null(d->from);
	assert_null(d->to);
	assert_int_equal(d->nmap, 0);
	assert_false(d->allow_unknown);
	assert_null(d->regexp);
	assert_null(d->replace);
	assert_null(d->stack_map);
	assert_pos(d->line, d->col, line, col);
}

static void assert_metric(const struct umetric_conf *m, const char *name, const char *help,
			  const char *map, bool histogram, size_t nfields, int line)
{
	assert_string_equal(m->name, name);
	assert_string_equal(m->help, help);
	assert_string_equal(m->map, map);
	assert_int_equal(m->histogram, histogram);
	assert_int_equal(m->nfields, nfields);
	assert_pos(m->line, m->col, line, 7);
}

static void check_events(const struct umetric_conf *m)
{
	const struct ulabel_conf *f = m->field;
	const struct udec_conf *d;

	assert_metric(m, "demo_events_total", "Events by everything", "events", false, 9, 5);
	assert_null(m->bucket_keys);
	assert_label(&f[0], "cpu", 4, 4, 1, 9, 11);
	assert_plain(&f[0].dec[0], UDEC_UINT, 13, 15);
	assert_label(&f[1], "addr", 8, 0, 1, 14, 11);
	assert_plain(&f[1].dec[0], UDEC_HEX, 16, 22);
	assert_label(&f[2], "comm", 16, 0, 2, 17, 11);
	assert_plain(&f[2].dec[0], UDEC_STRING, 20, 15);
	d = &f[2].dec[1];
	assert_int_equal(d->kind, UDEC_REGEXP);
	assert_string_equal(d->regexp, "^(kworker)/[0-9]+");
	assert_string_equal(d->replace, "\\1");
	assert_pos(d->line, d->col, 21, 15);
	assert_label(&f[3], "function", 8, 0, 1, 24, 11);
	assert_plain(&f[3].dec[0], UDEC_KSYM, 26, 22);
	assert_label(&f[4], "disk", 4, 0, 1, 27, 11);
	assert_plain(&f[4].dec[0], UDEC_MAJORMINOR, 29, 22);
	assert_label(&f[5], "cgroup", 8, 0, 1, 30, 11);
	assert_plain(&f[5].dec[0], UDEC_CGROUP, 32, 22);
	assert_label(&f[6], "op", 1, 3, 2, 33, 11);
	assert_plain(&f[6].dec[0], UDEC_UINT, 37, 15);
	d = &f[6].dec[1];
	assert_int_equal(d->kind, UDEC_STATIC_MAP);
	assert_true(d->allow_unknown);
	assert_int_equal(d->nmap, 2);
	assert_string_equal(d->from[0], "0");
	assert_string_equal(d->to[0], "read");
	assert_string_equal(d->from[1], "1");
	assert_string_equal(d->to[1], "write");
	assert_pos(d->line, d->col, 38, 15);
	assert_label(&f[7], "syscall", 4, 0, 1, 43, 11);
	assert_plain(&f[7].dec[0], UDEC_SYSCALL, 45, 22);
	assert_label(&f[8], "error", 4, 0, 1, 46, 11);
	assert_plain(&f[8].dec[0], UDEC_ERRNO, 48, 22);
}

static void check_stacks(const struct umetric_conf *m)
{
	const struct udec_conf *d = &m->field[0].dec[0];

	assert_metric(m, "demo_stacks_total", "Stacks", "stack_counts", false, 1, 49);
	assert_label(&m->field[0], "stack", 4, 0, 1, 53, 11);
	assert_int_equal(d->kind, UDEC_KSTACK);
	assert_string_equal(d->stack_map, "stack_traces");
	assert_null(d->regexp);
	assert_pos(d->line, d->col, 56, 15);
}

static void check_histograms(const struct umetric_conf *m)
{
	assert_metric(&m[0], "demo_latency_seconds", "Latency", "latency", true, 1, 58);
	assert_int_equal(m[0].bucket_type, UBUCKET_EXP2);
	assert_true(m[0].bucket_multiplier == 0.000001);
	assert_int_equal(m[0].bucket_min, 0);
	assert_int_equal(m[0].bucket_max, 26);
	assert_null(m[0].bucket_keys);
	assert_label(&m[0].field[0], "bucket", 8, 0, 1, 66, 11);
	assert_plain(&m[0].field[0].dec[0], UDEC_UINT, 68, 22);

	assert_metric(&m[1], "demo_size_blocks", "Sizes", "sizes", true, 2, 69);
	assert_int_equal(m[1].bucket_type, UBUCKET_LINEAR);
	assert_true(m[1].bucket_multiplier == 1);
	assert_int_equal(m[1].bucket_min, 1);
	assert_int_equal(m[1].bucket_max, 10);
	assert_label(&m[1].field[0], "op", 4, 0, 1, 76, 11);
	assert_label(&m[1].field[1], "bucket", 4, 0, 1, 77, 11);
	assert_plain(&m[1].field[1].dec[0], UDEC_UINT, 77, 46);

	assert_metric(&m[2], "demo_wait_seconds", "Waits", "waits", true, 1, 78);
	assert_int_equal(m[2].bucket_type, UBUCKET_FIXED);
	assert_true(m[2].bucket_multiplier == 0.001);
	assert_int_equal(m[2].bucket_min, 0);
	assert_int_equal(m[2].bucket_max, 0);
	assert_int_equal(m[2].nkeys, 4);
	assert_true(m[2].bucket_keys[0] == 1 && m[2].bucket_keys[1] == 5);
	assert_true(m[2].bucket_keys[2] == 10.5 && m[2].bucket_keys[3] == 100);
	assert_label(&m[2].field[0], "bucket", 1, 0, 1, 85, 11);
}

static void test_full(void **state)
{
	struct uconfig c;
	int rc;

	(void)state;
	rc = uconfig_parse_buffer("conf/demo.yaml", full, strlen(full), &c, err, sizeof(err));
	if (rc)
		fail_msg("parse failed: %s", err);
	assert_string_equal(c.file, "conf/demo.yaml");
	assert_string_equal(c.name, "demo");
	assert_string_equal(c.object, "conf/demo.bpf.o");
	assert_int_equal(c.nmetrics, 5);
	check_events(&c.metric[0]);
	check_stacks(&c.metric[1]);
	check_histograms(&c.metric[2]);
	uconfig_free(&c);
	assert_null(c.metric);
	assert_int_equal(c.nmetrics, 0);
}

static const char minimal[] = "object: /opt/x.bpf.o\n"
			      "metrics:\n"
			      "  counters:\n"
			      "    - name: x_total\n"
			      "      help: X\n"
			      "      map: x\n"
			      "      labels: [{name: l, size: 3, decoders: [{name: string}]}]\n";

/* Without name, the file's base name names the config; an absolute object stays. */
static void test_defaults(void **state)
{
	static const struct {
		const char *file, *name;
	} cases[] = {
		{ "/etc/iolat/timers.yaml", "timers" },
		{ "timers.yml", "timers" },
		{ "a/b/run-queue", "run-queue" },
	};
	struct uconfig c;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (uconfig_parse_buffer(cases[i].file, minimal, strlen(minimal), &c, err,
					 sizeof(err)))
			fail_msg("%s: %s", cases[i].file, err);
		assert_string_equal(c.name, cases[i].name);
		assert_string_equal(c.object, "/opt/x.bpf.o");
		assert_int_equal(c.metric[0].field[0].padding, 0);
		uconfig_free(&c);
	}
}

/* A pseudo file name (the fuzzer's) resolves the object against ".". */
static void test_pseudo_file(void **state)
{
	static const char text[] = "name: f\n"
				   "object: x.bpf.o\n"
				   "metrics:\n"
				   "  counters:\n"
				   "    - {name: a, help: A, map: a, labels: [{name: l, size: 8, "
				   "decoders: [{name: uint}]}]}\n";
	struct uconfig c;

	(void)state;
	if (uconfig_parse_buffer("<fuzz>", text, strlen(text), &c, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(c.object, "x.bpf.o");
	uconfig_free(&c);
	assert_int_equal(
	    uconfig_parse_buffer("<fuzz>", minimal, strlen(minimal), &c, err, sizeof(err)),
	    -EINVAL);
	assert_non_null(strstr(err, "<fuzz>:1:1: the file name gives the config name '<fuzz>'"));
}

static bool all_zero(const struct uconfig *c)
{
	static const struct uconfig zero;

	return !memcmp(c, &zero, sizeof(zero));
}

/* text fails at line:col with a message holding want; out is left empty. */
static void fails(const char *text, int line, int col, const char *want)
{
	struct uconfig c;
	char prefix[64];

	memset(&c, 0xa5, sizeof(c));
	if (!uconfig_parse_buffer("t.yaml", text, strlen(text), &c, err, sizeof(err)))
		fail_msg("parsed, want an error with \"%s\"", want);
	snprintf(prefix, sizeof(prefix), "t.yaml:%d:%d: ", line, col);
	if (strncmp(err, prefix, strlen(prefix)))
		fail_msg("err \"%s\" does not start with \"%s\"", err, prefix);
	if (!strstr(err, want))
		fail_msg("err \"%s\" does not contain \"%s\"", err, want);
	if (strchr(err, '\n'))
		fail_msg("err \"%s\" is more than one line", err);
	assert_true(all_zero(&c));
}

#define HEAD "object: x.bpf.o\nmetrics:\n"
/* A counter whose one label is LABEL (a flow mapping's inside), at line 4. */
#define COUNTER(LABEL)                                                                             \
	HEAD "  counters:\n"                                                                       \
	     "    - {name: c, help: C, map: c, labels: [{" LABEL "}]}\n"
/* A histogram with FIELDS (lines 4..), and a bucket label at the end. */
#define HISTOGRAM(FIELDS)                                                                          \
	HEAD "  histograms:\n"                                                                     \
	     "    - name: h\n"                                                                     \
	     "      help: H\n"                                                                     \
	     "      map: h\n" FIELDS                                                               \
	     "      labels: [{name: b, size: 8, decoders: [{name: uint}]}]\n"

static void test_syntax_error(void **state)
{
	(void)state;
	fails("object: x\n  bad: indent\n", 2, 6,
	      "YAML syntax error: mapping values are not allowed in this context");
	fails(HEAD "  counters: [\n", 4, 1, "did not find expected node content");
	fails("object: \x01\n", 1, 9, "control characters are not allowed");
	fails("object: a\n---\nobject: b\n", 3, 1, "a config is one YAML document");
	fails("", 1, 1, "empty config");
	fails("# nothing\n", 1, 1, "empty config");
}

static void test_unknown_field(void **state)
{
	(void)state;
	fails(COUNTER("name: l, sizes: 8, decoders: [{name: uint}]"), 4, 53,
	      "unknown field 'sizes' in a label (known: name, size, padding, decoders)");
	fails("objects: x\n", 1, 1,
	      "unknown field 'objects' in the config (known: name, object, metrics_prefix, "
	      "metrics, perf_events)");
	fails(HEAD "  gauges: []\n", 3, 3,
	      "unknown field 'gauges' in metrics (known: counters, histograms)");
	fails(HEAD "  counters:\n    - {name: c, help: C, map: c, bucket_max: 3, labels: []}\n", 4,
	      34, "unknown field 'bucket_max' in a counter (known: name, help, map, labels)");
	fails(COUNTER("name: l, size: 8, decoders: [{name: uint, regexp: x}]"), 4, 86,
	      "unknown field 'regexp' in decoder uint (known: name)");
	fails(COUNTER("name: l, size: 8, size: 4, decoders: [{name: uint}]"), 4, 62,
	      "duplicate field 'size' in a label");
}

static void test_unknown_decoder(void **state)
{
	(void)state;
	fails(COUNTER("name: l, size: 8, decoders: [{name: kysm}]"), 4, 80,
	      "unknown decoder 'kysm' (known: uint, hex, string, ksym, majorminor, cgroup, "
	      "static_map, regexp, syscall, errno, kstack)");
}

static void test_missing_field(void **state)
{
	(void)state;
	fails(HEAD "  counters:\n    - {name: c, map: c, labels: [{name: l, size: 8, decoders: "
		   "[{name: uint}]}]}\n",
	      4, 7, "missing required field 'help' in counter 'c'");
	fails(COUNTER("name: l, decoders: [{name: uint}]"), 4, 43,
	      "missing required field 'size' in label 'l'");
	fails(COUNTER("name: l, size: 8, decoders: [{regexp: x}]"), 4, 73,
	      "missing required field 'name' in a decoder");
	fails(COUNTER("name: l, size: 8, decoders: [{name: kstack}]"), 4, 73,
	      "missing required field 'stack_map' in decoder kstack");
	fails("metrics: {}\n", 1, 1, "missing required field 'object'");
	fails(HISTOGRAM(""), 4, 7, "missing required field 'bucket_type' in histogram 'h'");
	fails(HISTOGRAM("      bucket_type: fixed\n"), 4, 7, "fixed buckets need bucket_keys");
}

static void test_bad_name(void **state)
{
	(void)state;
	fails(HEAD "  counters:\n    - {name: 1c, help: C, map: c, labels: []}\n", 4, 14,
	      "metric name '1c' must match [a-zA-Z_:][a-zA-Z0-9_:]*");
	fails(COUNTER("name: __l, size: 8, decoders: [{name: uint}]"), 4, 50,
	      "label name '__l' must match [a-zA-Z_][a-zA-Z0-9_]* and not start with __");
	fails("name: a.b\n", 1, 7, "name 'a.b' must match [a-zA-Z_][a-zA-Z0-9_-]*");
	fails("metrics_prefix: my-app_\n", 1, 17,
	      "metrics_prefix 'my-app_' must match [a-zA-Z_:][a-zA-Z0-9_:]* (or be \"\" for none)");
	fails(HEAD "  counters:\n    - {name: c, help: C, map: a-map, labels: []}\n", 4, 31,
	      "map name 'a-map' is not a BPF map name");
	fails(HEAD "  counters:\n    - {name: c, help: C, map: c, labels: [{name: l, size: 8, "
		   "decoders: [{name: uint}]}, {name: l, size: 8, decoders: [{name: uint}]}]}\n",
	      4, 89, "duplicate label 'l' (also at line 4)");
}

static void test_label_size(void **state)
{
	(void)state;
	fails(COUNTER("name: l, size: 0, decoders: [{name: uint}]"), 4, 59,
	      "expected a whole number from 1 to 256");
	fails(COUNTER("name: l, size: 257, decoders: [{name: string}]"), 4, 59,
	      "expected a whole number from 1 to 256");
	fails(COUNTER("name: l, size: 8, padding: x, decoders: [{name: string}]"), 4, 71,
	      "expected a whole number from 0 to 256");
}

static void test_decoder_size(void **state)
{
	(void)state;
	fails(COUNTER("name: l, size: 3, decoders: [{name: uint}]"), 4, 73,
	      "decoder uint reads a 1, 2, 4 or 8 byte number, but label 'l' has size 3");
	fails(COUNTER("name: l, size: 2, decoders: [{name: kstack, stack_map: s}]"), 4, 73,
	      "decoder kstack reads a 4 or 8 byte number");
	/* Only the first decoder reads the raw bytes. */
	fails(HEAD "  histograms:\n"
		   "    - {name: h, help: H, map: h, bucket_type: linear, bucket_max: 3,\n"
		   "       labels: [{name: b, size: 3, decoders: [{name: string}]}]}\n",
	      5, 17, "the bucket field (the last label) must be 1, 2, 4 or 8 bytes, not 3");
	fails(HEAD "  histograms:\n"
		   "    - {name: h, help: H, map: h, bucket_type: linear, bucket_max: 256,\n"
		   "       labels: [{name: b, size: 1, decoders: [{name: uint}]}]}\n",
	      5, 17, "a 1 byte bucket field cannot hold bucket 256");
	fails(HEAD "  histograms:\n"
		   "    - {name: h, help: H, map: h, bucket_type: exp2, bucket_max: 3, labels:\n"
		   "       [{name: le, size: 4, decoders: [{name: uint}]},\n"
		   "        {name: b, size: 4, decoders: [{name: uint}]}]}\n",
	      5, 9, "label 'le' is the histogram's bucket bound");
}

static void test_exp2_max(void **state)
{
	(void)state;
	fails(HISTOGRAM("      bucket_type: exp2\n      bucket_max: 64\n"), 8, 19,
	      "exp2 bucket_max must be 63 or less");
	fails(HISTOGRAM("      bucket_type: linear\n      bucket_max: 512\n"), 8, 19,
	      "513 buckets; at most 512");
	fails(HISTOGRAM("      bucket_type: linear\n      bucket_min: -1\n      bucket_max: 3\n"),
	      8, 19, "bucket_min must be 0 or more");
	fails(HISTOGRAM("      bucket_type: linear\n"), 4, 7,
	      "missing required field 'bucket_max'");
	fails(HISTOGRAM("      bucket_type: exp3\n"), 7, 20,
	      "bucket_type is exp2, linear or fixed");
	fails(
	    HISTOGRAM("      bucket_type: exp2\n      bucket_max: 3\n      bucket_multiplier: 0\n"),
	    9, 26, "bucket_multiplier must be above 0");
	fails(HISTOGRAM(
		  "      bucket_type: exp2\n      bucket_max: 3\n      bucket_multiplier: nan\n"),
	      9, 26, "expected a number");
}

static void test_fixed_keys(void **state)
{
	(void)state;
	fails(HISTOGRAM("      bucket_type: fixed\n      bucket_keys: [1, 5, 5]\n"), 8, 27,
	      "bucket_keys must ascend strictly (5 after 5)");
	fails(HISTOGRAM("      bucket_type: fixed\n      bucket_keys: []\n"), 8, 20,
	      "expected at least 1 bucket_keys");
	fails(HISTOGRAM("      bucket_type: fixed\n      bucket_keys: [1]\n      bucket_max: 3\n"),
	      9, 19, "bucket_min and bucket_max are not for fixed buckets");
	fails(HISTOGRAM("      bucket_type: exp2\n      bucket_keys: [1]\n      bucket_max: 3\n"),
	      8, 20, "bucket_keys is for fixed buckets only");
}

static void test_min_above_max(void **state)
{
	(void)state;
	fails(HISTOGRAM("      bucket_type: exp2\n      bucket_min: 5\n      bucket_max: 3\n"), 8,
	      19, "bucket_min (5) is above bucket_max (3)");
}

static void test_regexp(void **state)
{
	(void)state;
	fails(COUNTER("name: l, size: 8, decoders: [{name: regexp, regexp: '(a'}]"), 4, 96,
	      "regexp does not compile: ");
	fails(
	    COUNTER("name: l, size: 8, decoders: [{name: regexp, regexp: '((a{100}){100}){100}'}]"),
	    4, 96, "regexp too complex");
	/* glibc's regcomp takes exponential time on a repeated group that can be empty. */
	fails(COUNTER("name: l, size: 8, decoders: [{name: regexp, regexp: '(^|()|^){50}'}]"), 4,
	      96, "repeated group that can match empty");
	/* glibc makes x+ into x x*: each + doubles what precedes it. */
	fails(COUNTER("name: l, size: 8, decoders: [{name: regexp, regexp: 'ab++++++++++++++++'}]"),
	      4, 96, "regexp too complex");
	fails(
	    COUNTER("name: l, size: 8, decoders: [{name: regexp, regexp: '(a)', replace: '\\2'}]"),
	    4, 112, "replace uses \\2 but the regexp has 1 groups");
}

static void test_static_map(void **state)
{
	(void)state;
	fails(COUNTER("name: l, size: 8, decoders: [{name: static_map, static_map: [a, b]}]"), 4,
	      104, "static_map: expected a mapping of values to names");
	fails(COUNTER("name: l, size: 8, decoders: [{name: static_map, static_map: {1: a, 1: b}}]"),
	      4, 111, "static_map lists '1' twice");
	fails(COUNTER("name: l, size: 8, decoders: [{name: static_map, allow_unknown: 1, "
		      "static_map: {1: a}}]"),
	      4, 107, "expected true or false");
}

static void test_empty_metrics(void **state)
{
	(void)state;
	fails(HEAD, 2, 9, "expected a mapping for metrics (fields: counters, histograms)");
	fails(HEAD "  counters: []\n", 3, 3, "no metrics");
	fails("object: x.bpf.o\n", 1, 1, "no metrics");
	fails(HEAD "  counters:\n    - {name: c, help: C, map: c, labels: []}\n", 4, 42,
	      "expected at least 1 labels");
}

static void test_wrong_types(void **state)
{
	(void)state;
	fails("- a\n- b\n", 1, 1, "expected a mapping for the config");
	fails(HEAD "  counters: {name: c}\n", 3, 13, "expected a list of counters");
	fails(COUNTER("name: [l], size: 8, decoders: [{name: uint}]"), 4, 50, "expected a string");
	fails(COUNTER("name: l, size: 8, decoders: [uint]"), 4, 73,
	      "expected a mapping for a decoder (e.g. name: uint)");
	fails(HEAD "  counters:\n    - {name: c, help: C, map: c, labels: [{name: l, size: 8, "
		   "decoders: [{name: uint}]}]}\n"
		   "    - {name: c, help: C, map: d, labels: [{name: l, size: 8, "
		   "decoders: [{name: uint}]}]}\n",
	      5, 7, "duplicate metric 'c' (also at line 4)");
}

/* Aliases may repeat a node many times: the parse stops, not the machine. */
static void test_alias_bomb(void **state)
{
	char *text = malloc(1 << 16), *p = text;
	int i;

	(void)state;
	p += sprintf(p, "object: x\nmetrics:\n  counters:\n    - &m {name: c, help: C, map: c, "
			"labels: [{name: l, size: 8, decoders: [{name: uint}, {name: static_map, "
			"static_map: &s {");
	for (i = 0; i < 4000; i++)
		p += sprintf(p, "%d: v%d, ", i, i);
	p += sprintf(p, "}}]}]}\n");
	for (i = 0; i < 255; i++)
		p += sprintf(p, "    - *m\n");
	/* The budget runs out inside the shared static_map. */
	fails(text, 4, 121, "config too large");
	free(text);
}

static void test_too_large(void **state)
{
	size_t len = (1 << 20) + 1;
	char *text = malloc(len);
	struct uconfig c;

	(void)state;
	memset(text, '#', len);
	assert_int_equal(uconfig_parse_buffer("big.yaml", text, len, &c, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "big.yaml:1:1: config larger than 1048576 bytes");
	free(text);
}

static void test_files(void **state)
{
	char dir[] = "/tmp/iolat-uconfig-XXXXXX", path[64];
	struct uconfig c;
	FILE *f;

	(void)state;
	assert_int_equal(uconfig_parse_file("/nonexistent/u.yaml", &c, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "/nonexistent/u.yaml: No such file or directory");
	assert_true(all_zero(&c));

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/biolat.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("object: biolat.bpf.o\n"
	      "metrics:\n"
	      "  counters:\n"
	      "    - {name: c, help: C, map: c, labels: [{name: l, size: 8, decoders: [{name: "
	      "uint}]}]}\n",
	      f);
	assert_int_equal(fclose(f), 0);
	if (uconfig_parse_file(path, &c, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(c.name, "biolat");
	assert_string_equal(c.file, path);
	assert_true(!strncmp(c.object, dir, strlen(dir)));
	assert_string_equal(c.object + strlen(dir), "/biolat.bpf.o");
	uconfig_free(&c);
	unlink(path);
	rmdir(dir);
}

static void test_decoder_names(void **state)
{
	(void)state;
	for (int k = UDEC_UINT; k <= UDEC_KSTACK; k++)
		assert_int_equal(udec_kind_of(udec_name((enum udec_kind)k)), k);
	assert_string_equal(udec_name(UDEC_MAJORMINOR), "majorminor");
	assert_int_equal(udec_kind_of("nope"), -1);
}

/* perf_events: parsed by name or number; each error at its place. */
static void test_perf_events(void **state)
{
	static const char ok[] = COUNTER(
	    "name: l, size: 4, decoders: [{name: uint}]") "perf_events:\n"
							  "  - {type: software, name: cpu-clock, "
							  "sample_frequency: 49, program: p}\n"
							  "  - {type: hardware, name: \"3\", "
							  "sample_period: 1000, program: q}\n";
	struct uconfig c;

	(void)state;
	assert_int_equal(uconfig_parse_buffer("t.yaml", ok, strlen(ok), &c, err, sizeof(err)), 0);
	assert_int_equal(c.nperf, 2);
	assert_int_equal(c.perf[0].type, 1);   /* PERF_TYPE_SOFTWARE */
	assert_int_equal(c.perf[0].config, 0); /* PERF_COUNT_SW_CPU_CLOCK */
	assert_int_equal(c.perf[0].sample_freq, 49);
	assert_string_equal(c.perf[0].program, "p");
	assert_int_equal(c.perf[1].type, 0); /* PERF_TYPE_HARDWARE */
	assert_int_equal(c.perf[1].config, 3);
	assert_int_equal(c.perf[1].sample_period, 1000);
	assert_int_equal(c.perf[1].line, 7);
	uconfig_free(&c);
	fails(
	    COUNTER(
		"name: l, size: 4, decoders: [{name: uint}]") "perf_events:\n  - {type: software, "
							      "name: nope, sample_frequency: 9, "
							      "program: p}\n",
	    6, 28, "unknown software event 'nope'");
	fails(
	    COUNTER("name: l, size: 4, decoders: [{name: uint}]") "perf_events:\n  - {type: "
								  "wetware, name: cpu-clock, "
								  "sample_period: 9, program: p}\n",
	    6, 12, "perf event type is software or hardware");
	fails(
	    COUNTER(
		"name: l, size: 4, decoders: [{name: uint}]") "perf_events:\n  - {type: software, "
							      "name: cpu-clock, program: p}\n",
	    6, 5, "either sample_frequency");
}

/* iolat's own configs parse, and serve's options can edit them: folding
 * op into the device's padding keeps the key's size. */
static void test_builtin_configs(void **state)
{
	struct uconfig c;
	char err[256] = "";
	unsigned before;

	(void)state;
	assert_int_equal(uconfig_parse_buffer("builtin/block.yaml", builtin_block_yaml,
					      strlen(builtin_block_yaml), &c, err, sizeof(err)),
			 0);
	assert_int_equal(c.nmetrics, 7);
	assert_string_equal(c.metric[0].name, "iolat_block_device_latency_seconds");
	assert_int_equal(c.metric[0].bucket_type, UBUCKET_IOLAT_LATENCY);
	assert_int_equal(c.metric[0].nfields, 3);
	before = c.metric[0].field[0].size + c.metric[0].field[0].padding +
		 c.metric[0].field[1].size + c.metric[0].field[1].padding;
	assert_int_equal(uconfig_fold_label(&c, "op"), 0);
	assert_int_equal(c.metric[0].nfields, 2);
	assert_string_equal(c.metric[0].field[1].name, "size");
	assert_int_equal(c.metric[0].field[0].size + c.metric[0].field[0].padding, before);
	/* The first field folds into the skip. */
	assert_int_equal(uconfig_fold_label(&c, "device"), 0);
	assert_int_equal(c.metric[0].nfields, 1);
	assert_int_equal(c.metric[0].skip, before);
	/* The histograms would have no field left: refused, nothing folded
	 * (not even untimed's size, which has view after it). */
	assert_int_equal(uconfig_fold_label(&c, "size"), -1);
	assert_int_equal(c.metric[0].nfields, 1);
	assert_int_equal(c.metric[6].nfields, 2);
	uconfig_drop_metric(&c, "iolat_block_request_size_bytes");
	assert_int_equal(c.nmetrics, 6);
	uconfig_free(&c);
	assert_int_equal(uconfig_parse_buffer("builtin/workloads.yaml", builtin_workloads_yaml,
					      strlen(builtin_workloads_yaml), &c, err, sizeof(err)),
			 0);
	assert_int_equal(c.nmetrics, 9); /* 6 of block I/O, 3 of system calls */
	assert_int_equal(c.metric[0].nfields,
			 7); /* device, op, kind, workload, namespace, pod, container */
	/* The first field folds into the skip: kind then starts 8 bytes in,
	 * after device (4) and op (1, padding 3). */
	assert_int_equal(uconfig_fold_label(&c, "device"), 0);
	assert_int_equal(uconfig_fold_label(&c, "op"), 0);
	assert_int_equal(c.metric[0].nfields, 5);
	assert_string_equal(c.metric[0].field[0].name, "kind");
	assert_int_equal(c.metric[0].skip, 8);
	uconfig_free(&c);
}

/* The prefix is kept as written, "" too, and absent is NULL (the
 * exporter's default); names stay as written: the exporter prefixes them. */
static void test_metrics_prefix(void **state)
{
	static const struct {
		const char *line;
		const char *want;
	} cases[] = {
		{ "metrics_prefix: ebpf_exporter_\n", "ebpf_exporter_" },
		{ "metrics_prefix: \"\"\n", "" },
		{ "", NULL },
	};
	char text[256];
	struct uconfig c;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text),
			 "%s" COUNTER("name: l, size: 8, decoders: [{name: uint}]"), cases[i].line);
		assert_int_equal(
		    uconfig_parse_buffer("t.yaml", text, strlen(text), &c, err, sizeof(err)), 0);
		if (cases[i].want)
			assert_string_equal(c.metrics_prefix, cases[i].want);
		else
			assert_null(c.metrics_prefix);
		assert_string_equal(c.metric[0].name, "c");
		uconfig_free(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),	      cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_pseudo_file),   cmocka_unit_test(test_syntax_error),
		cmocka_unit_test(test_unknown_field), cmocka_unit_test(test_unknown_decoder),
		cmocka_unit_test(test_missing_field), cmocka_unit_test(test_bad_name),
		cmocka_unit_test(test_label_size),    cmocka_unit_test(test_decoder_size),
		cmocka_unit_test(test_exp2_max),      cmocka_unit_test(test_fixed_keys),
		cmocka_unit_test(test_min_above_max), cmocka_unit_test(test_regexp),
		cmocka_unit_test(test_static_map),    cmocka_unit_test(test_empty_metrics),
		cmocka_unit_test(test_wrong_types),   cmocka_unit_test(test_alias_bomb),
		cmocka_unit_test(test_too_large),     cmocka_unit_test(test_files),
		cmocka_unit_test(test_decoder_names), cmocka_unit_test(test_builtin_configs),
		cmocka_unit_test(test_perf_events),   cmocka_unit_test(test_metrics_prefix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
