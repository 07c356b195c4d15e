/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * opts.h - the one option parser of iolat's commands (on getopt_long): a
 * command gives its table of options and its usage, and every command then
 * answers -h/--help, -V/--version, an unknown option, a missing value and
 * an operand it does not take the same way, with the same exit status.
 */
#ifndef IOLAT_OPTS_H
#define IOLAT_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

enum opt_arg {
	OPT_NO_VALUE,
	OPT_VALUE,	    /* --name=V, --name V, -xV or -x V */
	OPT_OPTIONAL_VALUE, /* --name or --name=V only */
};

/* One option of a command; a table of them ends with a row whose name is
 * NULL. -h/--help and -V/--version are every command's and not listed. */
struct opt {
	const char *name; /* the long name, without "--" */
	char letter;	  /* its short form (-x), or 0 */
	enum opt_arg arg;
	int key;     /* what opts_next returns for it: > 0, unique in the table */
	bool hidden; /* a test knob: parsed, but in no help or man page */
};

/* The most options one command has (serve's), with room to grow. */
#define OPTS_MAX 64

/* A parse under way: opts_begin fills it, opts_next walks argv. */
struct opts {
	const struct opt *table;
	void (*usage)(FILE *f);
	int argc;
	char **argv;	   /* argv[0] is the command's name, as main passes it */
	const char *value; /* the value of the option just returned, or NULL */
	int next;	   /* after the end of the options: the first operand */
	struct option longs[OPTS_MAX + 3];
	char shorts[3 * OPTS_MAX + 8];
};

/* What opts_next returns besides an option's key. */
#define OPTS_END 0	  /* no option left: operands from o->next */
#define OPTS_EXIT (-1000) /* --help or --version printed: exit 0 */

/*
 * Sets the line -V/--version prints (without its newline), the same for
 * every command. main sets it once, before any command runs: the version
 * of libbpf in it is not util's to ask. Process-wide for that reason.
 */
void opts_set_version(const char *line);

/* The version line set (an empty string if none was). */
const char *opts_version(void);

/*
 * Starts parsing argv (argv[0]: the command's name, for messages) with the
 * options of table and the usage --help prints to stdout. Options come
 * before operands: the first operand ends them, as does "--".
 */
void opts_begin(struct opts *o, const struct opt *table, void (*usage)(FILE *f), int argc,
		char **argv);

/*
 * The key of the next option (its value in o->value), OPTS_END, OPTS_EXIT
 * after printing the usage or the version, or -EINVAL after printing what
 * is wrong (an unknown option, one without its value, or with a value it
 * does not take) and the hint to run the command's --help.
 */
int opts_next(struct opts *o);

/*
 * For a command that takes no more operands than it has read: 0 if argv
 * has none from index i on, else prints that the first is unexpected
 * (with the same hint) and returns -EINVAL.
 */
int opts_no_operand(const struct opts *o, int i);

/* The exit status a command ends with after opts_next or its own check
 * returned rc (< 0): 0 after OPTS_EXIT, 2 (bad usage) otherwise. */
int opts_exit_status(int rc);

#endif
