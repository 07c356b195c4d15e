// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_monotonic.c - util/monotonic's forms of the one clock agree. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "util/monotonic.h"

static void test_timespec_round_trip(void **state)
{
	uint64_t ns[] = { 0,
			  1,
			  NSEC_PER_SEC - 1,
			  NSEC_PER_SEC,
			  5 * NSEC_PER_SEC + 250 * NSEC_PER_MSEC,
			  monotonic_ns() };

	(void)state;
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		struct timespec ts = monotonic_timespec(ns[i]);

		assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < (long)NSEC_PER_SEC);
		assert_int_equal((uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec, ns[i]);
	}
}

static void test_forms_agree(void **state)
{
	uint64_t before = monotonic_ns();
	double s = monotonic_s();
	uint64_t after = monotonic_ns();

	(void)state;
	assert_true(after >= before);
	/* A double holds today's ns since boot to well under a microsecond. */
	assert_true(s * 1e9 >= (double)before - 1e3 && s * 1e9 <= (double)after + 1e3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timespec_round_trip),
		cmocka_unit_test(test_forms_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
