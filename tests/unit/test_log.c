// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_log.c - the daemon's log lines (log.c): ts, level and msg first, then
 * fields, in logfmt and JSON; values escaped so that each line stays one
 * line and parses whatever a value holds (quotes, spaces, =, newlines,
 * control characters, bytes that are not UTF-8); a "FILE:LINE:COL: " error
 * split into fields; the level threshold checked before any argument is
 * evaluated; errorf in the log's format once a daemon asks; the names the
 * flags and the config file take. */
#include <math.h>
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

#include "util/errors.h"
#include "util/log.h"

/* stderr into a temporary file while fn runs; its text in out. */
static void capture(void (*fn)(void), char *out, size_t len)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, len - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
}

/* The part after the timestamp, which changes. */
static const char *after(const char *line, const char *mark)
{
	const char *p = strstr(line, mark);

	assert_non_null(p);
	return p;
}

/* Captured in one format, the logfmt one restored after. */
static void capture_as(enum log_format f, void (*fn)(void), char *out, size_t len)
{
	unsetenv("JOURNAL_STREAM");
	log_set_level(LOG_INFO_L);
	log_set_format(f);
	capture(fn, out, len);
	log_set_format(LOG_LOGFMT);
}

static void tricky_fields(void)
{
	log_error("bad key", LOG_STR("key", "a\"b\\c d=e\nnext\x01\tline"), LOG_STR("plain", "vda"),
		  LOG_STR("empty", ""), LOG_STR("absent", NULL),
		  LOG_STR("utf8", "d\xc3\xa9j\xc3\xa0"), LOG_STR("broken", "a\xff\xc3("),
		  LOG_INT("neg", -3), LOG_UINT("n", 18446744073709551615ULL), LOG_DBL("s", 0.25),
		  LOG_DBL("nan", NAN), LOG_BOOL("tls", 1));
}

static void test_logfmt_fields(void **state)
{
	char out[1024];

	(void)state;
	capture_as(LOG_LOGFMT, tricky_fields, out, sizeof(out));
	assert_int_equal(strncmp(out, "ts=", 3), 0);
	assert_string_equal(
	    after(out, " level="),
	    " level=error msg=\"bad key\" key=\"a\\\"b\\\\c d=e\\nnext\\u0001\\tline\" "
	    "plain=vda empty=\"\" utf8=d\xc3\xa9j\xc3\xa0 broken=\"a\xef\xbf\xbd\xef\xbf\xbd(\" "
	    "neg=-3 n=18446744073709551615 s=0.25 nan=NaN tls=true\n");
}

static void test_json_fields(void **state)
{
	char out[1024];

	(void)state;
	capture_as(LOG_JSON, tricky_fields, out, sizeof(out));
	assert_int_equal(strncmp(out, "{\"ts\":\"", 7), 0);
	assert_string_equal(
	    after(out, "Z\","),
	    "Z\",\"level\":\"error\",\"msg\":\"bad key\","
	    "\"key\":\"a\\\"b\\\\c d=e\\nnext\\u0001\\tline\",\"plain\":\"vda\","
	    "\"empty\":\"\",\"utf8\":\"d\xc3\xa9j\xc3\xa0\","
	    "\"broken\":\"a\xef\xbf\xbd\xef\xbf\xbd(\",\"neg\":-3,"
	    "\"n\":18446744073709551615,\"s\":0.25,\"nan\":\"NaN\",\"tls\":true}\n");
}

/* The YAML reader's position prefix, a path with a colon and spaces in it. */
static void positioned_error(void)
{
	log_error("reload failed", LOG_ERR("/etc/my dir/a:b.yml:12:7: unknown key 'x'"));
	log_error("reload failed", LOG_ERR("no position: 1:2"));
	log_error("reload failed", LOG_ERR("web.yml:3: no column"));
	log_error("reload failed", LOG_ERR("config 'x': x.yml:1:2: words first"));
}

/* Line i (from 0) of text, from " msg=" on, into out. */
static void msg_of_line(const char *text, int i, char *out, size_t len)
{
	const char *p = text, *end;

	for (; i > 0; i--) {
		p = strchr(p, '\n');
		assert_non_null(p);
		p++;
	}
	end = strchr(p, '\n');
	assert_non_null(end);
	p = after(p, " msg=");
	assert_true(p < end && (size_t)(end - p) < len);
	memcpy(out, p, (size_t)(end - p));
	out[end - p] = '\0';
}

static void test_error_position(void **state)
{
	char out[1024], msg[256];

	(void)state;
	capture_as(LOG_LOGFMT, positioned_error, out, sizeof(out));
	msg_of_line(out, 0, msg, sizeof(msg));
	assert_string_equal(msg, " msg=\"reload failed\" file=\"/etc/my dir/a:b.yml\" line=12 "
				 "col=7 err=\"unknown key 'x'\"");
	msg_of_line(out, 1, msg, sizeof(msg));
	assert_string_equal(msg, " msg=\"reload failed\" err=\"no position: 1:2\"");
	msg_of_line(out, 2, msg, sizeof(msg));
	assert_string_equal(msg, " msg=\"reload failed\" err=\"web.yml:3: no column\"");
	msg_of_line(out, 3, msg, sizeof(msg));
	assert_string_equal(msg,
			    " msg=\"reload failed\" err=\"config 'x': x.yml:1:2: words first\"");
	capture_as(LOG_JSON, positioned_error, out, sizeof(out));
	assert_non_null(strstr(out, "\"msg\":\"reload failed\",\"file\":\"/etc/my dir/a:b.yml\","
				    "\"line\":12,\"col\":7,\"err\":\"unknown key 'x'\"}\n"));
}

/* A value longer than a line: cut, closed, still one line. */
static void long_value(void)
{
	static char big[10000];

	memset(big, '"', sizeof(big) - 1);
	log_warn("long", LOG_STR("v", big), LOG_UINT("after", 1));
}

static void test_long_line(void **state)
{
	char out[16384];
	size_t n;

	(void)state;
	capture_as(LOG_JSON, long_value, out, sizeof(out));
	n = strlen(out);
	assert_true(n > 1000 && n <= 4096);
	assert_ptr_equal(strchr(out, '\n'), out + n - 1);
	assert_string_equal(out + n - 5, "\\\"\"}\n"); /* an escape never cut in two */
	assert_null(strstr(out, "after"));
	capture_as(LOG_LOGFMT, long_value, out, sizeof(out));
	n = strlen(out);
	assert_true(n > 1000 && n <= 4096);
	assert_string_equal(out + n - 4, "\\\"\"\n");
}

static int evaluated;

static const char *costly(void)
{
	evaluated++;
	return "x";
}

static void info_and_debug(void)
{
	log_debug("hidden", LOG_STR("v", costly()));
	log_info("shown", LOG_STR("v", costly()));
}

static void test_threshold_and_journal_prefix(void **state)
{
	char out[512];

	(void)state;
	evaluated = 0;
	setenv("JOURNAL_STREAM", "8:1234", 1);
	log_set_level(LOG_INFO_L);
	capture(info_and_debug, out, sizeof(out));
	unsetenv("JOURNAL_STREAM");
	assert_null(strstr(out, "hidden"));
	assert_int_equal(evaluated, 1); /* a filtered line's arguments are not evaluated */
	assert_int_equal(strncmp(out, "<6>ts=", 6), 0); /* syslog's LOG_INFO */
	assert_non_null(strstr(out, "msg=\"shown\" v=x\n"));
	assert_int_equal(strchr(out, '\n')[1], '\0'); /* one line */
	assert_false(log_enabled(LOG_DEBUG_L));
	log_set_level(LOG_DEBUG_L);
	capture(info_and_debug, out, sizeof(out));
	log_set_level(LOG_INFO_L);
	assert_int_equal(evaluated, 3);
	assert_non_null(strstr(out, "level=debug msg=\"hidden\" v=x\n"));
	log_set_level(LOG_ERROR_L);
	capture(info_and_debug, out, sizeof(out));
	log_set_level(LOG_INFO_L);
	assert_string_equal(out, "");
}

static void start_error(void)
{
	errorf("fix the flag or --config.file", "bad.yml:2:8: log_level is one of %s",
	       "debug, info");
}

static void test_errorf_to_log(void **state)
{
	char out[1024];

	(void)state;
	errors_to_log("cannot start");
	capture_as(LOG_JSON, start_error, out, sizeof(out));
	assert_string_equal(after(out, "\"level\""),
			    "\"level\":\"error\",\"msg\":\"cannot start\",\"file\":\"bad.yml\","
			    "\"line\":2,\"col\":8,\"err\":\"log_level is one of debug, info\","
			    "\"hint\":\"fix the flag or --config.file\"}\n");
	errors_to_log(NULL);
	capture_as(LOG_JSON, start_error, out, sizeof(out));
	assert_string_equal(out, "iolat: bad.yml:2:8: log_level is one of debug, info "
				 "(fix the flag or --config.file)\n");
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(log_level_from_name("debug"), LOG_DEBUG_L);
	assert_int_equal(log_level_from_name("error"), LOG_ERROR_L);
	assert_int_equal(log_level_from_name("verbose"), -1);
	assert_int_equal(log_format_from_name("logfmt"), LOG_LOGFMT);
	assert_int_equal(log_format_from_name("json"), LOG_JSON);
	assert_int_equal(log_format_from_name("JSON"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_logfmt_fields),
		cmocka_unit_test(test_json_fields),
		cmocka_unit_test(test_error_position),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_threshold_and_journal_prefix),
		cmocka_unit_test(test_errorf_to_log),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
