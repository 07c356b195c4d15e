// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_opts.c - the commands' one option parser (util/opts.c): the keys
 * and values it returns, and the same --help, --version and messages for
 * every command's mistakes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "util/opts.h"

enum { KEY_LONG_ONLY = 256, KEY_MAYBE, KEY_KNOB };

static const struct opt table[] = {
	{ "disk", 'd', OPT_VALUE, 'd' },
	{ "json", 'j', OPT_NO_VALUE, 'j' },
	{ "verbose", 'v', OPT_NO_VALUE, 'v' },
	{ "long-only", 0, OPT_VALUE, KEY_LONG_ONLY },
	{ "handover", 0, OPT_OPTIONAL_VALUE, KEY_MAYBE },
	{ "test.knob", 0, OPT_VALUE, KEY_KNOB, .hidden = true },
	{},
};

static void usage(FILE *f)
{
	fputs("Usage: iolat demo [OPTIONS]\n", f);
}

/* What one parse of argv gave: each key and value as "k=v " words, the
 * end (its rc and first operand) and stdout and stderr. */
struct parse {
	char keys[256], out[256], err[256];
	int rc, next;
};

static void read_back(FILE *f, char *buf, size_t len)
{
	size_t n;

	fflush(f);
	rewind(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
}

static struct parse parse(int argc, char **argv)
{
	struct parse p = {};
	FILE *out = tmpfile(), *err = tmpfile();
	int saved_out = dup(1), saved_err = dup(2);
	struct opts o;
	int c;

	assert_non_null(out);
	assert_non_null(err);
	fflush(stdout);
	fflush(stderr);
	dup2(fileno(out), 1);
	dup2(fileno(err), 2);
	opts_begin(&o, table, usage, argc, argv);
	while ((c = opts_next(&o)) > 0)
		snprintf(p.keys + strlen(p.keys), sizeof(p.keys) - strlen(p.keys), "%d=%s ", c,
			 o.value ? o.value : "-");
	p.rc = c;
	p.next = o.next;
	if (!c && opts_no_operand(&o, o.next))
		p.rc = -EINVAL;
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	read_back(out, p.out, sizeof(p.out));
	read_back(err, p.err, sizeof(p.err));
	fclose(out);
	fclose(err);
	return p;
}

#define PARSE(...)                                                                                 \
	({                                                                                         \
		char *argv_[] = { "demo", __VA_ARGS__, NULL };                                     \
		parse((int)(sizeof(argv_) / sizeof(argv_[0])) - 1, argv_);                         \
	})

static void test_options_and_values(void **state)
{
	struct parse p;

	(void)state;
	p = PARSE("-jd", "vda", "--disk=sdb", "--long-only", "x", "--handover", "--test.knob=1");
	assert_int_equal(p.rc, OPTS_END);
	assert_string_equal(p.keys, "106=- 100=vda 100=sdb 256=x 257=- 258=1 ");
	assert_string_equal(p.err, "");
	/* An optional value only with '='; the first operand ends the options
	 * (and a second parse in the process starts afresh). */
	p = PARSE("--handover=next", "-v");
	assert_string_equal(p.keys, "257=next 118=- ");
	p = PARSE("--handover", "next", "-v");
	assert_int_equal(p.rc, -EINVAL);
	assert_int_equal(p.next, 2);
	assert_string_equal(p.err, "iolat: unexpected argument 'next' "
				   "(run 'iolat demo --help' for the usage)\n");
	p = PARSE("-v", "--", "-j");
	assert_int_equal(p.next, 3);
	/* An unambiguous prefix names its option, as getopt_long has it. */
	p = PARSE("--js");
	assert_string_equal(p.keys, "106=- ");
}

static void test_help_and_version(void **state)
{
	struct parse p;

	(void)state;
	opts_set_version("iolat 9.9.9 (libbpf v1.0)");
	p = PARSE("-v", "--help", "--bogus");
	assert_int_equal(p.rc, OPTS_EXIT);
	assert_string_equal(p.out, "Usage: iolat demo [OPTIONS]\n");
	assert_string_equal(p.err, "");
	p = PARSE("-h");
	assert_int_equal(p.rc, OPTS_EXIT);
	p = PARSE("-V");
	assert_int_equal(p.rc, OPTS_EXIT);
	assert_string_equal(p.out, "iolat 9.9.9 (libbpf v1.0)\n");
	p = PARSE("--version");
	assert_string_equal(p.out, "iolat 9.9.9 (libbpf v1.0)\n");
	assert_int_equal(opts_exit_status(OPTS_EXIT), 0);
	assert_int_equal(opts_exit_status(-EINVAL), 2);
}

static void test_mistakes(void **state)
{
	static const struct {
		char *arg;
		const char *said;
	} cases[] = {
		{ "--bogus", "unknown option '--bogus'" },
		{ "--bogus=1", "unknown option '--bogus'" },
		{ "-x", "unknown option '-x'" },
		{ "-jx", "unknown option '-x'" },
		{ "-xj", "unknown option '-x'" },
		{ "-d", "option '-d' needs a value" },
		{ "--disk", "option '--disk' needs a value" },
		{ "--long-only", "option '--long-only' needs a value" },
		{ "--json=1", "option '--json' takes no value" },
		{ "--help=1", "option '--help' takes no value" },
		{ "--ver", "ambiguous option '--ver'" },
	};
	char want[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct parse p = PARSE(cases[i].arg);

		snprintf(want, sizeof(want), "iolat: %s (run 'iolat demo --help' for the usage)\n",
			 cases[i].said);
		assert_int_equal(p.rc, -EINVAL);
		assert_string_equal(p.err, want);
		assert_string_equal(p.out, "");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options_and_values),
		cmocka_unit_test(test_help_and_version),
		cmocka_unit_test(test_mistakes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
