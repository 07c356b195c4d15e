// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* serve_config.c - `iolat serve` settings from a YAML file (serve_config.h), via libyaml. */
#include "serve/serve_config.h"
#include "util/parse.h"
#include "util/yamldoc.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct ctx {
	yaml_document_t doc;
	const char *path;
	char *err;
	size_t errlen;
};

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
	c->workloads_max = 500;
	c->workloads_expire_s = 300;
	c->disks_expire_s = 300;
}

/*
 * This parser keeps its own error and field helpers rather than yamldoc's:
 * config_load returns -EINVAL, cuts messages at 255 characters, says
 * "unknown key" and lets a repeated key win; only the plain scalar readers
 * are shared.
 */
static int fail(struct ctx *x, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(x->err, x->errlen, "%s:%zu:%zu: %s", x->path, n->start_mark.line + 1,
		 n->start_mark.column + 1, msg);
	return -EINVAL;
}

static int get_bool(struct ctx *x, const yaml_node_t *n, bool *out)
{
	return yamldoc_bool(n, out) ? fail(x, n, "expected true or false") : 0;
}

static int get_string(struct ctx *x, const yaml_node_t *n, char *out, size_t len)
{
	const char *s = yamldoc_scalar(n);

	if (!s)
		return fail(x, n, "expected a string");
	if (strlen(s) >= len)
		return fail(x, n, "string too long (at most %zu characters)", len - 1);
	snprintf(out, len, "%s", s);
	return 0;
}

/* A sequence of positive numbers, scaled (seconds -> ns) and ascending. */
static int get_bounds(struct ctx *x, const yaml_node_t *n, double scale, uint64_t *out,
		      size_t *nout)
{
	yaml_node_item_t *it;

	if (n->type != YAML_SEQUENCE_NODE)
		return fail(x, n, "expected a list of numbers");
	*nout = 0;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *v = yaml_document_get_node(&x->doc, *it);
		const char *s = yamldoc_scalar(v);
		char *end;
		double d = s ? strtod(s, &end) : NAN;

		if (!s || *end || !isfinite(d) || d <= 0)
			return fail(x, v, "expected a positive number");
		if (*nout == CONFIG_MAX_BOUNDS)
			return fail(x, v, "too many bounds (at most %d)", CONFIG_MAX_BOUNDS);
		out[*nout] = (uint64_t)llround(d * scale);
		if (*nout && out[*nout] <= out[*nout - 1])
			return fail(x, v, "bounds must ascend");
		(*nout)++;
	}
	return 0;
}

typedef int (*key_fn)(struct ctx *x, const char *key, yaml_node_t *v, struct serve_config *c);

/* Calls fn for each key of a mapping; fn returns 1 for an unknown key. */
static int each_key(struct ctx *x, yaml_node_t *map, const char *known, key_fn fn,
		    struct serve_config *c)
{
	yaml_node_pair_t *p;

	if (map->type != YAML_MAPPING_NODE)
		return fail(x, map, "expected a mapping of: %s", known);
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&x->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(&x->doc, p->value);
		const char *name = yamldoc_scalar(k);
		int rc;

		if (!name)
			return fail(x, k, "expected a key");
		rc = fn(x, name, v, c);
		if (rc == 1)
			return fail(x, k, "unknown key '%s' (known: %s)", name, known);
		if (rc)
			return rc;
	}
	return 0;
}

static int web_key(struct ctx *x, const char *k, yaml_node_t *v, struct serve_config *c)
{
	yaml_node_item_t *it;

	if (!strcmp(k, "telemetry_path")) {
		int rc = get_string(x, v, c->telemetry_path, sizeof(c->telemetry_path));

		if (!rc && c->telemetry_path[0] != '/')
			return fail(x, v, "telemetry_path must start with /");
		return rc;
	}
	if (!strcmp(k, "config_file"))
		return get_string(x, v, c->web_config_file, sizeof(c->web_config_file));
	if (strcmp(k, "listen_addresses"))
		return 1;
	if (v->type != YAML_SEQUENCE_NODE || v->data.sequence.items.start == v->data.sequence.items.top)
		return fail(x, v, "expected a non-empty list of addresses");
	c->nlisten = 0;
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		if (c->nlisten == CONFIG_MAX_LISTEN)
			return fail(x, v, "at most %d listen addresses", CONFIG_MAX_LISTEN);
		if (get_string(x, yaml_document_get_node(&x->doc, *it), c->listen[c->nlisten],
			       sizeof(c->listen[0])))
			return -EINVAL;
		c->nlisten++;
	}
	return 0;
}

static int views_key(struct ctx *x, const char *k, yaml_node_t *v, struct serve_config *c)
{
	if (!strcmp(k, "device_time"))
		return get_bool(x, v, &c->device_view);
	if (!strcmp(k, "total_time"))
		return get_bool(x, v, &c->total_view);
	if (!strcmp(k, "request_size"))
		return get_bool(x, v, &c->size_view);
	return 1;
}

static int buckets_key(struct ctx *x, const char *k, yaml_node_t *v, struct serve_config *c)
{
	if (!strcmp(k, "latency_seconds"))
		return get_bounds(x, v, 1e9, c->lat_le, &c->nlat_le);
	if (!strcmp(k, "size_bytes"))
		return get_bounds(x, v, 1, c->size_le, &c->nsize_le);
	return 1;
}

static int labels_key(struct ctx *x, const char *k, yaml_node_t *v, struct serve_config *c)
{
	if (!strcmp(k, "op"))
		return get_bool(x, v, &c->op_label);
	if (!strcmp(k, "size_class"))
		return get_bool(x, v, &c->size_label);
	return 1;
}

static int get_uint(struct ctx *x, const yaml_node_t *n, uint64_t lo, uint64_t hi,
		    uint64_t *out)
{
	const char *s = yamldoc_scalar(n);
	char *end;
	unsigned long long v = s ? strtoull(s, &end, 10) : 0;

	if (!s || !*s || *end || *s == '-' || v < lo || v > hi)
		return fail(x, n, "expected a whole number from %llu to %llu",
			    (unsigned long long)lo, (unsigned long long)hi);
	*out = v;
	return 0;
}

/* A key of one item of workloads.rules: the item is filling the rule after
 * the last complete one, c->rules[c->nrules] (get_rules). */
static int rule_key(struct ctx *x, const char *k, yaml_node_t *v, struct serve_config *c)
{
	struct workload_rule *r = &c->rules[c->nrules];

	if (!strcmp(k, "match"))
		return get_string(x, v, r->match, sizeof(r->match));
	if (!strcmp(k, "kind"))
		return get_string(x, v, r->kind, sizeof(r->kind));
	if (!strcmp(k, "name"))
		return get_string(x, v, r->name, sizeof(r->name));
	return 1;
}

static int get_rules(struct ctx *x, yaml_node_t *v, struct serve_config *c)
{
	yaml_node_item_t *it;
	char why[300];

	if (v->type != YAML_SEQUENCE_NODE)
		return fail(x, v, "expected a list of rules (match, kind, name)");
	c->nrules = 0;
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(&x->doc, *it);
		struct workload_rule *r;
		int rc;

		if (c->nrules == WORKLOAD_MAX_RULES)
			return fail(x, item, "at most %d rules", WORKLOAD_MAX_RULES);
		r = &c->rules[c->nrules];
		memset(r, 0, sizeof(*r));
		rc = each_key(x, item, "match, kind, name", rule_key, c);
		if (rc)
			return rc;
		if (!r->match[0])
			return fail(x, item, "a rule needs a match (a regular expression)");
		if (workload_rule_check(r, why, sizeof(why)))
			return fail(x, item, "%s", why);
		c->nrules++;
	}
	return 0;
}

static int workloads_key(struct ctx *x, const char *k, yaml_node_t *v, struct serve_config *c)
{
	uint64_t n = 0;
	int rc;

	if (!strcmp(k, "enabled"))
		return get_bool(x, v, &c->workloads);
	if (!strcmp(k, "by")) {
		const char *by = yamldoc_scalar(v);

		if (!by || (strcmp(by, "cgroup") && strcmp(by, "process")))
			return fail(x, v, "workloads.by is cgroup or process");
		c->workloads_by_process = !strcmp(by, "process");
		return 0;
	}
	if (!strcmp(k, "max")) {
		rc = get_uint(x, v, 1, 100000, &n);
		if (!rc)
			c->workloads_max = (size_t)n;
		return rc;
	}
	if (!strcmp(k, "expire")) {
		if (!yamldoc_scalar(v) ||
		    parse_duration(yamldoc_scalar(v), &c->workloads_expire_s))
			return fail(x, v, "expected a duration such as 300, 90s, 5m or 1h");
		return 0;
	}
	if (!strcmp(k, "rules"))
		return get_rules(x, v, c);
	return 1;
}

static int disks_key(struct ctx *x, const char *k, yaml_node_t *v, struct serve_config *c)
{
	unsigned int s;

	if (strcmp(k, "expire"))
		return 1;
	if (!yamldoc_scalar(v) || parse_duration(yamldoc_scalar(v), &s) || !s)
		return fail(x, v, "expected a duration of at least 1s, such as 300, 90s, 5m or 1h");
	c->disks_expire_s = s;
	return 0;
}

static int top_key(struct ctx *x, const char *k, yaml_node_t *v, struct serve_config *c)
{
	if (!strcmp(k, "web"))
		return each_key(x, v, "listen_addresses, telemetry_path, config_file", web_key, c);
	if (!strcmp(k, "views"))
		return each_key(x, v, "device_time, total_time, request_size", views_key, c);
	if (!strcmp(k, "buckets"))
		return each_key(x, v, "latency_seconds, size_bytes", buckets_key, c);
	if (!strcmp(k, "labels"))
		return each_key(x, v, "op, size_class", labels_key, c);
	if (!strcmp(k, "workloads"))
		return each_key(x, v, "enabled, by, max, expire, rules", workloads_key, c);
	if (!strcmp(k, "disks"))
		return each_key(x, v, "expire", disks_key, c);
	if (!strcmp(k, "bpf_stats"))
		return get_bool(x, v, &c->bpf_stats);
	if (!strcmp(k, "log_level")) {
		const char *s = yamldoc_scalar(v);
		int l = s ? log_level_from_name(s) : -1;

		if (l < 0)
			return fail(x, v, "log_level is one of debug, info, warn, error");
		c->log_level = (enum log_level)l;
		return 0;
	}
	if (!strcmp(k, "log_format")) {
		const char *s = yamldoc_scalar(v);
		int f = s ? log_format_from_name(s) : -1;

		if (f < 0)
			return fail(x, v, "log_format is logfmt or json");
		c->log_format = (enum log_format)f;
		return 0;
	}
	return 1;
}

int config_load(const char *path, struct serve_config *c, char *err, size_t errlen)
{
	struct ctx x = { .path = path, .err = err, .errlen = errlen };
	yaml_parser_t parser;
	yaml_node_t *root;
	FILE *f = fopen(path, "re");
	int rc;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &x.doc)) {
		snprintf(err, errlen, "%s:%zu:%zu: %s", path, parser.problem_mark.line + 1,
			 parser.problem_mark.column + 1, parser.problem ? parser.problem : "bad YAML");
		yaml_parser_delete(&parser);
		fclose(f);
		return -EINVAL;
	}
	root = yaml_document_get_root_node(&x.doc);
	rc = root ? each_key(&x, root, "web, views, buckets, labels, workloads, disks, bpf_stats, log_level, log_format", top_key, c) : 0;
	yaml_document_delete(&x.doc);
	yaml_parser_delete(&parser);
	fclose(f);
	return rc;
}
