/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cmdutil.h - what the tracing commands (hist, top) share: the positional
 * INTERVAL [COUNT] arguments, the stop signal, and opening the collector
 * with one clear message per failure.
 */
#ifndef IOLAT_CMDUTIL_H
#define IOLAT_CMDUTIL_H

#include <signal.h>
#include <stdint.h>

#include "core/collector.h"

/* Set by SIGINT/SIGTERM once cmd_open_collector installed the handlers. */
extern volatile sig_atomic_t cmd_stop;

/*
 * Parses the remaining arguments as [INTERVAL [COUNT]] (seconds, intervals)
 * for command `cmd`; leaves defaults untouched when absent. Prints and
 * returns -EINVAL on bad input.
 */
int cmd_interval_count(int argc, char **argv, int optind, const char *cmd, double *interval,
		       uint64_t *count);

/*
 * Checks privileges and BTF (into *pr) and installs the stop signals
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
 * The -d DISK and -c CGROUP filters of hist and trace (either may be NULL):
 * the whole disk's dev, the cgroup's id and level. Prints one message and
 * returns -errno on bad input.
 */
int cmd_resolve_filters(const char *disk, const char *cgroup, uint32_t *dev,
			uint64_t *cgroup_id, int *cgroup_level);

#endif
