// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_yamldoc.c - the YAML reader all three config files share: where an
 * error points and what it returns, the key walk (unknown, repeated, a
 * file's own words), the getters and the work budget.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "util/yamldoc.h"

static char err[512];

/* A reader of "t.yml" over text; the caller deletes the document on success. */
static int load(struct yamldoc *d, const char *text, const char *empty_msg)
{
	*d = (struct yamldoc){ .file = "t.yml", .err = err, .errlen = sizeof(err) };
	err[0] = '\0';
	return yamldoc_load(d, text, strlen(text), empty_msg);
}

static yaml_node_t *root(struct yamldoc *d)
{
	return yaml_document_get_root_node(&d->doc);
}

/* Takes keys "a" (a bool into *arg) and "b"; anything else is unknown. */
static int ab_key(struct yamldoc *d, const char *key, yaml_node_t *v, void *arg)
{
	if (!strcmp(key, "a"))
		return yamldoc_get_bool(d, v, arg);
	return strcmp(key, "b") ? 1 : 0;
}

static int walk(const char *text, struct yamldoc *d, bool *a)
{
	int rc = load(d, text, NULL);

	if (rc)
		return rc;
	rc = yamldoc_each_key(d, root(d), "the test", "a, b", ab_key, a);
	yaml_document_delete(&d->doc);
	return rc;
}

static void test_load(void **state)
{
	struct yamldoc d;

	(void)state;
	assert_int_equal(load(&d, "a: [1, 2\nb: 3\n", NULL), -EINVAL);
	assert_non_null(strstr(err, "YAML syntax error: did not find expected ',' or ']'"));
	assert_int_equal(strncmp(err, "t.yml:", 6), 0);

	assert_int_equal(load(&d, "a: 1\n---\nb: 2\n", NULL), -EINVAL);
	assert_string_equal(err, "t.yml:3:1: a config is one YAML document; this is a second");

	/* Empty: an error only when the caller says what is missing. */
	assert_int_equal(load(&d, "# nothing\n", "empty config"), -EINVAL);
	assert_string_equal(err, "t.yml:1:1: empty config");
	assert_int_equal(load(&d, "# nothing\n", NULL), 0);
	assert_null(root(&d));
	yaml_document_delete(&d.doc);
}

static void test_each_key(void **state)
{
	struct yamldoc d;
	bool a = false;

	(void)state;
	assert_int_equal(walk("a: true\nb: 1\n", &d, &a), 0);
	assert_true(a);

	assert_int_equal(walk("a: true\nc: 1\n", &d, &a), -EINVAL);
	assert_string_equal(err, "t.yml:2:1: unknown field 'c' in the test (known: a, b)");

	assert_int_equal(walk("b: 1\nb: 2\n", &d, &a), -EINVAL);
	assert_string_equal(err, "t.yml:2:1: duplicate field 'b' in the test");

	assert_int_equal(walk("[a, b]\n", &d, &a), -EINVAL);
	assert_string_equal(err, "t.yml:1:1: expected a mapping for the test (fields: a, b)");

	assert_int_equal(walk("? [x]\n: 1\n", &d, &a), -EINVAL);
	assert_string_equal(err, "t.yml:1:3: expected a field name in the test");

	/* A getter's own error comes through, at the value. */
	assert_int_equal(walk("a: yes\n", &d, &a), -EINVAL);
	assert_string_equal(err, "t.yml:1:4: expected true or false");
}

static void test_repeat_wins(void **state)
{
	struct yamldoc d;
	bool a = false;

	(void)state;
	assert_int_equal(load(&d, "a: false\na: true\n", NULL), 0);
	d.repeat_wins = true;
	assert_int_equal(yamldoc_each_key(&d, root(&d), "the test", "a, b", ab_key, &a), 0);
	assert_true(a);
	yaml_document_delete(&d.doc);
}

/* A file's own words: only how the problem is said changes. */
static int my_words(struct yamldoc *d, const yaml_node_t *at, enum yamldoc_problem problem,
		    const char *key, const char *what, const char *known)
{
	(void)what;
	if (problem == YAMLDOC_UNKNOWN_KEY)
		return yamldoc_fail(d, at, "unknown key \"%s\" (known: %s)", key, known);
	return yamldoc_fail(d, at, "problem %d", (int)problem);
}

static void test_words(void **state)
{
	struct yamldoc d;
	bool a;

	(void)state;
	assert_int_equal(load(&d, "b: 1\nzz: 2\n", NULL), 0);
	d.words = my_words;
	assert_int_equal(yamldoc_each_key(&d, root(&d), "the test", "a, b", ab_key, &a), -EINVAL);
	assert_string_equal(err, "t.yml:2:1: unknown key \"zz\" (known: a, b)");
	yaml_document_delete(&d.doc);

	*d.err = '\0';
	d = (struct yamldoc){
		.file = "t.yml", .err = err, .errlen = sizeof(err), .words = my_words
	};
	assert_int_equal(yamldoc_load(&d, "a: 1\n---\na: 2\n", 12, NULL), -EINVAL);
	assert_string_equal(err, "t.yml:3:1: problem 4");
}

/* Records the key node the walk was at. */
static int where_key(struct yamldoc *d, const char *key, yaml_node_t *v, void *arg)
{
	(void)key;
	(void)v;
	*(size_t *)arg = d->key->start_mark.line + 1;
	return 0;
}

static void test_key_node(void **state)
{
	struct yamldoc d;
	size_t line = 0;

	(void)state;
	assert_int_equal(load(&d, "\n\nx: 1\n", NULL), 0);
	assert_int_equal(yamldoc_each_key(&d, root(&d), "t", "x", where_key, &line), 0);
	assert_int_equal(line, 3);
	yaml_document_delete(&d.doc);
}

static void test_getters(void **state)
{
	struct yamldoc d;
	char buf[4];
	unsigned int u;
	int64_t i;
	double x;

	(void)state;
	assert_int_equal(load(&d, "[abc, abcd, ' 1', 1.5e3, 90s, 0, inf, 7, [x]]\n", NULL), 0);
	assert_int_equal(yamldoc_get_strbuf(&d, yamldoc_item(&d, root(&d), 0), buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "abc");
	assert_int_equal(yamldoc_get_strbuf(&d, yamldoc_item(&d, root(&d), 1), buf, sizeof(buf)),
			 -EINVAL);
	assert_string_equal(err, "t.yml:1:7: string too long (at most 3 characters)");
	/* Numbers are written strictly: no leading space. */
	assert_int_equal(yamldoc_get_int(&d, yamldoc_item(&d, root(&d), 2), 0, 9, &i), -EINVAL);
	assert_string_equal(err, "t.yml:1:13: expected a whole number from 0 to 9");
	assert_int_equal(yamldoc_number(yamldoc_item(&d, root(&d), 2), &x), -1);
	assert_int_equal(yamldoc_get_num(&d, yamldoc_item(&d, root(&d), 3), &x), 0);
	assert_true(x == 1500.0);
	assert_int_equal(yamldoc_number(yamldoc_item(&d, root(&d), 6), &x), -1);
	assert_int_equal(yamldoc_get_duration(&d, yamldoc_item(&d, root(&d), 4), 1, &u), 0);
	assert_int_equal(u, 90);
	assert_int_equal(yamldoc_get_duration(&d, yamldoc_item(&d, root(&d), 5), 0, &u), 0);
	assert_int_equal(u, 0);
	assert_int_equal(yamldoc_get_duration(&d, yamldoc_item(&d, root(&d), 5), 1, &u), -EINVAL);
	assert_non_null(strstr(err, "expected a duration of at least 1s, such as 300, 90s, 5m"));
	assert_int_equal(yamldoc_get_duration(&d, yamldoc_item(&d, root(&d), 6), 0, &u), -EINVAL);
	assert_non_null(strstr(err, "expected a duration such as 300, 90s, 5m or 1h"));
	assert_int_equal(yamldoc_get_unsigned(&d, yamldoc_item(&d, root(&d), 7), 1, 7, &u), 0);
	assert_int_equal(u, 7);
	assert_int_equal(yamldoc_get_strbuf(&d, yamldoc_item(&d, root(&d), 8), buf, sizeof(buf)),
			 -EINVAL);
	assert_string_equal(err, "t.yml:1:42: expected a string");
	yaml_document_delete(&d.doc);
}

static void test_nul(void **state)
{
	static const char text[] = "\"a\\0b\": 1\n";
	struct yamldoc d;

	(void)state;
	assert_int_equal(load(&d, text, NULL), 0);
	assert_int_equal(yamldoc_check_nul(&d), -EINVAL);
	assert_string_equal(err, "t.yml:1:1: string holds a NUL character");
	yaml_document_delete(&d.doc);
}

static void test_fail_file_and_budget(void **state)
{
	struct yamldoc d;

	(void)state;
	assert_int_equal(load(&d, "[a, b, c]\n", NULL), 0);
	assert_int_equal(yamldoc_fail_file(&d, -ENOENT, "cannot read: %s", "gone"), -ENOENT);
	assert_string_equal(err, "t.yml: cannot read: gone");
	/* No limit set: any charge passes. */
	assert_int_equal(yamldoc_charge(&d, root(&d), SIZE_MAX / 2), 0);
	d.work = 0;
	d.work_limit = 10;
	assert_int_equal(yamldoc_charge(&d, root(&d), 8), 0);
	assert_int_equal(yamldoc_charge(&d, root(&d), 3), -EINVAL);
	assert_non_null(strstr(err, "past its work limit"));
	yaml_document_delete(&d.doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load),	    cmocka_unit_test(test_each_key),
		cmocka_unit_test(test_repeat_wins), cmocka_unit_test(test_words),
		cmocka_unit_test(test_key_node),    cmocka_unit_test(test_getters),
		cmocka_unit_test(test_nul),	    cmocka_unit_test(test_fail_file_and_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
