/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* commands.h - iolat's subcommands, each in its own file. */
#ifndef IOLAT_COMMANDS_H
#define IOLAT_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>

/* Each returns the process exit status. */
int cmd_hist(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_trace(int argc, char **argv);

/* Shared by commands: libbpf's messages go to stderr only when verbose. */
void set_verbose(bool on);

/*
 * Strict numbers: the whole string must be a number in [min, max].
 * Return 0 or -EINVAL.
 */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int parse_seconds(const char *s, double *out);

#endif
