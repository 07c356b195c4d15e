// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uconfig_labels.c - the labels of a user-program metric (uconfig_labels.h):
 * each key field's name, size and padding, and the decoders that turn its
 * bytes into a label value, with every decoder's own options checked here.
 */
#include "uprog/uconfig_labels.h"
#include "uprog/uconfig_internal.h"
#include "util/regex_guard.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DECODERS 8	     /* per label */
#define MAX_MAP_ENTRIES 4096 /* per static_map */
#define MAX_FIELD_BYTES 256  /* size and padding of one key field */

#define DEC_NAME(kind, name) [UDEC_##kind] = name,
static const char *const dec_names[] = { UDEC_KINDS(DEC_NAME) };
#undef DEC_NAME
_Static_assert(sizeof(dec_names) / sizeof(dec_names[0]) == UDEC_COUNT, "a decoder without a name");
#define NDEC (sizeof(dec_names) / sizeof(dec_names[0]))

const char *udec_name(enum udec_kind k)
{
	return (unsigned)k < NDEC ? dec_names[k] : "unknown";
}

int udec_kind_of(const char *name)
{
	for (size_t i = 0; i < NDEC; i++)
		if (!strcmp(name, dec_names[i]))
			return (int)i;
	return -1;
}

/* ---- names ---- */

/* Prometheus keeps label names that start with __ for itself. */
static bool label_name_ok(const char *s)
{
	return uconfig_name_ok(s, "_", "_") && strncmp(s, "__", 2);
}

/* ---- regular expressions ---- */

/* The highest \N group that replace refers to; -1 for none. */
static int re_max_group(const char *replace)
{
	int max = -1;

	for (const char *p = replace; *p; p++) {
		if (*p != '\\' || !p[1])
			continue;
		p++;
		if (*p >= '0' && *p <= '9' && *p - '0' > max)
			max = *p - '0';
	}
	return max;
}

/* regexp compiles as a POSIX ERE, and replace uses only groups it has. */
static int check_regexp(struct yamldoc *x, yaml_node_t *re_node, yaml_node_t *rep_node,
			const struct udec_conf *d)
{
	uint64_t atoms = regex_guard_nodes(d->regexp);
	char why[256];
	regex_t re;
	int rc, group;

	if (atoms > REGEX_GUARD_MAX_NODES)
		return yamldoc_fail(x, re_node,
				    "regexp too complex for regcomp (over %d nodes expanded, or a "
				    "repeated group that can match empty, as in (a?)*)",
				    REGEX_GUARD_MAX_NODES);
	/* Compiling takes up to cubic time in the nodes: charge their square. */
	if (yamldoc_charge(x, re_node, (size_t)(atoms * atoms * 2)))
		return -EINVAL;
	rc = regcomp(&re, d->regexp, REG_EXTENDED);
	if (rc) {
		regerror(rc, &re, why, sizeof(why));
		return yamldoc_fail(x, re_node, "regexp does not compile: %s", why);
	}
	group = d->replace ? re_max_group(d->replace) : -1;
	rc = group > (int)re.re_nsub ? -1 : 0;
	if (rc)
		yamldoc_fail(x, rep_node, "replace uses \\%d but the regexp has %zu groups", group,
			     re.re_nsub);
	regfree(&re);
	return rc;
}

/* ---- decoders ---- */

struct dec_state {
	struct udec_conf *d;
	yaml_node_t *map, *re, *replace;
};

/* A static_map "from" value with the node it came from, to sort. */
struct map_key {
	const char *s;
	const yaml_node_t *n;
};

static int map_key_cmp(const void *a, const void *b)
{
	const struct map_key *ka = a, *kb = b;
	int c = strcmp(ka->s, kb->s);

	if (c)
		return c;
	return ka->n->start_mark.index < kb->n->start_mark.index ? -1 : 1;
}

/* A value listed twice in a static_map is an error (which would win?). */
static int check_map_dups(struct yamldoc *x, const yaml_node_t *map, const struct udec_conf *d)
{
	struct map_key *k = calloc(d->nmap, sizeof(*k));
	int rc = 0;
	size_t i;

	if (!k)
		return yamldoc_fail(x, map, "out of memory");
	for (i = 0; i < d->nmap; i++) {
		k[i].s = d->from[i];
		k[i].n = yamldoc_node(x, map->data.mapping.pairs.start[i].key);
	}
	qsort(k, d->nmap, sizeof(*k), map_key_cmp);
	for (i = 1; i < d->nmap && !rc; i++)
		if (!strcmp(k[i].s, k[i - 1].s))
			rc = yamldoc_fail(x, k[i].n, "static_map lists '%s' twice", k[i].s);
	free(k);
	return rc;
}

static int get_static_map(struct yamldoc *x, yaml_node_t *n, struct udec_conf *d)
{
	size_t i, len;

	if (n->type != YAML_MAPPING_NODE)
		return yamldoc_fail(
		    x, n, "static_map: expected a mapping of values to names (e.g. 1: read)");
	len = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	if (!len)
		return yamldoc_fail(x, n, "static_map needs at least one entry");
	if (len > MAX_MAP_ENTRIES)
		return yamldoc_fail(x, n, "static_map has too many entries (at most %d)",
				    MAX_MAP_ENTRIES);
	if (yamldoc_charge(x, n, len * 2 * sizeof(char *)))
		return -EINVAL;
	d->from = calloc(len, sizeof(char *));
	d->to = calloc(len, sizeof(char *));
	if (!d->from || !d->to)
		return yamldoc_fail(x, n, "out of memory");
	d->nmap = len;
	for (i = 0; i < len; i++) {
		yaml_node_pair_t *p = &n->data.mapping.pairs.start[i];

		if (yamldoc_get_str(x, yamldoc_node(x, p->key), MAX_TEXT, &d->from[i]) ||
		    yamldoc_get_str(x, yamldoc_node(x, p->value), MAX_TEXT, &d->to[i]))
			return -EINVAL;
	}
	return check_map_dups(x, n, d);
}

static int dec_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	struct dec_state *st = arg;
	struct udec_conf *d = st->d;

	if (!strcmp(k, "name"))
		return 0; /* read by find_dec_kind */
	if (d->kind == UDEC_STATIC_MAP && !strcmp(k, "static_map"))
		return st->map = v, get_static_map(x, v, d);
	if (d->kind == UDEC_STATIC_MAP && !strcmp(k, "allow_unknown"))
		return yamldoc_get_bool(x, v, &d->allow_unknown);
	if (d->kind == UDEC_REGEXP && !strcmp(k, "regexp"))
		return st->re = v, yamldoc_get_text(x, v, "regexp", MAX_TEXT, &d->regexp);
	if (d->kind == UDEC_REGEXP && !strcmp(k, "replace"))
		return st->replace = v, yamldoc_get_str(x, v, MAX_TEXT, &d->replace);
	if (d->kind == UDEC_KSTACK && !strcmp(k, "stack_map"))
		return uconfig_get_bpf_name(x, v, &d->stack_map);
	return 1;
}

/* Writes "uint, hex, ..." into buf. */
static const char *dec_list(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NDEC && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", dec_names[i]);
	return buf;
}

/* The decoder's kind, from its name field, which must come first to know the rest. */
static int find_dec_kind(struct yamldoc *x, yaml_node_t *n, enum udec_kind *kind)
{
	size_t npairs = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	char known[160];

	if (yamldoc_charge(x, n, npairs))
		return -1;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	     p++) {
		const char *k = yamldoc_scalar(yamldoc_node(x, p->key));
		yaml_node_t *v = yamldoc_node(x, p->value);
		const char *s = yamldoc_scalar(v);
		int kd;

		if (!k || strcmp(k, "name"))
			continue;
		kd = s ? udec_kind_of(s) : -1;
		if (kd < 0)
			return yamldoc_fail(x, v, "unknown decoder '%s' (known: %s)", s ? s : "",
					    dec_list(known, sizeof(known)));
		*kind = (enum udec_kind)kd;
		return 0;
	}
	return yamldoc_fail(x, n, "missing required field 'name' in a decoder");
}

static const char *dec_fields(enum udec_kind k)
{
	switch (k) {
	case UDEC_STATIC_MAP:
		return "name, static_map, allow_unknown";
	case UDEC_REGEXP:
		return "name, regexp, replace";
	case UDEC_KSTACK:
		return "name, stack_map";
	default:
		return "name";
	}
}

static int parse_decoder(struct yamldoc *x, yaml_node_t *n, struct udec_conf *d)
{
	struct dec_state st = { .d = d };
	char what[64];

	d->line = (int)n->start_mark.line + 1;
	d->col = (int)n->start_mark.column + 1;
	if (n->type != YAML_MAPPING_NODE)
		return yamldoc_fail(x, n, "expected a mapping for a decoder (e.g. name: uint)");
	if (find_dec_kind(x, n, &d->kind))
		return -EINVAL;
	snprintf(what, sizeof(what), "decoder %s", udec_name(d->kind));
	if (yamldoc_each_key(x, n, what, dec_fields(d->kind), dec_key, &st))
		return -EINVAL;
	if (d->kind == UDEC_STATIC_MAP && !st.map)
		return yamldoc_fail(x, n,
				    "missing required field 'static_map' in decoder static_map");
	if (d->kind == UDEC_REGEXP && !st.re)
		return yamldoc_fail(x, n, "missing required field 'regexp' in decoder regexp");
	if (d->kind == UDEC_KSTACK && !d->stack_map)
		return yamldoc_fail(x, n, "missing required field 'stack_map' in decoder kstack");
	return d->kind == UDEC_REGEXP ? check_regexp(x, st.re, st.replace, d) : 0;
}

static int parse_decoders(struct yamldoc *x, yaml_node_t *n, struct ulabel_conf *l)
{
	size_t i, len;

	if (yamldoc_list_len(x, n, "decoders", 1, MAX_DECODERS, &len))
		return -EINVAL;
	l->dec = calloc(len, sizeof(*l->dec));
	if (!l->dec)
		return yamldoc_fail(x, n, "out of memory");
	l->ndec = len;
	for (i = 0; i < len; i++)
		if (parse_decoder(x, yamldoc_item(x, n, i), &l->dec[i]))
			return -EINVAL;
	return 0;
}

/*
 * The first decoder reads the field's raw bytes: the number readers need
 * a size the kernel has an integer type of.
 */
static int check_first_decoder(struct yamldoc *x, const struct ulabel_conf *l)
{
	const struct udec_conf *d = &l->dec[0];
	bool any = d->kind == UDEC_STRING || d->kind == UDEC_STATIC_MAP || d->kind == UDEC_REGEXP;
	bool word = l->size == 4 || l->size == 8;
	bool integer = word || l->size == 1 || l->size == 2;

	if (any || (d->kind == UDEC_KSTACK ? word : integer))
		return 0;
	return yamldoc_fail_at(
	    x, (size_t)d->line, (size_t)d->col,
	    "decoder %s reads a %s byte number, but label '%s' has size %u", udec_name(d->kind),
	    d->kind == UDEC_KSTACK ? "4 or 8" : "1, 2, 4 or 8", l->name, l->size);
}

/* ---- labels ---- */

struct label_state {
	struct ulabel_conf *l;
	bool size, decoders;
};

static int label_key(struct yamldoc *x, const char *k, yaml_node_t *v, void *arg)
{
	struct label_state *st = arg;
	struct ulabel_conf *l = st->l;

	if (!strcmp(k, "name"))
		return uconfig_get_name(x, v, label_name_ok, "label name",
					"[a-zA-Z_][a-zA-Z0-9_]* and not start with __", &l->name);
	if (!strcmp(k, "size"))
		return st->size = true, yamldoc_get_unsigned(x, v, 1, MAX_FIELD_BYTES, &l->size);
	if (!strcmp(k, "padding"))
		return yamldoc_get_unsigned(x, v, 0, MAX_FIELD_BYTES, &l->padding);
	if (!strcmp(k, "decoders"))
		return st->decoders = true, parse_decoders(x, v, l);
	return 1;
}

static int parse_label(struct yamldoc *x, yaml_node_t *n, struct ulabel_conf *l)
{
	struct label_state st = { .l = l };

	l->line = (int)n->start_mark.line + 1;
	l->col = (int)n->start_mark.column + 1;
	if (yamldoc_each_key(x, n, "a label", "name, size, padding, decoders", label_key, &st))
		return -EINVAL;
	if (!l->name)
		return yamldoc_fail(x, n, "missing required field 'name' in a label");
	if (!st.size)
		return yamldoc_fail(x, n, "missing required field 'size' in label '%s'", l->name);
	if (!st.decoders)
		return yamldoc_fail(x, n, "missing required field 'decoders' in label '%s'",
				    l->name);
	return check_first_decoder(x, l);
}

int uconfig_parse_labels(struct yamldoc *x, yaml_node_t *n, struct umetric_conf *m)
{
	size_t i, j, len;

	if (yamldoc_list_len(x, n, "labels", 1, UCONF_MAX_FIELDS, &len))
		return -EINVAL;
	m->nfields = len;
	for (i = 0; i < len; i++) {
		if (parse_label(x, yamldoc_item(x, n, i), &m->field[i]))
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (!strcmp(m->field[i].name, m->field[j].name))
				return yamldoc_fail(x, yamldoc_item(x, n, i),
						    "duplicate label '%s' (also at line %d)",
						    m->field[i].name, m->field[j].line);
	}
	return 0;
}

/* ---- freeing ---- */

static void free_decoder(struct udec_conf *d)
{
	for (size_t i = 0; i < d->nmap; i++) {
		free(d->from[i]);
		free(d->to[i]);
	}
	free(d->from);
	free(d->to);
	free(d->regexp);
	free(d->replace);
	free(d->stack_map);
}

void uconfig_free_label(struct ulabel_conf *l)
{
	for (size_t j = 0; j < l->ndec; j++)
		free_decoder(&l->dec[j]);
	free(l->dec);
	free(l->name);
}
