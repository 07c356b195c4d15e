// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* landing.c - the page at "/": links, and the settings in use as an
 * operator would write them (serve_internal.h). */
#include <stdio.h>
#include <string.h>

#include "core/buckets.h"
#include "core/collector.h"
#include "metrics/expo_text.h"
#include "serve/serve_internal.h"
#include "uprog/builtins.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/monotonic.h"

/* s in HTML text: listen addresses and paths come from a settings file. */
static void put_html(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			buf_puts(b, "&lt;");
		else if (*s == '>')
			buf_puts(b, "&gt;");
		else if (*s == '&')
			buf_puts(b, "&amp;");
		else if (*s == '"')
			buf_puts(b, "&quot;");
		else
			buf_append(b, s, 1);
	}
}

static const char *on_off(bool on)
{
	return on ? "on" : "off";
}

/*
 * "WHAT buckets: N (default|configured), le UNIT: B1 B2 ...": the classic
 * bounds the families are exported with, as their `le` labels spell them
 * (raw ns or bytes over per_unit), not only how many there are: 0 used to
 * stand for "the defaults".
 */
static void put_bounds(struct buf *b, const char *what, const char *unit, const uint64_t *cfg,
		       size_t ncfg, const uint64_t *dflt, size_t ndflt, uint64_t per_unit)
{
	const uint64_t *le = ncfg ? cfg : dflt;
	size_t n = ncfg ? ncfg : ndflt;
	char num[40];

	buf_printf(b, "%s buckets: %zu (%s), le in %s:", what, n, ncfg ? "configured" : "default",
		   unit);
	for (size_t i = 0; i < n; i++) {
		/* As the exposition spells `le`, so one can be searched for in the other. */
		expo_format_fixed(num, sizeof(num), le[i], per_unit);
		buf_printf(b, " %s", num);
	}
	buf_puts(b, " +Inf\n");
}

void serve_build_landing(const struct serve *s, const struct serve_config *cfg,
			 const struct webconfig *web, char *out, size_t len)
{
	char wl_labels[64], wl_metrics[128];
	struct buf b = { 0 };

	buf_printf(&b,
		   "<!DOCTYPE html><html><head><title>iolat exporter</title></head><body>\n"
		   "<h1>iolat exporter %s</h1>\n<p>Block-I/O latency from eBPF.</p>\n"
		   "<ul><li><a href=\"",
		   IOLAT_VERSION);
	put_html(&b, cfg->telemetry_path);
	buf_puts(&b, "\">Metrics</a></li><li><a href=\"/-/healthy\">Health</a></li></ul>\n"
		     "<h2>Configuration</h2>\n<pre>listen: ");
	for (size_t i = 0; i < cfg->nlisten; i++) {
		buf_puts(&b, i ? ", " : "");
		put_html(&b, cfg->listen[i]);
	}
	buf_puts(&b, "\ntelemetry path: ");
	put_html(&b, cfg->telemetry_path);
	buf_printf(&b,
		   "\nTLS: %s\nbasic auth: %s\ndevice time: %s\ntotal time: %s\n"
		   "request size: %s\nop label: %s\nsize label: %s\n",
		   on_off(web->tls.cert_pem), on_off(web->nusers), on_off(cfg->device_view),
		   on_off(cfg->total_view), on_off(cfg->size_view), on_off(cfg->op_label),
		   on_off(cfg->size_label));
	put_bounds(&b, "latency", "seconds", cfg->lat_le, cfg->nlat_le, buckets_default_le_ns,
		   buckets_default_le_count, NSEC_PER_SEC);
	put_bounds(&b, "size", "bytes", cfg->size_le, cfg->nsize_le, buckets_default_size_le,
		   buckets_default_size_le_count, 1);
	put_bounds(&b, "workload latency", "seconds", cfg->wl_lat_le, cfg->nwl_lat_le,
		   buckets_workload_le_ns, buckets_workload_le_count, NSEC_PER_SEC);
	builtins_wl_labels_names(cfg->wl_labels, wl_labels, sizeof(wl_labels));
	builtins_wl_metrics_names(cfg->wl_metrics, wl_metrics, sizeof(wl_metrics));
	buf_printf(&b,
		   "workloads: %s\nworkload labels: %s\nworkload metrics: %s\nworkloads max: "
		   "%zu\nworkload rules: %zu\nBPF stats: %s\n"
		   "log level: %s\nlog format: %s\nattach: %s\n</pre></body></html>\n",
		   on_off(cfg->workloads), wl_labels[0] ? wl_labels : "none", wl_metrics,
		   cfg->workloads_max, cfg->nrules, on_off(cfg->bpf_stats),
		   log_level_name(cfg->log_level), log_format_name(cfg->log_format),
		   attach_mode_name(collector_mode(s->c)));
	/* Out of memory or longer than SERVE_LANDING_MAX: what fits, still a page
	 * that says it was cut (a browser shows the rest of <pre> as it is). */
	if (buf_failed(&b) || b.len >= len)
		snprintf(out, len, "%.*s\n(cut)\n", (int)(len > 8 ? len - 8 : 0),
			 buf_failed(&b) ? "" : b.data);
	else
		snprintf(out, len, "%s", b.data);
	buf_free(&b);
}
