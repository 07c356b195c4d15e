// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* serve_metrics.c - the daemon's own families beside the exporter's: its
 * configuration reloads, its HTTP connection limits, and the series the
 * whole answer holds per family (what iolat costs a metrics store).
 */
#include <errno.h>

#include "metrics/metrics.h"
#include "serve/http.h"
#include "serve/serve_internal.h"

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

/* Per family with series, how many a store keeps of it: classic (each of
 * a histogram's buckets, _sum and _count a series) and native (a histogram
 * one). Added last, so every family is counted, this one too. */
static int add_series_metrics(struct metric_set *set)
{
	static const char *const l[] = { "family", "mode", NULL };
	struct metric_family *f = metrics_family(
	    set, "iolat_series",
	    "Series in this answer per metric family, as a store keeps them: mode=\"classic\" "
	    "counts each histogram bucket, _sum and _count; mode=\"native\" a histogram as one "
	    "(docs/sizing.md).",
	    METRIC_GAUGE, l);
	size_t nfam = 1; /* this one */

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < set->n; i++)
		nfam += &set->fam[i] != f && set->fam[i].n > 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct metric_family *g = &set->fam[i];
		bool self = g == f;
		const char *classic[] = { g->name, "classic" }, *native[] = { g->name, "native" };

		if (!self && !g->n)
			continue;
		if (metrics_set_value(
			f, classic, (double)(self ? 2 * nfam : metrics_family_series(g, false))) ||
		    metrics_set_value(f, native,
				      (double)(self ? 2 * nfam : metrics_family_series(g, true))))
			return -ENOMEM;
	}
	return 0;
}

int serve_add_metrics(struct serve *s, struct metric_set *set)
{
	int rc = add_config_metrics(s, set);

	rc = rc ? rc : add_http_metrics(s, set);
	return rc ? rc : add_series_metrics(set);
}
