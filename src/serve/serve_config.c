// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* serve_config.c - `iolat serve` settings from a YAML file (serve_config.h), via yamldoc. */
#include "serve/serve_config.h"
#include "core/buckets.h"
#include "iolat.h"
#include "metrics/expo_text.h"
#include "uprog/builtins.h"
#include "util/readfile.h"
#include "util/yamldoc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* The settings file is the operator's own; the cap stops a mistaken /dev/zero. */
#define MAX_FILE_SIZE (1 << 20)

void config_defaults(struct serve_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->listen[0], sizeof(c->listen[0]), ":19617");
	c->nlisten = 1;
	snprintf(c->telemetry_path, sizeof(c->telemetry_path), "/metrics");
	c->device_view = c->total_view = c->size_view = true;
	c->op_label = true;
	c->log_level = LOG_INFO_L;
	c->workloads = true;
	c->workloads_max = MAPSIZE_DEFAULT_WORKLOADS;
	c->wl_labels = BUILTINS_WL_LABELS_DEFAULT;
	c->wl_metrics = BUILTINS_WL_METRICS_DEFAULT;
	c->workloads_expire_s = CONFIG_DEFAULT_EXPIRE_S;
	c->disks_expire_s = CONFIG_DEFAULT_EXPIRE_S;
	snprintf(c->kube_pods_dir, sizeof(c->kube_pods_dir), "%s", WORKLOAD_KUBE_PODS_DIR);
	snprintf(c->kube_containers_dir, sizeof(c->kube_containers_dir), "%s",
		 WORKLOAD_KUBE_CONTAINERS_DIR);
}

/*
 * The words this file's users know: "unknown key 'x' (known: ...)", not
 * yamldoc's "field"; a repeated key is not an error here (the last wins).
 */
static int serve_words(struct yamldoc *d, const yaml_node_t *at, enum yamldoc_problem problem,
		       const char *key, const char *what, const char *known)
{
	(void)what;
	switch (problem) {
	case YAMLDOC_NOT_MAPPING:
		return yamldoc_fail(d, at, "expected a mapping of: %s", known);
	case YAMLDOC_KEY_NOT_STRING:
		return yamldoc_fail(d, at, "expected a key");
	case YAMLDOC_UNKNOWN_KEY:
		return yamldoc_fail(d, at, "unknown key '%s' (known: %s)", key, known);
	case YAMLDOC_REPEATED_KEY:
	case YAMLDOC_SECOND_DOCUMENT:
		break;
	}
	return yamldoc_default_words(d, at, problem, key, what, known);
}

/* Bounds past this many raw units (ns: 31 years; bytes: an exabyte) are
 * refused: nothing waits or moves that much, and 64 bits hold them. */
#define BOUND_MAX_RAW 1000000000000000000ULL

/* What a bucket key counts in: its name, seconds or bytes, per raw unit. */
struct bound_unit {
	const char *key;  /* "latency_seconds" */
	const char *unit; /* "s" */
	const char *raw;  /* "nanosecond" */
	uint64_t per_base;
};

/* One configured bound in raw units, exactly, or a message naming the
 * nearest exact ones: a bound that is not a whole raw unit would be
 * counted at another and exported under a name it does not have. */
static int exact_bound(struct yamldoc *x, yaml_node_t *v, double d, const struct bound_unit *u,
		       uint64_t *out)
{
	double raw = d * (double)u->per_base;
	char lo[32], hi[32];

	if (raw >= (double)BOUND_MAX_RAW) {
		expo_format_fixed(hi, sizeof(hi), BOUND_MAX_RAW, u->per_base);
		return yamldoc_fail(x, v, "%s %s is beyond what iolat counts (at most %s %s)",
				    u->key, yamldoc_scalar(v), hi, u->unit);
	}
	*out = (uint64_t)llround(raw);
	/* A decimal's double times 1e9 is within 1e-15 of it relatively: more
	 * than that off a whole number is a fraction of a raw unit. */
	if (fabs(raw - (double)*out) <= raw * 1e-12 && *out > 0)
		return 0;
	expo_format_fixed(lo, sizeof(lo), (uint64_t)floor(raw), u->per_base);
	expo_format_fixed(hi, sizeof(hi), (uint64_t)ceil(raw), u->per_base);
	return yamldoc_fail(x, v,
			    "%s %s is not a whole %s, which iolat counts in; the nearest it can "
			    "count at exactly: %s%s%s",
			    u->key, yamldoc_scalar(v), u->raw, floor(raw) > 0 ? lo : "",
			    floor(raw) > 0 ? " or " : "", hi);
}

void config_bounds_near(const struct bucket_table *t, uint64_t v, char *out, size_t len)
{
	uint64_t below, above;
	char lo[32], hi[32];

	buckets_nearest(t, v, &below, &above);
	expo_format_fixed(lo, sizeof(lo), below, t->per_base);
	expo_format_fixed(hi, sizeof(hi), above, t->per_base);
	snprintf(out, len, "%s%s%s", below ? lo : "", below && above ? " or " : "",
		 above ? hi : "");
}

/*
 * Whether the bounds fit the kernel's slot table beside the fixed ones
 * (buckets.h): each is a slot boundary, so its `le` bucket is exact. If
 * not, names the first that does not fit and the bounds near it that the
 * table has anyway (those cost no slot).
 */
static int bounds_fit(struct yamldoc *x, yaml_node_t *n, const uint64_t *b, size_t nb,
		      const struct bound_unit *u)
{
	uint64_t store[IOLAT_LAT_SLOTS];
	struct bucket_table t, base;
	bool lat = u->per_base != 1;
	size_t fresh = 0, room;
	char want[32], near[80];
	int rc =
	    lat ? buckets_build_latency(&t, store, b, nb) : buckets_build_size(&t, store, b, nb);

	if (rc != -E2BIG)
		return rc ? yamldoc_fail(x, n, "out of memory") : 0;
	if (lat ? buckets_build_latency(&base, store, NULL, 0)
		: buckets_build_size(&base, store, NULL, 0))
		return yamldoc_fail(x, n, "out of memory");
	room = (lat ? IOLAT_LAT_SLOTS : IOLAT_SIZE_SLOTS) - 1 - base.nbounds;
	for (size_t i = 0; i < nb; i++) {
		if (buckets_has_bound(&base, b[i]) || fresh++ < room)
			continue;
		config_bounds_near(&base, b[i], near, sizeof(near));
		expo_format_fixed(want, sizeof(want), b[i], u->per_base);
		return yamldoc_fail(x, n,
				    "%s: only %zu bounds of your own fit beside those iolat counts "
				    "at anyway; %s is one too many: use one near it that it has, "
				    "%s, or drop a bound",
				    u->key, room, want, near);
	}
	return yamldoc_fail(x, n, "%s: too many bounds", u->key);
}

/* A sequence of positive numbers, scaled to raw units, ascending, each one
 * the table can count at exactly. */
static int get_bounds(struct yamldoc *x, yaml_node_t *n, const struct bound_unit *u, uint64_t *out,
		      size_t *nout)
{
	size_t len;
	int rc;

	if (n->type != YAML_SEQUENCE_NODE)
		return yamldoc_fail(x, n, "expected a list of numbers");
	len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	*nout = 0;
	for (size_t i = 0; i < len; i++) {
		yaml_node_t *v = yamldoc_item(x, n, i);
		double d;

		if (yamldoc_number(v, &d) || d <= 0)
			return yamldoc_fail(x, v, "expected a positive number");
		if (*nout == CONFIG_MAX_BOUNDS)
			return yamldoc_fail(x, v, "too many bounds (at most %d)",
					    CONFIG_MAX_BOUNDS);
		rc = exact_bound(x, v, d, u, &out[*nout]);
		if (rc)
			return rc;
		if (*nout && out[*nout] <= out[*nout - 1])
			return yamldoc_fail(x, v, "bounds must ascend");
		(*nout)++;
	}
	return bounds_fit(x, n, out, *nout, u);
}

static int web_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	struct serve_config *c = arg;
	size_t len;
	int rc;

	if (!strcmp(k, "telemetry_path")) {
		rc = yamldoc_get_strbuf(x, v, c->telemetry_path, sizeof(c->telemetry_path));
		if (!rc && c->telemetry_path[0] != '/')
			return yamldoc_fail(x, v, "telemetry_path must start with /");
		return rc;
	}
	if (!strcmp(k, "config_file"))
		return yamldoc_get_strbuf(x, v, c->web_config_file, sizeof(c->web_config_file));
	if (strcmp(k, "listen_addresses"))
		return 1;
	len = v->type == YAML_SEQUENCE_NODE
		  ? (size_t)(v->data.sequence.items.top - v->data.sequence.items.start)
		  : 0;
	if (!len)
		return yamldoc_fail(x, v, "expected a non-empty list of addresses");
	if (len > CONFIG_MAX_LISTEN)
		return yamldoc_fail(x, v, "at most %d listen addresses", CONFIG_MAX_LISTEN);
	for (c->nlisten = 0; c->nlisten < len; c->nlisten++) {
		rc = yamldoc_get_strbuf(x, yamldoc_item(x, v, c->nlisten), c->listen[c->nlisten],
					sizeof(c->listen[0]));
		if (rc)
			return rc;
	}
	return 0;
}

static int views_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	struct serve_config *c = arg;

	if (!strcmp(k, "device_time"))
		return yamldoc_get_bool(x, v, &c->device_view);
	if (!strcmp(k, "total_time"))
		return yamldoc_get_bool(x, v, &c->total_view);
	if (!strcmp(k, "request_size"))
		return yamldoc_get_bool(x, v, &c->size_view);
	return 1;
}

static int buckets_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	static const struct bound_unit lat = { "latency_seconds", "s", "nanosecond", 1000000000 };
	static const struct bound_unit size = { "size_bytes", "bytes", "byte", 1 };
	struct serve_config *c = arg;

	if (!strcmp(k, "latency_seconds"))
		return get_bounds(x, v, &lat, c->lat_le, &c->nlat_le);
	if (!strcmp(k, "size_bytes"))
		return get_bounds(x, v, &size, c->size_le, &c->nsize_le);
	if (!strcmp(k, "workload_latency_seconds"))
		return get_bounds(x, v, &lat, c->wl_lat_le, &c->nwl_lat_le);
	return 1;
}

static int labels_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	struct serve_config *c = arg;

	if (!strcmp(k, "op"))
		return yamldoc_get_bool(x, v, &c->op_label);
	if (!strcmp(k, "size_class"))
		return yamldoc_get_bool(x, v, &c->size_label);
	return 1;
}

static int rule_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	struct workload_rule *r = arg;

	if (!strcmp(k, "match"))
		return yamldoc_get_strbuf(x, v, r->match, sizeof(r->match));
	if (!strcmp(k, "kind"))
		return yamldoc_get_strbuf(x, v, r->kind, sizeof(r->kind));
	if (!strcmp(k, "name"))
		return yamldoc_get_strbuf(x, v, r->name, sizeof(r->name));
	return 1;
}

static int get_rules(struct yamldoc *x, yaml_node_t *v, struct serve_config *c)
{
	char why[300];
	size_t len;

	if (v->type != YAML_SEQUENCE_NODE)
		return yamldoc_fail(x, v, "expected a list of rules (match, kind, name)");
	len = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	for (c->nrules = 0; c->nrules < len; c->nrules++) {
		yaml_node_t *item = yamldoc_item(x, v, c->nrules);
		struct workload_rule *r = &c->rules[c->nrules];
		int rc;

		if (c->nrules == WORKLOAD_MAX_RULES)
			return yamldoc_fail(x, item, "at most %d rules", WORKLOAD_MAX_RULES);
		memset(r, 0, sizeof(*r));
		rc = yamldoc_each_key(x, item, "a rule", "match, kind, name", rule_key, r);
		if (rc)
			return rc;
		if (!r->match[0])
			return yamldoc_fail(x, item, "a rule needs a match (a regular expression)");
		if (workload_rule_check(r, why, sizeof(why)))
			return yamldoc_fail(x, item, "%s", why);
	}
	return 0;
}

/* A list of names, each a bit of *out (workloads.labels, .metrics). */
static int get_names(struct yamldoc *x, yaml_node_t *n, const char *what,
		     unsigned (*bit_of)(const char *), unsigned *out)
{
	size_t len;

	if (yamldoc_list_len(x, n, what, 0, 16, &len))
		return -EINVAL;
	*out = 0;
	for (size_t i = 0; i < len; i++) {
		yaml_node_t *v = yamldoc_item(x, n, i);
		const char *s = yamldoc_scalar(v);
		unsigned b = s ? bit_of(s) : 0;
		char known[160];

		if (!b) {
			if (bit_of == builtins_wl_label_bit)
				builtins_wl_labels_names(BUILTINS_WL_ALL_LABELS, known,
							 sizeof(known));
			else
				builtins_wl_metrics_names(BUILTINS_WL_ALL_METRICS, known,
							  sizeof(known));
			return yamldoc_fail(x, v, "%s: unknown name '%s': use %s", what, s ? s : "",
					    known);
		}
		*out |= b;
	}
	if (!len && bit_of == builtins_wl_metric_bit)
		return yamldoc_fail(x, n,
				    "%s: name at least one family, or turn workloads off "
				    "with workloads.enabled: false",
				    what);
	return 0;
}

static int workloads_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	struct serve_config *c = arg;
	unsigned int n;
	int rc;

	if (!strcmp(k, "enabled"))
		return yamldoc_get_bool(x, v, &c->workloads);
	if (!strcmp(k, "by")) {
		const char *by = yamldoc_scalar(v);

		if (!by || (strcmp(by, "cgroup") && strcmp(by, "process")))
			return yamldoc_fail(x, v, "workloads.by is cgroup or process");
		c->workloads_by_process = !strcmp(by, "process");
		return 0;
	}
	if (!strcmp(k, "max")) {
		rc = yamldoc_get_unsigned(x, v, 1, MAPSIZE_MAX_WORKLOADS, &n);
		if (!rc)
			c->workloads_max = n;
		return rc;
	}
	if (!strcmp(k, "expire"))
		return yamldoc_get_duration(x, v, 0, &c->workloads_expire_s);
	if (!strcmp(k, "rules"))
		return get_rules(x, v, c);
	if (!strcmp(k, "labels"))
		return get_names(x, v, "workloads.labels", builtins_wl_label_bit, &c->wl_labels);
	if (!strcmp(k, "metrics"))
		return get_names(x, v, "workloads.metrics", builtins_wl_metric_bit, &c->wl_metrics);
	return 1;
}

static int disks_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	struct serve_config *c = arg;

	if (strcmp(k, "expire"))
		return 1;
	return yamldoc_get_duration(x, v, 1, &c->disks_expire_s);
}

static int kubernetes_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	struct serve_config *c = arg;

	if (!strcmp(k, "pod_logs_dir"))
		return yamldoc_get_strbuf(x, v, c->kube_pods_dir, sizeof(c->kube_pods_dir));
	if (!strcmp(k, "container_logs_dir"))
		return yamldoc_get_strbuf(x, v, c->kube_containers_dir,
					  sizeof(c->kube_containers_dir));
	return 1;
}

static int map_size_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	struct serve_config *c = arg;
	int m = mapsize_from_name(k);
	unsigned int n;
	int rc;

	if (m < 0)
		return 1;
	rc = yamldoc_get_unsigned(x, v, 1, MAPSIZE_SET_MAX, &n);
	if (!rc)
		c->map_sizes[m] = n;
	return rc;
}

static int top_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	struct serve_config *c = arg;

	if (!strcmp(k, "web"))
		return yamldoc_each_key(
		    x, v, "web", "listen_addresses, telemetry_path, config_file", web_key, c);
	if (!strcmp(k, "views"))
		return yamldoc_each_key(x, v, "views", "device_time, total_time, request_size",
					views_key, c);
	if (!strcmp(k, "buckets"))
		return yamldoc_each_key(x, v, "buckets",
					"latency_seconds, size_bytes, workload_latency_seconds",
					buckets_key, c);
	if (!strcmp(k, "labels"))
		return yamldoc_each_key(x, v, "labels", "op, size_class", labels_key, c);
	if (!strcmp(k, "workloads"))
		return yamldoc_each_key(x, v, "workloads",
					"enabled, by, max, expire, rules, labels, metrics",
					workloads_key, c);
	if (!strcmp(k, "disks"))
		return yamldoc_each_key(x, v, "disks", "expire", disks_key, c);
	if (!strcmp(k, "kubernetes"))
		return yamldoc_each_key(x, v, "kubernetes", "pod_logs_dir, container_logs_dir",
					kubernetes_key, c);
	if (!strcmp(k, "bpf_stats"))
		return yamldoc_get_bool(x, v, &c->bpf_stats);
	if (!strcmp(k, "bpf_map_sizes"))
		return yamldoc_each_key(x, v, "bpf_map_sizes",
					"hists, rq_starts, bio_starts, comms", map_size_key, c);
	if (!strcmp(k, "log_level")) {
		const char *s = yamldoc_scalar(v);
		int l = s ? log_level_from_name(s) : -1;

		if (l < 0)
			return yamldoc_fail(x, v, "log_level is one of debug, info, warn, error");
		c->log_level = (enum log_level)l;
		return 0;
	}
	if (!strcmp(k, "log_format")) {
		const char *s = yamldoc_scalar(v);
		int f = s ? log_format_from_name(s) : -1;

		if (f < 0)
			return yamldoc_fail(x, v, "log_format is logfmt or json");
		c->log_format = (enum log_format)f;
		return 0;
	}
	return 1;
}

int config_load(const char *path, struct serve_config *c, char *err, size_t errlen)
{
	struct yamldoc x = { .file = path,
			     .err = err,
			     .errlen = errlen,
			     .words = serve_words,
			     .repeat_wins = true };
	yaml_node_t *root;
	char *text;
	size_t len;
	int rc;

	rc = readfile_all(path, MAX_FILE_SIZE, &text, &len);
	if (rc) {
		snprintf(err, errlen, "%s: %s", path, readfile_strerror(rc, MAX_FILE_SIZE));
		return rc;
	}
	/* An empty file (or one of comments) changes nothing. */
	rc = yamldoc_load(&x, text, len, NULL);
	free(text);
	if (rc)
		return rc;
	root = yaml_document_get_root_node(&x.doc);
	if (root)
		rc = yamldoc_each_key(&x, root, "the settings",
				      "web, views, buckets, labels, workloads, disks, kubernetes, "
				      "bpf_stats, bpf_map_sizes, log_level, log_format",
				      top_key, c);
	yaml_document_delete(&x.doc);
	return rc;
}

/* Appends name to out (comma-separated) when the fields differ. */
static void note_change(bool differs, const char *name, char *out, size_t len)
{
	size_t at = strlen(out);

	if (differs && at < len)
		snprintf(out + at, len - at, "%s%s", at ? "," : "", name);
}

void config_changes(const struct serve_config *a, const struct serve_config *b, char *out,
		    size_t len)
{
	bool rules = a->nrules != b->nrules, listen = a->nlisten != b->nlisten;

	for (size_t i = 0; !listen && i < a->nlisten; i++)
		listen = strcmp(a->listen[i], b->listen[i]) != 0;
	for (size_t i = 0; !rules && i < a->nrules; i++)
		rules = strcmp(a->rules[i].match, b->rules[i].match) ||
			strcmp(a->rules[i].kind, b->rules[i].kind) ||
			strcmp(a->rules[i].name, b->rules[i].name);
	out[0] = '\0';
	note_change(listen, "web.listen_addresses", out, len);
	note_change(strcmp(a->telemetry_path, b->telemetry_path), "web.telemetry_path", out, len);
	note_change(strcmp(a->web_config_file, b->web_config_file), "web.config_file", out, len);
	note_change(a->device_view != b->device_view, "views.device_time", out, len);
	note_change(a->total_view != b->total_view, "views.total_time", out, len);
	note_change(a->size_view != b->size_view, "views.request_size", out, len);
	note_change(a->nlat_le != b->nlat_le ||
			memcmp(a->lat_le, b->lat_le, a->nlat_le * sizeof(a->lat_le[0])),
		    "buckets.latency_seconds", out, len);
	note_change(a->nsize_le != b->nsize_le ||
			memcmp(a->size_le, b->size_le, a->nsize_le * sizeof(a->size_le[0])),
		    "buckets.size_bytes", out, len);
	note_change(a->op_label != b->op_label, "labels.op", out, len);
	note_change(a->size_label != b->size_label, "labels.size_class", out, len);
	note_change(a->workloads != b->workloads, "workloads.enabled", out, len);
	note_change(a->workloads_by_process != b->workloads_by_process, "workloads.by", out, len);
	note_change(a->workloads_max != b->workloads_max, "workloads.max", out, len);
	note_change(a->workloads_expire_s != b->workloads_expire_s, "workloads.expire", out, len);
	note_change(a->wl_labels != b->wl_labels, "workloads.labels", out, len);
	note_change(a->wl_metrics != b->wl_metrics, "workloads.metrics", out, len);
	note_change(a->nwl_lat_le != b->nwl_lat_le ||
			memcmp(a->wl_lat_le, b->wl_lat_le, a->nwl_lat_le * sizeof(a->wl_lat_le[0])),
		    "buckets.workload_latency_seconds", out, len);
	note_change(rules, "workloads.rules", out, len);
	note_change(a->disks_expire_s != b->disks_expire_s, "disks.expire", out, len);
	note_change(strcmp(a->kube_pods_dir, b->kube_pods_dir), "kubernetes.pod_logs_dir", out,
		    len);
	note_change(strcmp(a->kube_containers_dir, b->kube_containers_dir),
		    "kubernetes.container_logs_dir", out, len);
	note_change(a->bpf_stats != b->bpf_stats, "bpf_stats", out, len);
	note_change(memcmp(a->map_sizes, b->map_sizes, sizeof(a->map_sizes)), "bpf_map_sizes", out,
		    len);
	note_change(a->log_level != b->log_level, "log_level", out, len);
	note_change(a->log_format != b->log_format, "log_format", out, len);
}
