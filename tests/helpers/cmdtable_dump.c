// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cmdtable_dump.c - prints iolat's command table (src/commands.c) for
 * tests/install/check_docs.sh, which holds each command's --help, man page
 * and completion to it: a command or an option added to the table and not
 * to them fails the check.
 *
 * Usage: cmdtable_dump
 * One line per command and option: "CMD -x", "CMD --name" or "CMD
 * --name=" (it takes a value; one it only may take is bare), -h/--help
 * and -V/--version included, hidden test knobs left out.
 */
#include <stdio.h>

#include "commands.h"

static void print_opt(const char *cmd, char letter, const char *name, enum opt_arg arg)
{
	if (letter)
		printf("%s -%c\n", cmd, letter);
	printf("%s --%s%s\n", cmd, name, arg == OPT_VALUE ? "=" : "");
}

int main(void)
{
	for (const struct command *c = commands; c->name; c++) {
		for (const struct opt *o = c->opts; o->name; o++)
			if (!o->hidden)
				print_opt(c->name, o->letter, o->name, o->arg);
		print_opt(c->name, 'h', "help", OPT_NO_VALUE);
		print_opt(c->name, 'V', "version", OPT_NO_VALUE);
	}
	return 0;
}
