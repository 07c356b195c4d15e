// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * yamldoc.c - reading a libyaml document for a config parser (yamldoc.h):
 * typed getters and key checks whose failures name file, line and column.
 */
#include "util/yamldoc.h"
#include "util/parse.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors and the work budget ---- */

static int vfail_at(struct yamldoc *d, size_t line, size_t col, const char *fmt, va_list ap)
{
	char msg[512];

	if (!d->errlen)
		return -EINVAL;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(d->err, d->errlen, "%s:%zu:%zu: %s", d->file, line, col, msg);
	return -EINVAL;
}

/* line and col are 1-based, as in every message. */
int yamldoc_fail_at(struct yamldoc *d, size_t line, size_t col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail_at(d, line, col, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Fails at where node n starts. */
int yamldoc_fail(struct yamldoc *d, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail_at(d, n->start_mark.line + 1, n->start_mark.column + 1, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int yamldoc_fail_file(struct yamldoc *d, int rc, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!d->errlen)
		return rc;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(d->err, d->errlen, "%s: %s", d->file, msg);
	return rc;
}

/* Out of memory is -ENOMEM, so a caller can tell it from a wrong file. */
static int out_of_memory(struct yamldoc *d, const yaml_node_t *n)
{
	if (n)
		yamldoc_fail(d, n, "out of memory");
	else
		yamldoc_fail_at(d, 1, 1, "out of memory");
	return -ENOMEM;
}

int yamldoc_default_words(struct yamldoc *d, const yaml_node_t *at, enum yamldoc_problem problem,
			  const char *key, const char *what, const char *known)
{
	switch (problem) {
	case YAMLDOC_NOT_MAPPING:
		return yamldoc_fail(d, at, "expected a mapping for %s (fields: %s)", what, known);
	case YAMLDOC_KEY_NOT_STRING:
		return yamldoc_fail(d, at, "expected a field name in %s", what);
	case YAMLDOC_UNKNOWN_KEY:
		return yamldoc_fail(d, at, "unknown field '%s' in %s (known: %s)", key, what,
				    known);
	case YAMLDOC_REPEATED_KEY:
		return yamldoc_fail(d, at, "duplicate field '%s' in %s", key, what);
	case YAMLDOC_SECOND_DOCUMENT:
		break;
	}
	return yamldoc_fail(d, at, "a config is one YAML document; this is a second");
}

static int words(struct yamldoc *d, const yaml_node_t *at, enum yamldoc_problem problem,
		 const char *key, const char *what, const char *known)
{
	yamldoc_words_fn fn = d->words ? d->words : yamldoc_default_words;

	return fn(d, at, problem, key, what, known);
}

int yamldoc_charge(struct yamldoc *d, const yaml_node_t *n, size_t units)
{
	if (!d->work_limit)
		return 0;
	if (units > d->work_limit - d->work)
		return yamldoc_fail(d, n,
				    "config too large (aliases expand it past its work limit)");
	d->work += units;
	return 0;
}

/* ---- loading ---- */

/* Line and column (1-based) of byte off in buf, for libyaml's reader errors. */
static void locate(const char *buf, size_t len, size_t off, size_t *line, size_t *col)
{
	size_t start = 0;

	*line = 1;
	for (size_t i = 0; i < off && i < len; i++)
		if (buf[i] == '\n')
			(*line)++, start = i + 1;
	*col = off - start + 1;
}

static int syntax_error(struct yamldoc *d, const yaml_parser_t *p, const char *buf, size_t len)
{
	size_t line = p->problem_mark.line + 1, col = p->problem_mark.column + 1;
	const char *problem = p->problem ? p->problem : "out of memory";

	if (p->error == YAML_MEMORY_ERROR)
		return out_of_memory(d, NULL);
	if (p->error == YAML_READER_ERROR)
		locate(buf, len, p->problem_offset, &line, &col);
	if (p->context)
		return yamldoc_fail_at(d, line, col, "YAML syntax error: %s (%s at line %zu)",
				       problem, p->context, p->context_mark.line + 1);
	return yamldoc_fail_at(d, line, col, "YAML syntax error: %s", problem);
}

/* A config is one YAML document: a second one is an error, not ignored. */
static int check_single_doc(struct yamldoc *d, yaml_parser_t *p, const char *buf, size_t len)
{
	yaml_document_t more;
	yaml_node_t *root;
	int rc = 0;

	if (!yaml_parser_load(p, &more))
		return syntax_error(d, p, buf, len);
	root = yaml_document_get_root_node(&more);
	if (root)
		rc = words(d, root, YAMLDOC_SECOND_DOCUMENT, NULL, NULL, NULL);
	yaml_document_delete(&more);
	return rc;
}

int yamldoc_load(struct yamldoc *d, const char *buf, size_t len, const char *empty_msg)
{
	yaml_parser_t p;
	int rc = 0;

	if (!yaml_parser_initialize(&p))
		return out_of_memory(d, NULL);
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&p, &d->doc)) {
		rc = syntax_error(d, &p, buf, len);
		yaml_parser_delete(&p);
		return rc;
	}
	if (!yaml_document_get_root_node(&d->doc) && empty_msg)
		rc = yamldoc_fail_at(d, 1, 1, "%s", empty_msg);
	else
		rc = check_single_doc(d, &p, buf, len);
	if (rc)
		yaml_document_delete(&d->doc);
	yaml_parser_delete(&p);
	return rc;
}

int yamldoc_check_nul(struct yamldoc *d)
{
	const yaml_node_t *n;

	for (n = d->doc.nodes.start; n < d->doc.nodes.top; n++)
		if (n->type == YAML_SCALAR_NODE &&
		    strlen((const char *)n->data.scalar.value) != n->data.scalar.length)
			return yamldoc_fail(d, n, "string holds a NUL character");
	return 0;
}

/* ---- scalars ---- */

yaml_node_t *yamldoc_node(struct yamldoc *d, int id)
{
	return yaml_document_get_node(&d->doc, id);
}

const char *yamldoc_scalar(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

int yamldoc_bool(const yaml_node_t *n, bool *out)
{
	const char *s = yamldoc_scalar(n);

	if (s && !strcmp(s, "true"))
		*out = true;
	else if (s && !strcmp(s, "false"))
		*out = false;
	else
		return -1;
	return 0;
}

/* Scalar n as a string of at most max characters, charged for a copy. */
static int check_str(struct yamldoc *d, const yaml_node_t *n, size_t max)
{
	const char *s = yamldoc_scalar(n);
	size_t len;

	if (!s)
		return yamldoc_fail(d, n, "expected a string");
	len = n->data.scalar.length;
	if (len > max)
		return yamldoc_fail(d, n, "string too long (at most %zu characters)", max);
	if (strlen(s) != len)
		return yamldoc_fail(d, n, "string holds a NUL character");
	return yamldoc_charge(d, n, len + 1);
}

int yamldoc_get_str(struct yamldoc *d, yaml_node_t *n, size_t max, char **out)
{
	int rc = check_str(d, n, max);

	if (rc)
		return rc;
	*out = strdup(yamldoc_scalar(n));
	return *out ? 0 : out_of_memory(d, n);
}

int yamldoc_get_strbuf(struct yamldoc *d, const yaml_node_t *n, char *out, size_t len)
{
	int rc = check_str(d, n, len - 1);

	if (rc)
		return rc;
	memcpy(out, yamldoc_scalar(n), n->data.scalar.length + 1);
	return 0;
}

int yamldoc_get_text(struct yamldoc *d, yaml_node_t *n, const char *what, size_t max, char **out)
{
	if (n->type == YAML_SCALAR_NODE && !n->data.scalar.length)
		return yamldoc_fail(d, n, "%s must not be empty", what);
	return yamldoc_get_str(d, n, max, out);
}

/* strtoll and strtod skip leading white space; a config value may not. */
static bool number_start(const char *s)
{
	return (*s >= '0' && *s <= '9') || *s == '-' || *s == '+' || *s == '.';
}

int yamldoc_get_int(struct yamldoc *d, const yaml_node_t *n, int64_t lo, int64_t hi, int64_t *out)
{
	const char *s = yamldoc_scalar(n);
	char *end;
	long long v;

	errno = 0;
	v = s && number_start(s) ? strtoll(s, &end, 10) : 0;
	if (!s || !number_start(s) || *end || errno || v < lo || v > hi)
		return yamldoc_fail(d, n, "expected a whole number from %lld to %lld",
				    (long long)lo, (long long)hi);
	*out = v;
	return 0;
}

int yamldoc_get_unsigned(struct yamldoc *d, const yaml_node_t *n, unsigned lo, unsigned hi,
			 unsigned *out)
{
	int64_t v;
	int rc = yamldoc_get_int(d, n, lo, hi, &v);

	if (rc)
		return rc;
	*out = (unsigned)v;
	return 0;
}

int yamldoc_number(const yaml_node_t *n, double *out)
{
	const char *s = yamldoc_scalar(n);
	char *end;
	double v = s && number_start(s) ? strtod(s, &end) : NAN;

	if (!isfinite(v) || *end)
		return -1;
	*out = v;
	return 0;
}

int yamldoc_get_num(struct yamldoc *d, const yaml_node_t *n, double *out)
{
	return yamldoc_number(n, out) ? yamldoc_fail(d, n, "expected a number") : 0;
}

int yamldoc_get_bool(struct yamldoc *d, const yaml_node_t *n, bool *out)
{
	return yamldoc_bool(n, out) ? yamldoc_fail(d, n, "expected true or false") : 0;
}

int yamldoc_get_duration(struct yamldoc *d, const yaml_node_t *n, unsigned int min_s,
			 unsigned int *out)
{
	const char *s = yamldoc_scalar(n);
	unsigned int v;

	if (s && !parse_duration(s, &v) && v >= min_s) {
		*out = v;
		return 0;
	}
	if (!min_s)
		return yamldoc_fail(d, n, "expected a duration such as 300, 90s, 5m or 1h");
	return yamldoc_fail(d, n, "expected a duration of at least %us, such as 300, 90s, 5m or 1h",
			    min_s);
}

/* ---- mappings and lists ---- */

/* Whether a pair before p in map has the key name. */
static bool key_seen(struct yamldoc *d, const yaml_node_t *map, const yaml_node_pair_t *p,
		     const char *name)
{
	const yaml_node_pair_t *q;

	for (q = map->data.mapping.pairs.start; q < p; q++) {
		const char *s = yamldoc_scalar(yamldoc_node(d, q->key));

		if (s && !strcmp(s, name))
			return true;
	}
	return false;
}

int yamldoc_each_key(struct yamldoc *d, yaml_node_t *map, const char *what, const char *known,
		     yamldoc_key_fn fn, void *arg)
{
	yaml_node_pair_t *p;

	if (map->type != YAML_MAPPING_NODE)
		return words(d, map, YAMLDOC_NOT_MAPPING, NULL, what, known);
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yamldoc_node(d, p->key);
		const char *name = yamldoc_scalar(k);
		int rc = yamldoc_charge(d, k, 1);

		if (rc)
			return rc;
		if (!name)
			return words(d, k, YAMLDOC_KEY_NOT_STRING, NULL, what, known);
		if (!d->repeat_wins && key_seen(d, map, p, name))
			return words(d, k, YAMLDOC_REPEATED_KEY, name, what, known);
		d->key = k;
		rc = fn(d, name, yamldoc_node(d, p->value), arg);
		if (rc == 1)
			return words(d, k, YAMLDOC_UNKNOWN_KEY, name, what, known);
		if (rc)
			return rc;
	}
	return 0;
}

int yamldoc_list_len(struct yamldoc *d, yaml_node_t *n, const char *what, size_t min, size_t max,
		     size_t *len)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return yamldoc_fail(d, n, "expected a list of %s", what);
	*len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (*len < min)
		return yamldoc_fail(d, n, "expected at least %zu %s", min, what);
	if (*len > max)
		return yamldoc_fail(d, n, "too many %s (at most %zu)", what, max);
	return yamldoc_charge(d, n, *len);
}

yaml_node_t *yamldoc_item(struct yamldoc *d, yaml_node_t *list, size_t i)
{
	return yamldoc_node(d, list->data.sequence.items.start[i]);
}
