// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* opts.c - the commands' option parser (opts.h). */
#include "util/opts.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

#include "util/errors.h"

/* getopt_long returns this plus a row's index for the row's long form, so
 * that a command's keys never meet getopt's own ('?', ':') or -h/-V. */
#define LONG_BASE 1000

/* Process-wide: one line for the whole program, set once by main (opts.h). */
static const char *version_line = "";

void opts_set_version(const char *line)
{
	version_line = line;
}

const char *opts_version(void)
{
	return version_line;
}

void opts_begin(struct opts *o, const struct opt *table, void (*usage)(FILE *f), int argc,
		char **argv)
{
	static const int has_arg[] = {
		[OPT_NO_VALUE] = no_argument,
		[OPT_VALUE] = required_argument,
		[OPT_OPTIONAL_VALUE] = optional_argument,
	};
	char *s;
	int n = 0;

	memset(o, 0, sizeof(*o));
	s = o->shorts;
	o->table = table;
	o->usage = usage;
	o->argc = argc;
	o->argv = argv;
	/* '+': the first operand ends the options; ':': a missing value is
	 * told apart from an unknown option. */
	*s++ = '+';
	*s++ = ':';
	for (; n < OPTS_MAX && table[n].name; n++) {
		o->longs[n] =
		    (struct option){ table[n].name, has_arg[table[n].arg], NULL, LONG_BASE + n };
		if (!table[n].letter)
			continue;
		*s++ = table[n].letter;
		if (table[n].arg != OPT_NO_VALUE)
			*s++ = ':';
		if (table[n].arg == OPT_OPTIONAL_VALUE)
			*s++ = ':';
	}
	/* A table past OPTS_MAX would lose options silently: raise OPTS_MAX. */
	assert(n < OPTS_MAX || !table[n].name);
	o->longs[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	o->longs[n] = (struct option){ "version", no_argument, NULL, 'V' };
	strcpy(s, "hV");
	opterr = 0; /* the messages are ours */
	optind = 0; /* glibc: start afresh, as a second parse in a process must */
}

static void usage_error(const struct opts *o, const char *fmt, const char *what)
{
	char hint[96];

	snprintf(hint, sizeof(hint), "run 'iolat %s --help' for the usage", o->argv[0]);
	errorf(hint, fmt, what);
}

/* "--name" of a long option's word, without the "=VALUE" given with it. */
static const char *long_word(const char *word, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)strcspn(word, "="), word);
	return buf;
}

/* How many long names (the table's, --help, --version) start with the
 * prefix in word ("--ver" or "--ver=1"). */
static int long_matches(const struct opts *o, const char *word)
{
	size_t len = strcspn(word + 2, "=");
	int n = 0;

	for (const struct option *l = o->longs; l->name; l++)
		n += !strncmp(l->name, word + 2, len);
	return n;
}

/* Says what is wrong with the option getopt_long refused ('?' or ':'). */
static int refused(const struct opts *o, int c)
{
	const char *word = o->argv[optind - 1];
	char buf[128], letter[3] = { '-', (char)optopt, 0 };
	bool is_long = !strncmp(word, "--", 2) &&
		       (!optopt || optopt >= LONG_BASE || optopt == 'h' || optopt == 'V');

	if (c == ':')
		usage_error(o, "option '%s' needs a value",
			    is_long ? long_word(word, buf, sizeof(buf)) : letter);
	else if (is_long && optopt)
		usage_error(o, "option '%s' takes no value", long_word(word, buf, sizeof(buf)));
	else if (is_long && long_matches(o, word) > 1)
		usage_error(o, "ambiguous option '%s'", long_word(word, buf, sizeof(buf)));
	else
		usage_error(o, "unknown option '%s'",
			    is_long ? long_word(word, buf, sizeof(buf)) : letter);
	return -EINVAL;
}

int opts_next(struct opts *o)
{
	int c = getopt_long(o->argc, o->argv, o->shorts, o->longs, NULL);

	o->value = optarg;
	switch (c) {
	case -1:
		o->next = optind;
		return OPTS_END;
	case 'h':
		o->usage(stdout);
		return OPTS_EXIT;
	case 'V':
		printf("%s\n", version_line);
		return OPTS_EXIT;
	case '?':
	case ':':
		return refused(o, c);
	}
	if (c >= LONG_BASE)
		return o->table[c - LONG_BASE].key;
	for (const struct opt *t = o->table; t->name; t++)
		if (t->letter == c)
			return t->key;
	return refused(o, '?'); /* not reached: getopt returns only the letters given */
}

int opts_no_operand(const struct opts *o, int i)
{
	if (i >= o->argc)
		return 0;
	usage_error(o, "unexpected argument '%s'", o->argv[i]);
	return -EINVAL;
}

int opts_exit_status(int rc)
{
	return rc == OPTS_EXIT ? 0 : 2;
}
