// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_buf.c - format_digits and format_decimal (util/buf.h), the integer
 * writers of every sample: exact digits at each length and its edges. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "util/buf.h"

static void assert_digits(uint64_t n, const char *want)
{
	char out[FORMAT_DIGITS_MAX + 8];
	size_t len;

	memset(out, 'x', sizeof(out));
	len = format_digits(out, n);
	out[sizeof(out) - 1] = '\0';
	assert_int_equal(len, strlen(want));
	assert_memory_equal(out, want, len);
	assert_int_equal(out[len], 'x'); /* nothing past its digits */
}

static void test_digits_edges(void **state)
{
	(void)state;
	assert_digits(0, "0");
	assert_digits(7, "7");
	assert_digits(10, "10");
	assert_digits(99, "99");
	assert_digits(100, "100");
	assert_digits(101, "101");
	assert_digits(9999, "9999");
	assert_digits(10000, "10000");
	assert_digits(29997, "29997");
	assert_digits(999999999999999ULL, "999999999999999");
	assert_digits(1000000000000000ULL, "1000000000000000");
	assert_digits(10000000000000000000ULL, "10000000000000000000");
	assert_digits(UINT64_MAX, "18446744073709551615");
}

/* Every power of ten, one below it and one past it, and a walk of values
 * with every digit count: as printf writes them. */
static void test_digits_like_printf(void **state)
{
	char want[32];
	uint64_t p = 1;

	(void)state;
	for (int k = 0; k < 20; k++, p *= 10) {
		const uint64_t v[] = { p - 1, p, p + 1, p * 3 + 7 };

		for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
			snprintf(want, sizeof(want), "%" PRIu64, v[i]);
			assert_digits(v[i], want);
		}
	}
	for (uint64_t x = 1; x < UINT64_MAX / 3; x = x * 3 + 1) {
		snprintf(want, sizeof(want), "%" PRIu64, x);
		assert_digits(x, want);
	}
}

static void test_decimal(void **state)
{
	char out[8];

	(void)state;
	format_decimal(out, sizeof(out), 0, false);
	assert_string_equal(out, "0");
	format_decimal(out, sizeof(out), 42, true);
	assert_string_equal(out, "-42");
	format_decimal(out, sizeof(out), 1234567, true); /* cut to fit, NUL kept */
	assert_string_equal(out, "-123456");
	format_decimal(out, 1, 5, false);
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_digits_edges),
		cmocka_unit_test(test_digits_like_printf),
		cmocka_unit_test(test_decimal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
