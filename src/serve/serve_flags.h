/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * serve_flags.h - `iolat serve`'s command line: its usage text, its options,
 * and how they combine with the defaults and --config.file into the
 * daemon's configuration (again on every SIGHUP).
 */
#ifndef IOLAT_SERVE_FLAGS_H
#define IOLAT_SERVE_FLAGS_H

#include <stdbool.h>
#include <stdio.h>

#include "core/attach.h"
#include "core/collector.h"
#include "serve/http.h"
#include "serve/serve_config.h"
#include "uprog/userprogs.h"
#include "util/opts.h"

/* What the command line said, kept to re-apply over the file on SIGHUP. */
/* --handover.lease: its default, and at most an hour (the programs of a
 * collector nobody holds count on that long). */
#define HANDOVER_LEASE_DEFAULT_S 30
#define HANDOVER_LEASE_MAX_S 3600
/* --maintenance.interval: its default and bounds. At most the collector's
 * fold period (COLLECTOR_FOLD_S), so every fold is a pass's. */
#define MAINTAIN_DEFAULT_MS 10000
#define MAINTAIN_MIN_MS 100
#define MAINTAIN_MAX_MS (COLLECTOR_FOLD_S * 1000)

struct serve_flags {
	const char *config_file;
	struct serve_config set; /* values of the flags given */
	bool has_listen, has_path, has_web, has_stats, has_level, has_expire;
	bool has_format;
	bool has_map_sizes;		    /* --bpf.map-size, in set.map_sizes (0: not given) */
	bool has_kube_pods, has_kube_ctrs;  /* --kubernetes.*-logs-dir */
	bool has_wl_labels, has_wl_metrics; /* --workloads.labels, .metrics */
	unsigned wl_labels, wl_metrics;
	bool systemd_socket; /* --web.systemd-socket */
	int systemd_fds;     /* how many systemd passed (from fd 3) */
	int device, total, size, op_label, size_label, workloads, by_process; /* -1: not given */
	enum attach_mode attach;
	unsigned int synthetic;
	struct http_limits limits;  /* --web.max-connections, timeouts */
	struct userprogs_opts user; /* --config.dir/names/strict */
	bool check;		    /* --config.check */
	const char *handover;	    /* --handover instance name; NULL: none */
	const char *unpin;	    /* --unpin instance name; NULL: not given */
	unsigned int lease_s;	    /* --handover.lease */
	uint64_t maintain_ms;	    /* --maintenance.interval */
};

/*
 * Sets the log's level and format from --log.level and --log.format, read
 * before anything else (serve_flags_parse reads them again, and reports a
 * value that is not one), so that every error of the start can be logged
 * in the format chosen. Whether --log.format was given.
 */
bool serve_flags_early_log(int argc, char **argv);

/* serve's --help text and its options, for the parser and the command
 * table (commands.c). */
void serve_flags_usage(FILE *f);
extern const struct opt serve_flags_opts[];

/*
 * Reads argv (argv[0]: "serve") into f. 0; OPTS_EXIT after printing the
 * usage or the version (exit 0); -EINVAL after printing (errorf) what is
 * wrong. opts_exit_status() turns either into the exit status.
 */
int serve_flags_parse(int argc, char **argv, struct serve_flags *f);

/*
 * Defaults, then the file, then the flags, into out. 0, or -errno with
 * what is wrong in err (the caller prints it: at start, or logs it on
 * SIGHUP).
 */
int serve_flags_config(const struct serve_flags *f, struct serve_config *out, char *err,
		       size_t len);

#endif
