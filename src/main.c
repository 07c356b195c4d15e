// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* main.c - iolat's entry point: picks the subcommand. */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "core/libbpf_log.h"
#include "util/errors.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: iolat COMMAND [OPTIONS]\n"
		   "\n"
		   "Block-I/O latency monitor: eBPF programs on the kernel's block-layer\n"
		   "tracepoints time every I/O and aggregate it in the kernel.\n"
		   "\n"
		   "Commands:\n"
		   "  hist     latency histograms with percentiles (like biolatency)\n"
		   "  check    what this kernel offers and which path iolat will use\n"
		   "  serve    Prometheus/OpenMetrics exporter daemon\n"
		   "  top      live table of I/O per VM, pod, container, service or cgroup\n"
		   "  trace    one record per sampled I/O with every stage's time (like biosnoop)\n"
		   "\n"
		   "Options:\n"
		   "  -h, --help     this help; 'iolat COMMAND --help' for a command's\n"
		   "  -V, --version  print the version\n"
		   "\n"
		   "Examples:\n"
		   "  iolat check\n"
		   "  iolat hist -D 1 10      per-disk device-time histograms, 10 x 1 s\n"
		   "  iolat hist -Q -d vda    total time (queue + device) for vda until Ctrl-C\n");
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	libbpf_log_install();
	if (!cmd) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("iolat %s (libbpf %s)\n", IOLAT_VERSION, libbpf_version_string());
		return 0;
	}
	if (!strcmp(cmd, "hist"))
		return cmd_hist(argc - 1, argv + 1);
	if (!strcmp(cmd, "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(cmd, "serve"))
		return cmd_serve(argc - 1, argv + 1);
	if (!strcmp(cmd, "top"))
		return cmd_top(argc - 1, argv + 1);
	if (!strcmp(cmd, "trace"))
		return cmd_trace(argc - 1, argv + 1);
	errorf("run 'iolat --help' for the list", "unknown command '%s'", cmd);
	return 2;
}
