// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * expo_proto.c - Prometheus protobuf exposition (expo_proto.h), packed by
 * the protoc-c code generated from proto/prometheus.proto.
 *
 * protobuf-c packs a tree of C structs that point at each other, so each
 * family's tree is built in a few per-family arrays (one allocation per
 * kind of message, sliced per series), packed, and freed before the next
 * family: memory stays bounded by the largest family, not the whole set.
 */
#include "metrics/expo_proto.h"

#include <errno.h>
#include <stdlib.h>

#include "prometheus.pb-c.h"

/* The generated names run to 40 characters; these keep lines readable. */
typedef Io__Prometheus__Client__MetricFamily pb_family;
typedef Io__Prometheus__Client__Metric pb_metric;
typedef Io__Prometheus__Client__LabelPair pb_label;
typedef Io__Prometheus__Client__Counter pb_counter;
typedef Io__Prometheus__Client__Gauge pb_gauge;
typedef Io__Prometheus__Client__Histogram pb_hist;
typedef Io__Prometheus__Client__Bucket pb_bucket;
typedef Io__Prometheus__Client__BucketSpan pb_span;

/* Every message of one family's tree; NULL members are simply unused. */
struct fam_tree {
	pb_family fam;
	pb_metric *metric;
	pb_metric **metric_ptr;
	pb_label *label;
	pb_label **label_ptr;
	pb_counter *counter;
	pb_gauge *gauge;
	pb_hist *hist;
	pb_bucket *bucket;
	pb_bucket **bucket_ptr;
	pb_span *span;
	pb_span **span_ptr;
	int64_t *delta;
};

/* Builds one histogram's positive spans and deltas as buckets arrive. */
struct native_ctx {
	pb_hist *h;
	pb_span *span; /* this series' slice of fam_tree.span */
	int next;      /* index just past the previous bucket */
	uint64_t prev; /* previous bucket's count: deltas are relative to it */
};

/* calloc that returns memory for n == 0 too, so NULL always means failure. */
static void *zcalloc(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

static void tree_free(struct fam_tree *t)
{
	free(t->metric);
	free(t->metric_ptr);
	free(t->label);
	free(t->label_ptr);
	free(t->counter);
	free(t->gauge);
	free(t->hist);
	free(t->bucket);
	free(t->bucket_ptr);
	free(t->span);
	free(t->span_ptr);
	free(t->delta);
}

/*
 * Called by metrics_hist_native for each non-empty native bucket, in
 * ascending index order. Consecutive indexes extend the current span; a
 * gap opens a new one whose offset is the gap's width (the first span's
 * offset is its absolute index). Deltas chain across spans.
 */
static void emit_native(void *p, int index, uint64_t count)
{
	struct native_ctx *c = p;
	pb_hist *h = c->h;

	if (!h->n_positive_span || index != c->next) {
		pb_span *sp = &c->span[h->n_positive_span];

		io__prometheus__client__bucket_span__init(sp);
		sp->has_offset = sp->has_length = 1;
		sp->offset = h->n_positive_span ? index - c->next : index;
		h->positive_span[h->n_positive_span++] = sp;
	}
	h->positive_span[h->n_positive_span - 1]->length++;
	h->positive_delta[h->n_positive_delta++] = (int64_t)count - (int64_t)c->prev;
	c->prev = count;
	c->next = index + 1;
}

/*
 * Non-empty slots of a series: at least one per native bucket
 * metrics_hist_native can emit, so it sizes the span and delta arrays.
 */
static size_t used_slots(const struct metric_series *s)
{
	size_t n = 0;

	for (size_t i = s->hist.lo; s->hist.table && s->hist.slots &&
				    i < (s->hist.hi ? s->hist.hi : s->hist.table->nslots);
	     i++)
		n += s->hist.slots[i] != 0;
	return n;
}

/*
 * Fills histogram message h for series s. Spans and deltas go into
 * span/span_ptr/delta, which must have room for used_slots(s) entries.
 */
static void fill_hist(pb_hist *h, const struct metric_family *f, const struct metric_series *s,
		      pb_bucket *bucket, pb_bucket **bucket_ptr, pb_span *span, pb_span **span_ptr,
		      int64_t *delta)
{
	const struct bucket_table *t = s->hist.table;
	struct native_ctx c = { .h = h, .span = span };
	uint64_t zero_count;

	io__prometheus__client__histogram__init(h);
	h->has_sample_count = h->has_sample_sum = 1;
	h->sample_count = s->hist.count;
	h->sample_sum = s->hist.sum;

	h->bucket = bucket_ptr;
	if (!t) { /* buckets of its own: classic only */
		uint64_t cum = 0;

		h->n_bucket = f->nule;
		for (size_t i = 0; i < f->nule; i++) {
			cum += s->hist.owned ? s->hist.owned[i] : 0;
			io__prometheus__client__bucket__init(&bucket[i]);
			bucket[i].has_cumulative_count = bucket[i].has_upper_bound = 1;
			bucket[i].cumulative_count = cum;
			bucket[i].upper_bound = f->ule[i];
			bucket_ptr[i] = &bucket[i];
		}
		return;
	}
	h->n_bucket = f->nle;
	for (size_t i = 0; i < f->nle; i++) {
		io__prometheus__client__bucket__init(&bucket[i]);
		bucket[i].has_cumulative_count = bucket[i].has_upper_bound = 1;
		bucket[i].cumulative_count = metrics_hist_cumulative(s, f->le[i]);
		bucket[i].upper_bound = (double)f->le[i] / (double)t->per_base;
		bucket_ptr[i] = &bucket[i];
	}

	/*
	 * Schema, threshold and zero count go out even when every native
	 * bucket is empty: Prometheus reads a histogram with a positive zero
	 * threshold as native, so a fresh series is native from its first
	 * scrape rather than switching type on its first observation.
	 */
	h->has_schema = h->has_zero_threshold = h->has_zero_count = 1;
	h->schema = t->native_schema;
	h->zero_threshold = buckets_native_zero_threshold(t);
	h->positive_span = span_ptr;
	h->positive_delta = delta;
	metrics_hist_native(s, &zero_count, emit_native, &c);
	h->zero_count = zero_count;
}

/* The MetricType that tells Prometheus which Metric field to read. */
static Io__Prometheus__Client__MetricType pb_type(enum metric_type type)
{
	switch (type) {
	case METRIC_COUNTER:
		return IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER;
	case METRIC_GAUGE:
		return IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE;
	case METRIC_HISTOGRAM:
		break;
	}
	return IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM;
}

/* Builds the message tree of family f (which has series) into t. */
static int build_family(struct fam_tree *t, const struct metric_family *f)
{
	size_t nlab = (size_t)f->nlabels, nnat = 0, nle = f->ule ? f->nule : f->nle;

	io__prometheus__client__metric_family__init(&t->fam);
	/* protobuf-c only reads these strings while packing: the casts are safe. */
	t->fam.name = (char *)f->name;
	t->fam.help = (char *)f->help;
	t->fam.unit = (char *)metrics_family_unit(f); /* NULL: no unit, field absent */
	t->fam.has_type = 1;
	t->fam.type = pb_type(f->type);

	t->metric = zcalloc(f->n, sizeof(*t->metric));
	t->metric_ptr = zcalloc(f->n, sizeof(*t->metric_ptr));
	t->label = zcalloc(f->n * nlab, sizeof(*t->label));
	t->label_ptr = zcalloc(f->n * nlab, sizeof(*t->label_ptr));
	if (!t->metric || !t->metric_ptr || !t->label || !t->label_ptr)
		return -ENOMEM;
	if (f->type == METRIC_COUNTER) {
		t->counter = zcalloc(f->n, sizeof(*t->counter));
		if (!t->counter)
			return -ENOMEM;
	} else if (f->type == METRIC_GAUGE) {
		t->gauge = zcalloc(f->n, sizeof(*t->gauge));
		if (!t->gauge)
			return -ENOMEM;
	} else {
		for (size_t i = 0; i < f->n; i++)
			nnat += used_slots(&f->series[i]);
		t->hist = zcalloc(f->n, sizeof(*t->hist));
		t->bucket = zcalloc(f->n * nle, sizeof(*t->bucket));
		t->bucket_ptr = zcalloc(f->n * nle, sizeof(*t->bucket_ptr));
		t->span = zcalloc(nnat, sizeof(*t->span));
		t->span_ptr = zcalloc(nnat, sizeof(*t->span_ptr));
		t->delta = zcalloc(nnat, sizeof(*t->delta));
		if (!t->hist || !t->bucket || !t->bucket_ptr || !t->span || !t->span_ptr ||
		    !t->delta)
			return -ENOMEM;
	}

	t->fam.n_metric = f->n;
	t->fam.metric = t->metric_ptr;
	nnat = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct metric_series *s = &f->series[i];
		pb_metric *m = &t->metric[i];

		io__prometheus__client__metric__init(m);
		t->metric_ptr[i] = m;
		m->n_label = 0;
		m->label = &t->label_ptr[i * nlab];
		for (size_t k = 0; k < nlab; k++) {
			pb_label *l = &t->label[i * nlab + k];

			if (!s->values[k][0] && (f->omit_empty >> k & 1))
				continue; /* as in the text */
			io__prometheus__client__label_pair__init(l);
			l->name = (char *)f->labels[k];
			l->value = (char *)s->values[k];
			m->label[m->n_label++] = l;
		}
		if (t->counter) {
			io__prometheus__client__counter__init(&t->counter[i]);
			t->counter[i].has_value = 1;
			t->counter[i].value = s->value;
			m->counter = &t->counter[i];
		} else if (t->gauge) {
			io__prometheus__client__gauge__init(&t->gauge[i]);
			t->gauge[i].has_value = 1;
			t->gauge[i].value = s->value;
			m->gauge = &t->gauge[i];
		} else {
			fill_hist(&t->hist[i], f, s, &t->bucket[i * nle], &t->bucket_ptr[i * nle],
				  &t->span[nnat], &t->span_ptr[nnat], &t->delta[nnat]);
			m->histogram = &t->hist[i];
			nnat += used_slots(s);
		}
	}
	return 0;
}

/* Appends v as a base-128 varint, low group first (protobuf's encoding). */
static void put_varint(struct buf *out, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n] = v & 0x7f;
		v >>= 7;
		if (v)
			b[n] |= 0x80;
		n++;
	} while (v);
	buf_append(out, b, n);
}

/* Packs family f as one length-prefixed MetricFamily onto out. */
static int put_family(struct buf *out, const struct metric_family *f)
{
	struct fam_tree t = { 0 };
	uint8_t *packed = NULL;
	size_t len;
	int err;

	err = build_family(&t, f);
	if (err)
		goto out;
	len = io__prometheus__client__metric_family__get_packed_size(&t.fam);
	packed = malloc(len ? len : 1);
	if (!packed) {
		err = -ENOMEM;
		goto out;
	}
	io__prometheus__client__metric_family__pack(&t.fam, packed);
	put_varint(out, len);
	buf_append(out, packed, len);
out:
	free(packed);
	tree_free(&t);
	return err;
}

int expo_proto(const struct metric_set *set, struct buf *out)
{
	for (size_t i = 0; i < set->n; i++) {
		if (!set->fam[i].n)
			continue;
		if (put_family(out, &set->fam[i]))
			return -ENOMEM;
	}
	return buf_failed(out) ? -ENOMEM : 0;
}
