// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* umetrics.c - a source's maps to metric families, by a config (umetrics.h). */
#include "uprog/umetrics.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bpf.h>

#include "util/buf.h"
#include "util/rawint.h"

/* One metric: its map, where each key field starts, and its decoders. */
struct umetric {
	const struct umetric_conf *conf;
	struct umap map;
	struct label_decoder *dec[UCONF_MAX_FIELDS];
	size_t offset[UCONF_MAX_FIELDS];
	const char *label_names[METRIC_MAX_LABELS + 1];
	size_t nlabels; /* fields that are labels: a users' histogram's last is its
			 * bucket */
	const struct bucket_table *table; /* iolat's histograms */
	double *ule;			  /* a histogram's bounds, in its unit */
	size_t nule;
	size_t last_n; /* series of the previous collect: the next one's room */
	/* A counter or gauge whose labels' decoders are all pure
	 * (label_decoder_pure): keys[i * key_size] is the key its series i
	 * was decoded from, nkeys of them, so a key met again in the same
	 * place takes its series unread (counter_series). */
	bool pure;
	unsigned char *keys;
	size_t nkeys, keys_cap;
};

struct umetrics {
	const struct uconfig *conf;
	struct usource src;
	struct decoder_env *env;
	struct umetric *m;
	size_t n;
	size_t dropped;
};

/* Label values longer than this are cut (a kstack can be long). */
#define LABEL_VALUE_MAX 1024

static int failf(char *err, size_t errlen, const struct uconfig *c, int line, int col,
		 const char *fmt, const char *what, const char *more)
{
	char msg[256];

	snprintf(msg, sizeof(msg), fmt, what, more);
	snprintf(err, errlen, "%s:%d:%d: %s", c->file, line, col, msg);
	return -EINVAL;
}

static bool readable_type(unsigned type)
{
	switch (type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return true;
	default:
		return false;
	}
}

/* A users' map: a hash or array of u64s. */
static int check_u64_map(struct umetrics *u, const struct umetric *m, char *err, size_t errlen)
{
	const struct umetric_conf *mc = m->conf;
	char size[32];

	if (m->map.iolat_hist)
		return failf(err, errlen, u->conf, mc->line, mc->col,
			     "map '%s' holds iolat's histograms%s: read it with bucket_type "
			     "iolat_latency or iolat_size",
			     mc->map, "");
	if (!readable_type(m->map.m.type))
		return failf(err, errlen, u->conf, mc->line, mc->col,
			     "map '%s' is not a hash or array map%s: metrics are read from "
			     "(per-CPU, LRU) hash and array maps",
			     mc->map, "");
	if (m->map.m.value_size != 8) {
		snprintf(size, sizeof(size), "%u", m->map.m.value_size);
		return failf(err, errlen, u->conf, mc->line, mc->col,
			     "map '%s' holds %s-byte values: a metric reads one u64 (8 bytes) "
			     "per key; make the value a __u64",
			     mc->map, size);
	}
	return 0;
}

/* The map named by the metric, checked to hold what the metric reads. */
static int find_map(struct umetrics *u, struct umetric *m, char *err, size_t errlen)
{
	const struct umetric_conf *mc = m->conf;
	char why[200];

	if (u->src.map(u->src.ctx, mc->map, &m->map, why, sizeof(why)))
		return failf(err, errlen, u->conf, mc->line, mc->col, "%s%s", why, "");
	if (!mc->histogram || !ubucket_is_iolat(mc->bucket_type))
		return check_u64_map(u, m, err, errlen);
	m->table = u->src.table ? u->src.table(u->src.ctx, mc->bucket_type) : NULL;
	if (!m->map.iolat_hist || !m->table)
		return failf(err, errlen, u->conf, mc->line, mc->col,
			     "bucket_type iolat_latency and iolat_size are for iolat's own "
			     "histograms%s%s; a program's maps use exp2, linear or fixed",
			     "", "");
	return 0;
}

/* Where each field starts; the fields (with padding) must fill the key. */
static int lay_out_fields(struct umetrics *u, struct umetric *m, char *err, size_t errlen)
{
	const struct umetric_conf *mc = m->conf;
	char sizes[64];
	size_t off = mc->skip;

	for (size_t i = 0; i < mc->nfields; i++) {
		m->offset[i] = off;
		off += mc->field[i].size + mc->field[i].padding;
	}
	if (off == m->map.m.key_size)
		return 0;
	snprintf(sizes, sizeof(sizes), "%zu bytes, but map '%s' has %u-byte keys", off, mc->map,
		 m->map.m.key_size);
	return failf(err, errlen, u->conf, mc->line, mc->col,
		     "the labels of '%s' (sizes and padding) add up to %s: give every field "
		     "of the key struct, in order, with its padding",
		     mc->name, sizes);
}

/* kstack's stack-trace map, in the same source. */
static int map_fd_of(void *arg, const char *name)
{
	const struct usource *src = arg;
	struct umap m;
	char err[200];

	return src->map(src->ctx, name, &m, err, sizeof(err)) ? -1 : m.m.fd;
}

/* Bucket i's upper bound in the metric's unit. */
static double bucket_bound(const struct umetric_conf *mc, size_t i)
{
	switch (mc->bucket_type) {
	case UBUCKET_EXP2:
		return ldexp(1.0, (int)(mc->bucket_min + (int64_t)i)) * mc->bucket_multiplier;
	case UBUCKET_LINEAR:
		return (double)(mc->bucket_min + (int64_t)i) * mc->bucket_multiplier;
	case UBUCKET_FIXED:
		return mc->bucket_keys[i] * mc->bucket_multiplier;
	case UBUCKET_IOLAT_LATENCY:
	case UBUCKET_IOLAT_SIZE:
	case UBUCKET_IOLAT_WORKLOAD_LATENCY:
		break; /* the table's own */
	}
	return 0;
}

static int make_bounds(struct umetric *m)
{
	const struct umetric_conf *mc = m->conf;

	m->nule = mc->bucket_type == UBUCKET_FIXED ? mc->nkeys
						   : (size_t)(mc->bucket_max - mc->bucket_min + 1);
	m->ule = calloc(m->nule, sizeof(*m->ule));
	if (!m->ule)
		return -ENOMEM;
	for (size_t i = 0; i < m->nule; i++)
		m->ule[i] = bucket_bound(mc, i);
	return 0;
}

static int prepare_metric(struct umetrics *u, struct umetric *m, char *err, size_t errlen)
{
	const struct umetric_conf *mc = m->conf;

	bool bucket_field = mc->histogram && !ubucket_is_iolat(mc->bucket_type);

	m->nlabels = bucket_field ? mc->nfields - 1 : mc->nfields;
	if (m->nlabels > METRIC_MAX_LABELS)
		return failf(err, errlen, u->conf, mc->line, mc->col,
			     "'%s' has more than %s labels", mc->name, "8");
	int rc = find_map(u, m, err, errlen);

	if (!rc)
		rc = lay_out_fields(u, m, err, errlen);
	if (rc)
		return rc;
	for (size_t i = 0; i < m->nlabels; i++) {
		char why[200];

		m->label_names[i] = mc->field[i].name;
		if (label_decoder_new(&mc->field[i], map_fd_of, &u->src, &m->dec[i], why,
				      sizeof(why)))
			return failf(err, errlen, u->conf, mc->field[i].line, mc->field[i].col,
				     "%s%s", strchr(why, ' ') ? strchr(why, ' ') + 1 : why, "");
	}
	m->pure = !mc->histogram;
	for (size_t i = 0; i < m->nlabels; i++)
		m->pure = m->pure && label_decoder_pure(m->dec[i]);
	if (bucket_field && make_bounds(m)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

int umetrics_new(struct umetrics **out, const struct uconfig *c, const struct usource *src,
		 struct decoder_env *env, char *err, size_t errlen)
{
	struct umetrics *u = calloc(1, sizeof(*u));

	if (u)
		u->m = calloc(c->nmetrics ? c->nmetrics : 1, sizeof(*u->m));
	if (!u || !u->m) {
		free(u);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	u->conf = c;
	u->src = *src;
	u->env = env;
	for (; u->n < c->nmetrics; u->n++) {
		int rc;

		u->m[u->n].conf = &c->metric[u->n];
		rc = prepare_metric(u, &u->m[u->n], err, errlen);
		if (rc) {
			u->n++;
			umetrics_free(u);
			return rc;
		}
	}
	*out = u;
	return 0;
}

void umetrics_free(struct umetrics *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n; i++) {
		for (size_t k = 0; k < UCONF_MAX_FIELDS; k++)
			label_decoder_free(u->m[i].dec[k]);
		free(u->m[i].ule);
		free(u->m[i].keys);
	}
	free(u->m);
	free(u);
}

/* The bucket a histogram key's bucket field names: 0..nule-1, or nule for
 * the sum key. Out of range: the nearest bucket, as the program's helper
 * would have clamped. */
static size_t bucket_index(const struct umetric *m, uint64_t b)
{
	const struct umetric_conf *mc = m->conf;

	if (mc->bucket_type == UBUCKET_FIXED)
		return b >= m->nule ? m->nule : (size_t)b;
	if ((int64_t)b == mc->bucket_max + 1)
		return m->nule;
	if ((int64_t)b <= mc->bucket_min)
		return 0;
	if ((int64_t)b > mc->bucket_max)
		return m->nule - 1;
	return (size_t)((int64_t)b - mc->bucket_min);
}

struct walk {
	struct umetrics *u;
	struct umetric *m;
	struct metric_family *f;
	char (*vals)[LABEL_VALUE_MAX]; /* an entry's decoded labels, METRIC_MAX_LABELS */
};

/* The series of the entry's label values; NULL with *dropped when a
 * decoder left it out. */
static struct metric_series *series_of(struct walk *w, const unsigned char *k, bool *dropped)
{
	const char *pv[METRIC_MAX_LABELS];
	const struct umetric *m = w->m;

	for (size_t i = 0; i < m->nlabels; i++) {
		if (label_decode(m->dec[i], w->u->env, k + m->offset[i], w->vals[i],
				 sizeof(w->vals[i])) != DECODE_OK) {
			*dropped = true;
			return NULL;
		}
		pv[i] = w->vals[i];
	}
	return metrics_series(w->f, pv, m->table);
}

/* Notes k as the key series `at` was decoded from. false: out of memory. */
static bool note_key(struct umetric *m, size_t at, const unsigned char *k)
{
	size_t ks = m->map.m.key_size;

	if (at >= m->keys_cap &&
	    array_make_room((void **)&m->keys, &m->keys_cap, at, ks, m->last_n + 1))
		return false;
	memcpy(m->keys + at * ks, k, ks);
	if (at >= m->nkeys)
		m->nkeys = at + 1;
	return true;
}

/*
 * A pure counter's series (struct umetric): where the last scrape had this
 * very key in this place, its series again with no decoding, no string
 * compared and no hash (the bulk of 10 000 series, which a map walks in
 * the same order while its keys stay); else decoded (series_of), its key
 * noted where the series was made. NULL as series_of gives it.
 */
static struct metric_series *counter_series(struct walk *w, const unsigned char *k, bool *dropped)
{
	struct umetric *m = w->m;
	size_t ks = m->map.m.key_size, at = w->f->n;
	struct metric_series *s;

	if (at < m->nkeys && !memcmp(m->keys + at * ks, k, ks)) {
		s = metrics_series_again(w->f, NULL);
		if (s)
			return s;
	}
	s = series_of(w, k, dropped);
	/* A new series is the family's last; one found again is not noted. */
	if (s && w->f->n == at + 1 && s == &w->f->series[at] && !note_key(m, at, k))
		return NULL;
	return s;
}

static int on_entry(void *arg, const void *key, const struct uvalue *v)
{
	struct walk *w = arg;
	const struct umetric *m = w->m;
	const unsigned char *k = key;
	size_t last = m->conf->nfields - 1, b;
	bool dropped = false;
	struct metric_series *s =
	    m->pure ? counter_series(w, k, &dropped) : series_of(w, k, &dropped);

	if (dropped) {
		w->u->dropped++;
		return 0;
	}
	if (!s)
		return -ENOMEM;
	if (m->table) {
		const struct metric_slots in = { .slots = v->slots,
						 .lo = v->slot_lo,
						 .hi = v->slot_hi,
						 .count = v->count,
						 .count_summed = v->count_summed };

		return v->slots ? metrics_hist_add_slots(s, &in, v->sum_raw) : 0;
	}
	if (!m->conf->histogram) {
		s->value += (double)v->u64;
		return 0;
	}
	b = bucket_index(m, rawint_unsigned(k + m->offset[last], m->conf->field[last].size));
	if (b == m->nule) {
		s->hist.sum += (double)v->u64 * m->conf->bucket_multiplier;
		return 0;
	}
	return metrics_uhist_add(w->f, s, b, v->u64);
}

static int collect_metric(struct umetrics *u, struct umetric *m, struct metric_set *set, char *err,
			  size_t errlen)
{
	const struct umetric_conf *mc = m->conf;
	struct walk w = { .u = u, .m = m };
	int rc;

	w.f = metrics_family(set, mc->name, mc->help,
			     mc->histogram ? METRIC_HISTOGRAM : METRIC_COUNTER, m->label_names);
	if (!w.f) {
		snprintf(err, errlen, "too many metric families (%d at most)", METRIC_MAX_FAMILIES);
		return -ENOSPC;
	}
	if (m->table)
		w.f->le = u->src.le(u->src.ctx, mc->bucket_type, &w.f->nle);
	w.f->ule = m->ule;
	w.f->nule = m->nule;
	/* As many series as last time: no growing and rehashing on the way. */
	w.vals =
	    metrics_reserve(w.f, m->last_n) ? NULL : malloc(METRIC_MAX_LABELS * sizeof(*w.vals));
	rc = w.vals ? u->src.read(u->src.ctx, &m->map, on_entry, &w, err, errlen) : -ENOMEM;
	free(w.vals);
	m->last_n = w.f->n;
	if (rc > 0 || rc == -ENOMEM) {
		snprintf(err, errlen, "out of memory reading map '%s'", mc->map);
		return -ENOMEM;
	}
	return rc < 0 ? rc : 0; /* the source's -errno */
}

int umetrics_collect(struct umetrics *u, struct metric_set *set, char *err, size_t errlen)
{
	u->dropped = 0;
	for (size_t i = 0; i < u->n; i++) {
		int rc = collect_metric(u, &u->m[i], set, err, errlen);

		if (rc)
			return rc;
	}
	return 0;
}

size_t umetrics_dropped(const struct umetrics *u)
{
	return u->dropped;
}
