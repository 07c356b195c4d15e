// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_serve_config.c - serve's settings file (serve/serve_config.c): every
 * key lands in its field, and each kind of mistake is refused with
 * FILE:LINE:COLUMN and a reason, whatever the rest of the file says. */
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

#include "iolat.h"
#include "serve/serve_config.h"

/* Writes text to a temporary file; its path in path. */
static void write_file(char *path, size_t len, const char *text)
{
	int fd;
	FILE *f;

	snprintf(path, len, "/tmp/iolat-test-config.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int load(const char *text, struct serve_config *c, char *err, size_t len)
{
	char path[64];
	int rc;

	write_file(path, sizeof(path), text);
	config_defaults(c);
	rc = config_load(path, c, err, len);
	unlink(path);
	return rc;
}

static void test_every_key(void **state)
{
	struct serve_config c;
	char err[512] = "";

	(void)state;
	assert_int_equal(load("web:\n"
			      "  listen_addresses: ['127.0.0.1:1', '[::1]:2']\n"
			      "  telemetry_path: /m\n"
			      "  config_file: /etc/iolat/web.yml\n"
			      "views: {device_time: false, total_time: true, request_size: false}\n"
			      "buckets:\n"
			      "  latency_seconds: [0.001, 0.01]\n"
			      "  size_bytes: [4096, 65536, 1048576]\n"
			      "labels: {op: false, size_class: true}\n"
			      "workloads:\n"
			      "  enabled: false\n"
			      "  by: process\n"
			      "  max: 42\n"
			      "  expire: 2m\n"
			      "  rules:\n"
			      "    - {match: '^/tenants/([^/]+)', kind: tenant, name: '\\1'}\n"
			      "disks: {expire: 90s}\n"
			      "bpf_stats: true\n"
			      "bpf_map_sizes: {rq_starts: 65536, hists_shared: 2048}\n"
			      "log_level: warn\n"
			      "log_format: json\n",
			      &c, err, sizeof(err)),
			 0);
	assert_string_equal(err, "");
	assert_int_equal(c.nlisten, 2);
	assert_string_equal(c.listen[1], "[::1]:2");
	assert_string_equal(c.telemetry_path, "/m");
	assert_string_equal(c.web_config_file, "/etc/iolat/web.yml");
	assert_false(c.device_view);
	assert_true(c.total_view);
	assert_false(c.size_view);
	assert_int_equal(c.nlat_le, 2);
	assert_int_equal(c.lat_le[0], 1000000);
	assert_int_equal(c.lat_le[1], 10000000);
	assert_int_equal(c.nsize_le, 3);
	assert_int_equal(c.size_le[2], 1048576);
	assert_false(c.op_label);
	assert_true(c.size_label);
	assert_false(c.workloads);
	assert_true(c.workloads_by_process);
	assert_int_equal(c.workloads_max, 42);
	assert_int_equal(c.workloads_expire_s, 120);
	assert_int_equal(c.nrules, 1);
	assert_string_equal(c.rules[0].kind, "tenant");
	assert_string_equal(c.rules[0].name, "\\1");
	assert_int_equal(c.disks_expire_s, 90);
	assert_true(c.bpf_stats);
	assert_int_equal(c.map_sizes[MAPSIZE_RQ_STARTS], 65536);
	assert_int_equal(c.map_sizes[MAPSIZE_HISTS], 2048);
	assert_int_equal(c.map_sizes[MAPSIZE_BIO_STARTS], 0); /* not given: from the host */
	assert_int_equal(c.log_level, LOG_WARN_L);
	assert_int_equal(c.log_format, LOG_JSON);
}

/* Each bad file gives an error at its place (":LINE:COL: ") with a reason. */
static void test_mistakes(void **state)
{
	static const struct {
		const char *text, *where, *why;
	} cases[] = {
		{ "web:\n  listen_adresses: [':1']\n", ":2:3: ", "unknown key 'listen_adresses'" },
		{ "views:\n  device_time: maybe\n", ":2:16: ", "expected true or false" },
		{ "buckets:\n  latency_seconds: [0.01, 0.001]\n", ":2:", "bounds must ascend" },
		{ "buckets:\n  latency_seconds: [0.0000000015]\n", ":2:21: ",
		  "latency_seconds 0.0000000015 is not a whole nanosecond, which iolat counts in; "
		  "the nearest it can count at exactly: 0.000000001 or 0.000000002" },
		{ "buckets:\n  latency_seconds: [3e-10]\n", ":2:21: ",
		  "latency_seconds 3e-10 is not a whole nanosecond, which iolat counts in; the "
		  "nearest it can count at exactly: 0.000000001" },
		{ "buckets:\n  latency_seconds: [1e10]\n", ":2:21: ",
		  "latency_seconds 1e10 is beyond what iolat counts (at most 1000000000 s)" },
		{ "buckets:\n  size_bytes: [4096.5]\n", ":2:16: ",
		  "size_bytes 4096.5 is not a whole byte, which iolat counts in; the nearest it "
		  "can "
		  "count at exactly: 4096 or 4097" },
		{ "workloads:\n  by: pod\n", ":2:7: ", "workloads.by is cgroup or process" },
		{ "workloads:\n  max: 0\n", ":2:8: ", "expected a whole number from 1 to 100000" },
		{ "workloads:\n  expire: soon\n", ":2:11: ", "expected a duration" },
		{ "workloads:\n  rules:\n    - {kind: x}\n", ":3:", "a rule needs a match" },
		{ "workloads:\n  rules:\n    - {match: '('}\n",
		  ":3:7: ", "bad regular expression" },
		{ "disks:\n  expire: 0\n", ":2:11: ", "at least 1s" },
		{ "bpf_map_sizes:\n  rq_start: 10\n",
		  ":2:3: ", "unknown key 'rq_start' (known: hists, rq_starts, bio_starts, comms)" },
		{ "bpf_map_sizes:\n  comms: 0\n", ":2:10: ", "expected a whole number from 1 to" },
		{ "log_level: loud\n", ":1:12: ", "log_level is one of debug, info, warn, error" },
		{ "log_format: xml\n", ":1:13: ", "log_format is logfmt or json" },
		{ "views: [\n", ":2:1: ", "did not find expected node content" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct serve_config c;
		char err[512] = "";

		if (load(cases[i].text, &c, err, sizeof(err)) == 0)
			fail_msg("accepted: %s", cases[i].text);
		if (!strstr(err, "/tmp/iolat-test-config.") || !strstr(err, cases[i].where) ||
		    !strstr(err, cases[i].why))
			fail_msg("for %s: '%s' lacks '%s' or '%s'", cases[i].text, err,
				 cases[i].where, cases[i].why);
	}
}

/* Bounds are kept as written, in whole ns and bytes: 30 us is 30000 ns,
 * not the slot bound under it. */
static void test_bounds_as_written(void **state)
{
	struct serve_config c;
	char err[512] = "";

	(void)state;
	assert_int_equal(load("buckets:\n"
			      "  latency_seconds: [0.000005, 3e-05, 0.0001, 0.000123457, 2.5]\n"
			      "  size_bytes: [1000, 3000, 4096]\n",
			      &c, err, sizeof(err)),
			 0);
	assert_int_equal(c.nlat_le, 5);
	assert_int_equal(c.lat_le[0], 5000);
	assert_int_equal(c.lat_le[1], 30000);
	assert_int_equal(c.lat_le[2], 100000);
	assert_int_equal(c.lat_le[3], 123457);
	assert_true(c.lat_le[4] == 2500000000ULL);
	assert_int_equal(c.nsize_le, 3);
	assert_int_equal(c.size_le[0], 1000);
	assert_int_equal(c.size_le[1], 3000);
}

/* The kernel's table has 17 slots for bounds of one's own: an 18th new one
 * is refused, naming the bounds near it that the table has anyway. */
/* n bounds of 30 us + i ns (i = 1..n), none of them in the fixed table. */
static void new_bounds(char *text, size_t len, int n)
{
	snprintf(text, len, "buckets:\n  latency_seconds: [");
	for (int i = 1; i <= n; i++)
		snprintf(text + strlen(text), len - strlen(text), "%s0.0000300%02d",
			 i > 1 ? ", " : "", i);
	snprintf(text + strlen(text), len - strlen(text), "]\n");
}

/* The kernel's table has 17 slots for bounds of one's own: an 18th new one
 * is refused, naming the bounds near it that the table has anyway. */
static void test_bounds_beyond_room(void **state)
{
	struct serve_config c;
	char text[1024], err[512] = "";

	(void)state;
	new_bounds(text, sizeof(text), 18);
	if (!load(text, &c, err, sizeof(err)))
		fail_msg("accepted 18 new bounds");
	if (!strstr(err, ":2:20: latency_seconds: only 17 bounds of your own fit beside those "
			 "iolat counts at anyway; 0.000030018 is one too many: use one near it "
			 "that it has, 0.000029223 or 0.000030517, or drop a bound"))
		fail_msg("%s", err);
	new_bounds(text, sizeof(text), 17);
	if (load(text, &c, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(c.nlat_le, 17);
	assert_int_equal(c.lat_le[16], 30017);
	/* Bounds the table has anyway cost no slot: the defaults, all 20. */
	if (load("buckets:\n  latency_seconds: [0.000005, 0.00001, 0.000025, 0.00005, 0.0001, "
		 "0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, "
		 "2.5, 5, 10]\n",
		 &c, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(c.nlat_le, 20);
}

/* How messages name the bounds near one: both sides, or the one there is. */
static void test_bounds_near(void **state)
{
	static uint64_t store[IOLAT_LAT_SLOTS];
	struct bucket_table t;
	char near[80];

	(void)state;
	assert_int_equal(buckets_build_latency(&t, store, NULL, 0), 0);
	config_bounds_near(&t, 30000, near, sizeof(near));
	assert_string_equal(near, "0.000029223 or 0.000030517");
	config_bounds_near(&t, 1, near, sizeof(near));
	assert_string_equal(near, "0.000000953");
	config_bounds_near(&t, t.bound[t.nbounds - 1] + 1, near, sizeof(near));
	assert_string_equal(near, "134.217727999");
}

static void test_missing_file(void **state)
{
	struct serve_config c;
	char err[512] = "";

	(void)state;
	config_defaults(&c);
	assert_true(config_load("/nonexistent/iolat.yml", &c, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent/iolat.yml"));
}

/* What a reload's debug line names: the settings that differ, by their
 * names in the file; none for the same file loaded twice. */
static void test_changes(void **state)
{
	static const char base[] = "labels:\n  op: true\nworkloads:\n  max: 10\n"
				   "  rules:\n    - match: '^/a/(.*)'\n      kind: a\n"
				   "      name: '\\1'\n";
	struct serve_config *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char err[512] = "", out[256];

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(load(base, a, err, sizeof(err)), 0);
	assert_int_equal(load(base, b, err, sizeof(err)), 0);
	config_changes(a, b, out, sizeof(out));
	assert_string_equal(out, "");
	assert_int_equal(load("labels:\n  op: false\nworkloads:\n  max: 11\n"
			      "  rules:\n    - match: '^/a/(.*)'\n      kind: b\n"
			      "      name: '\\1'\nlog_format: json\n",
			      b, err, sizeof(err)),
			 0);
	config_changes(a, b, out, sizeof(out));
	assert_string_equal(out, "labels.op,workloads.max,workloads.rules,log_format");
	config_changes(a, b, out, 20); /* cut short, still a string */
	assert_string_equal(out, "labels.op,workloads");
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_key),	  cmocka_unit_test(test_mistakes),
		cmocka_unit_test(test_bounds_as_written), cmocka_unit_test(test_bounds_beyond_room),
		cmocka_unit_test(test_bounds_near),	  cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_changes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
