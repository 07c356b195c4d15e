// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* render.c - text and JSON forms of collected series (render.h). */
#include "cli/render.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/histo.h"
#include "core/names.h"
#include "sys/blockstat.h"

#define BAR_WIDTH 40
#define MAX_ROWS 64

/* A series summed over every size class or op is shown as "all". */
const char *render_size_class_name(int c)
{
	const char *name = names_size_class(c);

	return name ? name : "all";
}

const char *render_op_name(int op)
{
	const char *name = names_op(op);

	return name ? name : "all";
}

void render_flags(int flags, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < IOLAT_F_COUNT && used < len; i++)
		if (flags & (1 << i))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "|" : "",
						 names_flag(i));
	if (!buf[0])
		snprintf(buf, len, "none");
}

/* biolatency's rows: row 0 holds 0..1 units, row r >= 1 holds [2^r, 2^(r+1)). */
static int row_of(uint64_t units)
{
	int r = 0;

	while (units >= 2 && r < MAX_ROWS - 1) {
		units >>= 1;
		r++;
	}
	return r;
}

/*
 * Sums fine slots into log2 rows of `unit`. Exact: every row boundary is a
 * bound of the table, so no slot straddles two rows.
 */
static int to_rows(const __u64 *slots, const struct bucket_table *t, uint64_t unit,
		   uint64_t rows[MAX_ROWS])
{
	int top = -1;

	memset(rows, 0, sizeof(uint64_t) * MAX_ROWS);
	/* The overflow slot has no upper bound: print_rows shows it apart. */
	for (size_t i = 0; i < t->nbounds; i++) {
		int r;

		if (!slots[i])
			continue;
		r = row_of(buckets_lower(t, i) / unit);
		rows[r] += slots[i];
		if (r > top)
			top = r;
	}
	return top;
}

static void bar_of(uint64_t n, uint64_t peak, char bar[BAR_WIDTH + 1])
{
	int stars = peak ? (int)((n * BAR_WIDTH + peak / 2) / peak) : 0;

	memset(bar, ' ', BAR_WIDTH);
	memset(bar, '*', (size_t)(stars > BAR_WIDTH ? BAR_WIDTH : stars));
	bar[BAR_WIDTH] = '\0';
}

/* Rows 0..top, then the overflow slot's count (values above the table). */
static void print_rows(FILE *f, const uint64_t *rows, int top, uint64_t over, uint64_t over_from,
		       const char *unit)
{
	char bar[BAR_WIDTH + 1];
	uint64_t peak = over;

	for (int r = 0; r <= top; r++)
		if (rows[r] > peak)
			peak = rows[r];
	fprintf(f, "%*s%-*s : count    distribution\n", 10, "", 14, unit);
	for (int r = 0; r <= top; r++) {
		uint64_t lo = r ? 1ULL << r : 0, hi = (2ULL << r) - 1;

		bar_of(rows[r], peak, bar);
		fprintf(f, "%10" PRIu64 " -> %-10" PRIu64 " : %-8" PRIu64 " |%s|\n", lo, hi,
			rows[r], bar);
	}
	if (over) {
		bar_of(over, peak, bar);
		fprintf(f, "%10" PRIu64 " -> %-10s : %-8" PRIu64 " |%s|\n", over_from, "more", over,
			bar);
	}
}

void render_latency_text(FILE *f, const struct iolat_lat *lat, const struct bucket_table *t,
			 bool msecs)
{
	double unit = msecs ? 1e6 : 1e3;
	uint64_t rows[MAX_ROWS];
	struct histo_summary s;
	int top = to_rows(lat->slots, t, (uint64_t)unit, rows);

	print_rows(f, rows, top, lat->slots[t->nbounds],
		   buckets_lower(t, t->nbounds) / (uint64_t)unit, msecs ? "msecs" : "usecs");
	histo_summarize(lat, t, &s);
	int prec = msecs ? 3 : 1; /* sub-ms latencies stay readable in msecs */

	fprintf(f,
		"\n  count %" PRIu64 "  avg %.*f  p50 %.*f  p90 %.*f  p99 %.*f  p99.9 %.*f"
		"  max %s%.*f %s",
		s.count, prec, s.mean / unit, prec, s.p50 / unit, prec, s.p90 / unit, prec,
		s.p99 / unit, prec, s.p999 / unit, s.max_exact || !s.count ? "" : "<=", prec,
		s.max / unit, msecs ? "msecs" : "usecs");
	if (lat->unseen)
		fprintf(f, "  (%" PRIu64 " not timed: start not seen)", (uint64_t)lat->unseen);
	fputc('\n', f);
}

void render_size_text(FILE *f, const __u64 *slots, const struct bucket_table *t)
{
	uint64_t rows[MAX_ROWS];
	int top = to_rows(slots, t, 1024, rows);

	print_rows(f, rows, top, slots[t->nbounds], buckets_lower(t, t->nbounds) / 1024, "kbytes");
}

void render_labels_text(FILE *f, const struct shown_series *s)
{
	char flags[128];
	const char *sep = "";

	if (s->disk[0]) {
		fprintf(f, "disk = %s%s", s->disk, s->bio_layer ? " (bio layer)" : "");
		if (s->stack.slaves[0])
			fprintf(f, " on %s", s->stack.slaves);
		if (s->stack.holders[0])
			fprintf(f, " under %s", s->stack.holders);
		sep = "  ";
	}
	if (s->op >= 0) {
		fprintf(f, "%sop = %s", sep, render_op_name(s->op));
		sep = "  ";
	}
	if (s->flags >= 0) {
		render_flags(s->flags, flags, sizeof(flags));
		fprintf(f, "%sflags = %s", sep, flags);
		sep = "  ";
	}
	if (s->size_class >= 0)
		fprintf(f, "%ssize = %s", sep, render_size_class_name(s->size_class));
	fputc('\n', f);
}

static void slots_json(struct json *j, const __u64 *slots, const struct bucket_table *t)
{
	json_begin_array(j);
	for (size_t i = 0; i < t->nslots; i++) {
		if (!slots[i])
			continue;
		json_begin_object(j);
		json_kv_uint(j, "lo", buckets_lower(t, i));
		if (i < t->nbounds)
			json_kv_uint(j, "hi", buckets_upper(t, i));
		json_kv_uint(j, "count", slots[i]);
		json_end_object(j);
	}
	json_end_array(j);
}

static void view_json(struct json *j, const char *name, const struct iolat_lat *lat,
		      const struct bucket_table *t)
{
	struct histo_summary s;

	histo_summarize(lat, t, &s);
	json_key(j, name);
	json_begin_object(j);
	json_kv_uint(j, "count", lat->count);
	json_kv_uint(j, "unseen", lat->unseen);
	json_kv_uint(j, "sum_ns", lat->sum_ns);
	json_kv_double(j, "mean_ns", s.mean);
	json_kv_double(j, "p50_ns", s.p50);
	json_kv_double(j, "p90_ns", s.p90);
	json_kv_double(j, "p99_ns", s.p99);
	json_kv_double(j, "p999_ns", s.p999);
	json_kv_double(j, "max_ns", s.max);
	json_kv_bool(j, "max_exact", s.max_exact);
	json_key(j, "slots");
	slots_json(j, lat->slots, t);
	json_end_object(j);
}

/* A space-separated list as a JSON array of strings. */
static void words_json(struct json *j, const char *key, const char *words)
{
	char copy[sizeof(((struct disk_stack *)0)->holders)], *save = NULL, *w;

	snprintf(copy, sizeof(copy), "%s", words);
	json_key(j, key);
	json_begin_array(j);
	for (w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
		json_string(j, w);
	json_end_array(j);
}

void render_series_json(struct json *j, const struct shown_series *s,
			const struct bucket_table *lat, const struct bucket_table *size)
{
	char flags[128];

	json_begin_object(j);
	if (s->disk[0]) {
		json_kv_string(j, "disk", s->disk);
		json_kv_string(j, "layer", s->bio_layer ? "bio" : "request");
		words_json(j, "on", s->stack.slaves);
		words_json(j, "under", s->stack.holders);
	}
	if (s->op >= 0)
		json_kv_string(j, "op", render_op_name(s->op));
	if (s->flags >= 0) {
		render_flags(s->flags, flags, sizeof(flags));
		json_kv_string(j, "flags", flags);
	}
	if (s->size_class >= 0)
		json_kv_string(j, "size_class", render_size_class_name(s->size_class));
	json_kv_uint(j, "ios", s->val.ios);
	json_kv_uint(j, "bytes", s->val.bytes);
	json_kv_uint(j, "errors", s->val.errors);
	view_json(j, "device", &s->val.lat[IOLAT_VIEW_DEVICE], lat);
	view_json(j, "total", &s->val.lat[IOLAT_VIEW_TOTAL], lat);
	json_key(j, "size_slots");
	slots_json(j, s->val.size_slots, size);
	json_end_object(j);
}

void render_kernel_json(struct json *j, const struct kernel_row *rows, size_t n)
{
	json_key(j, "kernel");
	json_begin_array(j);
	for (size_t i = 0; i < n; i++) {
		json_begin_object(j);
		json_kv_string(j, "disk", rows[i].disk);
		json_kv_string(j, "op", blockstat_group_name(rows[i].group));
		json_kv_uint(j, "kernel", rows[i].kernel);
		json_kv_uint(j, "iolat", rows[i].iolat);
		json_kv_int(j, "unseen", (int64_t)(rows[i].kernel - rows[i].iolat));
		json_end_object(j);
	}
	json_end_array(j);
}

void render_untrue_text(FILE *f, uint64_t untrue, bool restamp_off)
{
	if (restamp_off)
		fprintf(f,
			"note: this kernel caches its clock in the plug (6.9+) and iolat does not "
			"restamp: device times may start early, total times equal device times\n");
	else if (untrue)
		fprintf(f,
			"note: %" PRIu64 " I/O kept the plug clock's cached stamps (%s): their "
			"device time may start early, their total time equal their device time\n",
			untrue, names_stat(IOLAT_STAT_UNTRUE_STAMPS));
}
