// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uconfig.c - reads a user program's YAML config (uconfig.h) with libyaml's
 * document API. Every check that needs no BPF object happens here, and each
 * failure names the file, line and column it is about.
 */
#include "uconfig.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Bounds, so that no input makes anything grow without limit. */
#define MAX_INPUT (1 << 20)	 /* bytes of YAML */
#define MAX_METRICS 256		 /* counters and histograms together */
#define MAX_DECODERS 8		 /* per label */
#define MAX_MAP_ENTRIES 4096	 /* per static_map */
#define MAX_NAME 128		 /* config, metric and label names */
#define MAX_TEXT 1024		 /* help, regexp, replace, static_map strings */
#define MAX_PATH 4096		 /* object, resolved */
#define MAX_FIELD_BYTES 256	 /* size and padding of one key field */
#define MAX_BPF_NAME 127 /* libbpf finds maps by their full ELF name */
/*
 * Work (nodes read, bytes copied, regexp states) for one parse. YAML aliases
 * let one node be read many times, so the input's size alone bounds nothing.
 */
#define MAX_WORK (16u << 20)
/*
 * glibc's regcomp copies a group once per count of a bounded repetition,
 * and x+ into x x*; its epsilon closures then grow with the square of the
 * optional copies: (((a{100}){100}){100}){100}, a+++...+ or (a?){4000} take
 * minutes or gigabytes. Patterns past this many nodes, expanded, are refused.
 * Repeating a group or repetition that can match empty, as in (|()*){20},
 * (^|()|^){50} or (a?*$){50}, takes it exponential time even when short:
 * refused too.
 */
#define MAX_RE_ATOMS 1000
#define MAX_RE_DEPTH 32

struct ctx {
	yaml_document_t doc;
	const char *file;
	char *err;
	size_t errlen;
	size_t work;
};

static const char *const dec_names[] = {
	[UDEC_UINT] = "uint",	      [UDEC_HEX] = "hex",	  [UDEC_STRING] = "string",
	[UDEC_KSYM] = "ksym",	      [UDEC_MAJORMINOR] = "majorminor",
	[UDEC_CGROUP] = "cgroup",     [UDEC_STATIC_MAP] = "static_map",
	[UDEC_REGEXP] = "regexp",     [UDEC_SYSCALL] = "syscall", [UDEC_ERRNO] = "errno",
	[UDEC_KSTACK] = "kstack",
};
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

/* ---- errors ---- */

static int vfail_at(struct ctx *x, size_t line, size_t col, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(x->err, x->errlen, "%s:%zu:%zu: %s", x->file, line, col, msg);
	return -1;
}

/* line and col are 1-based, as in every message. */
static int fail_at(struct ctx *x, size_t line, size_t col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail_at(x, line, col, fmt, ap);
	va_end(ap);
	return -1;
}

/* Fails at where node n starts. */
static int fail(struct ctx *x, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail_at(x, n->start_mark.line + 1, n->start_mark.column + 1, fmt, ap);
	va_end(ap);
	return -1;
}

/* Spends units of the parse's work budget on node n. */
static int charge(struct ctx *x, const yaml_node_t *n, size_t units)
{
	if (units > MAX_WORK - x->work)
		return fail(x, n, "config too large (aliases expand it past its work limit)");
	x->work += units;
	return 0;
}

/* ---- scalars ---- */

static yaml_node_t *node(struct ctx *x, int id)
{
	return yaml_document_get_node(&x->doc, id);
}

static const char *scalar(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A copy of scalar n, at most max characters, in *out. */
static int get_str(struct ctx *x, yaml_node_t *n, size_t max, char **out)
{
	const char *s = scalar(n);
	size_t len;

	if (!s)
		return fail(x, n, "expected a string");
	len = n->data.scalar.length;
	if (len > max)
		return fail(x, n, "string too long (at most %zu characters)", max);
	if (strlen(s) != len)
		return fail(x, n, "string holds a NUL character");
	if (charge(x, n, len + 1))
		return -1;
	*out = strdup(s);
	return *out ? 0 : fail(x, n, "out of memory");
}

/* Like get_str, for strings that must not be empty. */
static int get_text(struct ctx *x, yaml_node_t *n, const char *what, size_t max, char **out)
{
	if (n->type == YAML_SCALAR_NODE && !n->data.scalar.length)
		return fail(x, n, "%s must not be empty", what);
	return get_str(x, n, max, out);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* strtoll and strtod skip leading white space; a config value may not. */
static bool number_start(const char *s)
{
	return is_digit(*s) || *s == '-' || *s == '+' || *s == '.';
}

static int get_int(struct ctx *x, const yaml_node_t *n, int64_t lo, int64_t hi, int64_t *out)
{
	const char *s = scalar(n);
	char *end;
	long long v;

	errno = 0;
	v = s && number_start(s) ? strtoll(s, &end, 10) : 0;
	if (!s || !number_start(s) || *end || errno || v < lo || v > hi)
		return fail(x, n, "expected a whole number from %lld to %lld", (long long)lo,
			    (long long)hi);
	*out = v;
	return 0;
}

static int get_unsigned(struct ctx *x, const yaml_node_t *n, unsigned lo, unsigned hi,
			unsigned *out)
{
	int64_t v;

	if (get_int(x, n, lo, hi, &v))
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int get_num(struct ctx *x, const yaml_node_t *n, double *out)
{
	const char *s = scalar(n);
	char *end;
	double d = s && number_start(s) ? strtod(s, &end) : NAN;

	if (!isfinite(d) || *end)
		return fail(x, n, "expected a number");
	*out = d;
	return 0;
}

static int get_bool(struct ctx *x, const yaml_node_t *n, bool *out)
{
	const char *s = scalar(n);

	if (s && !strcmp(s, "true"))
		*out = true;
	else if (s && !strcmp(s, "false"))
		*out = false;
	else
		return fail(x, n, "expected true or false");
	return 0;
}

/* ---- names ---- */

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* s is [A-Za-z<first>][A-Za-z0-9<rest>]*. */
static bool name_ok(const char *s, const char *first, const char *rest)
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
	return name_ok(s, "_", "_-");
}

/* The kernel takes letters, digits, '_' and '.' in object names. */
static bool bpf_name_ok(const char *s)
{
	size_t len = strlen(s);

	return len && len <= MAX_BPF_NAME && strspn(s, "abcdefghijklmnopqrstuvwxyz"
							"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
							"0123456789_.") == len;
}

static int get_bpf_name(struct ctx *x, yaml_node_t *n, char **out)
{
	if (get_str(x, n, MAX_NAME, out))
		return -1;
	if (!bpf_name_ok(*out))
		return fail(x, n, "map name '%s' is not a BPF map name (1 to %d letters, digits, _ or .)",
			    *out, MAX_BPF_NAME);
	return 0;
}

/* ---- mappings and lists ---- */

typedef int (*key_fn)(struct ctx *x, const char *key, yaml_node_t *v, void *arg);

/* Whether a pair before p in map has the key name. */
static bool key_seen(struct ctx *x, const yaml_node_t *map, const yaml_node_pair_t *p,
		     const char *name)
{
	const yaml_node_pair_t *q;

	for (q = map->data.mapping.pairs.start; q < p; q++) {
		const char *s = scalar(node(x, q->key));

		if (s && !strcmp(s, name))
			return true;
	}
	return false;
}

/*
 * Calls fn for each key of a mapping (what says whose, for messages); fn
 * returns 1 for a key it does not know. A key given twice is an error, as
 * libyaml keeps both.
 */
static int each_key(struct ctx *x, yaml_node_t *map, const char *what, const char *known,
		    key_fn fn, void *arg)
{
	yaml_node_pair_t *p;

	if (map->type != YAML_MAPPING_NODE)
		return fail(x, map, "expected a mapping for %s (fields: %s)", what, known);
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(x, p->key);
		const char *name = scalar(k);
		int rc;

		if (charge(x, k, 1))
			return -1;
		if (!name)
			return fail(x, k, "expected a field name in %s", what);
		if (key_seen(x, map, p, name))
			return fail(x, k, "duplicate field '%s' in %s", name, what);
		rc = fn(x, name, node(x, p->value), arg);
		if (rc == 1)
			return fail(x, k, "unknown field '%s' in %s (known: %s)", name, what, known);
		if (rc)
			return rc;
	}
	return 0;
}

/* The length of list n, which must be min..max items of what. */
static int list_len(struct ctx *x, yaml_node_t *n, const char *what, size_t min, size_t max,
		    size_t *len)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(x, n, "expected a list of %s", what);
	*len = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (*len < min)
		return fail(x, n, "expected at least %zu %s", min, what);
	if (*len > max)
		return fail(x, n, "too many %s (at most %zu)", what, max);
	return charge(x, n, *len);
}

static yaml_node_t *item(struct ctx *x, yaml_node_t *list, size_t i)
{
	return node(x, list->data.sequence.items.start[i]);
}

/* ---- regular expressions ---- */

/* Saturates, so the estimates below never overflow. */
static uint64_t cap(uint64_t v)
{
	return v > MAX_RE_ATOMS + 1 ? MAX_RE_ATOMS + 1 : v;
}

/* A repetition: copies of the item glibc makes, and whether zero or unbounded. */
struct re_rep {
	uint64_t copies;
	bool zero, unbounded;
};

/* Reads "{m}", "{m,}", "{,n}" or "{m,n}" at p; NULL if it is none of them. */
static const char *re_bound(const char *p, struct re_rep *r)
{
	uint64_t m = 0, n = 0;
	bool comma = false, has_n = false;

	for (p++; is_digit(*p); p++)
		m = cap(m * 10 + (uint64_t)(*p - '0'));
	if (*p == ',') {
		comma = true;
		for (p++; is_digit(*p); p++, has_n = true)
			n = cap(n * 10 + (uint64_t)(*p - '0'));
	}
	if (*p != '}')
		return NULL;
	r->zero = !m;
	r->unbounded = comma && !has_n;
	/* {m,} is m copies and a loop; {m,n} is n copies. */
	r->copies = r->unbounded ? m + 1 : comma ? n : m;
	return p + 1;
}

/* Skips a bracket expression ("[]a]", "[^[:alpha:]]") that starts at p. */
static const char *re_bracket(const char *p)
{
	p++;
	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	while (*p && *p != ']') {
		if (p[0] == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			const char *close = strchr(p + 2, p[1]);

			while (close && close[1] != ']')
				close = strchr(close + 1, p[1]);
			p = close ? close + 2 : p + 2;
			continue;
		}
		p++;
	}
	return *p ? p + 1 : p;
}

/* Reads a repetition (*, +, ?, {m,n}) at p; NULL if there is none. */
static const char *re_rep_at(const char *p, struct re_rep *r)
{
	if (*p == '{')
		return re_bound(p, r);
	if (*p != '*' && *p != '+' && *p != '?')
		return NULL;
	r->copies = *p == '+' ? 2 : 1;
	r->zero = *p != '+';
	r->unbounded = *p != '?';
	return p + 1;
}

/* One group level of the scan below: its nodes, and which parts match empty. */
struct re_level {
	uint64_t sum;	  /* nodes so far */
	uint64_t last;	  /* nodes of the last item, which a repetition copies */
	bool last_compound; /* the last item is a group or a repetition */
	bool last_null;	  /* it can match the empty string */
	bool before_null; /* the branch before it can */
	bool branch_null; /* the branch so far can */
	bool group_null;  /* an earlier branch of the group can */
};

static void re_start(struct re_level *l)
{
	memset(l, 0, sizeof(*l));
	l->before_null = l->branch_null = true;
}

static void re_item(struct re_level *l, uint64_t nodes, bool compound, bool null)
{
	l->sum = cap(l->sum + nodes);
	l->last = nodes;
	l->last_compound = compound;
	l->last_null = null;
	l->before_null = l->branch_null;
	l->branch_null = l->branch_null && null;
}

/*
 * False for more than one copy of a group or repetition that can match
 * empty (see MAX_RE_ATOMS); ^* or $* are harmless.
 */
static bool re_repeat(struct re_level *l, const struct re_rep *r)
{
	if (l->last_compound && l->last_null && (r->unbounded || r->copies > 1))
		return false;
	l->sum = cap(l->sum + l->last * (r->copies ? r->copies - 1 : 0) + 1);
	l->last = cap(l->last * r->copies + 1);
	l->last_null = l->last_null || r->zero;
	l->last_compound = true;
	l->branch_null = l->before_null && l->last_null;
	return true;
}

/* Anchors, word boundaries and back-references can match the empty string. */
static bool re_zero_width(const char *p)
{
	return *p == '^' || *p == '$' || (*p == '\\' && p[1] && strchr("bB<>`'123456789", p[1]));
}

/*
 * An upper bound of the nodes regcomp makes of an extended regexp: each
 * atom and operator counts one, a group what it holds, and a bounded
 * repetition or a + (which glibc makes x x*) multiplies the item before it.
 * MAX_RE_ATOMS + 1 for a pattern regcomp could take exponential time on.
 */
static uint64_t re_atoms(const char *p)
{
	struct re_level lv[MAX_RE_DEPTH];
	struct re_rep rep = { 0 };
	const char *next, *after;
	int d = 0;

	re_start(&lv[0]);
	for (; *p; p = next) {
		next = p + 1;
		if (*p == '(') {
			if (++d == MAX_RE_DEPTH)
				return MAX_RE_ATOMS + 1;
			re_start(&lv[d]);
		} else if (*p == ')' && d > 0) {
			d--;
			re_item(&lv[d], cap(lv[d + 1].sum + 1), true,
				lv[d + 1].group_null || lv[d + 1].branch_null);
		} else if (*p == '|') {
			lv[d].group_null = lv[d].group_null || lv[d].branch_null;
			lv[d].sum = cap(lv[d].sum + 1);
			lv[d].last = 0;
			lv[d].last_compound = lv[d].last_null = false;
			lv[d].before_null = lv[d].branch_null = true;
		} else if ((after = re_rep_at(p, &rep))) {
			if (!re_repeat(&lv[d], &rep))
				return MAX_RE_ATOMS + 1;
			next = after;
		} else {
			if (*p == '[')
				next = re_bracket(p);
			else if (*p == '\\' && p[1])
				next = p + 2;
			re_item(&lv[d], 1, false, re_zero_width(p));
		}
	}
	for (; d > 0; d--)
		lv[d - 1].sum = cap(lv[d - 1].sum + lv[d].sum);
	return lv[0].sum;
}

/* The highest \N group that replace refers to; -1 for none. */
static int re_max_group(const char *replace)
{
	int max = -1;

	for (const char *p = replace; *p; p++) {
		if (*p != '\\' || !p[1])
			continue;
		p++;
		if (is_digit(*p) && *p - '0' > max)
			max = *p - '0';
	}
	return max;
}

/* regexp compiles as a POSIX ERE, and replace uses only groups it has. */
static int check_regexp(struct ctx *x, yaml_node_t *re_node, yaml_node_t *rep_node,
			const struct udec_conf *d)
{
	uint64_t atoms = re_atoms(d->regexp);
	char why[256];
	regex_t re;
	int rc, group;

	if (atoms > MAX_RE_ATOMS)
		return fail(x, re_node,
			    "regexp too complex for regcomp (over %d nodes expanded, or a "
			    "repeated group that can match empty, as in (a?)*)",
			    MAX_RE_ATOMS);
	/* Compiling takes up to cubic time in the nodes: charge their square. */
	if (charge(x, re_node, (size_t)(atoms * atoms * 2)))
		return -1;
	rc = regcomp(&re, d->regexp, REG_EXTENDED);
	if (rc) {
		regerror(rc, &re, why, sizeof(why));
		return fail(x, re_node, "regexp does not compile: %s", why);
	}
	group = d->replace ? re_max_group(d->replace) : -1;
	rc = group > (int)re.re_nsub ? -1 : 0;
	if (rc)
		fail(x, rep_node, "replace uses \\%d but the regexp has %zu groups", group,
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
static int check_map_dups(struct ctx *x, const yaml_node_t *map, const struct udec_conf *d)
{
	struct map_key *k = calloc(d->nmap, sizeof(*k));
	int rc = 0;
	size_t i;

	if (!k)
		return fail(x, map, "out of memory");
	for (i = 0; i < d->nmap; i++) {
		k[i].s = d->from[i];
		k[i].n = node(x, map->data.mapping.pairs.start[i].key);
	}
	qsort(k, d->nmap, sizeof(*k), map_key_cmp);
	for (i = 1; i < d->nmap && !rc; i++)
		if (!strcmp(k[i].s, k[i - 1].s))
			rc = fail(x, k[i].n, "static_map lists '%s' twice", k[i].s);
	free(k);
	return rc;
}

static int get_static_map(struct ctx *x, yaml_node_t *n, struct udec_conf *d)
{
	size_t i, len;

	if (n->type != YAML_MAPPING_NODE)
		return fail(x, n, "static_map: expected a mapping of values to names (e.g. 1: read)");
	len = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	if (!len)
		return fail(x, n, "static_map needs at least one entry");
	if (len > MAX_MAP_ENTRIES)
		return fail(x, n, "static_map has too many entries (at most %d)", MAX_MAP_ENTRIES);
	if (charge(x, n, len * 2 * sizeof(char *)))
		return -1;
	d->from = calloc(len, sizeof(char *));
	d->to = calloc(len, sizeof(char *));
	if (!d->from || !d->to)
		return fail(x, n, "out of memory");
	d->nmap = len;
	for (i = 0; i < len; i++) {
		yaml_node_pair_t *p = &n->data.mapping.pairs.start[i];

		if (get_str(x, node(x, p->key), MAX_TEXT, &d->from[i]) ||
		    get_str(x, node(x, p->value), MAX_TEXT, &d->to[i]))
			return -1;
	}
	return check_map_dups(x, n, d);
}

static int dec_key(struct ctx *x, const char *k, yaml_node_t *v, void *arg)
{
	struct dec_state *st = arg;
	struct udec_conf *d = st->d;

	if (!strcmp(k, "name"))
		return 0; /* read by find_dec_kind */
	if (d->kind == UDEC_STATIC_MAP && !strcmp(k, "static_map"))
		return st->map = v, get_static_map(x, v, d);
	if (d->kind == UDEC_STATIC_MAP && !strcmp(k, "allow_unknown"))
		return get_bool(x, v, &d->allow_unknown);
	if (d->kind == UDEC_REGEXP && !strcmp(k, "regexp"))
		return st->re = v, get_text(x, v, "regexp", MAX_TEXT, &d->regexp);
	if (d->kind == UDEC_REGEXP && !strcmp(k, "replace"))
		return st->replace = v, get_str(x, v, MAX_TEXT, &d->replace);
	if (d->kind == UDEC_KSTACK && !strcmp(k, "stack_map"))
		return get_bpf_name(x, v, &d->stack_map);
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
static int find_dec_kind(struct ctx *x, yaml_node_t *n, enum udec_kind *kind)
{
	size_t npairs = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	char known[160];

	if (charge(x, n, npairs))
		return -1;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const char *k = scalar(node(x, p->key));
		yaml_node_t *v = node(x, p->value);
		const char *s = scalar(v);
		int kd;

		if (!k || strcmp(k, "name"))
			continue;
		kd = s ? udec_kind_of(s) : -1;
		if (kd < 0)
			return fail(x, v, "unknown decoder '%s' (known: %s)", s ? s : "",
				    dec_list(known, sizeof(known)));
		*kind = (enum udec_kind)kd;
		return 0;
	}
	return fail(x, n, "missing required field 'name' in a decoder");
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

static int parse_decoder(struct ctx *x, yaml_node_t *n, struct udec_conf *d)
{
	struct dec_state st = { .d = d };
	char what[64];

	d->line = (int)n->start_mark.line + 1;
	d->col = (int)n->start_mark.column + 1;
	if (n->type != YAML_MAPPING_NODE)
		return fail(x, n, "expected a mapping for a decoder (e.g. name: uint)");
	if (find_dec_kind(x, n, &d->kind))
		return -1;
	snprintf(what, sizeof(what), "decoder %s", udec_name(d->kind));
	if (each_key(x, n, what, dec_fields(d->kind), dec_key, &st))
		return -1;
	if (d->kind == UDEC_STATIC_MAP && !st.map)
		return fail(x, n, "missing required field 'static_map' in decoder static_map");
	if (d->kind == UDEC_REGEXP && !st.re)
		return fail(x, n, "missing required field 'regexp' in decoder regexp");
	if (d->kind == UDEC_KSTACK && !d->stack_map)
		return fail(x, n, "missing required field 'stack_map' in decoder kstack");
	return d->kind == UDEC_REGEXP ? check_regexp(x, st.re, st.replace, d) : 0;
}

static int parse_decoders(struct ctx *x, yaml_node_t *n, struct ulabel_conf *l)
{
	size_t i, len;

	if (list_len(x, n, "decoders", 1, MAX_DECODERS, &len))
		return -1;
	l->dec = calloc(len, sizeof(*l->dec));
	if (!l->dec)
		return fail(x, n, "out of memory");
	l->ndec = len;
	for (i = 0; i < len; i++)
		if (parse_decoder(x, item(x, n, i), &l->dec[i]))
			return -1;
	return 0;
}

/*
 * The first decoder reads the field's raw bytes: the number readers need
 * a size the kernel has an integer type of.
 */
static int check_first_decoder(struct ctx *x, const struct ulabel_conf *l)
{
	const struct udec_conf *d = &l->dec[0];
	bool any = d->kind == UDEC_STRING || d->kind == UDEC_STATIC_MAP || d->kind == UDEC_REGEXP;
	bool word = l->size == 4 || l->size == 8;
	bool integer = word || l->size == 1 || l->size == 2;

	if (any || (d->kind == UDEC_KSTACK ? word : integer))
		return 0;
	return fail_at(x, (size_t)d->line, (size_t)d->col,
		       "decoder %s reads a %s byte number, but label '%s' has size %u",
		       udec_name(d->kind), d->kind == UDEC_KSTACK ? "4 or 8" : "1, 2, 4 or 8",
		       l->name, l->size);
}

/* ---- labels ---- */

struct label_state {
	struct ulabel_conf *l;
	bool size, decoders;
};

static int label_key(struct ctx *x, const char *k, yaml_node_t *v, void *arg)
{
	struct label_state *st = arg;
	struct ulabel_conf *l = st->l;

	if (!strcmp(k, "name")) {
		if (get_str(x, v, MAX_NAME, &l->name))
			return -1;
		if (!name_ok(l->name, "_", "_") || !strncmp(l->name, "__", 2))
			return fail(x, v,
				    "label name '%s' must match [a-zA-Z_][a-zA-Z0-9_]* and not start with __",
				    l->name);
		return 0;
	}
	if (!strcmp(k, "size"))
		return st->size = true, get_unsigned(x, v, 1, MAX_FIELD_BYTES, &l->size);
	if (!strcmp(k, "padding"))
		return get_unsigned(x, v, 0, MAX_FIELD_BYTES, &l->padding);
	if (!strcmp(k, "decoders"))
		return st->decoders = true, parse_decoders(x, v, l);
	return 1;
}

static int parse_label(struct ctx *x, yaml_node_t *n, struct ulabel_conf *l)
{
	struct label_state st = { .l = l };

	l->line = (int)n->start_mark.line + 1;
	l->col = (int)n->start_mark.column + 1;
	if (each_key(x, n, "a label", "name, size, padding, decoders", label_key, &st))
		return -1;
	if (!l->name)
		return fail(x, n, "missing required field 'name' in a label");
	if (!st.size)
		return fail(x, n, "missing required field 'size' in label '%s'", l->name);
	if (!st.decoders)
		return fail(x, n, "missing required field 'decoders' in label '%s'", l->name);
	return check_first_decoder(x, l);
}

static int parse_labels(struct ctx *x, yaml_node_t *n, struct umetric_conf *m)
{
	size_t i, j, len;

	if (list_len(x, n, "labels", 1, UCONF_MAX_FIELDS, &len))
		return -1;
	m->nfields = len;
	for (i = 0; i < len; i++) {
		if (parse_label(x, item(x, n, i), &m->field[i]))
			return -1;
		for (j = 0; j < i; j++)
			if (!strcmp(m->field[i].name, m->field[j].name))
				return fail(x, item(x, n, i), "duplicate label '%s' (also at line %d)",
					    m->field[i].name, m->field[j].line);
	}
	return 0;
}

/* ---- metrics ---- */

struct metric_state {
	struct umetric_conf *m;
	yaml_node_t *labels, *type, *min, *max, *keys;
};

static int get_bucket_type(struct ctx *x, yaml_node_t *v, enum ubucket_type *t)
{
	const char *s = scalar(v);

	if (s && !strcmp(s, "exp2"))
		*t = UBUCKET_EXP2;
	else if (s && !strcmp(s, "linear"))
		*t = UBUCKET_LINEAR;
	else if (s && !strcmp(s, "fixed"))
		*t = UBUCKET_FIXED;
	else
		return fail(x, v, "bucket_type is exp2, linear or fixed");
	return 0;
}

static int get_bucket_keys(struct ctx *x, yaml_node_t *n, struct umetric_conf *m)
{
	size_t i, len;

	if (list_len(x, n, "bucket_keys", 1, UCONF_MAX_BUCKETS, &len) ||
	    charge(x, n, len * sizeof(double)))
		return -1;
	m->bucket_keys = calloc(len, sizeof(double));
	if (!m->bucket_keys)
		return fail(x, n, "out of memory");
	m->nkeys = len;
	for (i = 0; i < len; i++) {
		yaml_node_t *v = item(x, n, i);

		if (get_num(x, v, &m->bucket_keys[i]))
			return -1;
		if (i && m->bucket_keys[i] <= m->bucket_keys[i - 1])
			return fail(x, v, "bucket_keys must ascend strictly (%g after %g)",
				    m->bucket_keys[i], m->bucket_keys[i - 1]);
	}
	return 0;
}

static int histogram_key(struct ctx *x, const char *k, yaml_node_t *v, struct metric_state *st)
{
	struct umetric_conf *m = st->m;

	if (!strcmp(k, "bucket_type"))
		return st->type = v, get_bucket_type(x, v, &m->bucket_type);
	if (!strcmp(k, "bucket_multiplier")) {
		if (get_num(x, v, &m->bucket_multiplier))
			return -1;
		return m->bucket_multiplier > 0 ? 0 : fail(x, v, "bucket_multiplier must be above 0");
	}
	if (!strcmp(k, "bucket_min"))
		return st->min = v, get_int(x, v, INT64_MIN, INT64_MAX, &m->bucket_min);
	if (!strcmp(k, "bucket_max"))
		return st->max = v, get_int(x, v, INT64_MIN, INT64_MAX, &m->bucket_max);
	if (!strcmp(k, "bucket_keys"))
		return st->keys = v, get_bucket_keys(x, v, m);
	return 1;
}

static int metric_key(struct ctx *x, const char *k, yaml_node_t *v, void *arg)
{
	struct metric_state *st = arg;
	struct umetric_conf *m = st->m;

	if (!strcmp(k, "name")) {
		if (get_str(x, v, MAX_NAME, &m->name))
			return -1;
		if (!name_ok(m->name, "_:", "_:"))
			return fail(x, v, "metric name '%s' must match [a-zA-Z_:][a-zA-Z0-9_:]*",
				    m->name);
		return 0;
	}
	if (!strcmp(k, "help"))
		return get_text(x, v, "help", MAX_TEXT, &m->help);
	if (!strcmp(k, "map"))
		return get_bpf_name(x, v, &m->map);
	if (!strcmp(k, "labels"))
		return st->labels = v, parse_labels(x, v, m);
	return m->histogram ? histogram_key(x, k, v, st) : 1;
}

/* Buckets of exp2 and linear: a range of indexes. */
static int check_range(struct ctx *x, yaml_node_t *n, const struct metric_state *st)
{
	const struct umetric_conf *m = st->m;

	if (st->keys)
		return fail(x, st->keys, "bucket_keys is for fixed buckets only");
	if (!st->max)
		return fail(x, n, "missing required field 'bucket_max' in histogram '%s'", m->name);
	if (st->min && m->bucket_min < 0)
		return fail(x, st->min, "bucket_min must be 0 or more (bucket indexes are unsigned)");
	if (m->bucket_min > m->bucket_max)
		return fail(x, st->min ? st->min : st->max,
			    "bucket_min (%lld) is above bucket_max (%lld)",
			    (long long)m->bucket_min, (long long)m->bucket_max);
	if (m->bucket_type == UBUCKET_EXP2 && m->bucket_max > 63)
		return fail(x, st->max, "exp2 bucket_max must be 63 or less (2^63 is the largest bound)");
	if ((uint64_t)m->bucket_max - (uint64_t)m->bucket_min >= UCONF_MAX_BUCKETS)
		return fail(x, st->max, "%llu buckets; at most %d",
			    (unsigned long long)((uint64_t)m->bucket_max - (uint64_t)m->bucket_min) + 1,
			    UCONF_MAX_BUCKETS);
	return 0;
}

/* The last label is the bucket index, an unsigned integer that holds the last bucket. */
static int check_bucket_field(struct ctx *x, const struct umetric_conf *m)
{
	const struct ulabel_conf *b = &m->field[m->nfields - 1];
	uint64_t last = m->bucket_type == UBUCKET_FIXED ? m->nkeys - 1 : (uint64_t)m->bucket_max;
	size_t i;

	if (b->size != 1 && b->size != 2 && b->size != 4 && b->size != 8)
		return fail_at(x, (size_t)b->line, (size_t)b->col,
			       "the bucket field (the last label) must be 1, 2, 4 or 8 bytes, not %u",
			       b->size);
	if (b->size < 8 && last >> (8 * b->size))
		return fail_at(x, (size_t)b->line, (size_t)b->col,
			       "a %u byte bucket field cannot hold bucket %llu", b->size,
			       (unsigned long long)last);
	for (i = 0; i + 1 < m->nfields; i++)
		if (!strcmp(m->field[i].name, "le"))
			return fail_at(x, (size_t)m->field[i].line, (size_t)m->field[i].col,
				       "label 'le' is the histogram's bucket bound; pick another name");
	return 0;
}

static int check_histogram(struct ctx *x, yaml_node_t *n, const struct metric_state *st)
{
	const struct umetric_conf *m = st->m;

	if (!st->type)
		return fail(x, n, "missing required field 'bucket_type' in histogram '%s'", m->name);
	if (m->bucket_type != UBUCKET_FIXED) {
		if (check_range(x, n, st))
			return -1;
	} else if (st->min || st->max) {
		return fail(x, st->min ? st->min : st->max,
			    "bucket_min and bucket_max are not for fixed buckets (bucket_keys are)");
	} else if (!st->keys) {
		return fail(x, n, "fixed buckets need bucket_keys in histogram '%s'", m->name);
	}
	return check_bucket_field(x, m);
}

static int parse_metric(struct ctx *x, yaml_node_t *n, struct umetric_conf *m, bool histogram)
{
	static const char counter_fields[] = "name, help, map, labels";
	static const char histogram_fields[] = "name, help, map, labels, bucket_type, "
					       "bucket_multiplier, bucket_min, bucket_max, bucket_keys";
	struct metric_state st = { .m = m };
	const char *kind = histogram ? "histogram" : "counter";

	m->line = (int)n->start_mark.line + 1;
	m->col = (int)n->start_mark.column + 1;
	m->histogram = histogram;
	m->bucket_multiplier = 1;
	if (each_key(x, n, histogram ? "a histogram" : "a counter",
		     histogram ? histogram_fields : counter_fields, metric_key, &st))
		return -1;
	if (!m->name)
		return fail(x, n, "missing required field 'name' in a %s", kind);
	if (!m->help)
		return fail(x, n, "missing required field 'help' in %s '%s'", kind, m->name);
	if (!m->map)
		return fail(x, n, "missing required field 'map' in %s '%s'", kind, m->name);
	if (!st.labels)
		return fail(x, n, "missing required field 'labels' in %s '%s'", kind, m->name);
	return histogram ? check_histogram(x, n, &st) : 0;
}

/* Two series families with one name would clash in every scrape. */
static int check_metric_names(struct ctx *x, const struct uconfig *c)
{
	for (size_t i = 1; i < c->nmetrics; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(c->metric[i].name, c->metric[j].name))
				return fail_at(x, (size_t)c->metric[i].line, (size_t)c->metric[i].col,
					       "duplicate metric '%s' (also at line %d)",
					       c->metric[i].name, c->metric[j].line);
	return 0;
}

/* Appends the list n of counters or histograms to c->metric. */
static int add_metrics(struct ctx *x, yaml_node_t *n, struct uconfig *c, bool histogram)
{
	struct umetric_conf *grown;
	size_t i, len;

	if (list_len(x, n, histogram ? "histograms" : "counters", 0, MAX_METRICS, &len))
		return -1;
	if (c->nmetrics + len > MAX_METRICS)
		return fail(x, n, "too many metrics (at most %d)", MAX_METRICS);
	if (charge(x, n, len * sizeof(*grown)))
		return -1;
	grown = realloc(c->metric, (c->nmetrics + len + 1) * sizeof(*grown));
	if (!grown)
		return fail(x, n, "out of memory");
	c->metric = grown;
	memset(&grown[c->nmetrics], 0, len * sizeof(*grown));
	c->nmetrics += len;
	for (i = 0; i < len; i++)
		if (parse_metric(x, item(x, n, i), &grown[c->nmetrics - len + i], histogram))
			return -1;
	return 0;
}

static int metrics_key(struct ctx *x, const char *k, yaml_node_t *v, void *arg)
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
static int resolve_object(struct ctx *x, yaml_node_t *n, const char *object, char **out)
{
	size_t dir = object[0] == '/' ? 0 : dir_len(x->file);
	size_t len = dir + strlen(object);

	if (len > MAX_PATH)
		return fail(x, n, "object path too long (at most %d characters)", MAX_PATH);
	*out = malloc(len + 1);
	if (!*out)
		return fail(x, n, "out of memory");
	snprintf(*out, len + 1, "%.*s%s", (int)dir, x->file, object);
	return 0;
}

/* The file's base name without .yaml or .yml, when the config gives none. */
static int default_name(struct ctx *x, yaml_node_t *root, struct uconfig *c)
{
	const char *base = x->file + dir_len(x->file);
	size_t len = strlen(base);

	if (len > 5 && !strcmp(base + len - 5, ".yaml"))
		len -= 5;
	else if (len > 4 && !strcmp(base + len - 4, ".yml"))
		len -= 4;
	if (len > MAX_NAME)
		return fail(x, root, "the file name is too long to name the config; set name");
	c->name = strndup(base, len);
	if (!c->name)
		return fail(x, root, "out of memory");
	if (!config_name_ok(c->name))
		return fail(x, root,
			    "the file name gives the config name '%s', which does not match "
			    "[a-zA-Z_][a-zA-Z0-9_-]*; set name",
			    c->name);
	return 0;
}

struct top_state {
	struct uconfig *c;
	yaml_node_t *metrics;
};

static int top_key(struct ctx *x, const char *k, yaml_node_t *v, void *arg)
{
	struct top_state *st = arg;
	struct uconfig *c = st->c;
	char *object = NULL;
	int rc;

	if (!strcmp(k, "name")) {
		if (get_str(x, v, MAX_NAME, &c->name))
			return -1;
		return config_name_ok(c->name)
			       ? 0
			       : fail(x, v, "name '%s' must match [a-zA-Z_][a-zA-Z0-9_-]*", c->name);
	}
	if (!strcmp(k, "object")) {
		if (get_text(x, v, "object", MAX_PATH, &object))
			return -1;
		rc = resolve_object(x, v, object, &c->object);
		free(object);
		return rc;
	}
	if (!strcmp(k, "metrics"))
		return st->metrics = v, each_key(x, v, "metrics", "counters, histograms", metrics_key, c);
	return 1;
}

static int parse_root(struct ctx *x, yaml_node_t *root, struct uconfig *c)
{
	struct top_state st = { .c = c };

	if (each_key(x, root, "the config", "name, object, metrics", top_key, &st))
		return -1;
	if (!c->object)
		return fail(x, root, "missing required field 'object' (the compiled BPF program)");
	if (!c->nmetrics)
		return fail(x, st.metrics ? st.metrics : root,
			    "no metrics: give at least one under metrics.counters or metrics.histograms");
	if (check_metric_names(x, c))
		return -1;
	return c->name ? 0 : default_name(x, root, c);
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

static int syntax_error(struct ctx *x, const yaml_parser_t *p, const char *buf, size_t len)
{
	size_t line = p->problem_mark.line + 1, col = p->problem_mark.column + 1;
	const char *problem = p->problem ? p->problem : "out of memory";

	if (p->error == YAML_READER_ERROR)
		locate(buf, len, p->problem_offset, &line, &col);
	if (p->context)
		return fail_at(x, line, col, "YAML syntax error: %s (%s at line %zu)", problem,
			       p->context, p->context_mark.line + 1);
	return fail_at(x, line, col, "YAML syntax error: %s", problem);
}

/* A config is one YAML document: a second one is an error, not ignored. */
static int check_single_doc(struct ctx *x, yaml_parser_t *p, const char *buf, size_t len)
{
	yaml_document_t more;
	yaml_node_t *root;
	int rc = 0;

	if (!yaml_parser_load(p, &more))
		return syntax_error(x, p, buf, len);
	root = yaml_document_get_root_node(&more);
	if (root)
		rc = fail(x, root, "a config is one YAML document; this is a second");
	yaml_document_delete(&more);
	return rc;
}

/* Loads buf into x->doc; on failure there is no document to delete. */
static int load_doc(struct ctx *x, const char *buf, size_t len)
{
	yaml_parser_t p;
	int rc = 0;

	if (!yaml_parser_initialize(&p))
		return fail_at(x, 1, 1, "out of memory");
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&p, &x->doc)) {
		rc = syntax_error(x, &p, buf, len);
		yaml_parser_delete(&p);
		return rc;
	}
	if (!yaml_document_get_root_node(&x->doc))
		rc = fail_at(x, 1, 1, "empty config (expected object and metrics)");
	else
		rc = check_single_doc(x, &p, buf, len);
	if (rc)
		yaml_document_delete(&x->doc);
	yaml_parser_delete(&p);
	return rc;
}

int uconfig_parse_buffer(const char *file, const char *buf, size_t len, struct uconfig *out,
			 char *err, size_t errlen)
{
	struct ctx x = { .file = file, .err = err, .errlen = errlen };
	struct uconfig c = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	if (len > MAX_INPUT)
		return fail_at(&x, 1, 1, "config larger than %d bytes", MAX_INPUT);
	if (load_doc(&x, buf, len))
		return -1;
	c.file = strdup(file);
	rc = c.file ? parse_root(&x, yaml_document_get_root_node(&x.doc), &c)
		    : fail_at(&x, 1, 1, "out of memory");
	yaml_document_delete(&x.doc);
	if (rc) {
		uconfig_free(&c);
		return -1;
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
		snprintf(err, errlen, "%s: %s", file, strerror(errno));
		return -1;
	}
	errno = 0;
	buf = slurp(f, &len);
	if (!buf) {
		snprintf(err, errlen, "%s: %s", file, strerror(errno ? errno : ENOMEM));
		fclose(f);
		return -1;
	}
	fclose(f);
	rc = uconfig_parse_buffer(file, buf, len, out, err, errlen);
	free(buf);
	return rc;
}

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

static void free_metric(struct umetric_conf *m)
{
	for (size_t i = 0; i < m->nfields; i++) {
		struct ulabel_conf *l = &m->field[i];

		for (size_t j = 0; j < l->ndec; j++)
			free_decoder(&l->dec[j]);
		free(l->dec);
		free(l->name);
	}
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
	free(c->file);
	free(c->name);
	free(c->object);
	memset(c, 0, sizeof(*c));
}
