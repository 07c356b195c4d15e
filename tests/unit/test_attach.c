// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_attach.c - the choice between tp_btf and raw_tp and the fallback
 * under auto (core/attach), with attempts that succeed or fail on demand. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "core/attach.h"

/* What the attempts did, and which modes fail. */
struct attempts {
	enum attach_mode tried[4];
	int n;
	bool btf_fails, raw_fails;
};

static int try_mode(void *ctx, enum attach_mode mode, char *err, size_t len)
{
	struct attempts *a = ctx;
	bool fails = mode == ATTACH_TP_BTF ? a->btf_fails : a->raw_fails;

	a->tried[a->n++] = mode;
	if (!fails)
		return 0;
	snprintf(err, len, "%s failed", attach_mode_name(mode));
	return -EINVAL;
}

static struct probe_result with_btf(bool btf)
{
	struct probe_result pr = { 0 };

	pr.tp_btf[TP_RQ_COMPLETE] = btf;
	return pr;
}

static void test_auto_prefers_tp_btf(void **state)
{
	struct probe_result pr = with_btf(true);
	struct attempts a = { 0 };
	char err[64] = "";

	(void)state;
	assert_int_equal(attach_with_fallback(ATTACH_AUTO, &pr, try_mode, &a, err, sizeof(err)), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.tried[0], ATTACH_TP_BTF);
	assert_string_equal(err, "");
}

static void test_auto_falls_back(void **state)
{
	struct probe_result pr = with_btf(true);
	struct attempts a = { .btf_fails = true };
	char err[64] = "";

	(void)state;
	assert_int_equal(attach_with_fallback(ATTACH_AUTO, &pr, try_mode, &a, err, sizeof(err)), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.tried[1], ATTACH_RAW_TP);
	assert_string_equal(err, ""); /* the failed first attempt says nothing */

	a = (struct attempts){ .btf_fails = true, .raw_fails = true };
	assert_int_equal(attach_with_fallback(ATTACH_AUTO, &pr, try_mode, &a, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "raw_tp failed");
}

static void test_auto_without_btf(void **state)
{
	struct probe_result pr = with_btf(false);
	struct attempts a = { 0 };
	char err[64] = "";

	(void)state;
	assert_int_equal(attach_with_fallback(ATTACH_AUTO, &pr, try_mode, &a, err, sizeof(err)), 0);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.tried[0], ATTACH_RAW_TP);
}

static void test_asked_mode_has_no_fallback(void **state)
{
	struct probe_result pr = with_btf(true);
	struct attempts a = { .btf_fails = true };
	char err[64] = "";

	(void)state;
	assert_int_equal(attach_with_fallback(ATTACH_TP_BTF, &pr, try_mode, &a, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(a.n, 1);
	assert_string_equal(err, "tp_btf failed");
}

static void test_environment_forces(void **state)
{
	struct probe_result pr = with_btf(true);
	struct attempts a = { 0 };
	char err[64] = "";

	(void)state;
	/* IOLAT_FORCE_ATTACH's value, as the commands pass it. */
	assert_int_equal(attach_with_fallback(attach_forced(ATTACH_TP_BTF, "raw_tp"), &pr, try_mode,
					      &a, err, sizeof(err)),
			 0);
	assert_int_equal(a.tried[0], ATTACH_RAW_TP);
	a = (struct attempts){ 0 };
	/* ignored: the mode asked stands */
	assert_int_equal(attach_with_fallback(attach_forced(ATTACH_AUTO, "bogus"), &pr, try_mode,
					      &a, err, sizeof(err)),
			 0);
	assert_int_equal(a.tried[0], ATTACH_TP_BTF);
	assert_int_equal(attach_forced(ATTACH_RAW_TP, NULL), ATTACH_RAW_TP);
	assert_int_equal(attach_forced(ATTACH_AUTO, "tp_btf"), ATTACH_TP_BTF);
}

static void test_mode_names(void **state)
{
	enum attach_mode m = ATTACH_AUTO;
	char err[64] = "";

	(void)state;
	for (enum attach_mode k = ATTACH_AUTO; k <= ATTACH_RAW_TP; k++) {
		assert_int_equal(attach_mode_parse(attach_mode_name(k), &m, err, sizeof(err)), 0);
		assert_int_equal(m, k);
	}
	assert_int_equal(attach_mode_parse("kprobe", &m, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown --attach mode 'kprobe'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auto_prefers_tp_btf),
		cmocka_unit_test(test_auto_falls_back),
		cmocka_unit_test(test_auto_without_btf),
		cmocka_unit_test(test_asked_mode_has_no_fallback),
		cmocka_unit_test(test_environment_forces),
		cmocka_unit_test(test_mode_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
