// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* serve_reload.c - SIGHUP as one transaction: the new settings, web config,
 * exporter settings and listeners are all built beside the running ones,
 * then swapped in between two requests, or none is and the reason is logged.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "core/collector.h"
#include "serve/exporter.h"
#include "serve/http.h"
#include "serve/serve_flags.h"
#include "serve/serve_internal.h"
#include "serve/tlsconf.h"
#include "serve/webconfig.h"
#include "util/log.h"

/* Loads cfg's web config (if any) into *out. 0 or -errno with a reason in err. */
int serve_load_web(const struct serve_config *cfg, struct webconfig *out, char *err, size_t len)
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
void serve_log_web(const struct webconfig *w)
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
void serve_http_opts_of(struct serve *s, const struct serve_config *cfg,
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
				 .auth = web->nusers ? serve_check_auth : NULL,
				 .render = serve_render,
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
	rc = serve_load_web(&r->cfg, &r->web, err, len);
	if (rc)
		return rc;
	serve_exporter_opts_of(s, &r->cfg, &eo);
	rc = exporter_prepare(s->e, &eo, &r->settings, err, len);
	if (rc)
		return rc;
	serve_build_landing(s, &r->cfg, &r->web, r->landing, sizeof(r->landing));
	return 0;
}

/*
 * SIGHUP: the files are read again and everything they make is built
 * first; only if all of it, listeners included, is ready does it replace
 * the running state, in one step no scrape sees half of. Otherwise one log
 * line says why, and nothing changed.
 */
void serve_do_reload(struct serve *s)
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
		serve_http_opts_of(s, &r->cfg, &r->web, r->landing, listen, &o);
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
		serve_log_web(&s->web);
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
