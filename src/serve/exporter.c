// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * exporter.c - the exporter's settings (made beside the running ones at a
 * reload, then swapped in) and its render: a peek at the collector's series,
 * their workload labels, and the families (exporter.h).
 */
#include "serve/exporter_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "core/names.h"
#include "metrics/expo_text.h"
#include "serve/builtin_views.h"
#include "serve/exporter_disks.h"
#include "serve/serve_config.h"
#include "serve/wlabels.h"
#include "serve/wlstate.h"
#include "sys/procstats.h"
#include "uprog/builtins.h"
#include "uprog/umetrics.h"
#include "util/log.h"
#include "util/monotonic.h"

/*
 * Copies the wanted classic bounds, each of which must be one of the
 * running table's: the kernel's slots were laid at start (serve passes its
 * configured bounds then), so a reload that asks for a new one is refused,
 * naming the exact ones near it, rather than exporting a bound that is not
 * what it counts up to.
 */
static int exact_all(const struct bucket_table *t, const uint64_t *want, size_t n, uint64_t *out,
		     size_t *nout, const char *what, char *err, size_t len)
{
	char w[32], near[80];

	*nout = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && want[i] <= want[i - 1]) {
			snprintf(err, len, "%s bucket bounds must ascend", what);
			return -EINVAL;
		}
		if (!buckets_has_bound(t, want[i])) {
			config_bounds_near(t, want[i], near, sizeof(near));
			expo_format_fixed(w, sizeof(w), want[i], t->per_base);
			snprintf(err, len,
				 "%s bucket bound %s is not one the running collector counts at "
				 "(its slots are laid at start): restart iolat serve to add it, or "
				 "use one near it that it has, %s",
				 what, w, near);
			return -EINVAL;
		}
		out[(*nout)++] = want[i];
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
	uint64_t lat_le[IOLAT_LAT_SLOTS], size_le[IOLAT_SIZE_SLOTS], wl_lat_le[IOLAT_LAT_SLOTS];
	size_t nlat_le, nsize_le, nwl_lat_le;
	struct uconfig *block_conf, *wl_conf;
	struct umetrics *block, *wl_metrics;
	/* Made when workloads are first turned on; label-set ids live as
	 * long as the exporter, so later settings keep the first ones. */
	struct workload_cache *names_of;
	struct wlabels *wl;
	struct kubenames *kube; /* the names_of's Kubernetes names, to come */
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
	st->kube = kubenames_new(o->kube_pods_dir, o->kube_containers_dir);
	if (!st->kube) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
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
static int builtin_make(struct exporter *e, const struct exporter_opts *o, enum builtins_set which,
			struct uconfig **conf, struct umetrics **out, char *err, size_t len)
{
	const struct builtins_opts bo = { .device_view = o->device_view,
					  .total_view = o->total_view,
					  .size_view = o->size_view,
					  .no_op_label = o->no_op_label,
					  .size_label = o->size_label,
					  .wl_labels = o->wl_labels,
					  .wl_metrics = o->wl_metrics };
	struct uconfig *c = calloc(1, sizeof(*c));
	struct usource src;
	int rc;

	if (!c) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	rc = builtins_config(&bo, which, c, err, len);
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
	kubenames_free(st->kube);
	free(st);
}

int exporter_prepare(struct exporter *e, const struct exporter_opts *o,
		     struct exporter_settings **out, char *err, size_t len)
{
	const uint64_t *lat = o->lat_le ? o->lat_le : buckets_default_le_ns;
	size_t nlat = o->lat_le ? o->nlat_le : buckets_default_le_count;
	const uint64_t *size = o->size_le ? o->size_le : buckets_default_size_le;
	size_t nsize = o->size_le ? o->nsize_le : buckets_default_size_le_count;
	const uint64_t *wl_lat = o->wl_lat_le ? o->wl_lat_le : buckets_workload_le_ns;
	size_t nwl_lat = o->wl_lat_le ? o->nwl_lat_le : buckets_workload_le_count;
	struct exporter_settings *st = calloc(1, sizeof(*st));
	int rc;

	if (!st) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	st->o = *o;
	st->o.lat_le = st->o.size_le = st->o.wl_lat_le = NULL;
	if (o->nrules <= WORKLOAD_MAX_RULES) {
		if (o->nrules) /* rules may be NULL then, which memcpy may not be given */
			memcpy(st->rules, o->rules, o->nrules * sizeof(*o->rules));
		st->o.rules = st->rules;
	}
	rc = -EINVAL;
	if (nlat > IOLAT_LAT_SLOTS || nsize > IOLAT_SIZE_SLOTS || nwl_lat > IOLAT_LAT_SLOTS)
		snprintf(err, len, "too many bucket bounds");
	else
		rc = exact_all(collector_lat_table(e->c), lat, nlat, st->lat_le, &st->nlat_le,
			       "latency", err, len);
	if (!rc)
		rc = exact_all(collector_size_table(e->c), size, nsize, st->size_le, &st->nsize_le,
			       "size", err, len);
	if (!rc)
		rc = exact_all(collector_lat_table(e->c), wl_lat, nwl_lat, st->wl_lat_le,
			       &st->nwl_lat_le, "workload latency", err, len);
	if (!rc && o->workloads)
		rc = workloads_prepare(e, st, err, len);
	if (!rc && exporter_wants_syscalls(o) != (e->sys != NULL)) {
		snprintf(err, len,
			 "turning the system call families (workloads.metrics syscall_time, "
			 "syscall_bytes, syscall_errors) %s takes a restart of iolat serve: their "
			 "programs are attached at start only",
			 e->sys ? "off" : "on");
		rc = -EINVAL;
	}
	if (!rc)
		rc = builtin_make(e, o, BUILTINS_BLOCK, &st->block_conf, &st->block, err, len);
	if (!rc && o->workloads)
		rc =
		    builtin_make(e, o, BUILTINS_WORKLOADS, &st->wl_conf, &st->wl_metrics, err, len);
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
	memcpy(e->wl_lat_le, st->wl_lat_le, sizeof(e->wl_lat_le));
	e->nwl_lat_le = st->nwl_lat_le;
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
		workload_cache_set_kube(e->names_of, st->kube);
		st->kube = NULL;
		if (collector_keyed_by_process(e->c))
			workload_cache_set_comm(e->names_of, comm_of, e->c);
		wlabels_set_opts(e->wl, &st->o.wl);
	}
	e->o = st->o;
	e->o.rules = NULL;
	exporter_settings_free(st);
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
	v->wl_lat_le = e->wl_lat_le;
	v->nwl_lat_le = e->nwl_lat_le;
	v->synthetic = e->o.synthetic_disks;
	v->known_devs = e->kstat ? exporter_kstat_devs(e->kstat, &v->nknown) : NULL;
	v->labels = labels ? e->labels : NULL;
	v->sys = labels && e->sys ? &e->sys_snap : NULL;
	v->sys_labels = labels && e->sys ? e->sys_labels : NULL;
}

bool exporter_wants_syscalls(const struct exporter_opts *o)
{
	return o->workloads && builtins_wl_wants_syscalls(o->wl_metrics);
}

/* The system-call programs, when the options ask for them. */
static int syscalls_open(struct exporter *e, const struct exporter_opts *o, char *err, size_t len)
{
	struct systimes_opts so = { .lat = collector_lat_table(e->c),
				    .key_process = collector_keyed_by_process(e->c) };

	if (!exporter_wants_syscalls(o))
		return 0;
	if (systimes_test_knobs(&so, getenv, err, len))
		return -EINVAL;
	return systimes_open(&e->sys, &so, err, len);
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
	exporter_self_init(e);
	views_fill(e, false); /* umetrics_new asks the views for their tables */
	e->env = decoder_env_new(NULL);
	if (!e->env) {
		snprintf(err, len, "out of memory");
		rc = -ENOMEM;
	} else {
		e->disks = exporter_disks_new(c, e->env);
		e->kstat = exporter_kstat_new("/sys/block");
		rc = e->disks && e->kstat ? syscalls_open(e, o, err, len) : -ENOMEM;
		if (!e->disks || !e->kstat)
			snprintf(err, len, "out of memory");
		if (!rc)
			rc = exporter_prepare(e, o, &st, err, len);
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
	exporter_kstat_free(e->kstat);
	workload_cache_free(e->names_of);
	drop_builtin(&e->block_conf, &e->block);
	drop_builtin(&e->wl_conf, &e->wl_metrics);
	free(e->labels);
	systimes_close(e->sys);
	snapshot_free(&e->sys_snap);
	snapshot_free(&e->sys_pass[0]);
	snapshot_free(&e->sys_pass[1]);
	free(e->sys_labels);
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

/* The block families, through builtin/block.yaml and, with workloads on,
 * builtin/workloads.yaml. */
static int add_block_metrics(struct exporter *e, struct metric_set *set, char *err, size_t errlen)
{
	int rc = umetrics_collect(e->block, set, err, errlen);
	size_t first = set->n;

	if (!rc && e->views.labels && e->wl_metrics)
		rc = umetrics_collect(e->wl_metrics, set, err, errlen);
	/* A workload's Kubernetes names: left out where there are none (every
	 * workload that is no pod), not written empty. */
	for (size_t i = first; !rc && i < set->n; i++)
		for (int k = 0; k < set->fam[i].nlabels; k++)
			if (!strcmp(set->fam[i].labels[k], "namespace") ||
			    !strcmp(set->fam[i].labels[k], "pod") ||
			    !strcmp(set->fam[i].labels[k], "container"))
				set->fam[i].omit_empty |= 1u << k;
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

/* The system calls' series now, each with its workload's label set. */
static int label_syscalls(struct exporter *e)
{
	int rc = systimes_read(e->sys, &e->sys_snap);

	if (rc)
		return rc;
	if (e->sys_snap.n > e->sys_labels_cap) {
		const struct wl_label **p = realloc(e->sys_labels, e->sys_snap.n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		e->sys_labels = p;
		e->sys_labels_cap = e->sys_snap.n;
	}
	for (size_t i = 0; i < e->sys_snap.n; i++)
		e->sys_labels[i] = wlabels_of(e->wl, e->sys_snap.s[i].key.cgroup);
	return 0;
}

/* peek at the series -> attach labels -> build families; see exporter.h. */
int exporter_render(struct exporter *e, struct metric_set *set, char *err, size_t errlen)
{
	bool workloads = exporter_shows_workloads(e);
	int rc;

	if (errlen)
		err[0] = '\0';
	metrics_reset(set); /* a scrape like the last: its memory kept */
	e->folded_ios = 0;
	exporter_kstat_sample(e->kstat); /* before the peek: see exporter_kstat.h */
	rc = collector_peek(e->c, &e->peeked);
	e->snap = &e->peeked.all;
	if (!rc && workloads)
		rc = label_series(e);
	if (!rc && workloads && e->sys)
		rc = label_syscalls(e);
	views_fill(e, workloads);
	if (!rc)
		rc = add_block_metrics(e, set, err, errlen);
	if (!rc)
		rc = exporter_self_metrics(e, set, workloads);
	if (!rc)
		rc = exporter_disks_metrics(e->disks, set);
	if (!rc)
		rc = exporter_kstat_metrics(e->kstat, e->snap, set);
	decoder_env_scrape_done(e->env); /* disk names: refreshed now and then */
	/* Only umetrics words its failures; for the rest the errno says it all. */
	if (rc && errlen && !err[0])
		snprintf(err, errlen, "%s", strerror(-rc));
	return rc;
}
