// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_snapshot.c - the snapshot's hash index: thousands of keys removed
 * through it (snapshot_index_take: swap-remove and backward-shift deletion)
 * with every remaining key still found, at its own series, after each step;
 * and the collector's store of live and kept series against a model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "core/snapshot.h"

#define KEYS 3000

/* Keys that differ in one field at a time, some only in the low bits, so
 * many share a home slot and probe runs are long and wrap. */
static struct iolat_key key_of(int i)
{
	struct iolat_key k;

	memset(&k, 0, sizeof(k));
	k.cgroup = (uint64_t)(i / 6) + 1;
	k.dev = (uint32_t)(i % 3) << 20 | 7;
	k.op = (__u8)(i % 2);
	return k;
}

/* Every key present has one series, whose ios says which key it is (i + 1),
 * and the index finds it without adding; none of the absent ones is found. */
static void check_all(struct snapshot *snap, struct snapshot_index *ix, const char *present)
{
	size_t n = 0;

	for (int i = 0; i < KEYS; i++) {
		struct iolat_key k = key_of(i);
		const struct series *s = snapshot_find(snap, &k);

		if (!present[i]) {
			assert_null(s);
			continue;
		}
		n++;
		assert_non_null(s);
		assert_int_equal(s->val.ios, (uint64_t)i + 1);
		/* The index finds the same series, and adds none. */
		assert_ptr_equal(snapshot_index_get(snap, ix, &k), s);
	}
	assert_int_equal(snap->n, n);
}

static void test_take_thousands(void **state)
{
	static char present[KEYS];
	struct snapshot snap = { 0 };
	struct snapshot_index ix = { 0 };
	struct iolat_val *into = calloc(1, sizeof(*into));
	unsigned int seed = 7;
	uint64_t taken = 0;

	(void)state;
	assert_non_null(into);
	for (int i = 0; i < KEYS; i++) {
		struct iolat_key k = key_of(i);
		struct series *s = snapshot_index_get(&snap, &ix, &k);

		assert_non_null(s);
		s->val.ios = (uint64_t)i + 1;
		present[i] = 1;
	}
	check_all(&snap, &ix, present);
	/* Remove all but a few hundred, in random order, checking as it goes. */
	for (int round = 0; round < KEYS - 300; round++) {
		int i = (int)(rand_r(&seed) % KEYS);
		struct iolat_key k = key_of(i);
		bool was = snapshot_index_take(&snap, &ix, &k, into);

		assert_int_equal(was, present[i]);
		if (was)
			taken += (uint64_t)i + 1;
		assert_int_equal(into->ios, taken);
		present[i] = 0;
		if (round % 250 == 0)
			check_all(&snap, &ix, present);
	}
	check_all(&snap, &ix, present);
	/* Without an `into`, and the last one left. */
	for (int i = 0; i < KEYS; i++) {
		struct iolat_key k = key_of(i);

		assert_int_equal(snapshot_index_take(&snap, &ix, &k, NULL), present[i]);
		present[i] = 0;
	}
	assert_int_equal(snap.n, 0);
	check_all(&snap, &ix, present);
	snapshot_index_free(&ix);
	snapshot_free(&snap);
	free(into);
}

/* Removal after a change the index did not see (a series removed behind
 * its back) still finds the right series: the index rebuilds. */
static void test_take_after_outside_change(void **state)
{
	struct snapshot snap = { 0 };
	struct snapshot_index ix = { 0 };

	(void)state;
	for (int i = 0; i < 50; i++) {
		struct iolat_key k = key_of(i);

		snapshot_index_get(&snap, &ix, &k)->val.ios = (uint64_t)i + 1;
	}
	assert_int_equal(snapshot_drop_dev(&snap, key_of(0).dev), 17);
	for (int i = 1; i < 50; i += 3) {
		struct iolat_key k = key_of(i);

		assert_true(snapshot_index_take(&snap, &ix, &k, NULL));
		assert_null(snapshot_find(&snap, &k));
	}
	assert_int_equal(snap.n, 50 - 17 - 17);
	snapshot_index_free(&ix);
	snapshot_free(&snap);
}

/* In the store, what the model says: state[i] 0 absent, 1 live, 2 kept;
 * live series first, kept after, each with its own ios. */
static void check_store(struct snapshot_store *st, const char *state)
{
	size_t live = 0, kept = 0;

	for (int i = 0; i < KEYS; i++) {
		struct iolat_key k = key_of(i);
		const struct series *s = snapshot_find(&st->all, &k);

		live += state[i] == 1;
		kept += state[i] == 2;
		if (!state[i]) {
			assert_null(s);
			continue;
		}
		assert_non_null(s);
		assert_int_equal(s->val.ios, (uint64_t)i + 1);
		if (state[i] == 1) {
			assert_true(s < st->all.s + st->nlive);
			assert_ptr_equal(snapshot_store_live(st, &k), s); /* found, not added */
		} else {
			assert_true(s >= st->all.s + st->nlive);
		}
	}
	assert_int_equal(st->nlive, live);
	assert_int_equal(st->all.n, live + kept);
}

/* Live series come and go through the index while kept ones sit after
 * them: neither kind is lost, duplicated or moved to the other's side. */
static void test_store(void **state)
{
	static char where[KEYS];
	struct snapshot_store st = { 0 };
	struct iolat_val *v = calloc(1, sizeof(*v)), *into = calloc(1, sizeof(*into));
	unsigned int seed = 11;

	(void)state;
	assert_non_null(v);
	assert_non_null(into);
	for (int round = 0; round < 20000; round++) {
		int i = (int)(rand_r(&seed) % KEYS);
		struct iolat_key k = key_of(i);
		struct series *s;

		memset(into, 0, sizeof(*into));
		switch (rand_r(&seed) % 4) {
		case 0: /* a live key (new or not); a kept key's stays apart */
			if (where[i] == 2)
				break;
			s = snapshot_store_live(&st, &k);
			assert_non_null(s);
			s->val.ios = (uint64_t)i + 1;
			where[i] = 1;
			break;
		case 1:
			assert_int_equal(snapshot_store_unlive(&st, &k, into), where[i] == 1);
			assert_int_equal(into->ios, where[i] == 1 ? (uint64_t)i + 1 : 0);
			if (where[i] == 1)
				where[i] = 0;
			break;
		case 2: /* kept: a key not live */
			if (where[i] == 1)
				break;
			v->ios = where[i] == 2 ? 0 : (uint64_t)i + 1;
			assert_int_equal(snapshot_store_keep(&st, &k, v), 0);
			where[i] = 2;
			break;
		default:
			assert_int_equal(snapshot_store_unkeep(&st, &k, into), where[i] == 2);
			assert_int_equal(into->ios, where[i] == 2 ? (uint64_t)i + 1 : 0);
			if (where[i] == 2)
				where[i] = 0;
			break;
		}
		if (round % 1000 == 0)
			check_store(&st, where);
	}
	check_store(&st, where);
	snapshot_store_free(&st);
	free(v);
	free(into);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_thousands),
		cmocka_unit_test(test_take_after_outside_change),
		cmocka_unit_test(test_store),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
