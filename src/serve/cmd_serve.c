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
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "core/collector.h"
#include "core/handover.h"
#include "core/pin.h"
#include "metrics/expo_proto.h"
#include "metrics/expo_text.h"
#include "serve/exporter.h"
#include "serve/http.h"
#include "serve/serve_config.h"
#include "serve/serve_flags.h"
#include "serve/webconfig.h"
#include "serve/wlstate.h"
#include "sys/privileges.h"
#include "uprog/userprogs.h"
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
struct reload {
	struct serve *s;
	struct serve_config cfg;
	struct webconfig web;
	struct exporter_settings *settings;
	int stats_fd; /* BPF stats turned on by this reload, or -1 */
	char landing[4096];
};

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

static void exporter_opts_of(const struct serve *s, const struct serve_config *cfg,
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
	o->synthetic_disks = s->fl.synthetic;
	o->workloads = cfg->workloads;
	o->wl.max_sets = cfg->workloads_max;
	o->wl.expire_s = cfg->workloads_expire_s;
	o->disk_expire_s = cfg->disks_expire_s;
	o->maintain_s = pass_interval_s(s);
	o->rules = cfg->rules;
	o->nrules = cfg->nrules;
}

static int add_config_metrics(struct serve *s, struct metric_set *set)
{
	static const char *const result_l[] = { "result", NULL };
	static const char *const good[] = { "success" }, *const bad[] = { "failure" };
	struct metric_family *n = metrics_family(
	    set, "iolat_config_reloads_total",
	    "Configuration reloads (SIGHUP), by result; a failed one changes nothing.",
	    METRIC_COUNTER, result_l);

	if (metrics_set_value(
		metrics_family(set, "iolat_config_last_reload_successful",
			       "Whether the last configuration reload (SIGHUP) succeeded; 1 "
			       "before any.",
			       METRIC_GAUGE, NULL),
		NULL, s->last_reload_ok) ||
	    metrics_set_value(
		metrics_family(set, "iolat_config_last_reload_success_timestamp_seconds",
			       "Unix time of the last successful configuration load (the start, "
			       "before any reload).",
			       METRIC_GAUGE, NULL),
		NULL, s->last_reload_ok_time) ||
	    metrics_set_value(n, good, (double)s->reloads_ok) ||
	    metrics_set_value(n, bad, (double)s->reloads_failed))
		return -ENOMEM;
	return 0;
}

/* One series per reason a connection was closed or refused. */
static int add_http_closed(struct metric_family *f, const struct http_stats *st)
{
	const struct {
		const char *reason;
		unsigned long long n;
	} rows[] = {
		{ "per_ip_limit", st->refused_per_ip },
		{ "full", st->refused_full },
		{ "evicted", st->evicted },
		{ "header_timeout", st->header_timeouts },
		{ "write_timeout", st->write_timeouts },
		{ "body", st->bodies_refused },
	};
	int rc = 0;

	for (size_t i = 0; !rc && i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *v[] = { rows[i].reason };

		rc = metrics_set_value(f, v, (double)rows[i].n);
	}
	return rc;
}

/* What the connection limits closed or refused (http.h). */
static int add_http_metrics(struct serve *s, struct metric_set *set)
{
	static const char *const reason_l[] = { "reason", NULL };
	struct metric_family *f = metrics_family(
	    set, "iolat_http_connections_closed_total",
	    "Connections iolat closed or refused to keep the server available: per_ip_limit, "
	    "full (every slot answering), evicted (replaced by a newer connection), "
	    "header_timeout, write_timeout, body (a request with a body).",
	    METRIC_COUNTER, reason_l);
	struct metric_family *open = metrics_family(
	    set, "iolat_http_connections",
	    "Connections open now (the one of this scrape included).", METRIC_GAUGE, NULL);
	struct http_stats st;

	http_get_stats(s->http, &st);
	return metrics_set_value(open, NULL, st.open) || add_http_closed(f, &st) ? -ENOMEM : 0;
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

/* One maintenance pass: the exporter's (folds, names, retires, expires,
 * saves), then the collector's; timed for iolat_maintenance_*. */
static void maintain(struct serve *s)
{
	double t0 = monotonic_s();
	int rc;

	pthread_mutex_lock(&s->state_lock);
	rc = exporter_maintain(s->e);
	pthread_mutex_unlock(&s->state_lock);
	if (rc)
		log_error("exporter maintenance failed", LOG_STR("err", strerror(-rc)));
	maintain_collector(s);
	pthread_mutex_lock(&s->state_lock);
	exporter_pass_done(s->e, monotonic_s() - t0);
	pthread_mutex_unlock(&s->state_lock);
}

static int render(void *ctx, enum expo_format fmt, struct buf *out)
{
	struct serve *s = ctx;
	double t0 = monotonic_s();
	char err[256] = "";
	int rc;

	/* Give back what the previous scrape's body and series took, so the
	 * daemon's RSS between scrapes stays near its working set. */
	malloc_trim(0);
	pthread_mutex_lock(&s->state_lock);
	rc = exporter_render(s->e, &s->set, err, sizeof(err));
	if (!rc)
		rc = userprogs_collect(s->user, &s->set);
	if (!rc)
		rc = add_config_metrics(s, &s->set);
	if (!rc)
		rc = add_http_metrics(s, &s->set);
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

static bool check_auth(void *ctx, const char *user, const char *pass)
{
	return webconfig_check(&((struct serve *)ctx)->web, user, pass);
}

/* The landing page of a configuration: links and the settings in use. */
static void build_landing(const struct serve *s, const struct serve_config *cfg,
			  const struct webconfig *web, char *out, size_t len)
{
	char listen[CONFIG_MAX_LISTEN * 130] = "";

	for (size_t i = 0; i < cfg->nlisten; i++)
		snprintf(listen + strlen(listen), sizeof(listen) - strlen(listen), "%s%s",
			 i ? ", " : "", cfg->listen[i]);
	snprintf(out, len,
		 "<!DOCTYPE html><html><head><title>iolat exporter</title></head><body>\n"
		 "<h1>iolat exporter %s</h1>\n<p>Block-I/O latency from eBPF.</p>\n"
		 "<ul><li><a href=\"%s\">Metrics</a></li><li><a href=\"/-/healthy\">Health</a>"
		 "</li></ul>\n<h2>Configuration</h2>\n<pre>listen: %s\ntelemetry path: %s\n"
		 "TLS: %s\nbasic auth: %s\ndevice time: %s\ntotal time: %s\nrequest size: %s\n"
		 "op label: %s\nsize label: %s\nlatency buckets: %zu\nsize buckets: %zu\n"
		 "workloads: %s\nworkloads max: %zu\nworkload rules: %zu\n"
		 "BPF stats: %s\nlog level: %d\nattach: %s\n</pre></body></html>\n",
		 IOLAT_VERSION, cfg->telemetry_path, listen, cfg->telemetry_path,
		 web->tls.cert_pem ? "on" : "off", web->nusers ? "on" : "off",
		 cfg->device_view ? "on" : "off", cfg->total_view ? "on" : "off",
		 cfg->size_view ? "on" : "off", cfg->op_label ? "on" : "off",
		 cfg->size_label ? "on" : "off", cfg->nlat_le, cfg->nsize_le,
		 cfg->workloads ? "on" : "off", cfg->workloads_max, cfg->nrules,
		 cfg->bpf_stats ? "on" : "off", (int)cfg->log_level,
		 attach_mode_name(collector_mode(s->c)));
}

/* Loads cfg's web config (if any) into *out. 0 or -errno with a reason in err. */
static int load_web(const struct serve_config *cfg, struct webconfig *out, char *err, size_t len)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if (cfg->web_config_file[0]) {
		rc = webconfig_load(cfg->web_config_file, out, err, len);
		if (rc)
			return rc;
	}
	if (out->tls.cert_pem && !http_tls_pair_loads(out->tls.cert_pem, out->tls.key_pem)) {
		snprintf(err, len, "%s: cert_file %s and key_file %s do not load as a pair (%s)",
			 cfg->web_config_file, out->cert_file ? out->cert_file : "(inline cert)",
			 out->key_file ? out->key_file : "(inline key)",
			 strstr(out->tls.cert_pem, "PRIVATE KEY")
			     ? "swapped? cert_file holds a key"
			     : "do they match, and are they PEM?");
		webconfig_free(out);
		return -EKEYREJECTED;
	}
	return 0;
}

/* What the web config turned on, once serving (and after a reload). */
static void log_web(const struct webconfig *w)
{
	char min[8], max[8];

	if (!w->tls.cert_pem)
		return;

	snprintf(min, sizeof(min), "TLS1%u", w->tls_min_version - 10);
	snprintf(max, sizeof(max), "TLS1%u", w->tls_max_version - 10);
	log_info("TLS", LOG_STR("min_version", min), LOG_STR("max_version", max),
		 LOG_STR("client_auth_type", tlsconf_client_auth_name(w->tls.client_auth)),
		 LOG_BOOL("client_allowed_sans", w->tls.nallowed_sans),
		 LOG_STR("cipher_suites",
			 w->tls.ncipher_suites ? "as configured" : "GnuTLS's defaults"));
	/* exporter-toolkit's default is true: say once why no HTTP/2 is offered. */
	if (!w->http2_off)
		log_info("HTTP/2 is not offered (http_server_config.http2)",
			 LOG_STR("reason",
				 "libmicrohttpd speaks HTTP/1.1, which every Prometheus scrapes"));
}

/* The HTTP options of a configuration; listen points into cfg. */
static void http_opts_of(struct serve *s, const struct serve_config *cfg,
			 const struct webconfig *web, const char *landing, const char **listen,
			 struct http_opts *o)
{
	for (size_t i = 0; i < cfg->nlisten; i++)
		listen[i] = cfg->listen[i];
	*o = (struct http_opts){ .listen = listen,
				 .nlisten = cfg->nlisten,
				 .telemetry_path = cfg->telemetry_path,
				 .landing_html = landing,
				 .tls = &web->tls,
				 .headers = (const char *const *)web->headers,
				 .nheaders = web->nheaders,
				 .rate_interval_ns = web->rate_interval_ns,
				 .rate_burst = web->rate_burst,
				 .limits = s->fl.limits,
				 .auth = web->nusers ? check_auth : NULL,
				 .render = render,
				 .ctx = s };
}

/* Runs inside http_update with no request being answered: the new state in,
 * the old one into r, to be freed after. */
static void reload_commit(void *arg)
{
	struct reload *r = arg;
	struct serve *s = r->s;
	struct serve_config old_cfg = s->cfg;
	struct webconfig old_web = s->web;

	pthread_mutex_lock(&s->state_lock);
	exporter_apply(s->e, r->settings);
	r->settings = NULL;
	s->cfg = r->cfg;
	s->web = r->web;
	r->cfg = old_cfg;
	r->web = old_web;
	s->reloads_ok++;
	s->last_reload_ok = true;
	s->last_reload_ok_time = (double)time(NULL);
	log_set_level(s->cfg.log_level);
	log_set_format(s->cfg.log_format);
	if (r->stats_fd >= 0 || !s->cfg.bpf_stats) {
		/* On now (this reload's fd), or off now (the old fd closes after). */
		int fd = s->stats_fd;

		s->stats_fd = r->stats_fd;
		r->stats_fd = fd;
	}
	pthread_mutex_unlock(&s->state_lock);
}

/* Builds a configuration's whole state beside the running one. */
static int reload_prepare(struct serve *s, struct reload *r, char *err, size_t len)
{
	struct exporter_opts eo;
	int rc;

	rc = serve_flags_config(&s->fl, &r->cfg, err, len);
	if (rc)
		return rc;
	if (r->cfg.workloads_by_process != s->cfg.workloads_by_process ||
	    r->cfg.size_label != s->cfg.size_label) {
		snprintf(err, len, "changing workloads.by or labels.size_class needs a restart");
		return -EINVAL;
	}
	if (memcmp(r->cfg.map_sizes, s->cfg.map_sizes, sizeof(r->cfg.map_sizes))) {
		snprintf(err, len,
			 "changing bpf_map_sizes needs a restart (the maps are made "
			 "at start)");
		return -EINVAL;
	}
	r->stats_fd = -1;
	if (r->cfg.bpf_stats && s->stats_fd < 0 &&
	    (r->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME)) < 0) {
		/* After its start serve keeps CAP_BPF and CAP_PERFMON only. */
		snprintf(err, len,
			 "cannot turn BPF stats on (%s): that takes CAP_SYS_ADMIN, "
			 "which iolat drops once started; restart it, or run 'sysctl "
			 "kernel.bpf_stats_enabled=1'",
			 strerror(errno));
		return -EPERM;
	}
	rc = load_web(&r->cfg, &r->web, err, len);
	if (rc)
		return rc;
	exporter_opts_of(s, &r->cfg, &eo);
	rc = exporter_prepare(s->e, &eo, &r->settings, err, len);
	if (rc)
		return rc;
	build_landing(s, &r->cfg, &r->web, r->landing, sizeof(r->landing));
	return 0;
}

/*
 * SIGHUP: the files are read again and everything they make is built
 * first; only if all of it, listeners included, is ready does it replace
 * the running state, in one step no scrape sees half of. Otherwise one log
 * line says why, and nothing changed.
 */
static void do_reload(struct serve *s)
{
	struct reload *r = calloc(1, sizeof(*r));
	const char *listen[CONFIG_MAX_LISTEN];
	struct http_opts o;
	char err[512] = "out of memory";
	int rc = -ENOMEM;

	sd_notify(0, "RELOADING=1");
	log_debug(
	    "reloading", LOG_STR("config_file", s->fl.config_file),
	    LOG_STR("web_config_file", s->cfg.web_config_file[0] ? s->cfg.web_config_file : NULL));
	if (r) {
		r->s = s;
		r->stats_fd = -1;
		rc = reload_prepare(s, r, err, sizeof(err));
	}
	if (!rc) {
		http_opts_of(s, &r->cfg, &r->web, r->landing, listen, &o);
		rc = http_update(s->http, &o, reload_commit, r, err, sizeof(err));
	}
	if (rc) {
		pthread_mutex_lock(&s->state_lock);
		s->reloads_failed++;
		s->last_reload_ok = false;
		pthread_mutex_unlock(&s->state_lock);
		log_error("reload failed, keeping the running configuration", LOG_ERR(err));
	} else {
		log_info("configuration reloaded", LOG_STR("counters", "kept"));
		log_web(&s->web);
		if (log_enabled(LOG_DEBUG_L)) {
			char changed[512];

			/* r->cfg is the configuration that ran until now. */
			config_changes(&r->cfg, &s->cfg, changed, sizeof(changed));
			log_debug("reload changes",
				  LOG_STR("changed", changed[0] ? changed : "none"));
		}
	}
	if (r) {
		exporter_settings_free(r->settings);
		webconfig_free(&r->web);
		if (r->stats_fd >= 0)
			close(r->stats_fd);
	}
	free(r);
	sd_notify(0, "READY=1");
}

/* --unpin: removes what --handover keeps for an instance. */
static int unpin(const char *name)
{
	struct pin_instance in[64];
	int n = pin_list(in, 64), found = -1, rc;
	char dir[256];

	for (int i = 0; i < n && i < 64; i++)
		if (!strcmp(in[i].name, name))
			found = i;
	pin_dir_of(name, dir, sizeof(dir));
	rc = pin_instance_remove(name);
	if (rc) {
		errorf("is /sys/fs/bpf writable? (run as root)", "cannot remove %s: %s", dir,
		       strerror(-rc));
		return 1;
	}
	if (found < 0)
		printf("nothing pinned as %s\n", name);
	else
		printf("removed %s (%d links, %d maps): its programs are detached\n", dir,
		       in[found].links, in[found].maps);
	return 0;
}

/* What became of a pinned collector at this start, for the start line. */
static const char *handover_state(const struct collector_pins *p)
{
	if (p->adopted)
		return "adopted";
	if (p->took_over)
		return "took_over";
	return p->replaced[0] ? "replaced" : "fresh";
}

/*
 * The start line, once serving (a start that fails says only why): the
 * version, the kernel, how the programs are attached, the maps' sizes
 * (map_NAME: what an operator compares with iolat_bpf_map_capacity_entries,
 * and 'iolat check' explains; maps_set: those the flags or the file set),
 * and what became of a pinned collector.
 */
static void log_start(const struct serve *s)
{
	struct log_field f[8 + MAPSIZE_COUNT];
	char keys[MAPSIZE_COUNT][48], set[160] = "";
	struct map_stats m[MAPSIZE_COUNT];
	struct collector_pins pins;
	struct mapsize_plan plan;
	struct utsname u;
	int n = collector_map_stats(s->c, m, MAPSIZE_COUNT), k = 0;
	size_t at = 0;

	collector_sizes(s->c, &plan);
	collector_pins(s->c, &pins);
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	f[k++] = (struct log_field)LOG_STR("version", IOLAT_VERSION);
	f[k++] = (struct log_field)LOG_STR("kernel", u.release);
	f[k++] = (struct log_field)LOG_STR("attach", attach_mode_name(collector_mode(s->c)));
	for (int i = 0; i < n && i < MAPSIZE_COUNT; i++) {
		snprintf(keys[i], sizeof(keys[i]), "map_%s", m[i].name);
		f[k++] = (struct log_field)LOG_UINT(keys[i], m[i].capacity);
		if (plan.set[i] && at < sizeof(set))
			at += (size_t)snprintf(set + at, sizeof(set) - at, "%s%s", at ? "," : "",
					       m[i].name);
	}
	f[k++] = (struct log_field)LOG_STR("maps_set", set[0] ? set : NULL);
	f[k++] = (struct log_field)LOG_STR("handover", handover_state(&pins));
	f[k++] = (struct log_field)LOG_STR("pinned", pins.pinned ? pins.dir : NULL);
	f[k++] = (struct log_field)LOG_END;
	log_emit(LOG_INFO_L, "started", f);
}

/* Says what the collector took over or replaced, with --handover. */
static void log_handover(const struct serve *s)
{
	struct collector_pins p;

	collector_pins(s->c, &p);
	if (p.replaced[0])
		log_warn("replaced the pinned collector", LOG_STR("dir", p.dir),
			 LOG_STR("reason", p.replaced), LOG_STR("effect", "counters start again"));
	if (p.took_over)
		log_info("taking over the pinned collector", LOG_STR("dir", p.dir),
			 LOG_STR("made_by", p.made_by), LOG_UINT("layout", p.took_over_layout),
			 LOG_UINT("our_layout", IOLAT_LAYOUT_VERSION),
			 LOG_UINT("grace_seconds", p.grace_s),
			 LOG_STR("effect", "its programs count the I/O that began before the "
					   "switch, ours the rest; counters continue"));
	if (p.switch_late)
		log_warn("the handover's switch time passed before both collectors had it",
			 LOG_INT("lead_ms", HANDOVER_LEAD_MS),
			 LOG_STR("effect", "I/O that began in the last lead_ms may be counted "
					   "twice"));
	if (p.adopted)
		log_info("adopted the pinned collector", LOG_STR("dir", p.dir),
			 LOG_STR("made_by", p.made_by), LOG_UINT("adoptions", p.adoptions),
			 LOG_STR("effect", "no I/O was missed and counters continue"));
	if (p.adopted && !p.restored)
		log_warn("the series the last run saved were not read",
			 LOG_STR("reason", p.not_restored),
			 LOG_STR("effect", "counters continue from the kernel's own (32-bit) "
					   "counts, and retired series are gone"));
	if (p.pinned && !p.adopted && !p.took_over && s->fl.handover)
		log_info("collector pinned: a restart within the lease adopts it",
			 LOG_STR("dir", p.dir), LOG_UINT("lease_seconds", s->fl.lease_s));
}

/*
 * With --handover off, a collector an earlier run left pinned under the
 * default name would count on, attached, with no one to read it: this run
 * takes it over instead (no I/O is lost) and removes it at stop.
 */
static const char *leftover_instance(const struct serve *s)
{
	char dir[256];
	struct stat st;

	if (s->fl.handover || pin_dir_of(PIN_DEFAULT_INSTANCE, dir, sizeof(dir)) ||
	    stat(dir, &st) || !S_ISDIR(st.st_mode))
		return NULL;
	log_info("found the collector an earlier run with --handover left pinned",
		 LOG_STR("dir", dir),
		 LOG_STR("effect", "taking it over, and removing it at stop (--handover is off)"));
	return PIN_DEFAULT_INSTANCE;
}

/*
 * --handover: the workload label sets of the run before go on when this
 * run adopted its collector and read its series, or took it over (the
 * label sets name those series); otherwise a saved state is stale and goes. From here on
 * they are saved beside the collector's series (exporter_workloads_files).
 */
static void workloads_handover(struct serve *s)
{
	struct wlabels_stats st;
	struct wlstate_owner owner;
	struct collector_pins p;
	int rc;

	collector_pins(s->c, &p);
	if (!p.pinned)
		return;
	owner.created_ns = p.created_ns;
	rc = wlstate_files_init(&s->wl_files, p.name, &owner);
	if (rc) {
		log_warn("cannot keep the workload label sets for a restart",
			 LOG_STR("dir", PIN_STATE_ROOT), LOG_STR("instance", p.name),
			 LOG_STR("err", strerror(-rc)));
		return;
	}
	rc = (p.adopted && p.restored) || p.took_over
		 ? exporter_workloads_restore(s->e, &s->wl_files, &st)
		 : -ENOENT;
	if (!rc)
		log_info("workload label sets of the last run restored", LOG_UINT("sets", st.sets),
			 LOG_UINT("cgroups", st.cgroups));
	else if (rc != -ENOENT && rc != -EOPNOTSUPP)
		log_warn("the workload label sets the last run saved were not read",
			 LOG_STR("reason", rc == -ESTALE ? "they belong to other maps"
					   : rc == -EPROTO
					       ? "the file is damaged or of another format"
					       : strerror(-rc)),
			 LOG_STR("effect", "workloads are named afresh"));
	if (rc)
		unlink(s->wl_files.path);
	exporter_workloads_files(s->e, &s->wl_files);
	s->wl_saving = true;
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
	/* A daemon looks for new bio-based disks once a minute (device events
	 * cover most arrivals at once); hist, interactive, every second. */
	struct collector_opts co = { .attach = s->fl.attach,
				     .disk_rescan_s = DISK_RESCAN_S,
				     .map_budget = COLLECTOR_SERVE_BUDGET,
				     .key_cgroup = s->cfg.workloads && !s->cfg.workloads_by_process,
				     .key_process = s->cfg.workloads && s->cfg.workloads_by_process,
				     .key_size_class = s->cfg.size_label,
				     .pin_instance = s->fl.handover,
				     .workloads =
					 s->cfg.workloads ? (uint32_t)s->cfg.workloads_max : 0 };
	const char *listen[CONFIG_MAX_LISTEN];
	struct exporter_opts eo;
	struct probe_result pr;
	struct http_opts o;
	char err[512] = "", landing[4096];
	int rc;

	co.pin_instance = co.pin_instance ? co.pin_instance : leftover_instance(s);
	co.unpin_at_close = !s->fl.handover;
	co.lease_ns = (uint64_t)s->fl.lease_s * NSEC_PER_SEC;
	if (probe_kernel_at(&pr, getenv("IOLAT_BTF"))) {
		errorf("iolat needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		       "this kernel has no BTF (%s is missing)", pr.btf_path);
		return -ENOENT;
	}
	rc = load_web(&s->cfg, &s->web, err, sizeof(err));
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
	log_handover(s);
	rc = open_user_programs(s);
	if (rc)
		return rc;
	exporter_opts_of(s, &s->cfg, &eo);
	rc = exporter_new(&s->e, s->c, &eo, err, sizeof(err));
	if (rc) {
		errorf("fix the buckets in the configuration", "%s", err);
		s->bad_config = rc == -EINVAL;
		return rc;
	}
	workloads_handover(s);
	s->last_reload_ok = true;
	s->last_reload_ok_time = (double)time(NULL);
	build_landing(s, &s->cfg, &s->web, landing, sizeof(landing));
	http_opts_of(s, &s->cfg, &s->web, landing, listen, &o);
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
 * it must stop or reload. It runs a maintenance pass every
 * --maintenance.interval (with --handover, at least three times a lease,
 * which each pass renews), and the collector's part of one at each
 * wake-up, for a program to attach at once. Scrapes never wake it.
 */
static void run(struct serve *s)
{
	double every_s = pass_interval_s(s), next_pass = monotonic_s() + every_s;

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
			do_reload(s);
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
		return unpin(s.fl.unpin);
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
		log_start(&s); /* before "listening on", which tests wait for */
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
		log_web(&s.web);
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
