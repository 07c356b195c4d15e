// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cmd_serve.c - `iolat serve`: the exporter daemon. Loads the collector,
 * serves its metrics over HTTP(S) until SIGTERM/SIGINT, reloads its
 * configuration on SIGHUP without touching the counters. Its command line
 * is read in serve_flags.c.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "core/collector.h"
#include "core/handover.h"
#include "core/pin.h"
#include "metrics/expo_proto.h"
#include "metrics/expo_text.h"
#include "metrics/metrics.h"
#include "serve/exporter.h"
#include "serve/http.h"
#include "serve/serve_flags.h"
#include "serve/serve_internal.h"
#include "serve/webconfig.h"
#include "sys/privileges.h"
#include "uprog/userprogs.h"
#include "util/buf.h"
#include "util/errors.h"
#include "util/log.h"
#include "util/monotonic.h"

/*
 * Two threads meet here: libmicrohttpd's, which answers requests one at a
 * time (render, check_auth), and the main one, which reloads, keeps the
 * collector attached and runs the maintenance passes on its own schedule
 * (maintain: every --maintenance.interval, never for a scrape). A render
 * only reads; it waits for a pass under way, which moves keys between the
 * kernel map and user space (a read in its middle could count them twice
 * or not at all), so at most iolat_maintenance_duration_seconds. A reload
 * builds its new state beside the running one and swaps it in inside
 * http_update's commit, while no request is being answered; state_lock
 * keeps the main thread's collector and maintenance work and the render
 * apart, and the main thread never holds it while it waits for requests.
 */
/* How often the daemon looks for bio-based disks that got a size (see run). */
#define DISK_RESCAN_S 60

/* Process-wide: a signal handler has no other way to tell the daemon. */
static volatile sig_atomic_t stop, reload;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	reload = 1;
}

/* Loads the user programs, if any; a config that failed is logged (and
 * with --config.strict fails the start). */
static int open_user_programs(struct serve *s)
{
	const char *name, *why;
	char err[1024];
	int rc;

	if (!s->fl.user.dir)
		return 0;
	rc = userprogs_open(&s->user, &s->fl.user, err, sizeof(err));
	if (rc) {
		errorf(s->fl.user.strict ? "fix it, or run without --config.strict to skip it"
					 : "check --config.dir and --config.names",
		       "%s", err);
		return rc;
	}
	for (size_t i = 0; userprogs_config(s->user, i, &name, &why); i++) {
		if (why)
			log_error("user program config disabled", LOG_STR("config", name),
				  LOG_ERR(why));
		else
			log_info("user program config loaded", LOG_STR("config", name));
	}
	return 0;
}

/* --config.check: load, attach and read the configs once, print what they
 * export, and exit; 1 if one failed. */
static int check_user_programs(struct serve *s)
{
	const char *name, *why;
	struct buf out = { 0 };
	bool failed = false;
	int rc;

	s->fl.user.strict = false;
	if (open_user_programs(s))
		return 1;
	for (size_t i = 0; userprogs_config(s->user, i, &name, &why); i++)
		failed |= why != NULL;
	userprogs_describe(s->user, stdout);
	rc = userprogs_collect(s->user, &s->set);
	if (!rc)
		rc = expo_text(&s->set, false, &out);
	if (!rc && out.len)
		printf("\n%s", out.data);
	buf_free(&out);
	userprogs_close(s->user);
	metrics_clear(&s->set);
	return failed || rc ? 1 : 0;
}

/* How often maintenance passes run: --maintenance.interval, and with
 * --handover at least three times a lease, as each pass renews it. */
static double pass_interval_s(const struct serve *s)
{
	double every_s = (double)s->fl.maintain_ms / 1e3;

	if (s->fl.handover && every_s > s->fl.lease_s / 3.0)
		every_s = s->fl.lease_s / 3.0;
	return every_s;
}

void serve_exporter_opts_of(const struct serve *s, const struct serve_config *cfg,
			    struct exporter_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->device_view = cfg->device_view;
	o->total_view = cfg->total_view;
	o->size_view = cfg->size_view;
	o->no_op_label = !cfg->op_label;
	o->size_label = cfg->size_label;
	o->lat_le = cfg->nlat_le ? cfg->lat_le : NULL;
	o->nlat_le = cfg->nlat_le;
	o->size_le = cfg->nsize_le ? cfg->size_le : NULL;
	o->nsize_le = cfg->nsize_le;
	o->wl_lat_le = cfg->nwl_lat_le ? cfg->wl_lat_le : NULL;
	o->nwl_lat_le = cfg->nwl_lat_le;
	o->wl_labels = cfg->wl_labels;
	o->wl_metrics = cfg->wl_metrics;
	o->synthetic_disks = s->fl.synthetic;
	o->workloads = cfg->workloads;
	o->wl.max_sets = cfg->workloads_max;
	o->wl.expire_s = cfg->workloads_expire_s;
	o->disk_expire_s = cfg->disks_expire_s;
	o->maintain_s = pass_interval_s(s);
	o->rules = cfg->rules;
	o->nrules = cfg->nrules;
	memcpy(o->kube_pods_dir, cfg->kube_pods_dir, sizeof(o->kube_pods_dir));
	memcpy(o->kube_containers_dir, cfg->kube_containers_dir, sizeof(o->kube_containers_dir));
}

/* The collector's own maintenance: attaches programs it came to need,
 * renews the lease, ends a handover; logs what it did. */
static void maintain_collector(struct serve *s)
{
	int what;

	pthread_mutex_lock(&s->state_lock);
	what = collector_maintain(s->c);
	pthread_mutex_unlock(&s->state_lock);
	if (what < 0)
		log_error("attaching a program on demand failed", LOG_STR("err", strerror(-what)));
	for (int bit = COLLECTOR_NOW_FALLBACK; what > 0 && bit <= COLLECTOR_NOW_HANDED_OVER;
	     bit <<= 1)
		if (what & bit)
			log_info(collector_now_reason(bit));
}

/* Slack the heap may keep free between scrapes, past what a scrape takes
 * again (bodies like the last ones). */
#define TRIM_SLACK_BYTES (4u << 20)

/*
 * Gives the heap's free memory back to the system when it holds much more
 * than the next scrape will take again, so the daemon's RSS between scrapes
 * stays near its working set (a reload that dropped users' maps, a burst
 * of workloads gone). In the maintenance pass, not in a scrape (asking
 * glibc what it holds walks its free lists), and not every time: the next
 * scrape would fault in again each page of the last body.
 */
static void trim_heap(size_t bodies)
{
	struct mallinfo2 mi = mallinfo2();

	if (mi.fordblks > TRIM_SLACK_BYTES + bodies)
		malloc_trim(0);
}

/* One maintenance pass: the exporter's (folds, names, retires, expires,
 * saves), then the collector's; timed for iolat_maintenance_*. */
static void maintain(struct serve *s)
{
	double t0 = monotonic_s();
	size_t bodies = 0;
	int rc;

	pthread_mutex_lock(&s->state_lock);
	rc = exporter_maintain(s->e);
	for (size_t i = 0; i < sizeof(s->body_len) / sizeof(s->body_len[0]); i++)
		bodies += s->body_len[i];
	pthread_mutex_unlock(&s->state_lock);
	if (rc)
		log_error("exporter maintenance failed", LOG_STR("err", strerror(-rc)));
	maintain_collector(s);
	trim_heap(bodies);
	pthread_mutex_lock(&s->state_lock);
	exporter_pass_done(s->e, monotonic_s() - t0);
	pthread_mutex_unlock(&s->state_lock);
}

int serve_render(void *ctx, enum expo_format fmt, struct buf *out)
{
	struct serve *s = ctx;
	double t0 = monotonic_s();
	char err[256] = "";
	int rc;

	pthread_mutex_lock(&s->state_lock);
	rc = exporter_render(s->e, &s->set, err, sizeof(err));
	if (!rc)
		rc = userprogs_collect(s->user, &s->set);
	if (!rc)
		rc = serve_add_metrics(s, &s->set);
	/* Room for a body like the last one: no doubling from 4 KiB to
	 * megabytes, a copy at each step. */
	if (!rc && !buf_reserve(out, s->body_len[fmt] + s->body_len[fmt] / 8))
		rc = -ENOMEM;
	if (!rc)
		rc = fmt == EXPO_PROTOBUF ? expo_proto(&s->set, out)
					  : expo_text(&s->set, fmt == EXPO_OPENMETRICS, out);
	if (!rc)
		s->body_len[fmt] = out->len;
	if (rc)
		log_error("building metrics failed", LOG_ERR(err[0] ? err : strerror(-rc)));
	exporter_scrape_done(s->e, monotonic_s() - t0, out->len);
	pthread_mutex_unlock(&s->state_lock);
	return rc;
}

bool serve_check_auth(void *ctx, const char *user, const char *pass)
{
	return webconfig_check(&((struct serve *)ctx)->web, user, pass);
}

/* What to do when http_start fails with rc: -EKEYREJECTED is TLS settings
 * libmicrohttpd refused, -EINVAL or -E2BIG listen addresses that cannot be
 * served together, and the rest a socket that could not be opened. */
static const char *listen_hint(const struct serve *s, int rc)
{
	if (rc == -EKEYREJECTED)
		return "fix the web config file; iolat.yml(5) describes it";
	if (s->fl.systemd_socket)
		return "check the ListenStream= lines of iolat.socket";
	if (rc == -EINVAL || rc == -E2BIG)
		return "fix --web.listen-address";
	if (rc == -EACCES || rc == -EADDRINUSE || rc == -EADDRNOTAVAIL)
		return "pick a free address of this host with --web.listen-address";
	return NULL;
}

/* A start that failed on these is a bad configuration (exit 2), not a
 * failure of the host. */
static bool listen_bad_config(int rc)
{
	return rc == -EKEYREJECTED || rc == -EINVAL || rc == -E2BIG;
}

static int setup(struct serve *s)
{
	/* The per-workload bounds are slot boundaries too (the table sorts
	 * and de-duplicates them). */
	uint64_t lat_bounds[2 * CONFIG_MAX_BOUNDS];
	/* A daemon looks for new bio-based disks once a minute (device events
	 * cover most arrivals at once); hist, interactive, every second. */
	struct collector_opts co = { .attach = s->fl.attach,
				     .disk_rescan_s = DISK_RESCAN_S,
				     .map_budget = COLLECTOR_SERVE_BUDGET,
				     .key_cgroup = s->cfg.workloads && !s->cfg.workloads_by_process,
				     .key_process = s->cfg.workloads && s->cfg.workloads_by_process,
				     .key_size_class = s->cfg.size_label,
				     .pin_instance = s->fl.handover,
				     /* Slot boundaries, so their `le` buckets are exact. */
				     .extra_lat_bounds = lat_bounds,
				     .nextra_lat_bounds = s->cfg.nlat_le + s->cfg.nwl_lat_le,
				     .extra_size_bounds = s->cfg.size_le,
				     .nextra_size_bounds = s->cfg.nsize_le,
				     .workloads =
					 s->cfg.workloads ? (uint32_t)s->cfg.workloads_max : 0 };
	const char *listen[CONFIG_MAX_LISTEN];
	struct exporter_opts eo;

	struct probe_result pr;
	struct http_opts o;
	char err[512] = "", landing[SERVE_LANDING_MAX];
	int rc;
	memcpy(lat_bounds, s->cfg.lat_le, s->cfg.nlat_le * sizeof(lat_bounds[0]));
	memcpy(lat_bounds + s->cfg.nlat_le, s->cfg.wl_lat_le,
	       s->cfg.nwl_lat_le * sizeof(lat_bounds[0]));
	co.pin_instance = co.pin_instance ? co.pin_instance : serve_leftover_instance(s);
	co.unpin_at_close = !s->fl.handover;
	co.lease_ns = (uint64_t)s->fl.lease_s * NSEC_PER_SEC;
	if (probe_kernel_at(&pr, getenv("IOLAT_BTF"))) {
		errorf("iolat needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		       "this kernel has no BTF (%s is missing)", pr.btf_path);
		return -ENOENT;
	}
	rc = serve_load_web(&s->cfg, &s->web, err, sizeof(err));
	if (rc) {
		errorf("fix the web config file; iolat.yml(5) describes it", "%s", err);
		s->bad_config = true;
		return rc;
	}
	memcpy(co.map_size, s->cfg.map_sizes, sizeof(co.map_size));
	rc = collector_test_knobs(&co, getenv, err, sizeof(err));
	if (!rc)
		rc = collector_open(&s->c, &co, &pr, err, sizeof(err));
	if (rc) {
		errorf("'iolat check' shows what this kernel offers", "%s", err);
		return rc < 0 ? rc : -EINVAL;
	}
	serve_log_handover(s);
	rc = open_user_programs(s);
	if (rc)
		return rc;
	serve_exporter_opts_of(s, &s->cfg, &eo);
	rc = exporter_new(&s->e, s->c, &eo, err, sizeof(err));
	if (rc) {
		/* -EINVAL is the settings' (bucket bounds, label options); the
		 * rest is the machine's (memory), which no edit fixes. */
		errorf(rc == -EINVAL ? "fix it in the configuration file or flags" : NULL, "%s",
		       err);
		s->bad_config = rc == -EINVAL;
		return rc;
	}
	serve_workloads_handover(s);
	s->last_reload_ok = true;
	s->last_reload_ok_time = (double)time(NULL);
	serve_build_landing(s, &s->cfg, &s->web, landing, sizeof(landing));
	serve_http_opts_of(s, &s->cfg, &s->web, landing, listen, &o);
	rc = http_start(&s->http, &o, err, sizeof(err));
	if (rc) {
		errorf(listen_hint(s, rc), "%s", err);
		s->bad_config = listen_bad_config(rc);
		return rc;
	}
	return 0;
}

static void teardown(struct serve *s)
{
	http_stop(s->http);
	/* After the last pass; the collector's last save (collector_close)
	 * follows, of the same label sets. */
	if (s->wl_saving)
		exporter_workloads_save(s->e);
	exporter_free(s->e);
	userprogs_close(s->user);
	collector_close(s->c);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	webconfig_free(&s->web);
	metrics_clear(&s->set);
	pthread_mutex_destroy(&s->state_lock);
}

/*
 * Idle, the daemon sleeps in collector_wait: the kernel wakes it when a
 * request lacks timestamps or a disk appears or is resized, a signal when
 * it must stop or reload. It runs a maintenance pass at start, then every
 * --maintenance.interval (with --handover, at least three times a lease,
 * which each pass renews), and the collector's part of one at each
 * wake-up, for a program to attach at once. Scrapes never wake it.
 */
static void run(struct serve *s)
{
	/* The first pass at once: the cgroups already doing I/O are named
	 * for the first scrapes, not an interval later. */
	double every_s = pass_interval_s(s), next_pass = monotonic_s();

	while (!stop) {
		double wait_s = next_pass - monotonic_s();

		collector_wait(s->c, wait_s > 0 ? (int)(wait_s * 1000) + 1 : 0, NULL);
		if (stop)
			break;
		if (monotonic_s() >= next_pass) {
			maintain(s);
			next_pass = monotonic_s() + every_s;
		} else {
			maintain_collector(s);
		}
		if (reload) {
			reload = 0;
			serve_do_reload(s);
		}
	}
}

/* Socket activation: the listening sockets systemd passed, from fd 3 on
 * (LISTEN_FDS, unset here so nothing iolat starts inherits them). */
static int take_systemd_sockets(struct serve_flags *fl)
{
	static const char *const what_to_do =
	    "start iolat from a .socket unit or with systemd-socket-activate, or drop "
	    "--web.systemd-socket and give --web.listen-address";
	int n = sd_listen_fds(1);

	if (n < 0) {
		errorf(what_to_do, "--web.systemd-socket: the sockets passed are unusable: %s",
		       strerror(-n));
		return -EINVAL;
	}
	if (n == 0 || n > CONFIG_MAX_LISTEN) {
		errorf(what_to_do,
		       "--web.systemd-socket: systemd passed %d sockets (1 to %d are "
		       "served)",
		       n, CONFIG_MAX_LISTEN);
		return -EINVAL;
	}
	fl->systemd_fds = n;
	return 0;
}

int cmd_serve(int argc, char **argv)
{
	struct sigaction sa_stop = { .sa_handler = on_stop }, sa_hup = { .sa_handler = on_hup };
	struct serve s = { .stats_fd = -1, .state_lock = PTHREAD_MUTEX_INITIALIZER };
	const char *hint;
	char err[512];
	int rc;

	/* Errors of the start in the log's format, if one was chosen; the plain
	 * "iolat: ..." line otherwise, as the other commands print. */
	if (serve_flags_early_log(argc, argv))
		errors_to_log("cannot start");
	rc = serve_flags_parse(argc, argv, &s.fl);
	if (rc)
		return opts_exit_status(rc);
	if (s.fl.systemd_socket && take_systemd_sockets(&s.fl))
		return 2;
	if (serve_flags_config(&s.fl, &s.cfg, err, sizeof(err))) {
		errorf("fix the flag or --config.file; 'iolat serve --help' lists the flags, "
		       "iolat.yml(5) the file's keys",
		       "%s", err);
		return 2;
	}
	log_set_level(s.cfg.log_level);
	log_set_format(s.cfg.log_format);
	if (s.cfg.log_format == LOG_JSON)
		errors_to_log("cannot start");
	if (require_bpf_privileges(err, sizeof(err), &hint)) {
		errorf(hint, "%s", err);
		return 1;
	}
	if (s.fl.check)
		return check_user_programs(&s);
	if (s.fl.unpin)
		return serve_unpin(s.fl.unpin);
	if (s.cfg.bpf_stats && privileges_bpf_stats(&s.stats_fd, err, sizeof(err), &hint)) {
		errorf(hint, "%s", err);
		return 1;
	}
	sigaction(SIGTERM, &sa_stop, NULL);
	sigaction(SIGINT, &sa_stop, NULL);
	sigaction(SIGHUP, &sa_hup, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = setup(&s);
	if (!rc) {
		serve_log_start(&s); /* before "listening on", which tests wait for */
		/* Serving needs only to read maps and attach on demand. */
		rc = privileges_drop();
		if (rc)
			log_warn("could not drop capabilities", LOG_STR("err", strerror(-rc)));
		for (size_t i = 0; i < s.cfg.nlisten; i++) {
			char where[128];

			const char *spec = s.cfg.listen[i];

			log_info(
			    "listening on",
			    LOG_STR("address", http_listen_describe(spec, where, sizeof(where))),
			    LOG_STR("path", s.cfg.telemetry_path),
			    LOG_BOOL("tls", s.web.tls.cert_pem != NULL),
			    LOG_STR("systemd_socket", s.fl.systemd_socket ? spec : NULL));
		}
		serve_log_web(&s.web);
		sd_notify(0, "READY=1");
		run(&s);
		sd_notify(0, "STOPPING=1");
		if (!s.fl.handover)
			log_info("stopping: detaching the BPF programs");
		rc = 0;
	}
	teardown(&s);
	if (!rc && s.fl.handover) {
		char dir[256], unpin[128];

		snprintf(dir, sizeof(dir), "%s/%s", PIN_ROOT, s.fl.handover);
		snprintf(unpin, sizeof(unpin), "iolat serve --unpin=%s", s.fl.handover);
		log_info("stopped: the collector stays pinned for a successor", LOG_STR("dir", dir),
			 LOG_UINT("lease_seconds", s.fl.lease_s),
			 LOG_STR("effect", "a successor within the lease (--handover.lease) takes "
					   "it over without a gap; then its programs count nothing "
					   "until the next run removes them"),
			 LOG_STR("unpin", unpin));
	}
	return rc ? (s.bad_config ? 2 : 1) : 0;
}
