/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * serve_internal.h - what the daemon's files share: its state and the calls
 * between them. cmd_serve.c runs the daemon (setup, the main loop with its
 * maintenance passes, the render, teardown), serve_reload.c the SIGHUP
 * transaction, serve_metrics.c its own families, serve_handover.c what
 * --handover and --unpin mean to an operator.
 */
#ifndef IOLAT_SERVE_INTERNAL_H
#define IOLAT_SERVE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/collector.h"
#include "metrics/metrics.h"
#include "serve/exporter.h"
#include "serve/http.h"
#include "serve/serve_config.h"
#include "serve/serve_flags.h"
#include "serve/webconfig.h"
#include "serve/wlstate.h"
#include "uprog/userprogs.h"

struct serve {
	struct serve_flags fl;
	struct serve_config cfg;
	struct webconfig web; /* read by requests; swapped in commit */
	struct collector *c;
	struct exporter *e;
	struct userprogs *user;
	struct http_server *http;
	struct metric_set set;
	size_t body_len[EXPO_PROTOBUF + 1]; /* the last scrape's, per format */
	pthread_mutex_t state_lock;
	int stats_fd;
	/* iolat_config_* self-metrics; written by the main thread under state_lock */
	uint64_t reloads_ok, reloads_failed;
	bool last_reload_ok;
	double last_reload_ok_time;
	/* --handover: the workload label sets saved for the next run */
	struct wlstate_files wl_files;
	bool wl_saving;
	bool bad_config; /* setup failed on the configuration: exit 2, not 1 */
};

/* A reload's new state, built before anything running changes. */
/* The landing page's room: every setting at its longest (eight listen
 * addresses, 64 latency and 64 size bounds) fits. */
#define SERVE_LANDING_MAX 8192

struct reload {
	struct serve *s;
	struct serve_config cfg;
	struct webconfig web;
	struct exporter_settings *settings;
	int stats_fd; /* BPF stats turned on by this reload, or -1 */
	char landing[SERVE_LANDING_MAX];
};

void serve_exporter_opts_of(const struct serve *s, const struct serve_config *cfg,
			    struct exporter_opts *o);

/* The daemon's own families (reloads, HTTP connection limits) into set.
 * 0 or -ENOMEM. */
int serve_add_metrics(struct serve *s, struct metric_set *set);

/* The landing page of a configuration: links and the settings in use, each
 * as a flag or the settings file spells it (serve/landing.c). */
void serve_build_landing(const struct serve *s, const struct serve_config *cfg,
			 const struct webconfig *web, char *out, size_t len);

/* Loads cfg's web config (if any) into *out. 0 or -errno with a reason in err. */
int serve_load_web(const struct serve_config *cfg, struct webconfig *out, char *err, size_t len);

/* What the web config turned on, once serving (and after a reload). */
void serve_log_web(const struct webconfig *w);

/* The HTTP options of a configuration; listen points into cfg. */
void serve_http_opts_of(struct serve *s, const struct serve_config *cfg,
			const struct webconfig *web, const char *landing, const char **listen,
			struct http_opts *o);

/*
 * SIGHUP: the files are read again and everything they make is built
 * first; only if all of it, listeners included, is ready does it replace
 * the running state, in one step no scrape sees half of. Otherwise one log
 * line says why, and nothing changed.
 */
void serve_do_reload(struct serve *s);

/* --unpin: removes what --handover keeps for an instance. */
int serve_unpin(const char *name);

/*
 * The start line, once serving (a start that fails says only why): the
 * version, the kernel, how the programs are attached, the maps' sizes
 * (map_NAME: what an operator compares with iolat_bpf_map_capacity_entries,
 * and 'iolat check' explains; maps_set: those the flags or the file set),
 * and what became of a pinned collector.
 */
void serve_log_start(const struct serve *s);

/* Says what the collector took over or replaced, with --handover. */
void serve_log_handover(const struct serve *s);

/*
 * With --handover off, a collector an earlier run left pinned under the
 * default name would count on, attached, with no one to read it: this run
 * takes it over instead (no I/O is lost) and removes it at stop.
 */
const char *serve_leftover_instance(const struct serve *s);

/*
 * --handover: the workload label sets of the run before go on when this
 * run adopted its collector and read its series, or took it over (the
 * label sets name those series); otherwise a saved state is stale and goes. From here on
 * they are saved beside the collector's series (exporter_workloads_files).
 */
void serve_workloads_handover(struct serve *s);

/* The HTTP server's callbacks (http.h): a scrape's render, under the state
 * lock, and basic auth against the web config. */
int serve_render(void *ctx, enum expo_format fmt, struct buf *out);
bool serve_check_auth(void *ctx, const char *user, const char *pass);

#endif
