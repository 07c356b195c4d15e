/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * commands.h - iolat's command table: each command's name, its line in
 * `iolat --help`, its handler, usage and options. main dispatches from it,
 * and the doc check (tests/helpers/cmdtable_dump.c) reads it.
 */
#ifndef IOLAT_COMMANDS_H
#define IOLAT_COMMANDS_H

#include <stdio.h>

#include "util/opts.h"

struct command {
	const char *name;
	const char *summary; /* its line in `iolat --help` */
	/* argv[0] is the command's name; returns the process exit status. */
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *f); /* what --help prints */
	const struct opt *opts; /* what opts_next parses */
};

/* Every command, in the order `iolat --help` lists them; a row with a NULL
 * name ends it. */
extern const struct command commands[];

/* Each command, in its own file: handler, usage and option table. */
int cmd_hist(int argc, char **argv);
void cmd_hist_usage(FILE *f);
extern const struct opt cmd_hist_opts[];
int cmd_check(int argc, char **argv);
void cmd_check_usage(FILE *f);
extern const struct opt cmd_check_opts[];
int cmd_serve(int argc, char **argv); /* its usage and options: serve_flags.h */
int cmd_top(int argc, char **argv);
void cmd_top_usage(FILE *f);
extern const struct opt cmd_top_opts[];
int cmd_trace(int argc, char **argv);
void cmd_trace_usage(FILE *f);
extern const struct opt cmd_trace_opts[];

#endif
