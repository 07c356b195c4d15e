// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_parse.c - the number and duration parsers every flag and config file
 * goes through (util/parse.c): the whole string or nothing, in range. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "util/parse.h"

static void test_uint(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(parse_uint("42", 1, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(parse_uint("18446744073709551615", 0, UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	/* Refused, and the output left alone. */
	static const char *const bad[] = { "",	 "-1",	 "+1",	" 1", "1 ",
					   "1x", "0x10", "101", "0",  "18446744073709551616",
					   "1.0" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse_uint(bad[i], 1, 100, &v), -EINVAL);
	assert_int_equal(parse_uint(NULL, 0, 1, &v), -EINVAL);
	assert_int_equal(v, 7);
}

static void test_seconds(void **state)
{
	double s = 0;

	(void)state;
	assert_int_equal(parse_seconds("0.5", &s), 0);
	assert_true(s == 0.5);
	assert_int_equal(parse_seconds("10", &s), 0);
	assert_true(s == 10);
	static const char *const bad[] = { "", "0", "-1", "1s", "nan", "inf", "1e9", " 1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse_seconds(bad[i], &s), -EINVAL);
	assert_true(s == 10);
}

static void test_duration(void **state)
{
	unsigned int s = 0;

	(void)state;
	assert_int_equal(parse_duration("300", &s), 0);
	assert_int_equal(s, 300);
	assert_int_equal(parse_duration("90s", &s), 0);
	assert_int_equal(s, 90);
	assert_int_equal(parse_duration("5m", &s), 0);
	assert_int_equal(s, 300);
	assert_int_equal(parse_duration("1.5h", &s), 0);
	assert_int_equal(s, 5400);
	assert_int_equal(parse_duration("0", &s), 0); /* callers that need > 0 say so */
	assert_int_equal(s, 0);
	assert_int_equal(parse_duration("720h", &s), 0); /* 30 days, the most */
	static const char *const bad[] = { "", "m", "5d", "5 m", "-1s", "721h", "nan", "inf" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse_duration(bad[i], &s), -EINVAL);
}

static void test_duration_ms(void **state)
{
	uint64_t ms = 0;

	(void)state;
	assert_int_equal(parse_duration_ms("250ms", &ms), 0);
	assert_int_equal(ms, 250);
	assert_int_equal(parse_duration_ms("1.5s", &ms), 0);
	assert_int_equal(ms, 1500);
	assert_int_equal(parse_duration_ms("2m", &ms), 0);
	assert_int_equal(ms, 120000);
	assert_int_equal(parse_duration_ms("720h", &ms), 0);
	assert_int_equal(ms, 720ULL * 3600 * 1000);
	/* A bare number is refused: seconds or milliseconds would be a guess. */
	static const char *const bad[] = { "", "10", "ms", "5 ms", "-1s", "721h", "1us" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse_duration_ms(bad[i], &ms), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uint),
		cmocka_unit_test(test_seconds),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_duration_ms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
