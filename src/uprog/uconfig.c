// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uconfig.c - reads a user program's YAML config (uconfig.h) with libyaml's
 * document API. Every check that needs no BPF object happens here, and each
 * failure names the file, line and column it is about. The top level,
 * metrics and buckets are read here; labels and their decoders in
 * uconfig_labels.c, perf_events in uconfig_perf.c.
 */
#include "uprog/uconfig.h"
#include "uprog/uconfig_internal.h"
#include "uprog/uconfig_labels.h"
#include "uprog/uconfig_perf.h"
#include "util/yamldoc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Bounds, so that no input makes anything grow without limit. */
#define MAX_INPUT (1 << 20) /* bytes of YAML */
#define MAX_METRICS 256	    /* counters and histograms together */
#define MAX_NAME 128	    /* config, metric and label names */
#define MAX_PATH 4096	    /* object, resolved */
#define MAX_BPF_NAME 127    /* libbpf finds maps by their full ELF name */
/* Work (nodes read, bytes copied, regexp states) for one parse: yamldoc.h. */
#define MAX_WORK (16u << 20)

/* ---- names ---- */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool uconfig_name_ok(const char *s, const char *first, const char *rest)
{
	if (!is_alpha(*s) && !(*s && strchr(first, *s)))
		return false;
	for (s++; *s; s++)
		if (!is_alpha(*s) && !is_digit(*s) && !strchr(rest, *s))
			return false;
	return true;
}

static bool config_name_ok(const char *s)
{
	return uconfig_name_ok(s, "_", "_-");
}

static bool metric_name_ok(const char *s)
{
	return uconfig_name_ok(s, "_:", "_:");
}

int uconfig_get_name(struct yamldoc *x, yaml_node_t *v, bool (*ok)(const char *), const char *what,
		     const char *rule, char **out)
{
	if (yamldoc_get_str(x, v, MAX_NAME, out))
		return -EINVAL;
	return ok(*out) ? 0 : yamldoc_fail(x, v, "%s '%s' must match %s", what, *out, rule);
}

/* The kernel takes letters, digits, '_' and '.' in object names. */
static bool bpf_name_ok(const char *s)
{
	size_t len = strlen(s);

	return len && len <= MAX_BPF_NAME &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz"
			 "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789_.") == len;
}

int uconfig_get_bpf_name(struct yamldoc *x, yaml_node_t *n, char **out)
{
	if (yamldoc_get_str(x, n, MAX_NAME, out))
		return -EINVAL;
	if (!bpf_name_ok(*out))
		return yamldoc_fail(
		    x, n, "map name '%s' is not a BPF map name (1 to %d letters, digits, _ or .)",
		    *out, MAX_BPF_NAME);
	return 0;
}

/* ---- metrics ---- */

struct metric_state {
	struct umetric_conf *m;
	yaml_node_t *labels, *type, *min, *max, *keys;
};

static int get_bucket_type(struct yamldoc *x, yaml_node_t *v, enum ubucket_type *t)
{
	const char *s = yamldoc_scalar(v);

	if (s && !strcmp(s, "exp2"))
		*t = UBUCKET_EXP2;
	else if (s && !strcmp(s, "linear"))
		*t = UBUCKET_LINEAR;
	else if (s && !strcmp(s, "fixed"))
		*t = UBUCKET_FIXED;
	else if (s && !strcmp(s, "iolat_latency"))
		*t = UBUCKET_IOLAT_LATENCY;
	else if (s && !strcmp(s, "iolat_size"))
		*t = UBUCKET_IOLAT_SIZE;
	else if (s && !strcmp(s, "iolat_workload_latency"))
		*t = UBUCKET_IOLAT_WORKLOAD_LATENCY;
	else
		return yamldoc_fail(x, v, "bucket_type is exp2, linear or fixed");
	return 0;
}

static int get_bucket_keys(struct yamldoc *x, yaml_node_t *n, struct umetric_conf *m)
{
	size_t i, len;

	if (yamldoc_list_len(x, n, "bucket_keys", 1, UCONF_MAX_BUCKETS, &len) ||
	    yamldoc_charge(x, n, len * sizeof(double)))
		return -EINVAL;
	m->bucket_keys = calloc(len, sizeof(double));
	if (!m->bucket_keys)
		return yamldoc_fail(x, n, "out of memory");
	m->nkeys = len;
	for (i = 0; i < len; i++) {
		yaml_node_t *v = yamldoc_item(x, n, i);

		if (yamldoc_get_num(x, v, &m->bucket_keys[i]))
			return -EINVAL;
		if (i && m->bucket_keys[i] <= m->bucket_keys[i - 1])
			return yamldoc_fail(x, v, "bucket_keys must ascend strictly (%g after %g)",
					    m->bucket_keys[i], m->bucket_keys[i - 1]);
	}
	return 0;
}

static int histogram_key(struct yamldoc *x, const char *k, yaml_node_t *v, struct metric_state *st)
{
	struct umetric_conf *m = st->m;

	if (!strcmp(k, "bucket_type"))
		return st->type = v, get_bucket_type(x, v, &m->bucket_type);
	if (!strcmp(k, "bucket_multiplier")) {
		if (yamldoc_get_num(x, v, &m->bucket_multiplier))
			return -EINVAL;
		return m->bucket_multiplier > 0
			   ? 0
			   : yamldoc_fail(x, v, "bucket_multiplier must be above 0");
	}
	if (!strcmp(k, "bucket_min"))
		return st->min = v, yamldoc_get_int(x, v, INT64_MIN, INT64_MAX, &m->bucket_min);
	if (!strcmp(k, "bucket_max"))
		return st->max = v, yamldoc_get_int(x, v, INT64_MIN, INT64_MAX, &m->bucket_max);
	if (!strcmp(k, "bucket_keys"))
		return st->keys = v, get_bucket_keys(x, v, m);
	return 1;
}

static int metric_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	struct metric_state *st = arg;
	struct umetric_conf *m = st->m;

	if (!strcmp(k, "name"))
		return uconfig_get_name(x, v, metric_name_ok, "metric name",
					"[a-zA-Z_:][a-zA-Z0-9_:]*", &m->name);
	if (!strcmp(k, "help"))
		return yamldoc_get_text(x, v, "help", MAX_TEXT, &m->help);
	if (!strcmp(k, "map"))
		return uconfig_get_bpf_name(x, v, &m->map);
	if (!strcmp(k, "labels"))
		return st->labels = v, uconfig_parse_labels(x, v, m);
	return m->histogram ? histogram_key(x, k, v, st) : 1;
}

/* Buckets of exp2 and linear: a range of indexes. */
static int check_range(struct yamldoc *x, yaml_node_t *n, const struct metric_state *st)
{
	const struct umetric_conf *m = st->m;

	if (st->keys)
		return yamldoc_fail(x, st->keys, "bucket_keys is for fixed buckets only");
	if (!st->max)
		return yamldoc_fail(x, n, "missing required field 'bucket_max' in histogram '%s'",
				    m->name);
	if (st->min && m->bucket_min < 0)
		return yamldoc_fail(x, st->min,
				    "bucket_min must be 0 or more (bucket indexes are unsigned)");
	if (m->bucket_min > m->bucket_max)
		return yamldoc_fail(x, st->min ? st->min : st->max,
				    "bucket_min (%lld) is above bucket_max (%lld)",
				    (long long)m->bucket_min, (long long)m->bucket_max);
	if (m->bucket_type == UBUCKET_EXP2 && m->bucket_max > 63)
		return yamldoc_fail(
		    x, st->max, "exp2 bucket_max must be 63 or less (2^63 is the largest bound)");
	if ((uint64_t)m->bucket_max - (uint64_t)m->bucket_min >= UCONF_MAX_BUCKETS)
		return yamldoc_fail(
		    x, st->max, "%llu buckets; at most %d",
		    (unsigned long long)((uint64_t)m->bucket_max - (uint64_t)m->bucket_min) + 1,
		    UCONF_MAX_BUCKETS);
	return 0;
}

/* The last label is the bucket index, an unsigned integer that holds the last bucket. */
static int check_bucket_field(struct yamldoc *x, const struct umetric_conf *m)
{
	const struct ulabel_conf *b = &m->field[m->nfields - 1];
	uint64_t last = m->bucket_type == UBUCKET_FIXED ? m->nkeys - 1 : (uint64_t)m->bucket_max;
	size_t i;

	if (b->size != 1 && b->size != 2 && b->size != 4 && b->size != 8)
		return yamldoc_fail_at(
		    x, (size_t)b->line, (size_t)b->col,
		    "the bucket field (the last label) must be 1, 2, 4 or 8 bytes, not %u",
		    b->size);
	if (b->size < 8 && last >> (8 * b->size))
		return yamldoc_fail_at(x, (size_t)b->line, (size_t)b->col,
				       "a %u byte bucket field cannot hold bucket %llu", b->size,
				       (unsigned long long)last);
	for (i = 0; i + 1 < m->nfields; i++)
		if (!strcmp(m->field[i].name, "le"))
			return yamldoc_fail_at(
			    x, (size_t)m->field[i].line, (size_t)m->field[i].col,
			    "label 'le' is the histogram's bucket bound; pick another name");
	return 0;
}

static int check_histogram(struct yamldoc *x, yaml_node_t *n, const struct metric_state *st)
{
	const struct umetric_conf *m = st->m;

	if (!st->type)
		return yamldoc_fail(x, n, "missing required field 'bucket_type' in histogram '%s'",
				    m->name);
	if (ubucket_is_iolat(m->bucket_type)) {
		/* iolat's table fixes the buckets; every field is a label. */
		if (st->min || st->max || st->keys)
			return yamldoc_fail(x,
					    st->min   ? st->min
					    : st->max ? st->max
						      : st->keys,
					    "iolat's histograms have their own buckets");
		return 0;
	}
	if (m->bucket_type != UBUCKET_FIXED) {
		if (check_range(x, n, st))
			return -EINVAL;
	} else if (st->min || st->max) {
		return yamldoc_fail(
		    x, st->min ? st->min : st->max,
		    "bucket_min and bucket_max are not for fixed buckets (bucket_keys are)");
	} else if (!st->keys) {
		return yamldoc_fail(x, n, "fixed buckets need bucket_keys in histogram '%s'",
				    m->name);
	}
	return check_bucket_field(x, m);
}

static int parse_metric(struct yamldoc *x, yaml_node_t *n, struct umetric_conf *m, bool histogram)
{
	static const char counter_fields[] = "name, help, map, labels";
	static const char histogram_fields[] =
	    "name, help, map, labels, bucket_type, "
	    "bucket_multiplier, bucket_min, bucket_max, bucket_keys";
	struct metric_state st = { .m = m };
	const char *kind = histogram ? "histogram" : "counter";

	m->line = (int)n->start_mark.line + 1;
	m->col = (int)n->start_mark.column + 1;
	m->histogram = histogram;
	m->bucket_multiplier = 1;
	if (yamldoc_each_key(x, n, histogram ? "a histogram" : "a counter",
			     histogram ? histogram_fields : counter_fields, metric_key, &st))
		return -EINVAL;
	if (!m->name)
		return yamldoc_fail(x, n, "missing required field 'name' in a %s", kind);
	if (!m->help)
		return yamldoc_fail(x, n, "missing required field 'help' in %s '%s'", kind,
				    m->name);
	if (!m->map)
		return yamldoc_fail(x, n, "missing required field 'map' in %s '%s'", kind, m->name);
	if (!st.labels)
		return yamldoc_fail(x, n, "missing required field 'labels' in %s '%s'", kind,
				    m->name);
	return histogram ? check_histogram(x, n, &st) : 0;
}

/* Two series families with one name would clash in every scrape. */
static int check_metric_names(struct yamldoc *x, const struct uconfig *c)
{
	for (size_t i = 1; i < c->nmetrics; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(c->metric[i].name, c->metric[j].name))
				return yamldoc_fail_at(x, (size_t)c->metric[i].line,
						       (size_t)c->metric[i].col,
						       "duplicate metric '%s' (also at line %d)",
						       c->metric[i].name, c->metric[j].line);
	return 0;
}

/* Appends the list n of counters or histograms to c->metric. */
static int add_metrics(struct yamldoc *x, yaml_node_t *n, struct uconfig *c, bool histogram)
{
	struct umetric_conf *grown;
	size_t i, len;

	if (yamldoc_list_len(x, n, histogram ? "histograms" : "counters", 0, MAX_METRICS, &len))
		return -EINVAL;
	if (c->nmetrics + len > MAX_METRICS)
		return yamldoc_fail(x, n, "too many metrics (at most %d)", MAX_METRICS);
	if (yamldoc_charge(x, n, len * sizeof(*grown)))
		return -EINVAL;
	grown = realloc(c->metric, (c->nmetrics + len + 1) * sizeof(*grown));
	if (!grown)
		return yamldoc_fail(x, n, "out of memory");
	c->metric = grown;
	memset(&grown[c->nmetrics], 0, len * sizeof(*grown));
	c->nmetrics += len;
	for (i = 0; i < len; i++)
		if (parse_metric(x, yamldoc_item(x, n, i), &grown[c->nmetrics - len + i],
				 histogram))
			return -EINVAL;
	return 0;
}

static int metrics_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	if (!strcmp(k, "counters"))
		return add_metrics(x, v, arg, false);
	if (!strcmp(k, "histograms"))
		return add_metrics(x, v, arg, true);
	return 1;
}

/* ---- the top level ---- */

/* The directory part of file, with its '/', or "" for none (or a "<name>"). */
static size_t dir_len(const char *file)
{
	const char *slash = strrchr(file, '/');

	if (file[0] == '<' || !slash)
		return 0;
	return (size_t)(slash - file) + 1;
}

/* object, relative to the config's directory unless absolute. */
static int resolve_object(struct yamldoc *x, yaml_node_t *n, const char *object, char **out)
{
	size_t dir = object[0] == '/' ? 0 : dir_len(x->file);
	size_t len = dir + strlen(object);

	if (len > MAX_PATH)
		return yamldoc_fail(x, n, "object path too long (at most %d characters)", MAX_PATH);
	*out = malloc(len + 1);
	if (!*out)
		return yamldoc_fail(x, n, "out of memory");
	snprintf(*out, len + 1, "%.*s%s", (int)dir, x->file, object);
	return 0;
}

/* The file's base name without .yaml or .yml, when the config gives none. */
static int default_name(struct yamldoc *x, yaml_node_t *root, struct uconfig *c)
{
	const char *base = x->file + dir_len(x->file);
	size_t len = strlen(base);

	if (len > 5 && !strcmp(base + len - 5, ".yaml"))
		len -= 5;
	else if (len > 4 && !strcmp(base + len - 4, ".yml"))
		len -= 4;
	if (len > MAX_NAME)
		return yamldoc_fail(x, root,
				    "the file name is too long to name the config; set name");
	c->name = strndup(base, len);
	if (!c->name)
		return yamldoc_fail(x, root, "out of memory");
	if (!config_name_ok(c->name))
		return yamldoc_fail(
		    x, root,
		    "the file name gives the config name '%s', which does not match "
		    "[a-zA-Z_][a-zA-Z0-9_-]*; set name",
		    c->name);
	return 0;
}

/* metrics_prefix: "" (names as written) or the start of a metric name. */
static int get_metrics_prefix(struct yamldoc *x, yaml_node_t *v, char **out)
{
	if (yamldoc_get_str(x, v, MAX_NAME, out))
		return -EINVAL;
	if (**out && !metric_name_ok(*out))
		return yamldoc_fail(x, v,
				    "metrics_prefix '%s' must match [a-zA-Z_:][a-zA-Z0-9_:]* "
				    "(or be \"\" for none)",
				    *out);
	return 0;
}

struct top_state {
	struct uconfig *c;
	yaml_node_t *metrics;
};

static int top_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	struct top_state *st = arg;
	struct uconfig *c = st->c;
	char *object = NULL;
	int rc;

	if (!strcmp(k, "name"))
		return uconfig_get_name(x, v, config_name_ok, "name", "[a-zA-Z_][a-zA-Z0-9_-]*",
					&c->name);
	if (!strcmp(k, "metrics_prefix"))
		return get_metrics_prefix(x, v, &c->metrics_prefix);
	if (!strcmp(k, "object")) {
		if (yamldoc_get_text(x, v, "object", MAX_PATH, &object))
			return -EINVAL;
		rc = resolve_object(x, v, object, &c->object);
		free(object);
		return rc;
	}
	if (!strcmp(k, "metrics"))
		return st->metrics = v,
		       yamldoc_each_key(x, v, "metrics", "counters, histograms", metrics_key, c);
	if (!strcmp(k, "perf_events"))
		return uconfig_parse_perf_events(x, v, c);
	return 1;
}

static int parse_root(struct yamldoc *x, yaml_node_t *root, struct uconfig *c)
{
	struct top_state st = { .c = c };

	if (yamldoc_each_key(x, root, "the config",
			     "name, object, metrics_prefix, metrics, perf_events", top_key, &st))
		return -EINVAL;
	if (!c->object)
		return yamldoc_fail(x, root,
				    "missing required field 'object' (the compiled BPF program)");
	if (!c->nmetrics)
		return yamldoc_fail(
		    x, st.metrics ? st.metrics : root,
		    "no metrics: give at least one under metrics.counters or metrics.histograms");
	if (check_metric_names(x, c))
		return -EINVAL;
	return c->name ? 0 : default_name(x, root, c);
}

/* ---- loading ---- */

int uconfig_parse_buffer(const char *file, const char *buf, size_t len, struct uconfig *out,
			 char *err, size_t errlen)
{
	struct yamldoc x = { .file = file, .err = err, .errlen = errlen, .work_limit = MAX_WORK };
	struct uconfig c = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	if (len > MAX_INPUT)
		return yamldoc_fail_at(&x, 1, 1, "config larger than %d bytes", MAX_INPUT);
	rc = yamldoc_load(&x, buf, len, "empty config (expected object and metrics)");
	if (rc)
		return rc;
	c.file = strdup(file);
	if (c.file) {
		rc = parse_root(&x, yaml_document_get_root_node(&x.doc), &c);
	} else {
		yamldoc_fail_at(&x, 1, 1, "out of memory");
		rc = -ENOMEM;
	}
	yaml_document_delete(&x.doc);
	if (rc) {
		uconfig_free(&c);
		return rc;
	}
	*out = c;
	return 0;
}

/* Reads at most MAX_INPUT + 1 bytes of f, so an oversized file is seen as one. */
static char *slurp(FILE *f, size_t *len)
{
	char *buf = malloc(MAX_INPUT + 1);

	if (!buf)
		return NULL;
	*len = fread(buf, 1, MAX_INPUT + 1, f);
	if (ferror(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int uconfig_parse_file(const char *file, struct uconfig *out, char *err, size_t errlen)
{
	FILE *f = fopen(file, "re");
	size_t len = 0;
	char *buf;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", file, strerror(-rc));
		return rc;
	}
	errno = 0;
	buf = slurp(f, &len);
	if (!buf) {
		rc = errno ? -errno : -ENOMEM;
		snprintf(err, errlen, "%s: %s", file, strerror(-rc));
		fclose(f);
		return rc;
	}
	fclose(f);
	rc = uconfig_parse_buffer(file, buf, len, out, err, errlen);
	free(buf);
	return rc;
}

static void free_metric(struct umetric_conf *m)
{
	for (size_t i = 0; i < m->nfields; i++)
		uconfig_free_label(&m->field[i]);
	free(m->name);
	free(m->help);
	free(m->map);
	free(m->bucket_keys);
}

void uconfig_free(struct uconfig *c)
{
	for (size_t i = 0; i < c->nmetrics; i++)
		free_metric(&c->metric[i]);
	free(c->metric);
	for (size_t i = 0; i < c->nperf; i++)
		free(c->perf[i].program);
	free(c->perf);
	free(c->file);
	free(c->name);
	free(c->object);
	free(c->metrics_prefix);
	memset(c, 0, sizeof(*c));
}

void uconfig_drop_metric(struct uconfig *c, const char *name)
{
	for (size_t i = 0; i < c->nmetrics; i++) {
		if (strcmp(c->metric[i].name, name))
			continue;
		free_metric(&c->metric[i]);
		memmove(&c->metric[i], &c->metric[i + 1],
			(c->nmetrics - i - 1) * sizeof(c->metric[0]));
		c->nmetrics--;
		return;
	}
}

/* Where field k of m is: -1 if m has no such field. */
static int field_index(const struct umetric_conf *m, const char *label)
{
	for (size_t k = 0; k < m->nfields; k++)
		if (!strcmp(m->field[k].name, label))
			return (int)k;
	return -1;
}

int uconfig_fold_label(struct uconfig *c, const char *label)
{
	/* All or nothing: a metric must keep one field (a key of no field
	 * would be no key at all). */
	for (size_t i = 0; i < c->nmetrics; i++)
		if (c->metric[i].nfields == 1 && field_index(&c->metric[i], label) == 0)
			return -1;
	for (size_t i = 0; i < c->nmetrics; i++) {
		struct umetric_conf *m = &c->metric[i];
		int k = field_index(m, label);

		if (k < 0)
			continue;
		*(k ? &m->field[k - 1].padding : &m->skip) +=
		    m->field[k].size + m->field[k].padding;
		uconfig_free_label(&m->field[k]);
		memmove(&m->field[k], &m->field[k + 1], (m->nfields - k - 1) * sizeof(m->field[0]));
		m->nfields--;
	}
	return 0;
}
