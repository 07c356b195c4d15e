// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * trace_join_print.c - a join's chains and summary (trace_join_print.h), as
 * text or JSON. Percentiles here are exact: every chain is in memory, so
 * they are read from the sorted spans, not from buckets.
 */
#include "cli/trace_join_print.h"

#include <stdlib.h>
#include <string.h>

#include "core/names.h"
#include "core/trace_syscalls.h"
#include "util/json.h"

static void dev_text(uint32_t dev, char *buf, size_t len)
{
	snprintf(buf, len, "%u:%u", dev >> 20, dev & 0xfffff);
}

static const char *miss_name(enum join_miss m)
{
	static const char *const names[JOIN_MISSES] = { "no_data", "no_host_call",
							"no_call_in_time" };

	return names[m];
}

static void chain_text(const struct join_chain *c, uint64_t t0)
{
	char gdev[24], hdev[24];

	dev_text(c->guest_dev, gdev, sizeof(gdev));
	dev_text(c->host_dev, hdev, sizeof(hdev));
	printf("%-11.6f %-8s %-2c %-12llu %-7u", (double)(c->c - t0) / 1e9, gdev,
	       names_op_rwbs(c->op), (unsigned long long)c->offset, c->bytes);
	for (int s = 0; s < JOIN_SPANS; s++)
		printf(" %9.3f", (double)c->span_ns[s] / 1e6);
	printf(" %9.3f  %s %s\n", (double)(c->c - c->q) / 1e6,
	       c->sys_nr == JOIN_NO_CALL ? "-" : tracer_syscall_name(c->sys_nr),
	       c->host_bios ? hdev : "-");
}

static void chain_json(const struct join_chain *c)
{
	char dev[24];
	struct json j;

	json_init(&j, stdout);
	json_begin_object(&j);
	json_kv_string(&j, "type", "chain");
	dev_text(c->guest_dev, dev, sizeof(dev));
	json_kv_string(&j, "guest_dev", dev);
	json_kv_string(&j, "op", c->op == IOLAT_OP_WRITE ? "write" : "read");
	json_kv_uint(&j, "offset", c->offset);
	json_kv_uint(&j, "bytes", c->bytes);
	json_kv_uint(&j, "guest_bios", c->bios);
	json_kv_uint(&j, "guest_q_ns", c->q);
	json_kv_uint(&j, "guest_d_ns", c->d);
	json_kv_uint(&j, "guest_c_ns", c->c);
	json_kv_uint(&j, "q2c_ns", c->c - c->q);
	if (c->sys_nr == JOIN_NO_CALL) /* matched to its host bio */
		json_kv_null(&j, "syscall");
	else
		json_kv_string(&j, "syscall", tracer_syscall_name(c->sys_nr));
	json_kv_uint(&j, "tid", c->tid);
	json_kv_int(&j, "sys_offset", c->sys_offset);
	json_kv_uint(&j, "sys_bytes", c->sys_bytes);
	json_kv_uint(&j, "enter_ns", c->enter);
	json_kv_uint(&j, "exit_ns", c->exit);
	json_kv_uint(&j, "host_bios", c->host_bios);
	dev_text(c->host_dev, dev, sizeof(dev));
	json_kv_string(&j, "host_dev", c->host_bios ? dev : "");
	json_key(&j, "spans_ns");
	json_begin_object(&j);
	for (int s = 0; s < JOIN_SPANS; s++)
		json_kv_int(&j, trace_join_span_name((enum join_span)s), c->span_ns[s]);
	json_end_object(&j);
	json_end_object(&j);
	putchar('\n');
}

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The value at quantile q of n sorted values (nearest rank). */
static int64_t rank(const int64_t *v, size_t n, double q)
{
	size_t i = (size_t)(q * (double)n + 0.999999);

	return n ? v[i ? i - 1 : 0] : 0;
}

struct span_stats {
	int64_t p50, p90, p99, max;
	double share, tail_share; /* of the summed Q2C: all chains, the tail's */
};

/* Each span's percentiles and share, over the matched chains; the tail is
 * the chains whose guest Q2C is at or above the Q2C's p99. */
static int span_stats(const struct join_result *r, struct span_stats *st, int64_t *q2c_p)
{
	int64_t *v = malloc((r->matched + 1) * sizeof(*v)), tail_from;
	double total = 0, tail_total = 0;
	size_t n = 0;

	if (!v)
		return -1;
	for (size_t i = 0; i < r->n; i++)
		if (r->chains[i].matched)
			v[n++] = (int64_t)(r->chains[i].c - r->chains[i].q);
	qsort(v, n, sizeof(*v), by_value);
	q2c_p[0] = rank(v, n, 0.5);
	q2c_p[1] = rank(v, n, 0.9);
	q2c_p[2] = tail_from = rank(v, n, 0.99);
	q2c_p[3] = n ? v[n - 1] : 0;
	for (int s = 0; s < JOIN_SPANS; s++) {
		double sum = 0, tail = 0;

		n = 0;
		total = tail_total = 0;
		for (size_t i = 0; i < r->n; i++) {
			const struct join_chain *c = &r->chains[i];
			int64_t q2c = (int64_t)(c->c - c->q);

			if (!c->matched)
				continue;
			v[n++] = c->span_ns[s];
			sum += (double)c->span_ns[s];
			total += (double)q2c;
			if (q2c >= tail_from) {
				tail += (double)c->span_ns[s];
				tail_total += (double)q2c;
			}
		}
		qsort(v, n, sizeof(*v), by_value);
		st[s] = (struct span_stats){ rank(v, n, 0.5),
					     rank(v, n, 0.9),
					     rank(v, n, 0.99),
					     n ? v[n - 1] : 0,
					     total ? 100 * sum / total : 0,
					     tail_total ? 100 * tail / tail_total : 0 };
	}
	free(v);
	return 0;
}

static void summary_text(const struct join_result *r, const struct span_stats *st,
			 const int64_t *q2c)
{
	const struct join_clock *k = &r->clock;
	char dev[24];

	printf("clock: host = guest %+.6f s, drift %+.3f ppm; error bound +-%.3f ms "
	       "(from %zu pairs, each request's only call that fits)\n",
	       (double)k->offset_ns / 1e9, k->drift * 1e6, (double)k->bound_ns / 1e6, k->pairs);
	if (k->from_all)
		printf("clock: no request had only one call that fits (requests at one offset "
		       "overlap): from all %zu matched pairs, the bound is not a guarantee\n",
		       k->pairs);
	if (r->image_rdev) {
		dev_text(r->image_rdev, dev, sizeof(dev));
		printf("image: block device %s\n", dev);
	} else if (r->image_ino) {
		dev_text(r->image_dev, dev, sizeof(dev));
		printf("image: file %s inode %llu\n", dev, (unsigned long long)r->image_ino);
	}
	printf("matched %zu of %zu guest requests (%.1f%%)", r->matched, r->n,
	       r->n ? 100.0 * (double)r->matched / (double)r->n : 0);
	printf("; unmatched: %zu with no host call at their offset, %zu with none at a "
	       "time the clock allows; %zu without data (flushes) not matched\n",
	       r->misses[JOIN_MISS_NO_CALL], r->misses[JOIN_MISS_NO_CLOCK],
	       r->misses[JOIN_MISS_NO_DATA]);
	printf("\n  %-12s %9s %9s %9s %9s %7s %10s\n", "span (ms)", "p50", "p90", "p99", "max",
	       "share", "tail share");
	for (int s = 0; s < JOIN_SPANS; s++)
		printf("  %-12s %9.3f %9.3f %9.3f %9.3f %6.1f%% %9.1f%%\n",
		       trace_join_span_name((enum join_span)s), (double)st[s].p50 / 1e6,
		       (double)st[s].p90 / 1e6, (double)st[s].p99 / 1e6, (double)st[s].max / 1e6,
		       st[s].share, st[s].tail_share);
	printf("  %-12s %9.3f %9.3f %9.3f %9.3f\n", "guest Q2C", (double)q2c[0] / 1e6,
	       (double)q2c[1] / 1e6, (double)q2c[2] / 1e6, (double)q2c[3] / 1e6);
	printf("(tail share: of the chains whose guest Q2C is at or above its p99)\n");
}

static void summary_json(const struct join_result *r, const struct span_stats *st,
			 const int64_t *q2c)
{
	const struct join_clock *k = &r->clock;
	char dev[24];
	struct json j;

	json_init(&j, stdout);
	json_begin_object(&j);
	json_kv_string(&j, "type", "join_summary");
	json_kv_uint(&j, "guest_requests", r->n);
	json_kv_uint(&j, "matched", r->matched);
	json_kv_uint(&j, "host_calls", r->host_calls);
	json_key(&j, "unmatched");
	json_begin_object(&j);
	for (int m = 0; m < JOIN_MISSES; m++)
		json_kv_uint(&j, miss_name((enum join_miss)m), r->misses[m]);
	json_end_object(&j);
	json_key(&j, "clock");
	json_begin_object(&j);
	json_kv_int(&j, "offset_ns", k->offset_ns);
	json_kv_double(&j, "drift_ppm", k->drift * 1e6);
	json_kv_uint(&j, "t0_ns", k->t0_ns);
	json_kv_int(&j, "bound_ns", k->bound_ns);
	json_kv_uint(&j, "pairs", k->pairs);
	json_kv_bool(&j, "from_all_pairs", k->from_all);
	json_end_object(&j);
	dev_text(r->image_rdev ? r->image_rdev : r->image_dev, dev, sizeof(dev));
	json_kv_string(&j, r->image_rdev ? "image_rdev" : "image_dev", dev);
	json_kv_uint(&j, "image_ino", r->image_ino);
	json_key(&j, "spans");
	json_begin_object(&j);
	for (int s = 0; s < JOIN_SPANS; s++) {
		json_key(&j, trace_join_span_name((enum join_span)s));
		json_begin_object(&j);
		json_kv_int(&j, "p50_ns", st[s].p50);
		json_kv_int(&j, "p90_ns", st[s].p90);
		json_kv_int(&j, "p99_ns", st[s].p99);
		json_kv_int(&j, "max_ns", st[s].max);
		json_kv_double(&j, "share_pct", st[s].share);
		json_kv_double(&j, "tail_share_pct", st[s].tail_share);
		json_end_object(&j);
	}
	json_end_object(&j);
	json_key(&j, "q2c");
	json_begin_object(&j);
	json_kv_int(&j, "p50_ns", q2c[0]);
	json_kv_int(&j, "p90_ns", q2c[1]);
	json_kv_int(&j, "p99_ns", q2c[2]);
	json_kv_int(&j, "max_ns", q2c[3]);
	json_end_object(&j);
	json_end_object(&j);
	putchar('\n');
}

int trace_join_print(const struct join_result *r, bool json, bool summary_only)
{
	struct span_stats st[JOIN_SPANS];
	int64_t q2c[4];
	uint64_t t0 = r->n ? r->chains[0].c : 0;

	if (!summary_only && !json) {
		printf("%-11s %-8s %-2s %-12s %-7s", "TIME(s)", "GDEV", "T", "OFFSET", "BYTES");
		printf(" %9s %9s %9s %9s %9s %9s %9s %9s  %s\n", "G_QUEUE", "V_IN", "H_FS",
		       "H_BLOCK", "H_DEV", "H_RET", "V_OUT", "G_Q2C", "CALL HDEV");
	}
	for (size_t i = 0; i < r->n && !summary_only; i++) {
		if (!r->chains[i].matched)
			continue;
		if (json)
			chain_json(&r->chains[i]);
		else
			chain_text(&r->chains[i], t0);
	}
	if (span_stats(r, st, q2c))
		return -1;
	if (json)
		summary_json(r, st, q2c);
	else {
		if (!summary_only)
			putchar('\n');
		summary_text(r, st, q2c);
	}
	return 0;
}
