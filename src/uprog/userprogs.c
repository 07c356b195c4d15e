// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* userprogs.c - serve's user programs, each config on its own (userprogs.h). */
#define _GNU_SOURCE /* asprintf */
#include "uprog/userprogs.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uprog/decoders.h"
#include "uprog/uconfig.h"
#include "uprog/umetrics.h"
#include "uprog/uprog.h"
#include "uprog/uprog_source.h"
#include "util/buf.h"

/* One config: what it was called, and how far it got. */
struct user_config {
	char *name;
	char *path;
	struct uconfig conf;
	bool parsed;
	struct uprog *prog;
	struct umetrics *metrics;
	char *error; /* why it does not run; NULL when it does */
	uint64_t collect_errors;
	size_t dropped;
};

struct userprogs {
	struct user_config *cfg;
	size_t n, cap;
	struct decoder_env *env;
	enum uprog_map_read map_read;
};

#define MAX_CONFIGS 64

static int add_config(struct userprogs *u, const char *dir, const char *name, size_t namelen,
		      char *err, size_t errlen)
{
	struct user_config *c;

	if (u->n == MAX_CONFIGS) {
		snprintf(err, errlen, "more than %d user configs", MAX_CONFIGS);
		return -E2BIG;
	}
	if (array_make_room((void **)&u->cfg, &u->cap, u->n, sizeof(*u->cfg), 8))
		goto oom;
	c = &u->cfg[u->n];
	memset(c, 0, sizeof(*c));
	c->name = strndup(name, namelen);
	if (!c->name || asprintf(&c->path, "%s/%s.yaml", dir, c->name) < 0) {
		free(c->name);
		goto oom;
	}
	u->n++;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

/* --config.names a,b: each must be there as NAME.yaml. */
static int add_named(struct userprogs *u, const struct userprogs_opts *o, char *err, size_t errlen)
{
	for (const char *p = o->names; *p;) {
		size_t len = strcspn(p, ",");
		int rc = len ? add_config(u, o->dir, p, len, err, errlen) : 0;

		if (rc)
			return rc;
		if (len && access(u->cfg[u->n - 1].path, R_OK)) {
			rc = -errno;
			snprintf(err, errlen,
				 "config '%.*s': cannot read %s: %s (--config.names "
				 "gives names of NAME.yaml files in --config.dir)",
				 (int)len, p, u->cfg[u->n - 1].path, strerror(-rc));
			return rc;
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct user_config *)a)->name, ((const struct user_config *)b)->name);
}

/* No --config.names: every NAME.yaml (or .yml, taken as .yaml) in the dir. */
static int add_all(struct userprogs *u, const struct userprogs_opts *o, char *err, size_t errlen)
{
	DIR *d = opendir(o->dir);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		rc = -errno;
		snprintf(err, errlen, "cannot read --config.dir %s: %s", o->dir, strerror(-rc));
		return rc;
	}
	while (!rc && (e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len > 5 && !strcmp(e->d_name + len - 5, ".yaml"))
			rc = add_config(u, o->dir, e->d_name, len - 5, err, errlen);
	}
	closedir(d);
	if (!rc && u->n) /* an empty directory has no array to sort (NULL) */
		qsort(u->cfg, u->n, sizeof(*u->cfg), by_name);
	return rc;
}

static void fail_config(struct user_config *c, const char *why)
{
	free(c->error);
	c->error = strdup(why);
	if (!c->error)
		c->error = strdup("out of memory");
}

/*
 * Each metric's exported name: the config's metrics_prefix, or the default
 * one, in front of the name it wrote. 0 or -ENOMEM.
 */
static int prefix_names(struct uconfig *c, char *err, size_t errlen)
{
	const char *prefix = c->metrics_prefix ? c->metrics_prefix : USERPROGS_METRICS_PREFIX;

	for (size_t i = 0; *prefix && i < c->nmetrics; i++) {
		char *name;

		if (asprintf(&name, "%s%s", prefix, c->metric[i].name) < 0) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		free(c->metric[i].name);
		c->metric[i].name = name;
	}
	return 0;
}

/* Whether name is in iolat's own namespace: every iolat_ name but users'
 * iolat_user_ ones, and of those the configs' own iolat_user_config_. */
static bool name_is_iolats(const char *name)
{
	return !strncmp(name, "iolat_", 6) &&
	       (strncmp(name, USERPROGS_METRICS_PREFIX, strlen(USERPROGS_METRICS_PREFIX)) ||
		!strncmp(name, "iolat_user_config_", 18));
}

/* Metric names are one namespace: iolat's own, and every config's. */
static int check_names(const struct userprogs *u, const struct user_config *c, char *err,
		       size_t errlen)
{
	for (size_t i = 0; i < c->conf.nmetrics; i++) {
		const struct umetric_conf *m = &c->conf.metric[i];

		if (name_is_iolats(m->name)) {
			snprintf(err, errlen,
				 "%s:%d:%d: metric %s is a name of iolat's own: rename it, "
				 "or choose another metrics_prefix",
				 c->conf.file, m->line, m->col, m->name);
			return -EINVAL;
		}
		for (const struct user_config *o = u->cfg; o < c; o++)
			for (size_t k = 0; !o->error && k < o->conf.nmetrics; k++)
				if (!strcmp(o->conf.metric[k].name, m->name)) {
					snprintf(err, errlen,
						 "%s:%d:%d: metric '%s' is config "
						 "'%s''s already: rename one",
						 c->conf.file, m->line, m->col, m->name, o->name);
					return -EEXIST;
				}
	}
	return 0;
}

static int start_config(struct userprogs *u, struct user_config *c, char *err, size_t errlen)
{
	struct usource src;
	int rc;

	rc = uconfig_parse_file(c->path, &c->conf, err, errlen);
	if (rc)
		return rc;
	c->parsed = true;
	rc = prefix_names(&c->conf, err, errlen);
	if (!rc)
		rc = check_names(u, c, err, errlen);
	if (rc)
		return rc;
	rc = uprog_open(c->conf.object, c->conf.perf, c->conf.nperf, u->map_read, &c->prog, err,
			errlen);
	if (rc)
		return rc;
	uprog_source(c->prog, &src);
	return umetrics_new(&c->metrics, &c->conf, &src, u->env, err, errlen);
}

/* A config that failed keeps nothing loaded. */
static void stop_config(struct user_config *c)
{
	umetrics_free(c->metrics);
	c->metrics = NULL;
	uprog_close(c->prog);
	c->prog = NULL;
}

int userprogs_open(struct userprogs **out, const struct userprogs_opts *o, char *err, size_t errlen)
{
	struct userprogs *u = calloc(1, sizeof(*u));
	int rc;

	if (!u || !(u->env = decoder_env_new(NULL))) {
		free(u);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	u->map_read = o->map_read;
	rc = o->names ? add_named(u, o, err, errlen) : add_all(u, o, err, errlen);
	if (rc)
		goto fail;
	for (size_t i = 0; i < u->n; i++) {
		struct user_config *c = &u->cfg[i];
		char why[1024];

		rc = start_config(u, c, why, sizeof(why));
		if (!rc)
			continue;
		stop_config(c);
		fail_config(c, why);
		if (o->strict) {
			snprintf(err, errlen, "config '%s': %s", c->name, why);
			goto fail;
		}
	}
	*out = u;
	return 0;
fail:
	userprogs_close(u);
	return rc;
}

void userprogs_close(struct userprogs *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n; i++) {
		stop_config(&u->cfg[i]);
		if (u->cfg[i].parsed)
			uconfig_free(&u->cfg[i].conf);
		free(u->cfg[i].name);
		free(u->cfg[i].path);
		free(u->cfg[i].error);
	}
	free(u->cfg);
	decoder_env_free(u->env);
	free(u);
}

bool userprogs_config(const struct userprogs *u, size_t i, const char **name, const char **error)
{
	if (!u || i >= u->n)
		return false;
	*name = u->cfg[i].name;
	*error = u->cfg[i].error;
	return true;
}

static const char *const config_label[] = { "config", NULL };

/* iolat_user_config_*: whether each config runs, and what its scrapes lost. */
static int self_metrics(struct userprogs *u, struct metric_set *set)
{
	struct metric_family *up, *errs, *drop;

	up = metrics_family(set, "iolat_user_config_up",
			    "1 if the user program config loaded and runs, 0 if it failed "
			    "(the log says why)",
			    METRIC_GAUGE, config_label);
	errs = metrics_family(set, "iolat_user_config_collect_errors_total",
			      "Scrapes in which the config's maps could not be read",
			      METRIC_COUNTER, config_label);
	drop = metrics_family(set, "iolat_user_config_dropped_entries",
			      "Map entries left out of the last scrape: a regexp decoder "
			      "dropped them, or a field did not decode",
			      METRIC_GAUGE, config_label);
	if (!up || !errs || !drop)
		return -ENOMEM;
	for (size_t i = 0; i < u->n; i++) {
		const char *v[] = { u->cfg[i].name };
		struct metric_series *a = metrics_series(up, v, NULL);
		struct metric_series *b = metrics_series(errs, v, NULL);
		struct metric_series *c = metrics_series(drop, v, NULL);

		if (!a || !b || !c)
			return -ENOMEM;
		a->value = u->cfg[i].error ? 0 : 1;
		b->value = (double)u->cfg[i].collect_errors;
		c->value = (double)u->cfg[i].dropped;
	}
	return 0;
}

int userprogs_collect(struct userprogs *u, struct metric_set *set)
{
	if (!u)
		return 0;
	for (size_t i = 0; i < u->n; i++) {
		struct user_config *c = &u->cfg[i];
		char why[256];

		if (c->error)
			continue;
		if (umetrics_collect(c->metrics, set, why, sizeof(why)))
			c->collect_errors++;
		c->dropped = umetrics_dropped(c->metrics);
	}
	decoder_env_scrape_done(u->env);
	return self_metrics(u, set);
}

static void describe_config(const struct user_config *c, FILE *f)
{
	const char *names[64], *secs[64];
	size_t n;

	fprintf(f, "config %s (%s): ", c->name, c->path);
	if (c->error) {
		fprintf(f, "FAILED: %s\n", c->error);
		return;
	}
	fprintf(f, "ok, object %s\n", c->conf.object);
	n = uprog_programs(c->prog, names, secs, 64);
	for (size_t i = 0; i < n && i < 64; i++)
		fprintf(f, "  program %s attached at %s\n", names[i], secs[i]);
	for (size_t i = 0; i < c->conf.nmetrics; i++) {
		const struct umetric_conf *m = &c->conf.metric[i];

		fprintf(f, "  %s %s from map %s, labels:", m->histogram ? "histogram" : "counter",
			m->name, m->map);
		for (size_t k = 0; k < m->nfields - (m->histogram ? 1 : 0); k++)
			fprintf(f, " %s", m->field[k].name);
		fputc('\n', f);
	}
}

void userprogs_describe(const struct userprogs *u, FILE *f)
{
	for (size_t i = 0; i < u->n; i++)
		describe_config(&u->cfg[i], f);
}
