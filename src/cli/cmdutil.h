/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cmdutil.h - what the tracing commands (hist, top, trace) share: the
 * positional INTERVAL [COUNT] arguments, the filter, attach and verbose
 * flags, the stop signal, opening the collector with one clear message per
 * failure, sleeping through an interval, and their manners at a terminal
 * (escape codes and widths only there, the start line on stderr).
 */
#ifndef IOLAT_CMDUTIL_H
#define IOLAT_CMDUTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/collector.h"
#include "util/opts.h"

/* Set by SIGINT/SIGTERM once cmd_open_collector installed the handlers. */
extern volatile sig_atomic_t cmd_stop;

/*
 * Parses the operands after the options o has read as [INTERVAL [COUNT]]
 * (seconds, intervals); leaves defaults untouched when absent. Prints and
 * returns -EINVAL on bad input or an operand more.
 */
int cmd_interval_count(const struct opts *o, double *interval, uint64_t *count);

/*
 * The flags every command that traces takes (hist, top, trace), spelled
 * and parsed once: -d DISK, -c CGROUP (filters, resolved by
 * cmd_resolve_filters), --attach MODE and -v (libbpf's messages).
 */
struct cmd_trace_flags {
	const char *disk, *cgroup;
	enum attach_mode attach;
};

/* --attach's key; a command's own keys start at 256. */
#define CMD_OPT_ATTACH 200

/* Their rows, for a command's option table. */
#define CMD_TRACE_FLAG_OPTS                                                                        \
	{ "disk", 'd', OPT_VALUE, 'd' }, { "cgroup", 'c', OPT_VALUE, 'c' },                        \
	    { "attach", 0, OPT_VALUE, CMD_OPT_ATTACH },                                            \
	{                                                                                          \
		"verbose", 'v', OPT_NO_VALUE, 'v'                                                  \
	}

/*
 * Parses option key (opts_next's) into f if it is one of those flags: 1
 * if it was, 0 if the key is the command's own, -EINVAL (printed) on a bad
 * value.
 */
int cmd_trace_flag(int key, const char *value, struct cmd_trace_flags *f);

/* Their lines in a command's --help, descriptions at column `width`. */
void cmd_trace_flags_usage(FILE *f, int width);

/* --attach MODE into *out; prints and returns -EINVAL if it is none. */
int cmd_attach_arg(const char *arg, enum attach_mode *out);

/* The attach mode to open with: `asked`, unless the tests' knob
 * IOLAT_FORCE_ATTACH (tp_btf or raw_tp) forces one. */
enum attach_mode cmd_attach_mode(enum attach_mode asked);

/*
 * Checks privileges and BTF (into *pr; IOLAT_BTF names another BTF file
 * for tests) and installs the stop signals
 * (cmd_stop). Prints one message and returns the process exit status on
 * failure, 0 on success.
 */
int cmd_prepare_bpf(struct probe_result *pr);

/*
 * Checks privileges and BTF, installs the stop signals, loads and attaches.
 * Prints one message and returns the process exit status on failure, 0 on
 * success.
 */
int cmd_open_collector(struct collector **c, const struct collector_opts *o);

/*
 * Sleeps in collector_wait until CLOCK_MONOTONIC reaches end_ns
 * (util/monotonic.h) or a stop signal sets cmd_stop, and lets the collector
 * attach what new I/O needs whenever it wakes; on_attach, if not NULL, is
 * given each collector_maintain result (COLLECTOR_NOW_* bits or -errno).
 * Returns 0, or -errno if the wait itself failed.
 */
int cmd_wait_until(struct collector *c, uint64_t end_ns, void (*on_attach)(int what));

/*
 * The -d DISK and -c CGROUP filters of hist and trace (either may be NULL):
 * the whole disk's dev, the cgroup's id and level. Prints one message and
 * returns -errno on bad input.
 */
int cmd_resolve_filters(const char *disk, const char *cgroup, uint32_t *dev, uint64_t *cgroup_id,
			int *cgroup_level);

/*
 * Whether escape codes (clearing the screen) may go to stdout: only to a
 * terminal (isatty) whose TERM is set and not "dumb", never into a pipe or
 * a file.
 */
bool cmd_stdout_escapes(void);

/*
 * The width of the terminal stdout is (TIOCGWINSZ, else $COLUMNS, else 80);
 * 0 when stdout is no terminal: output read by programs is never cut.
 */
int cmd_stdout_columns(void);

/*
 * The line a tracing command starts with, on stderr (never mixed with the
 * data on stdout): "Tracing WHAT...", and " Hit Ctrl-C to end." only when
 * the run is open-ended (no COUNT, no duration, no --once).
 */
void cmd_say_tracing(const char *what, bool open_ended);

#endif
