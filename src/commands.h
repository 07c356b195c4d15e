/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* commands.h - iolat's subcommands, each in its own file. */
#ifndef IOLAT_COMMANDS_H
#define IOLAT_COMMANDS_H

/* Each returns the process exit status. */
int cmd_hist(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_trace(int argc, char **argv);

#endif
