// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * expo_text.c - Prometheus text format 0.0.4 and OpenMetrics 1.0 text
 * (expo_text.h). The two differ in counter metadata names (OpenMetrics
 * names the family without _total), escaping rules and the # EOF trailer.
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

static void put_escaped(struct buf *b, const char *s, bool quote)
{
	if (!strpbrk(s, quote ? "\\\n\"" : "\\\n")) {
		buf_puts(b, s);
		return;
	}
	for (; *s; s++) {
		if (*s == '\\')
			buf_puts(b, "\\\\");
		else if (*s == '\n')
			buf_puts(b, "\\n");
		else if (quote && *s == '"')
			buf_puts(b, "\\\"");
		else
			buf_append(b, s, 1);
	}
}

/* a="x",b="y": the series' own labels, escaped. */
static void put_label_pairs(struct buf *b, const struct metric_family *f,
			    const struct metric_series *s)
{
	for (int k = 0; k < f->nlabels; k++) {
		if (k)
			buf_puts(b, ",");
		buf_puts(b, f->labels[k]);
		buf_puts(b, "=\"");
		put_escaped(b, s->values[k], true);
		buf_puts(b, "\"");
	}
}

/* {a="x",b="y"[,le="…"]} — nothing when there are no labels at all. */
static void put_labels(struct buf *b, const struct metric_family *f, const struct metric_series *s,
		       const char *le)
{
	if (!f->nlabels && !le)
		return;
	buf_puts(b, "{");
	put_label_pairs(b, f, s);
	if (le) {
		buf_puts(b, f->nlabels ? ",le=\"" : "le=\"");
		buf_puts(b, le);
		buf_puts(b, "\"");
	}
	buf_puts(b, "}");
}

static void put_sample(struct buf *b, const char *name, const char *suffix,
		       const struct metric_family *f, const struct metric_series *s, const char *le,
		       double v)
{
	char num[32];

	expo_format_double(num, sizeof(num), v);
	buf_puts(b, name);
	buf_puts(b, suffix);
	put_labels(b, f, s, le);
	buf_puts(b, " ");
	buf_puts(b, num);
	buf_puts(b, "\n");
}

#define MAX_LE 512

/* The family's `le` strings, formatted once per scrape, not per series. */
static void format_les(const struct metric_family *f, char (*le)[32])
{
	const struct bucket_table *t = f->n ? f->series[0].hist.table : NULL;

	for (size_t i = 0; f->ule && i < f->nule && i < MAX_LE; i++)
		expo_format_double(le[i], sizeof(le[i]), f->ule[i]);
	for (size_t i = 0; t && i < f->nle && i < MAX_LE; i++)
		expo_format_double(le[i], sizeof(le[i]), (double)f->le[i] / (double)t->per_base);
}

/* One `_bucket` line: the series' prefix (NAME_bucket{labels, formatted
 * once per series), then its bound and count. */
static void put_bucket(struct buf *b, const struct buf *prefix, const char *le, uint64_t cum)
{
	char num[32];

	expo_format_double(num, sizeof(num), (double)cum);
	buf_append(b, prefix->data, prefix->len);
	buf_puts(b, "le=\"");
	buf_puts(b, le);
	buf_puts(b, "\"} ");
	buf_puts(b, num);
	buf_puts(b, "\n");
}

/* prefix: scratch for the series' bucket line prefix, the caller's. */
static void put_histogram(struct buf *b, const struct metric_family *f,
			  const struct metric_series *s, char (*le)[32], struct buf *prefix)
{
	const struct bucket_table *t = s->hist.table;
	uint64_t cum = 0;
	size_t slot = 0;

	buf_reset(prefix);
	buf_puts(prefix, f->name);
	buf_puts(prefix, "_bucket{");
	put_label_pairs(prefix, f, s);
	if (f->nlabels)
		buf_puts(prefix, ",");
	for (size_t i = 0; f->ule && i < f->nule && i < MAX_LE; i++) {
		cum += s->hist.owned ? s->hist.owned[i] : 0;
		put_bucket(b, prefix, le[i], cum);
	}
	/* One pass: the le bounds ascend, and so do the slots' bounds. */
	for (size_t i = 0; t && i < f->nle && i < MAX_LE; i++) {
		for (; s->hist.slots && slot < t->nbounds && t->bound[slot] <= f->le[i]; slot++)
			cum += s->hist.slots[slot];
		put_bucket(b, prefix, le[i], cum);
	}
	put_bucket(b, prefix, "+Inf", s->hist.count);
	if (buf_failed(prefix))
		b->failed = true;
	put_sample(b, f->name, "_sum", f, s, NULL, s->hist.sum);
	put_sample(b, f->name, "_count", f, s, NULL, (double)s->hist.count);
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

/* le: room for MAX_LE bounds' strings, prefix a scratch buffer: the caller's. */
static void put_family(struct buf *b, const struct metric_family *f, bool om, char (*le)[32],
		       struct buf *prefix)
{
	char name[256];

	family_name(f, om, name, sizeof(name));
	buf_printf(b, "# HELP %s ", name);
	put_escaped(b, f->help, om);
	buf_printf(b, "\n# TYPE %s %s\n", name, type_name(f->type));
	if (f->type == METRIC_HISTOGRAM)
		format_les(f, le);
	for (size_t i = 0; i < f->n; i++) {
		const struct metric_series *s = &f->series[i];

		if (f->type == METRIC_HISTOGRAM)
			put_histogram(b, f, s, le, prefix);
		else
			put_sample(b, f->name, "", f, s, NULL, s->value);
	}
}

int expo_text(const struct metric_set *set, bool openmetrics, struct buf *out)
{
	char(*le)[32] = malloc(MAX_LE * sizeof(*le)); /* 16 KiB: not on the stack */
	struct buf prefix = { 0 };

	if (!le)
		return -ENOMEM;
	for (size_t i = 0; i < set->n; i++)
		if (set->fam[i].n)
			put_family(out, &set->fam[i], openmetrics, le, &prefix);
	free(le);
	buf_free(&prefix);
	if (openmetrics)
		buf_puts(out, "# EOF\n");
	return buf_failed(out) ? -ENOMEM : 0;
}
