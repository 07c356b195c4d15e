// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cmd_serve.c - `iolat serve`: the exporter daemon. Loads the collector,
 * serves its metrics over HTTP(S) until SIGTERM/SIGINT, reloads its
 * configuration on SIGHUP without touching the counters. Its command line
 * is read in serve_flags.c.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "collector.h"
#include "commands.h"
#include "config.h"
#include "errors.h"
#include "expo_proto.h"
#include "expo_text.h"
#include "exporter.h"
#include "http.h"
#include "log.h"
#include "privileges.h"
#include "serve_flags.h"
#include "userprogs.h"
#include "webconfig.h"

struct serve {
	struct serve_flags fl;
	struct serve_config cfg;
	struct webconfig web;
	bool web_loaded;
	struct collector *c;
	struct exporter *e;
	struct userprogs *user;
	struct http_server *http;
	struct metric_set set;
	char landing[4096];
	int stats_fd;
};

/* How often the daemon looks for bio-based disks that got a size (see run). */
#define DISK_RESCAN_S 60

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

	if (!s->fl.user.dir)
		return 0;
	if (userprogs_open(&s->user, &s->fl.user, err, sizeof(err))) {
		errorf(s->fl.user.strict ? "fix it, or run without --config.strict to skip it"
					 : "check --config.dir and --config.names",
		       "%s", err);
		return -EINVAL;
	}
	for (size_t i = 0; userprogs_config(s->user, i, &name, &why); i++) {
		if (why)
			log_error("user program config '%s' disabled: %s", name, why);
		else
			log_info("user program config '%s' loaded", name);
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

static void exporter_opts_of(const struct serve *s, struct exporter_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->device_view = s->cfg.device_view;
	o->total_view = s->cfg.total_view;
	o->size_view = s->cfg.size_view;
	o->no_op_label = !s->cfg.op_label;
	o->size_label = s->cfg.size_label;
	o->lat_le = s->cfg.nlat_le ? s->cfg.lat_le : NULL;
	o->nlat_le = s->cfg.nlat_le;
	o->size_le = s->cfg.nsize_le ? s->cfg.size_le : NULL;
	o->nsize_le = s->cfg.nsize_le;
	o->synthetic_disks = s->fl.synthetic;
	o->workloads = s->cfg.workloads;
	o->wl.max_sets = s->cfg.workloads_max;
	o->wl.expire_s = s->cfg.workloads_expire_s;
	o->rules = s->cfg.rules;
	o->nrules = s->cfg.nrules;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int render(void *ctx, enum expo_format fmt, struct buf *out)
{
	struct serve *s = ctx;
	double t0 = now_s();
	int rc;

	/* Give back what the previous scrape's body and series took, so the
	 * daemon's RSS between scrapes stays near its working set. */
	malloc_trim(0);
	rc = exporter_collect(s->e, &s->set);
	if (!rc)
		rc = userprogs_collect(s->user, &s->set);

	if (!rc)
		rc = fmt == EXPO_PROTOBUF ? expo_proto(&s->set, out)
					  : expo_text(&s->set, fmt == EXPO_OPENMETRICS, out);
	if (rc)
		log_error("building metrics failed: %s", strerror(-rc));
	exporter_scrape_done(s->e, now_s() - t0, out->len);
	return rc;
}

static bool check_auth(void *ctx, const char *user, const char *pass)
{
	return webconfig_check(&((struct serve *)ctx)->web, user, pass);
}

static void build_landing(struct serve *s)
{
	char listen[CONFIG_MAX_LISTEN * 130] = "";

	for (size_t i = 0; i < s->cfg.nlisten; i++)
		snprintf(listen + strlen(listen), sizeof(listen) - strlen(listen), "%s%s",
			 i ? ", " : "", s->cfg.listen[i]);
	snprintf(s->landing, sizeof(s->landing),
		 "<!DOCTYPE html><html><head><title>iolat exporter</title></head><body>\n"
		 "<h1>iolat exporter %s</h1>\n<p>Block-I/O latency from eBPF.</p>\n"
		 "<ul><li><a href=\"%s\">Metrics</a></li><li><a href=\"/-/healthy\">Health</a>"
		 "</li></ul>\n<h2>Configuration</h2>\n<pre>listen: %s\ntelemetry path: %s\n"
		 "TLS: %s\nbasic auth: %s\ndevice time: %s\ntotal time: %s\nrequest size: %s\n"
		 "BPF stats: %s\nattach: %s\n</pre></body></html>\n",
		 IOLAT_VERSION, s->cfg.telemetry_path, listen, s->cfg.telemetry_path,
		 s->web.cert_pem ? "on" : "off", s->web.nusers ? "on" : "off",
		 s->cfg.device_view ? "on" : "off", s->cfg.total_view ? "on" : "off",
		 s->cfg.size_view ? "on" : "off", s->cfg.bpf_stats ? "on" : "off",
		 attach_mode_name(collector_mode(s->c)));
}

/* Loads the web config (if any) into s->web, replacing the old one. */
static int load_web(struct serve *s, char *err, size_t len)
{
	struct webconfig fresh = { 0 };

	if (s->cfg.web_config_file[0] && webconfig_load(s->cfg.web_config_file, &fresh, err, len))
		return -EINVAL;
	if (fresh.require_client_cert) {
		snprintf(err, len, "%s: client certificates (RequireAndVerifyClientCert) are not "
			 "supported yet; remove client_auth_type", s->cfg.web_config_file);
		webconfig_free(&fresh);
		return -ENOTSUP;
	}
	if (s->web_loaded)
		webconfig_free(&s->web);
	s->web = fresh;
	s->web_loaded = true;
	return 0;
}

/* GnuTLS priorities for the web config's min_version (TLS 1.2 by default). */
static const char *tls_priorities(unsigned int min_version)
{
	if (min_version >= 13)
		return "NORMAL:-VERS-TLS1.0:-VERS-TLS1.1:-VERS-TLS1.2";
	if (min_version == 12 || !min_version)
		return "NORMAL:-VERS-TLS1.0:-VERS-TLS1.1";
	return "NORMAL";
}

static int start_http(struct serve *s, char *err, size_t len)
{
	const char *listen[CONFIG_MAX_LISTEN];
	struct http_opts o = { 0 };

	for (size_t i = 0; i < s->cfg.nlisten; i++)
		listen[i] = s->cfg.listen[i];
	build_landing(s);
	o.listen = listen;
	o.nlisten = s->cfg.nlisten;
	o.telemetry_path = s->cfg.telemetry_path;
	o.landing_html = s->landing;
	o.tls_cert_pem = s->web.cert_pem;
	o.tls_key_pem = s->web.key_pem;
	o.tls_priorities = tls_priorities(s->web.tls_min_version);
	o.auth = s->web.nusers ? check_auth : NULL;
	o.render = render;
	o.ctx = s;
	return http_start(&s->http, &o, err, len);
}

static void do_reload(struct serve *s)
{
	struct serve_config old = s->cfg, fresh;
	struct exporter_opts eo;
	char err[512];

	sd_notify(0, "RELOADING=1");
	if (serve_flags_config(&s->fl, &fresh)) {
		log_error("reload: configuration rejected, keeping the running one");
		sd_notify(0, "READY=1");
		return;
	}
	if (fresh.workloads_by_process != old.workloads_by_process ||
	    fresh.size_label != old.size_label) {
		log_error("reload: changing workloads.by or labels.size_class needs a restart; "
			  "keeping the running configuration");
		sd_notify(0, "READY=1");
		return;
	}
	s->cfg = fresh;
	exporter_opts_of(s, &eo);
	if (exporter_set_opts(s->e, &eo, err, sizeof(err)) || load_web(s, err, sizeof(err))) {
		log_error("reload: %s; keeping the running configuration", err);
		s->cfg = old;
		sd_notify(0, "READY=1");
		return;
	}
	log_set_level(s->cfg.log_level);
	http_stop(s->http);
	s->http = NULL;
	if (start_http(s, err, sizeof(err))) {
		log_error("reload: %s; back to the previous listeners", err);
		s->cfg = old;
		if (start_http(s, err, sizeof(err)))
			log_error("cannot listen again: %s", err);
	}
	log_info("configuration reloaded; counters kept");
	sd_notify(0, "READY=1");
}

static int setup(struct serve *s)
{
	/* A daemon looks for new bio-based disks once a minute (device events
	 * cover most arrivals at once); hist, interactive, every second. */
	struct collector_opts co = { .attach = s->fl.attach, .disk_rescan_s = DISK_RESCAN_S,
				     .key_cgroup = s->cfg.workloads && !s->cfg.workloads_by_process,
				     .key_process = s->cfg.workloads && s->cfg.workloads_by_process,
				     .key_size_class = s->cfg.size_label };
	struct exporter_opts eo;
	struct probe_result pr;
	char err[512] = "";

	if (probe_kernel(&pr)) {
		errorf("iolat needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		       "this kernel has no BTF (%s is missing)", pr.btf_path);
		return -ENOENT;
	}
	if (load_web(s, err, sizeof(err))) {
		errorf("fix the web config file", "%s", err);
		return -EINVAL;
	}
	if (collector_open(&s->c, &co, &pr, err, sizeof(err))) {
		errorf("'iolat check' shows what this kernel offers", "%s", err);
		return -EINVAL;
	}
	if (open_user_programs(s))
		return -EINVAL;
	exporter_opts_of(s, &eo);
	if (exporter_new(&s->e, s->c, &eo, err, sizeof(err))) {
		errorf("fix the buckets in the configuration", "%s", err);
		return -EINVAL;
	}
	if (start_http(s, err, sizeof(err))) {
		errorf("pick a free address with --web.listen-address", "%s", err);
		return -EADDRINUSE;
	}
	return 0;
}

static void teardown(struct serve *s)
{
	http_stop(s->http);
	exporter_free(s->e);
	userprogs_close(s->user);
	collector_close(s->c);
	if (s->stats_fd > 0)
		close(s->stats_fd);
	if (s->web_loaded)
		webconfig_free(&s->web);
	metrics_clear(&s->set);
}

/*
 * Idle, the daemon sleeps in collector_wait: the kernel wakes it when a
 * request lacks timestamps or a disk appears or is resized, a signal when
 * it must stop or reload, and once a minute it looks for a bio-based disk
 * that got a size without an event (a sysfs walk, about 1.5 ms).
 */
static void run(struct serve *s)
{
	while (!stop) {
		int what;

		collector_wait(s->c, DISK_RESCAN_S * 1000);
		if (stop)
			break;
		what = collector_maintain(s->c);
		if (what < 0)
			log_error("attaching a program on demand failed: %s", strerror(-what));
		for (int bit = COLLECTOR_NOW_FALLBACK; what > 0 && bit <= COLLECTOR_NOW_BIO; bit <<= 1)
			if (what & bit)
				log_info("%s", collector_now_reason(bit));
		if (reload) {
			reload = 0;
			do_reload(s);
		}
	}
}

int cmd_serve(int argc, char **argv)
{
	struct sigaction sa_stop = { .sa_handler = on_stop }, sa_hup = { .sa_handler = on_hup };
	struct serve s = { .stats_fd = -1 };
	int rc;

	if (serve_flags_parse(argc, argv, &s.fl) || serve_flags_config(&s.fl, &s.cfg))
		return 2;
	log_set_level(s.cfg.log_level);
	if (!require_bpf_privileges())
		return 1;
	if (s.fl.check)
		return check_user_programs(&s);
	if (s.cfg.bpf_stats && privileges_bpf_stats(&s.stats_fd))
		return 1;
	sigaction(SIGTERM, &sa_stop, NULL);
	sigaction(SIGINT, &sa_stop, NULL);
	sigaction(SIGHUP, &sa_hup, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = setup(&s);
	if (!rc) {
		/* Serving needs only to read maps and attach on demand. */
		rc = privileges_drop();
		if (rc)
			log_warn("could not drop capabilities: %s", strerror(-rc));
		for (size_t i = 0; i < s.cfg.nlisten; i++)
			log_info("listening on %s%s (%s)", s.cfg.listen[i], s.cfg.telemetry_path,
				 s.web.cert_pem ? "https" : "http");
		sd_notify(0, "READY=1");
		run(&s);
		sd_notify(0, "STOPPING=1");
		log_info("stopping: detaching the BPF programs");
		rc = 0;
	}
	teardown(&s);
	return rc ? 1 : 0;
}
