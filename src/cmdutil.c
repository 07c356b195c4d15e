// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cmdutil.c - shared plumbing of the tracing commands (cmdutil.h). */
#include "cmdutil.h"

#include <errno.h>
#include <stdio.h>

#include "commands.h"
#include "errors.h"
#include "probe.h"

volatile sig_atomic_t cmd_stop;

static void on_stop(int sig)
{
	(void)sig;
	cmd_stop = 1;
}

int cmd_interval_count(int argc, char **argv, int optind, const char *cmd, double *interval,
		       uint64_t *count)
{
	char hint[64];

	snprintf(hint, sizeof(hint), "see 'iolat %s --help'", cmd);
	if (optind < argc && parse_seconds(argv[optind++], interval)) {
		errorf("give INTERVAL as a positive number of seconds, e.g. 1 or 0.5",
		       "bad interval '%s'", argv[optind - 1]);
		return -EINVAL;
	}
	if (optind < argc && parse_uint(argv[optind++], 1, UINT32_MAX, count)) {
		errorf("give COUNT as a whole number of intervals, 1 or more", "bad count '%s'",
		       argv[optind - 1]);
		return -EINVAL;
	}
	if (optind < argc) {
		errorf(hint, "unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int cmd_open_collector(struct collector **c, const struct collector_opts *o)
{
	struct sigaction sa = { .sa_handler = on_stop };
	struct probe_result pr;
	char err[256] = "";

	if (!require_bpf_privileges())
		return 1;
	if (probe_kernel(&pr)) {
		errorf("iolat needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		       "this kernel has no BTF (%s is missing)", pr.btf_path);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (collector_open(c, o, &pr, err, sizeof(err))) {
		errorf("'iolat check' shows what this kernel offers", "%s", err);
		return 1;
	}
	return 0;
}
