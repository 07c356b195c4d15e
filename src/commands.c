// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* commands.c - the command table (commands.h): a new command is a row here. */
#include "commands.h"

#include "serve/serve_flags.h"

const struct command commands[] = {
	{ "hist", "latency histograms with percentiles (like biolatency)", cmd_hist, cmd_hist_usage,
	  cmd_hist_opts },
	{ "check", "what this kernel offers and which path iolat will use", cmd_check,
	  cmd_check_usage, cmd_check_opts },
	{ "serve", "Prometheus/OpenMetrics exporter daemon", cmd_serve, serve_flags_usage,
	  serve_flags_opts },
	{ "top", "live table of I/O per VM, pod, container, service or cgroup", cmd_top,
	  cmd_top_usage, cmd_top_opts },
	{ "trace", "one record per sampled I/O with every stage's time (like biosnoop)", cmd_trace,
	  cmd_trace_usage, cmd_trace_opts },
	{},
};
