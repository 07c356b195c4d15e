// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * expo_text.c - Prometheus text format 0.0.4 and OpenMetrics 1.0 text
 * (expo_text.h). The two differ in counter metadata names (OpenMetrics
 * names the family without _total, and declares a unit its name ends in
 * with # UNIT), escaping rules and the # EOF trailer.
 */
#include "metrics/expo_text.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A short decimal that reads back as exactly v. */
void expo_format_double(char *out, size_t len, double v)
{
	if (isinf(v)) {
		snprintf(out, len, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (isnan(v)) {
		snprintf(out, len, "NaN");
		return;
	}
	/* Whole numbers print whole ("10", not "1e+01"), as Prometheus does. */
	if (v == floor(v) && fabs(v) < 1e15) {
		format_decimal(out, len, (uint64_t)fabs(v), v < 0);
		return;
	}
	/* %g drops trailing zeros, so 15 digits is the shortest form of most
	 * values; 16 or 17 only when 15 do not read back exactly. */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(out, len, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

/* Whether c is written escaped: backslash, newline and, in label values
 * (quote), the double quote. */
static bool needs_escape(char c, bool quote)
{
	return c == '\\' || c == '\n' || (quote && c == '"');
}

static const char *escape_of(char c)
{
	return c == '\\' ? "\\\\" : c == '\n' ? "\\n" : "\\\"";
}

/* s escaped, in one pass: the runs between characters to escape go in one
 * copy each (most values have none). */
static void put_escaped(struct buf *b, const char *s, bool quote)
{
	const char *run = s;

	for (;; s++) {
		if (*s && !needs_escape(*s, quote))
			continue;
		buf_append(b, run, (size_t)(s - run));
		if (!*s)
			return;
		buf_append(b, escape_of(*s), 2);
		run = s + 1;
	}
}

/* a="x",b="y": the series' own labels, escaped; those of f->omit_empty
 * left out where empty. */
static void put_label_pairs(struct buf *b, const struct metric_family *f,
			    const struct metric_series *s)
{
	bool first = true;

	for (int k = 0; k < f->nlabels; k++) {
		if (!s->values[k][0] && (f->omit_empty >> k & 1))
			continue;
		if (!first)
			buf_append(b, ",", 1);
		first = false;
		buf_puts(b, f->labels[k]);
		buf_append(b, "=\"", 2);
		put_escaped(b, s->values[k], true);
		buf_append(b, "\"", 1);
	}
}

/* Scratch a render reuses for every series, so nothing is allocated or
 * formatted twice per series: its labels, escaped once, and its bucket
 * lines' prefix. */
struct series_text {
	struct buf labels; /* a="x",b="y" */
	struct buf prefix; /* NAME_bucket{a="x",b="y", */
};

/* v as expo_format_double spells it; its length. */
static size_t format_value(char *out, size_t len, double v)
{
	expo_format_double(out, len, v);
	return strlen(out);
}

/*
 * What expo_format_double(num / den) gives, for den a power of ten and num
 * below 10^15 (a histogram's sum in ns, in seconds), without printf and
 * strtod: the exact quotient has at most 15 significant digits, so %.15g
 * of the double nearest it prints those digits (15 always read back, and
 * the double is within half a unit of the 15th), and they read back as
 * it. Spelled as %g does: fixed for exponents from -4 up, else d.ddde-XX
 * (exponents reach 14 at most here). How many chars; 0 if it does not
 * apply (then format the double).
 */
size_t expo_format_ratio(char *out, size_t len, uint64_t num, uint64_t den)
{
	char d[24], *o = out;
	uint64_t p = 1;
	size_t nd, nsig;
	int k = 0, x;

	while (p < den && k < 19) {
		p *= 10;
		k++;
	}
	/* Whole numbers have expo_format_double's own path. */
	if (p != den || num >= 1000000000000000ULL || num % den == 0 || len < 32)
		return 0;
	nd = format_digits(d, num);
	for (nsig = nd; d[nsig - 1] == '0'; nsig--)
		;
	x = (int)nd - 1 - k; /* the first digit's power of ten */
	if (x < -4) {
		*o++ = d[0];
		if (nsig > 1) {
			*o++ = '.';
			memcpy(o, d + 1, nsig - 1);
			o += nsig - 1;
		}
		*o++ = 'e';
		*o++ = '-';
		*o++ = (char)('0' + -x / 10);
		*o++ = (char)('0' + -x % 10);
	} else if (x >= 0) {
		memcpy(o, d, (size_t)x + 1);
		o += x + 1;
		*o++ = '.';
		memcpy(o, d + x + 1, nsig - (size_t)x - 1);
		o += nsig - (size_t)x - 1;
	} else {
		*o++ = '0';
		*o++ = '.';
		for (int z = -x - 1; z > 0; z--)
			*o++ = '0';
		memcpy(o, d, nsig);
		o += nsig;
	}
	*o = '\0';
	return (size_t)(o - out);
}

size_t expo_format_fixed(char *out, size_t len, uint64_t num, uint64_t den)
{
	char whole[FORMAT_DIGITS_MAX + 1], frac[FORMAT_DIGITS_MAX + 1] = "";
	uint64_t f = num % den;
	int k = 0;

	whole[format_digits(whole, num / den)] = '\0';
	for (uint64_t p = 1; p < den && k < FORMAT_DIGITS_MAX; p *= 10)
		k++;
	/* The fraction's k digits, leading zeros kept, trailing ones dropped. */
	for (int i = k - 1; i >= 0; i--, f /= 10)
		frac[i] = (char)('0' + f % 10);
	while (k > 0 && frac[k - 1] == '0')
		k--;
	frac[k] = '\0';
	if (!len)
		return 0;
	if (k)
		snprintf(out, len, "%s.%s", whole, frac);
	else
		snprintf(out, len, "%s", whole);
	return strlen(out);
}

/* NAME SUFFIX{labels} VALUE: labels are the series' (st->labels), if any;
 * the value formatted (vlen chars). */
static void put_sample_text(struct buf *b, const char *name, size_t namelen, const char *suffix,
			    const struct series_text *st, const char *val, size_t vlen)
{
	buf_append(b, name, namelen);
	buf_puts(b, suffix);
	if (st->labels.len) {
		buf_append(b, "{", 1);
		buf_append(b, st->labels.data, st->labels.len);
		buf_append(b, "}", 1);
	}
	buf_append(b, " ", 1);
	buf_append(b, val, vlen);
	buf_append(b, "\n", 1);
}

static void put_sample(struct buf *b, const char *name, size_t namelen, const char *suffix,
		       const struct series_text *st, double v)
{
	char num[40];

	put_sample_text(b, name, namelen, suffix, st, num, format_value(num, sizeof(num), v));
}

/* Bytes a counter's or gauge's line is built in before its one append; a
 * longer line takes the general path. LINE_TAIL of them are kept for what
 * follows the labels: "} ", the value (40 at most), the newline. */
#define LINE_BYTES 1024
#define LINE_TAIL 64

/* Copies label value v escaped to o, keeping 1 byte before end for its
 * closing quote: past what it wrote, or NULL if it does not fit. */
static char *copy_escaped(char *o, const char *end, const char *v)
{
	for (; *v; v++) {
		if (end - o < 3)
			return NULL;
		if (needs_escape(*v, true)) {
			memcpy(o, escape_of(*v), 2);
			o += 2;
		} else {
			*o++ = *v;
		}
	}
	return o;
}

/*
 * NAME{a="x",b="y"} VALUE: what put_label_pairs and put_sample write for a
 * counter or gauge, built in one place and appended once (a scrape writes
 * tens of thousands; ten appends each cost more than the text). lablen:
 * the family's label names' lengths. false, having written nothing, if the
 * line is longer than LINE_BYTES.
 */
static bool put_simple_line(struct buf *b, const struct metric_family *f, size_t namelen,
			    const size_t *lablen, const struct metric_series *s)
{
	char line[LINE_BYTES], *o = line;
	const char *end = line + sizeof(line) - LINE_TAIL;
	double v = s->value;
	bool any = false;

	if (namelen > (size_t)(end - o))
		return false;
	memcpy(o, f->name, namelen);
	o += namelen;
	for (int k = 0; k < f->nlabels; k++) {
		if (!s->values[k][0] && (f->omit_empty >> k & 1))
			continue;
		if (lablen[k] + 4 > (size_t)(end - o))
			return false;
		*o++ = any ? ',' : '{';
		any = true;
		memcpy(o, f->labels[k], lablen[k]);
		o += lablen[k];
		*o++ = '=';
		*o++ = '"';
		o = copy_escaped(o, end, s->values[k]);
		if (!o)
			return false;
		*o++ = '"';
	}
	if (any)
		*o++ = '}';
	*o++ = ' ';
	/* What expo_format_double gives a whole number below 1e15: its digits. */
	if (v >= 0 && v < 1e15 && v == (double)(uint64_t)v)
		o += format_digits(o, (uint64_t)v);
	else
		o += format_value(o, 40, v);
	*o++ = '\n';
	buf_append(b, line, (size_t)(o - line));
	return true;
}

#define MAX_LE 512

/* One bound's part of a bucket line: le="X"} (with the space before the
 * count), formatted once per family. */
struct le_text {
	char s[48];
	size_t len;
};

static void le_text(struct le_text *le, const char *bound)
{
	le->len = (size_t)snprintf(le->s, sizeof(le->s), "le=\"%s\"} ", bound);
	if (le->len >= sizeof(le->s))
		le->len = sizeof(le->s) - 1;
}

/* The family's bucket bounds, formatted once per scrape, not per series. */
static void format_les(const struct metric_family *f, struct le_text *le)
{
	const struct bucket_table *t = f->n ? f->series[0].hist.table : NULL;
	char num[32];

	for (size_t i = 0; f->ule && i < f->nule && i < MAX_LE; i++) {
		expo_format_double(num, sizeof(num), f->ule[i]);
		le_text(&le[i], num);
	}
	for (size_t i = 0; t && i < f->nle && i < MAX_LE; i++) {
		expo_format_fixed(num, sizeof(num), f->le[i], t->per_base);
		le_text(&le[i], num);
	}
	le_text(&le[MAX_LE], "+Inf");
}

/* One `_bucket` line: the series' prefix, the bound's text, the count. */
static void put_bucket(struct buf *b, const struct buf *prefix, const struct le_text *le,
		       uint64_t cum)
{
	char tail[sizeof(le->s) + 32];
	size_t n = le->len;

	memcpy(tail, le->s, n);
	/* What expo_format_double gives a whole number below 1e15: its digits. */
	if (cum < 1000000000000000ULL)
		n += format_digits(tail + n, cum);
	else
		n += format_value(tail + n, sizeof(tail) - n - 1, (double)cum);
	tail[n++] = '\n';
	buf_append(b, prefix->data, prefix->len);
	buf_append(b, tail, n);
}

static void put_histogram(struct buf *b, const struct metric_family *f, size_t namelen,
			  const struct metric_series *s, const struct le_text *le,
			  struct series_text *st)
{
	const struct bucket_table *t = s->hist.table;
	uint64_t cum = 0;
	size_t slot = 0, end = 0, n;
	char num[40];

	buf_reset(&st->prefix);
	buf_append(&st->prefix, f->name, namelen);
	buf_append(&st->prefix, "_bucket{", 8);
	if (st->labels.len) {
		buf_append(&st->prefix, st->labels.data, st->labels.len);
		buf_append(&st->prefix, ",", 1);
	}
	for (size_t i = 0; f->ule && i < f->nule && i < MAX_LE; i++) {
		cum += s->hist.owned ? s->hist.owned[i] : 0;
		put_bucket(b, &st->prefix, &le[i], cum);
	}
	/* One pass: the le bounds ascend, and so do the slots' bounds; slots
	 * are read only where they may be non-zero (from lo to end). */
	if (t && s->hist.slots) {
		slot = s->hist.lo;
		end = s->hist.hi ? s->hist.hi : t->nslots;
	}
	for (size_t i = 0; t && i < f->nle && i < MAX_LE; i++) {
		for (; slot < end && slot < t->nbounds && t->bound[slot] <= f->le[i]; slot++)
			cum += s->hist.slots[slot];
		put_bucket(b, &st->prefix, &le[i], cum);
	}
	put_bucket(b, &st->prefix, &le[MAX_LE], s->hist.count);
	if (buf_failed(&st->prefix))
		b->failed = true;
	/* The sum of a table's histogram from its raw total: no printf. */
	n = t ? expo_format_ratio(num, sizeof(num), s->hist.sum_raw, t->per_base) : 0;
	if (!n)
		n = format_value(num, sizeof(num), s->hist.sum);
	put_sample_text(b, f->name, namelen, "_sum", st, num, n);
	put_sample(b, f->name, namelen, "_count", st, (double)s->hist.count);
}

static const char *type_name(enum metric_type t)
{
	return t == METRIC_COUNTER ? "counter" : t == METRIC_GAUGE ? "gauge" : "histogram";
}

/* OpenMetrics names a counter family without its _total suffix. */
static void family_name(const struct metric_family *f, bool om, char *out, size_t len)
{
	size_t n = strlen(f->name);

	if (om && f->type == METRIC_COUNTER && n > 6 && !strcmp(f->name + n - 6, "_total"))
		n -= 6;
	snprintf(out, len, "%.*s", (int)n, f->name);
}

/* OpenMetrics' # UNIT line, for a family whose name ends in a unit; text
 * 0.0.4 has no such line. */
static void put_unit(struct buf *b, const struct metric_family *f, const char *family, bool om)
{
	const char *unit = om ? metrics_family_unit(f) : NULL;

	if (unit)
		buf_printf(b, "# UNIT %s %s\n", family, unit);
}

/* le: room for MAX_LE + 1 bounds' texts, st: scratch; both the caller's. */
static void put_family(struct buf *b, const struct metric_family *f, bool om, struct le_text *le,
		       struct series_text *st)
{
	size_t namelen = strlen(f->name), lablen[METRIC_MAX_LABELS];
	char name[256];

	for (int k = 0; k < f->nlabels; k++)
		lablen[k] = strlen(f->labels[k]);

	family_name(f, om, name, sizeof(name));
	buf_printf(b, "# HELP %s ", name);
	put_escaped(b, f->help, om);
	buf_printf(b, "\n# TYPE %s %s\n", name, type_name(f->type));
	put_unit(b, f, name, om);
	if (f->type == METRIC_HISTOGRAM)
		format_les(f, le);
	for (size_t i = 0; i < f->n; i++) {
		const struct metric_series *s = &f->series[i];

		if (f->type != METRIC_HISTOGRAM && put_simple_line(b, f, namelen, lablen, s))
			continue;
		buf_reset(&st->labels);
		put_label_pairs(&st->labels, f, s);
		if (buf_failed(&st->labels))
			b->failed = true;
		if (f->type == METRIC_HISTOGRAM)
			put_histogram(b, f, namelen, s, le, st);
		else
			put_sample(b, f->name, namelen, "", st, s->value);
	}
}

int expo_text(const struct metric_set *set, bool openmetrics, struct buf *out)
{
	/* 24 KiB: not on the stack */
	struct le_text *le = malloc((MAX_LE + 1) * sizeof(*le));
	struct series_text st = { 0 };

	if (!le)
		return -ENOMEM;
	for (size_t i = 0; i < set->n; i++)
		if (set->fam[i].n)
			put_family(out, &set->fam[i], openmetrics, le, &st);
	free(le);
	buf_free(&st.labels);
	buf_free(&st.prefix);
	if (openmetrics)
		buf_puts(out, "# EOF\n");
	return buf_failed(out) ? -ENOMEM : 0;
}
