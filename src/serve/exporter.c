// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* exporter.c - collector series and self-statistics as metrics (exporter.h). */
#include "serve/exporter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "core/names.h"
#include "serve/builtin_configs.h"
#include "serve/builtin_views.h"
#include "serve/exporter_disks.h"
#include "serve/wlabels.h"
#include "serve/wlstate.h"
#include "sys/procstats.h"
#include "uprog/umetrics.h"
#include "util/log.h"
#include "util/monotonic.h"

struct exporter {
	struct collector *c;
	struct exporter_opts o;
	uint64_t lat_le[IOLAT_LAT_SLOTS], size_le[IOLAT_SIZE_SLOTS];
	size_t nlat_le, nsize_le;
	/* A render's series: the collector's as a fold now would make them,
	 * in memory of the exporter's own (collector_peek), so a scrape
	 * changes nothing; snap is its view. */
	struct snapshot_store peeked;
	const struct snapshot *snap;
	double last_scrape_s;
	size_t last_scrape_bytes;
	uint64_t scrapes;
	/* Maintenance passes (exporter_pass_done), for the iolat_maintenance_*
	 * gauges: how many, the last one's length. */
	uint64_t passes;
	double last_pass_s;
	/* Per map: warned at 90 % and not re-armed yet (mapsize_fill_warn). */
	bool fill_warned[MAPSIZE_COUNT];
	time_t started;
	char kernel[65];
	/* The per-disk families: builtin/block.yaml, edited by the options,
	 * over the collector's views; the same path as users' programs. */
	struct uconfig *block_conf, *wl_conf;
	struct umetrics *block, *wl_metrics;
	struct builtin_views views;	/* written by views_fill only */
	const struct wl_label **labels; /* per snapshot series, this render */
	size_t labels_cap;
	struct decoder_env *env;
	struct workload_cache *names_of; /* cgroup id -> workload (with workloads on) */
	struct wlabels *wl;
	struct wlstate_files *wl_files; /* --handover: where wl is saved; borrowed */
	uint64_t folded_ios;		/* completions under workload="other", this render */
	struct exporter_disks *disks;	/* gone disks: keys retired, series expired */
	uint32_t full_logged;		/* 1 << enum iolat_stat: a full map already logged */
	char events_help[640];		/* iolat_collector_events_total's, naming each event */
};

/* The help of iolat_collector_events_total, with the events' names from the
 * one table every output uses. */
static void events_help(char *out, size_t len)
{
	snprintf(out, len,
		 "Collector events: I/O that did not fit in a full kernel map (%s: not counted; "
		 "%s: untimed; %s: not counted), completions whose start was not kept because "
		 "they were under way before iolat (%s, %s), partial completions skipped (%s), "
		 "completions whose kernel start and issue stamps were equal (%s: since Linux 6.9 "
		 "both can be one plug's cached clock, and then total time is device time).",
		 names_stat(IOLAT_STAT_HIST_FULL), names_stat(IOLAT_STAT_RQMAP_FULL),
		 names_stat(IOLAT_STAT_BIOMAP_FULL), names_stat(IOLAT_STAT_RQMAP_MISS),
		 names_stat(IOLAT_STAT_BIOMAP_MISS), names_stat(IOLAT_STAT_PARTIAL),
		 names_stat(IOLAT_STAT_SAME_STAMPS));
}

/* Largest table bound <= want, so the bucket is exact; 0 if none. */
static uint64_t snap_bound(const struct bucket_table *t, uint64_t want)
{
	uint64_t best = 0;

	for (size_t i = 0; i < t->nbounds && t->bound[i] <= want; i++)
		best = t->bound[i];
	return best;
}

static int snap_all(const struct bucket_table *t, const uint64_t *want, size_t n, uint64_t *out,
		    size_t *nout, const char *what, char *err, size_t len)
{
	*nout = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t b = snap_bound(t, want[i]);

		if (i && want[i] <= want[i - 1]) {
			snprintf(err, len, "%s bucket bounds must ascend", what);
			return -EINVAL;
		}
		if (!b) {
			snprintf(err, len, "%s bucket bound %llu is below the smallest iolat keeps",
				 what, (unsigned long long)want[i]);
			return -EINVAL;
		}
		if (*nout && out[*nout - 1] == b)
			continue; /* two wishes snapped to one bound */
		out[(*nout)++] = b;
	}
	return 0;
}

static int comm_of(void *ctx, uint32_t pid, char *out, size_t len)
{
	return collector_comm(ctx, pid, out, len);
}

/* The label sets' kernel map writes (wlabels_ops): the collector's. */
static int wl_retire(void *ctx, const struct iolat_key *k, uint64_t into)
{
	return collector_retire(ctx, k, into);
}

static int wl_refold(void *ctx, uint64_t from, uint64_t into)
{
	return collector_refold(ctx, from, into);
}

/* Everything a reload replaces, built off to the side (exporter_prepare). */
struct exporter_settings {
	struct exporter_opts o;
	struct workload_rule rules[WORKLOAD_MAX_RULES];
	uint64_t lat_le[IOLAT_LAT_SLOTS], size_le[IOLAT_SIZE_SLOTS];
	size_t nlat_le, nsize_le;
	struct uconfig *block_conf, *wl_conf;
	struct umetrics *block, *wl_metrics;
	/* Made when workloads are first turned on; label-set ids live as
	 * long as the exporter, so later settings keep the first ones. */
	struct workload_cache *names_of;
	struct wlabels *wl;
};

/* Checks what workload series need, and makes their state the first time.
 * Turning them off later only hides them, so label-set ids are never reused. */
static int workloads_prepare(struct exporter *e, struct exporter_settings *st, char *err,
			     size_t len)
{
	const struct exporter_opts *o = &st->o;
	const struct wlabels_ops wl_ops = { .ctx = e->c, .retire = wl_retire, .refold = wl_refold };

	if (!collector_keyed_by_cgroup(e->c) && !collector_keyed_by_process(e->c)) {
		snprintf(err, len, "workload series need a restart (iolat started without them)");
		return -EINVAL;
	}
	if (o->nrules > WORKLOAD_MAX_RULES) {
		snprintf(err, len, "more than %d workload rules", WORKLOAD_MAX_RULES);
		return -EINVAL;
	}
	for (size_t i = 0; i < o->nrules; i++)
		if (workload_rule_check(&o->rules[i], err, len))
			return -EINVAL;
	if (e->wl)
		return 0;
	st->names_of = workload_cache_new();
	st->wl = st->names_of ? wlabels_new(&wl_ops, st->names_of, &o->wl) : NULL;
	if (!st->wl) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* One of iolat's own configs as the options want it: views off dropped,
 * the op and size fields folded away unless they are labels. */
static int builtin_config(const struct exporter_opts *o, const char *file, const char *yaml,
			  struct uconfig *c, char *err, size_t len)
{
	static const char *const views[] = { "device_latency_seconds", "total_latency_seconds",
					     "request_size_bytes" };
	const bool on[] = { o->device_view, o->total_view, o->size_view };
	char name[64];
	int rc;

	rc = uconfig_parse_buffer(file, yaml, strlen(yaml), c, err, len);
	if (rc)
		return rc;
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		if (on[i])
			continue;
		snprintf(name, sizeof(name), "iolat_block_%s", views[i]);
		uconfig_drop_metric(c, name);
		snprintf(name, sizeof(name), "iolat_workload_%s", views[i]);
		uconfig_drop_metric(c, name);
	}
	if ((o->no_op_label && uconfig_fold_label(c, "op")) ||
	    (!o->size_label && uconfig_fold_label(c, "size"))) {
		uconfig_free(c);
		snprintf(err, len, "%s: cannot fold a label away", file);
		return -EINVAL;
	}
	return 0;
}

static void drop_builtin(struct uconfig **c, struct umetrics **u)
{
	umetrics_free(*u);
	if (*c)
		uconfig_free(*c);
	free(*c);
	*c = NULL;
	*u = NULL;
}

/* Makes one built-in config's metrics over the exporter's views (whose
 * bucket bounds are read at each scrape, so they may change later). */
static int builtin_make(struct exporter *e, const struct exporter_opts *o, const char *file,
			const char *yaml, struct uconfig **conf, struct umetrics **out, char *err,
			size_t len)
{
	struct uconfig *c = calloc(1, sizeof(*c));
	struct usource src;
	int rc;

	if (!c) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	rc = builtin_config(o, file, yaml, c, err, len);
	if (rc) {
		free(c);
		return rc;
	}
	builtin_views_source(&e->views, &src);
	rc = umetrics_new(out, c, &src, e->env, err, len);
	if (rc) {
		uconfig_free(c);
		free(c);
		return rc;
	}
	*conf = c;
	return 0;
}

void exporter_settings_free(struct exporter_settings *st)
{
	if (!st)
		return;
	drop_builtin(&st->block_conf, &st->block);
	drop_builtin(&st->wl_conf, &st->wl_metrics);
	wlabels_free(st->wl);
	workload_cache_free(st->names_of);
	free(st);
}

int exporter_prepare(struct exporter *e, const struct exporter_opts *o,
		     struct exporter_settings **out, char *err, size_t len)
{
	const uint64_t *lat = o->lat_le ? o->lat_le : buckets_default_le_ns;
	size_t nlat = o->lat_le ? o->nlat_le : buckets_default_le_count;
	const uint64_t *size = o->size_le ? o->size_le : buckets_default_size_le;
	size_t nsize = o->size_le ? o->nsize_le : buckets_default_size_le_count;
	struct exporter_settings *st = calloc(1, sizeof(*st));
	int rc;

	if (!st) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	st->o = *o;
	st->o.lat_le = st->o.size_le = NULL;
	if (o->nrules <= WORKLOAD_MAX_RULES) {
		memcpy(st->rules, o->rules, o->nrules * sizeof(*o->rules));
		st->o.rules = st->rules;
	}
	rc = -EINVAL;
	if (nlat > IOLAT_LAT_SLOTS || nsize > IOLAT_SIZE_SLOTS)
		snprintf(err, len, "too many bucket bounds");
	else
		rc = snap_all(collector_lat_table(e->c), lat, nlat, st->lat_le, &st->nlat_le,
			      "latency", err, len);
	if (!rc)
		rc = snap_all(collector_size_table(e->c), size, nsize, st->size_le, &st->nsize_le,
			      "size", err, len);
	if (!rc && o->workloads)
		rc = workloads_prepare(e, st, err, len);
	if (!rc)
		rc = builtin_make(e, o, "builtin/block.yaml", builtin_block_yaml, &st->block_conf,
				  &st->block, err, len);
	if (!rc && o->workloads)
		rc = builtin_make(e, o, "builtin/workloads.yaml", builtin_workloads_yaml,
				  &st->wl_conf, &st->wl_metrics, err, len);
	if (rc) {
		exporter_settings_free(st);
		return rc;
	}
	*out = st;
	return 0;
}

/* Swaps st's contents with the running ones, so freeing st frees the old. */
#define SWAP(a, b)                                                                                 \
	do {                                                                                       \
		typeof(a) swap_tmp_ = (a);                                                         \
		(a) = (b);                                                                         \
		(b) = swap_tmp_;                                                                   \
	} while (0)

void exporter_apply(struct exporter *e, struct exporter_settings *st)
{
	memcpy(e->lat_le, st->lat_le, sizeof(e->lat_le));
	memcpy(e->size_le, st->size_le, sizeof(e->size_le));
	e->nlat_le = st->nlat_le;
	e->nsize_le = st->nsize_le;
	SWAP(e->block_conf, st->block_conf);
	SWAP(e->block, st->block);
	SWAP(e->wl_conf, st->wl_conf);
	SWAP(e->wl_metrics, st->wl_metrics);
	if (!e->wl && st->wl) {
		SWAP(e->wl, st->wl);
		SWAP(e->names_of, st->names_of);
	}
	if (st->o.workloads && e->wl) {
		char err[128];

		/* Checked in exporter_prepare: cannot fail here. */
		workload_cache_set_rules(e->names_of, st->o.rules, st->o.nrules, err, sizeof(err));
		if (collector_keyed_by_process(e->c))
			workload_cache_set_comm(e->names_of, comm_of, e->c);
		wlabels_set_opts(e->wl, &st->o.wl);
	}
	e->o = st->o;
	e->o.rules = NULL;
	exporter_settings_free(st);
}

static bool shows_workloads(const struct exporter *e)
{
	return e->wl && e->o.workloads;
}

/*
 * The views' state, from the exporter's: the one place it is written.
 * umetrics reads it through the views at every collect, so a render fills
 * it first (labels: this render's per-series label sets, or none). The
 * bucket tables are the collector's, fixed for its life, and are written
 * once, at the start: a reload's exporter_prepare asks the views for them
 * (umetrics_new) while a render may be filling the rest.
 */
static void views_fill(struct exporter *e, bool labels)
{
	struct builtin_views *v = &e->views;

	if (!v->lat) {
		v->lat = collector_lat_table(e->c);
		v->size = collector_size_table(e->c);
	}
	v->snap = e->snap;
	v->lat_le = e->lat_le;
	v->size_le = e->size_le;
	v->nlat_le = e->nlat_le;
	v->nsize_le = e->nsize_le;
	v->synthetic = e->o.synthetic_disks;
	v->labels = labels ? e->labels : NULL;
}

int exporter_new(struct exporter **out, struct collector *c, const struct exporter_opts *o,
		 char *err, size_t len)
{
	struct exporter *e = calloc(1, sizeof(*e));
	struct exporter_settings *st;
	struct utsname u;
	int rc;

	if (!e) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	e->c = c;
	e->started = time(NULL);
	uname(&u);
	snprintf(e->kernel, sizeof(e->kernel), "%s", u.release);
	events_help(e->events_help, sizeof(e->events_help));
	views_fill(e, false); /* umetrics_new asks the views for their tables */
	e->env = decoder_env_new(NULL);
	if (!e->env) {
		snprintf(err, len, "out of memory");
		rc = -ENOMEM;
	} else {
		e->disks = exporter_disks_new(c, e->env);
		rc = e->disks ? exporter_prepare(e, o, &st, err, len) : -ENOMEM;
		if (!e->disks)
			snprintf(err, len, "out of memory");
	}
	if (rc) {
		exporter_free(e);
		return rc;
	}
	exporter_apply(e, st);
	*out = e;
	return 0;
}

void exporter_free(struct exporter *e)
{
	if (!e)
		return;
	wlabels_free(e->wl);
	exporter_disks_free(e->disks);
	workload_cache_free(e->names_of);
	drop_builtin(&e->block_conf, &e->block);
	drop_builtin(&e->wl_conf, &e->wl_metrics);
	free(e->labels);
	snapshot_store_free(&e->peeked);
	decoder_env_free(e->env);
	free(e);
}

void exporter_scrape_done(struct exporter *e, double seconds, size_t bytes)
{
	e->last_scrape_s = seconds;
	e->last_scrape_bytes = bytes;
	e->scrapes++;
}

void exporter_pass_done(struct exporter *e, double seconds)
{
	e->last_pass_s = seconds;
	e->passes++;
}

static int add_counter(struct metric_family *f, const char *const *v, double add)
{
	struct metric_series *s = metrics_series(f, v, NULL);

	if (!s)
		return -ENOMEM;
	s->value += add;
	return 0;
}

/*
 * One warning the first time a counter of I/O that did not fit in a full
 * kernel map leaves zero: counters never reset, so that is once per run,
 * whatever the scrape rate. The counter itself says how much since.
 */
static void log_full_maps(struct exporter *e, const uint64_t st[IOLAT_STAT_COUNT])
{
	struct map_stats m;
	const char *lost;

	for (int i = 0; i < IOLAT_STAT_COUNT; i++) {
		if (!st[i] || (e->full_logged & 1u << i) ||
		    !collector_stat_map(e->c, (enum iolat_stat)i, &m, &lost))
			continue;
		e->full_logged |= 1u << i;
		log_warn("BPF map full", LOG_STR("map", m.name), LOG_UINT("entries", m.capacity),
			 LOG_STR("effect", lost),
			 LOG_STR("counter", "iolat_collector_events_total"),
			 LOG_STR("event", names_stat(i)));
	}
}

/*
 * A warning when a map reaches MAPSIZE_WARN_PCT % of its capacity, before
 * it is full (mapsize_fill_warn: again only after it fell below
 * MAPSIZE_REARM_PCT %), with what a full one loses and how to raise it.
 */
static void log_filling_maps(struct exporter *e, const struct map_stats *ms, int n)
{
	static const char *const loses[MAPSIZE_COUNT] = {
		[MAPSIZE_HISTS] = "I/O of a disk, operation or workload not in it yet will not be "
				  "counted",
		[MAPSIZE_RQ_STARTS] = "requests whose times it cannot hold will be counted but "
				      "not timed",
		[MAPSIZE_BIO_STARTS] = "bios it cannot hold will not be counted",
		[MAPSIZE_COMMS] = "processes will be shown without their names",
	};

	for (int i = 0; i < n; i++) {
		int m = mapsize_from_name(ms[i].name);
		char flag[128];

		if (m < 0 || !mapsize_fill_warn(&e->fill_warned[m], ms[i].entries, ms[i].capacity))
			continue;
		snprintf(flag, sizeof(flag),
			 "give it more with --bpf.map-size=%s=ENTRIES or bpf_map_sizes in the "
			 "config file",
			 mapsize_name((enum mapsize_map)m));
		log_warn("BPF map filling up", LOG_STR("map", ms[i].name),
			 LOG_UINT("percent", ms[i].entries * 100 / ms[i].capacity),
			 LOG_UINT("entries", ms[i].entries), LOG_UINT("capacity", ms[i].capacity),
			 LOG_STR("effect", loses[m]), LOG_STR("hint", flag));
	}
}

static int add_self(struct exporter *e, struct metric_set *set)
{
	static const char *const prog_l[] = { "program", NULL }, *const map_l[] = { "map", NULL },
				 *const ev_l[] = { "event", NULL },
				 *const build_l[] = { "version", "kernel", "attach", NULL };
	struct metric_family *runs, *rtime, *miss, *entries, *cap, *fill, *ev, *dur, *bytes, *build,
	    *start, *cstart;
	struct prog_stats ps[16];
	struct map_stats ms[8];
	uint64_t st[IOLAT_STAT_COUNT];
	int np = collector_prog_stats(e->c, ps, 16), nm = collector_map_stats(e->c, ms, 8), rc = 0;
	const char *bv[] = { IOLAT_VERSION, e->kernel, attach_mode_name(collector_mode(e->c)) };
	struct hist_map_info hm;

	collector_hist_map(e->c, &hm);

	runs = metrics_family(
	    set, "iolat_bpf_program_runs_total",
	    "Runs of each attached BPF program (kernel BPF stats; 0 unless enabled).",
	    METRIC_COUNTER, prog_l);
	rtime = metrics_family(
	    set, "iolat_bpf_program_run_seconds_total",
	    "Time spent in each attached BPF program (kernel BPF stats; 0 unless enabled).",
	    METRIC_COUNTER, prog_l);
	miss = metrics_family(
	    set, "iolat_bpf_program_recursion_misses_total",
	    "Runs the kernel skipped because the program was already running on that CPU.",
	    METRIC_COUNTER, prog_l);
	entries = metrics_family(set, "iolat_bpf_map_entries", "Entries in each BPF map.",
				 METRIC_GAUGE, map_l);
	cap = metrics_family(set, "iolat_bpf_map_capacity_entries",
			     "Maximum entries of each BPF map.", METRIC_GAUGE, map_l);
	fill = metrics_family(set, "iolat_bpf_map_fill_ratio",
			      "Entries of each BPF map over its capacity, 0 to 1; the log warns at "
			      "0.9, and a full map's losses are in iolat_collector_events_total.",
			      METRIC_GAUGE, map_l);
	ev = metrics_family(set, "iolat_collector_events_total", e->events_help, METRIC_COUNTER,
			    ev_l);
	dur = metrics_family(set, "iolat_scrape_duration_seconds",
			     "How long the previous scrape took to build and render.", METRIC_GAUGE,
			     NULL);
	bytes = metrics_family(set, "iolat_scrape_size_bytes",
			       "Size of the previous scrape's response body, before compression.",
			       METRIC_GAUGE, NULL);
	build = metrics_family(set, "iolat_build_info",
			       "iolat's version, the kernel and the attach path in use.",
			       METRIC_GAUGE, build_l);
	start =
	    metrics_family(set, "iolat_start_time_seconds",
			   "Unix time this iolat process started: process counters begin there.",
			   METRIC_GAUGE, NULL);
	cstart =
	    metrics_family(set, "iolat_collector_start_time_seconds",
			   "Unix time the kernel collector started counting: block and workload "
			   "counters begin there (earlier than the process when it adopted a "
			   "collector, serve --handover).",
			   METRIC_GAUGE, NULL);
	if (!runs || !rtime || !miss || !entries || !cap || !fill || !ev || !dur || !bytes ||
	    !build || !start || !cstart)
		return -ENOMEM;
	for (int i = 0; i < np; i++) {
		const char *v[] = { ps[i].name };

		rc |= add_counter(runs, v, (double)ps[i].run_cnt);
		rc |= add_counter(rtime, v, (double)ps[i].run_time_ns / 1e9);
		rc |= add_counter(miss, v, (double)ps[i].recursion_misses);
	}
	for (int i = 0; i < nm; i++) {
		const char *v[] = { ms[i].name };

		/* The histogram map's keys as this render's peek found them,
		 * not as the last pass did. */
		if (!strcmp(ms[i].name, hm.name))
			ms[i].entries = e->peeked.nlive;

		rc |= add_counter(entries, v, (double)ms[i].entries);
		rc |= add_counter(cap, v, (double)ms[i].capacity);
		rc |= add_counter(
		    fill, v, ms[i].capacity ? (double)ms[i].entries / (double)ms[i].capacity : 0);
	}
	if (!collector_stats(e->c, st))
		for (int i = 0; i < IOLAT_STAT_COUNT; i++) {
			const char *v[] = { names_stat(i) };

			rc |= add_counter(ev, v, (double)st[i]);
		}
	rc |= add_counter(dur, NULL, e->last_scrape_s);
	rc |= add_counter(bytes, NULL, (double)e->last_scrape_bytes);
	rc |= add_counter(build, bv, 1);
	rc |= add_counter(start, NULL, (double)e->started);
	rc |= add_counter(cstart, NULL, (double)collector_started_ns(e->c) / 1e9);
	return rc ? -ENOMEM : 0;
}

/* The maintenance passes, which run on the daemon's own schedule. */
static int add_maintenance(struct exporter *e, struct metric_set *set)
{
	struct metric_family *passes, *dur, *every;

	passes = metrics_family(set, "iolat_maintenance_passes_total",
				"Maintenance passes run (folding the kernel's counters, naming "
				"and retiring cgroups, expiring disks, saving state).",
				METRIC_COUNTER, NULL);
	dur = metrics_family(set, "iolat_maintenance_duration_seconds",
			     "How long the last maintenance pass took; a scrape that arrives "
			     "during a pass waits at most this long.",
			     METRIC_GAUGE, NULL);
	every = metrics_family(set, "iolat_maintenance_interval_seconds",
			       "How often maintenance passes run (--maintenance.interval); label "
			       "sets and expiries in a scrape are at most this old.",
			       METRIC_GAUGE, NULL);
	if (!passes || !dur || !every)
		return -ENOMEM;
	return add_counter(passes, NULL, (double)e->passes) |
		       add_counter(dur, NULL, e->last_pass_s) |
		       add_counter(every, NULL, e->o.maintain_s)
		   ? -ENOMEM
		   : 0;
}

/* The process_* gauges every Prometheus client library exports, and the heap
 * (to tell a leak from memory the allocator keeps). Left out when /proc
 * cannot be read: nothing rather than zeros. */
static int add_process(struct metric_set *set)
{
	static const struct {
		const char *name, *help;
		enum metric_type type;
	} fam[] = {
		{ "process_cpu_seconds_total", "User and system CPU time spent, in seconds.",
		  METRIC_COUNTER },
		{ "process_resident_memory_bytes", "Resident memory size, in bytes.",
		  METRIC_GAUGE },
		{ "process_virtual_memory_bytes", "Virtual memory size, in bytes.", METRIC_GAUGE },
		{ "process_open_fds", "Open file descriptors.", METRIC_GAUGE },
		{ "process_max_fds", "Maximum open file descriptors (soft limit).", METRIC_GAUGE },
		{ "iolat_heap_allocated_bytes",
		  "Heap bytes in use by iolat (glibc mallinfo2); flat while resident memory grows "
		  "means freed memory the allocator keeps, not a leak.",
		  METRIC_GAUGE },
	};
	struct procstats ps;
	double v[6];
	int rc = 0;

	if (procstats_read(&ps))
		return 0;
	v[0] = ps.cpu_seconds;
	v[1] = (double)ps.resident_bytes;
	v[2] = (double)ps.virtual_bytes;
	v[3] = (double)ps.open_fds;
	v[4] = (double)ps.max_fds;
	v[5] = (double)ps.heap_bytes;
	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
		struct metric_family *f;

		/* No heap figure under another allocator (a sanitizer's): mallinfo2
		 * then says 0, and 0 would be a lie. */
		if (i == 5 && !ps.heap_bytes)
			continue;
		f = metrics_family(set, fam[i].name, fam[i].help, fam[i].type, NULL);
		rc |= f ? add_counter(f, NULL, v[i]) : -ENOMEM;
	}
	return rc ? -ENOMEM : 0;
}

/* How the workload label sets are kept bounded. */
static int add_workload_self(struct exporter *e, struct metric_set *set)
{
	struct metric_family *sets, *max, *fc, *fi, *ret, *exp;
	struct wlabels_stats st;
	int rc = 0;

	wlabels_stats(e->wl, &st);
	sets = metrics_family(set, "iolat_workload_label_sets",
			      "Workload label sets exported now (\"other\" not counted).",
			      METRIC_GAUGE, NULL);
	max = metrics_family(set, "iolat_workload_label_sets_max",
			     "Cap on workload label sets (workloads.max); past it I/O counts under "
			     "workload=\"other\".",
			     METRIC_GAUGE, NULL);
	fc = metrics_family(
	    set, "iolat_workload_folded_cgroups_total",
	    "Cgroups counted under workload=\"other\" because of the cap (or never named).",
	    METRIC_COUNTER, NULL);
	fi = metrics_family(set, "iolat_workload_folded_completions_total",
			    "Completions counted under workload=\"other\".", METRIC_COUNTER, NULL);
	ret = metrics_family(set, "iolat_workload_retired_cgroups_total",
			     "Removed cgroups whose kernel keys moved to user space (counts kept).",
			     METRIC_COUNTER, NULL);
	exp = metrics_family(
	    set, "iolat_workload_expired_total",
	    "Workload label sets that left the output after workloads.expire without a live "
	    "cgroup.",
	    METRIC_COUNTER, NULL);
	if (!sets || !max || !fc || !fi || !ret || !exp)
		return -ENOMEM;
	rc |= add_counter(sets, NULL, (double)st.sets);
	rc |= add_counter(max, NULL, (double)e->o.wl.max_sets);
	rc |= add_counter(fc, NULL, (double)st.folded_cgroups);
	rc |= add_counter(fi, NULL, (double)e->folded_ios);
	rc |= add_counter(ret, NULL, (double)st.retired_cgroups);
	rc |= add_counter(exp, NULL, (double)st.expired_sets);
	return rc ? -ENOMEM : 0;
}

/* The block families, through builtin/block.yaml and, with workloads on,
 * builtin/workloads.yaml. */
static int add_block_metrics(struct exporter *e, struct metric_set *set, char *err, size_t errlen)
{
	int rc = umetrics_collect(e->block, set, err, errlen);

	if (!rc && e->views.labels && e->wl_metrics)
		rc = umetrics_collect(e->wl_metrics, set, err, errlen);
	return rc;
}

/*
 * Each series' workload label set, looked up once per render for every
 * workload view; and the completions counted under workload="other" (past
 * the cap). Only looks: naming and expiring are exporter_maintain's, so a
 * cgroup it has not named yet shows from the render after it has.
 */
static int label_series(struct exporter *e)
{
	if (e->snap->n > e->labels_cap) {
		const struct wl_label **p = realloc(e->labels, e->snap->n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		e->labels = p;
		e->labels_cap = e->snap->n;
	}
	for (size_t i = 0; i < e->snap->n; i++) {
		const struct series *s = &e->snap->s[i];
		const struct wl_label *l = wlabels_of(e->wl, s->key.cgroup);

		e->labels[i] = l;
		if (l && wlabels_is_other(e->wl, l))
			e->folded_ios += s->val.ios;
	}
	return 0;
}

/* peek at the series -> attach labels -> build families; see exporter.h. */
int exporter_render(struct exporter *e, struct metric_set *set, char *err, size_t errlen)
{
	bool workloads = shows_workloads(e);
	int rc;

	if (errlen)
		err[0] = '\0';
	metrics_clear(set);
	e->folded_ios = 0;
	rc = collector_peek(e->c, &e->peeked);
	e->snap = &e->peeked.all;
	if (!rc && workloads)
		rc = label_series(e);
	views_fill(e, workloads);
	if (!rc)
		rc = add_block_metrics(e, set, err, errlen);
	if (!rc)
		rc = add_self(e, set);
	if (!rc)
		rc = add_maintenance(e, set);
	if (!rc)
		rc = add_process(set);
	if (!rc && workloads)
		rc = add_workload_self(e, set);
	if (!rc)
		rc = exporter_disks_metrics(e->disks, set);
	decoder_env_scrape_done(e->env); /* disk names: refreshed now and then */
	/* Only umetrics words its failures; for the rest the errno says it all. */
	if (rc && errlen && !err[0])
		snprintf(err, errlen, "%s", strerror(-rc));
	return rc;
}

/* What a maintenance pass changed, for its debug line. */
struct pass_tally {
	uint64_t t0_ns;
	struct wlabels_stats wl;
	struct disklife_stats disks;
};

static void pass_tally(const struct exporter *e, struct pass_tally *t)
{
	memset(t, 0, sizeof(*t));
	t->t0_ns = monotonic_ns();
	if (e->wl)
		wlabels_stats(e->wl, &t->wl);
	exporter_disks_stats(e->disks, &t->disks);
}

/* One debug line per pass: how long it took, what it read, what it retired,
 * folded and expired. */
static void log_pass(const struct exporter *e, const struct snapshot *snap,
		     const struct pass_tally *before, int rc)
{
	struct pass_tally now;

	pass_tally(e, &now);
	log_debug("maintenance pass",
		  LOG_DBL("duration_seconds", (double)(now.t0_ns - before->t0_ns) / 1e9),
		  LOG_UINT("series", snap->n),
		  LOG_UINT("cgroups_retired", now.wl.retired_cgroups - before->wl.retired_cgroups),
		  LOG_UINT("cgroups_folded", now.wl.folded_cgroups - before->wl.folded_cgroups),
		  LOG_UINT("workloads_expired", now.wl.expired_sets - before->wl.expired_sets),
		  LOG_UINT("workloads", now.wl.sets),
		  LOG_UINT("disks_retired", now.disks.retired - before->disks.retired),
		  LOG_UINT("disks_expired", now.disks.expired - before->disks.expired),
		  LOG_UINT("disks", now.disks.disks), LOG_STR("err", rc ? strerror(-rc) : NULL));
}

/* A map filling up or full: logged by the pass, so scrapes only read. */
static void log_maps(struct exporter *e)
{
	struct map_stats ms[8];
	uint64_t st[IOLAT_STAT_COUNT];
	int nm = collector_map_stats(e->c, ms, 8);

	log_filling_maps(e, ms, nm);
	if (!collector_stats(e->c, st))
		log_full_maps(e, st);
}

/*
 * The kernel map writes and file writes, in the order a pass needs them: a
 * gone disk whose number another disk took is dropped before the fold, so
 * the fold cannot count the newcomer's keys under the old name; then, on
 * what the fold found, cgroups are named and the idle gone ones retired,
 * label sets and disks expired.
 */
int exporter_maintain(struct exporter *e)
{
	bool debug = log_enabled(LOG_DEBUG_L);
	const struct snapshot *snap = collector_series(e->c);
	struct pass_tally before;
	time_t now = time(NULL);
	int rc;

	if (debug)
		pass_tally(e, &before);
	rc = exporter_disks_check(e->disks);
	if (!rc)
		rc = collector_fold(e->c);
	/* The fold saved the collector's series: the label sets are saved too,
	 * before this pass changes them, so both files describe one moment. */
	if (!rc && e->wl && e->wl_files && wlstate_series_changed(e->wl_files))
		exporter_workloads_save(e);
	if (!rc && shows_workloads(e))
		rc = wlabels_assign(e->wl, snap, now);
	/* Both read the collector's own series and write the collector: they
	 * act on what they gathered after they are done reading. */
	if (!rc && shows_workloads(e))
		rc = wlabels_prune(e->wl, snap, now);
	if (!rc)
		rc = exporter_disks_prune(e->disks, snap, now, e->o.disk_expire_s);
	log_maps(e);
	if (debug)
		log_pass(e, snap, &before, rc);
	return rc;
}

void exporter_workloads_files(struct exporter *e, struct wlstate_files *f)
{
	e->wl_files = f;
}

int exporter_workloads_save(struct exporter *e)
{
	struct wlstate st;
	int rc;

	if (!e->wl || !e->wl_files)
		return 0;
	rc = wlabels_save(e->wl, &st);
	if (!rc)
		rc = wlstate_write(e->wl_files->path, &e->wl_files->owner, &st);
	wlstate_free(&st);
	if (rc && rc != e->wl_files->last_rc)
		log_warn("cannot save the workload label sets", LOG_STR("file", e->wl_files->path),
			 LOG_STR("err", strerror(-rc)),
			 LOG_STR("effect", "a restart would name workloads afresh"));
	e->wl_files->last_rc = rc;
	return rc;
}

int exporter_workloads_restore(struct exporter *e, const struct wlstate_files *f,
			       struct wlabels_stats *out)
{
	struct wlstate st;
	int rc;

	if (!e->wl)
		return -EOPNOTSUPP;
	rc = wlstate_read(f->path, &f->owner, &st);
	if (!rc)
		rc = wlabels_restore(e->wl, &st, collector_series(e->c));
	wlstate_free(&st);
	/* Named afresh: the retired series restored with the collector's have
	 * no set now, and their ids must not label a new one. */
	if (rc) {
		st.next_id = WLABELS_ID_FIRST_SET;
		wlabels_restore(e->wl, &st, collector_series(e->c));
	}
	if (!rc && out)
		wlabels_stats(e->wl, out);
	return rc;
}
