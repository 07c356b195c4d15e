// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_idmap.c - the id -> pointer map against a plain array, through many
 * inserts and deletes (deletion moves entries back along probe runs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "util/idmap.h"

#define IDS 4000

/* Ids that crowd few home slots, so probe runs are long and wrap around. */
static uint64_t id_of(int i)
{
	return (uint64_t)(i % 7 + 1) * 0x1000000ULL + (uint64_t)i * 64 + 1;
}

static void test_against_array(void **state)
{
	static char present[IDS];
	struct idmap m = { 0 };
	unsigned int seed = 42;

	(void)state;
	for (int round = 0; round < 200000; round++) {
		int i = (int)(rand_r(&seed) % IDS);

		if (rand_r(&seed) % 3) {
			assert_int_equal(idmap_put(&m, id_of(i), &present[i]), 0);
			present[i] = 1;
		} else {
			void *was = idmap_del(&m, id_of(i));

			assert_ptr_equal(was, present[i] ? &present[i] : NULL);
			present[i] = 0;
		}
		if (round % 5000 == 0) {
			size_t n = 0;

			for (int k = 0; k < IDS; k++) {
				void *v = idmap_get(&m, id_of(k));

				assert_ptr_equal(v, present[k] ? &present[k] : NULL);
				n += present[k];
			}
			assert_int_equal(n, m.n);
		}
	}
	idmap_free(&m);
}

static void count(void *ctx, uint64_t id, void *val)
{
	(void)id;
	(void)val;
	(*(size_t *)ctx)++;
}

static void test_each_and_empty(void **state)
{
	struct idmap m = { 0 };
	size_t n = 0;
	int x;

	(void)state;
	assert_null(idmap_get(&m, 5));
	assert_null(idmap_del(&m, 5));
	for (uint64_t id = 1; id <= 100; id++)
		assert_int_equal(idmap_put(&m, id, &x), 0);
	assert_int_equal(idmap_put(&m, 50, &x), 0); /* replace: no new entry */
	idmap_each(&m, count, &n);
	assert_int_equal(n, 100);
	idmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_array),
		cmocka_unit_test(test_each_and_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
