// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_log.c - the daemon's log lines (log.c): logfmt and JSON, each a
 * single line whatever the message holds, the level threshold, and the
 * names the flags and the config file take. */
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

static void tricky_message(void)
{
	log_error("bad key 'a\"b\\c'\nnext\x01line");
}

/* The part after the timestamp, which changes. */
static const char *after(const char *line, const char *mark)
{
	const char *p = strstr(line, mark);

	assert_non_null(p);
	return p;
}

static void test_logfmt(void **state)
{
	char out[512];

	(void)state;
	unsetenv("JOURNAL_STREAM");
	log_set_format(LOG_LOGFMT);
	capture(tricky_message, out, sizeof(out));
	assert_int_equal(strncmp(out, "ts=", 3), 0);
	assert_string_equal(after(out, " level="),
			    " level=error msg=\"bad key 'a\\\"b\\\\c' next\\x01line\"\n");
}

static void test_json(void **state)
{
	char out[512];

	(void)state;
	unsetenv("JOURNAL_STREAM");
	log_set_format(LOG_JSON);
	capture(tricky_message, out, sizeof(out));
	log_set_format(LOG_LOGFMT);
	assert_int_equal(strncmp(out, "{\"ts\":\"", 7), 0);
	assert_string_equal(after(out, "Z\","),
			    "Z\",\"level\":\"error\",\"msg\":\"bad key 'a\\\"b\\\\c' "
			    "next\\u0001line\"}\n");
}

static void info_and_debug(void)
{
	log_debug("hidden");
	log_info("shown");
}

static void test_threshold_and_journal_prefix(void **state)
{
	char out[512];

	(void)state;
	setenv("JOURNAL_STREAM", "8:1234", 1);
	log_set_level(LOG_INFO_L);
	capture(info_and_debug, out, sizeof(out));
	unsetenv("JOURNAL_STREAM");
	assert_null(strstr(out, "hidden"));
	assert_int_equal(strncmp(out, "<6>ts=", 6), 0); /* syslog's LOG_INFO */
	assert_non_null(strstr(out, "msg=\"shown\""));
	assert_int_equal(strchr(out, '\n')[1], '\0'); /* one line */
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
		cmocka_unit_test(test_logfmt),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_threshold_and_journal_prefix),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
