// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* main.c - iolat's entry point: picks the subcommand from the command table. */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "core/libbpf_log.h"
#include "util/errors.h"
#include "util/opts.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: iolat COMMAND [OPTIONS]\n"
		   "       iolat help [COMMAND]\n"
		   "\n"
		   "Block-I/O latency monitor: eBPF programs on the kernel's block-layer\n"
		   "tracepoints time every I/O and aggregate it in the kernel.\n"
		   "\n"
		   "Commands:\n");
	for (const struct command *c = commands; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->summary);
	fprintf(f, "\n"
		   "Options:\n"
		   "  -h, --help     this help; 'iolat COMMAND --help' (or 'iolat help\n"
		   "                 COMMAND') for a command's\n"
		   "  -V, --version  print the version\n"
		   "\n"
		   "Examples:\n"
		   "  iolat check\n"
		   "  iolat hist -D 1 10      per-disk device-time histograms, 10 x 1 s\n"
		   "  iolat hist -Q -d vda    total time (queue + device) for vda until Ctrl-C\n"
		   "\n"
		   "See iolat(1) and each command's page, e.g. iolat-hist(1).\n");
}

/* `iolat help [COMMAND]`: this help, or COMMAND's exactly as `iolat COMMAND
 * --help` prints it. argv[0] is "help". */
static int help(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (argc > 2) {
		errorf("run 'iolat help COMMAND'", "unexpected argument '%s'", argv[2]);
		return 2;
	}
	if (!cmd || !strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return 0;
	}
	for (const struct command *c = commands; c->name; c++)
		if (!strcmp(cmd, c->name)) {
			c->usage(stdout);
			return 0;
		}
	errorf("run 'iolat --help' for the list", "unknown command '%s'", cmd);
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	char version[128];

	libbpf_log_install();
	snprintf(version, sizeof(version), "iolat %s (libbpf %s)", IOLAT_VERSION,
		 libbpf_version_string());
	opts_set_version(version);
	if (!cmd) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "help"))
		return help(argc - 1, argv + 1);
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("%s\n", version);
		return 0;
	}
	for (const struct command *c = commands; c->name; c++)
		if (!strcmp(cmd, c->name))
			return c->run(argc - 1, argv + 1);
	errorf("run 'iolat --help' for the list", "unknown command '%s'", cmd);
	return 2;
}
