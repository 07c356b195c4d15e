// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* trace_summary.c - per-device and per-process span statistics (trace_summary.h). */
#include "cli/trace_summary.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buckets.h"
#include "core/histo.h"
#include "iolat.h"
#include "sys/cgroup_cache.h"
#include "sys/cgroups.h"
#include "util/buf.h"
#include "util/json.h"

/* A bio that got its own request goes Q G [I] D C; one merged into
 * another's, Q M [I] D C, counted as Q2M and M2D. Either way its spans
 * add up to its Q2C. */
enum span {
	SPAN_Q2G,
	SPAN_G2I,
	SPAN_I2D,
	SPAN_G2D,
	SPAN_Q2M,
	SPAN_M2D,
	SPAN_D2C,
	SPAN_Q2C,
	SPAN_COUNT
};

static const char *const span_names[SPAN_COUNT] = { "Q2G", "G2I", "I2D", "G2D",
						    "Q2M", "M2D", "D2C", "Q2C" };
/* The stages each span runs between. */
static const enum trace_stage span_from[SPAN_COUNT] = { TRACE_Q, TRACE_G, TRACE_I, TRACE_G,
							TRACE_Q, TRACE_M, TRACE_D, TRACE_Q };
static const enum trace_stage span_to[SPAN_COUNT] = { TRACE_G, TRACE_I, TRACE_D, TRACE_D,
						      TRACE_M, TRACE_D, TRACE_C, TRACE_C };

struct group {
	char name[48];	      /* "loop0" or "dio[1234]" */
	uint64_t ios, merged; /* records with a completion; of them, merged bios */
	uint64_t min_ns[SPAN_COUNT];
	struct iolat_lat span[SPAN_COUNT];
	/* Page-cache wait (PCW: dirty -> Q) of the buffered writes it made,
	 * one sample per page-cache link (a run of one write's data in one
	 * bio, timed from its oldest folio). */
	uint64_t pc_bytes, pc_min_ns;
	struct iolat_lat pc_wait;
};

/* Groups past this many processes fold into one, named "other". */
#define MAX_PROCESSES 256

struct trace_summary {
	struct bucket_table lat;
	uint64_t lat_store[IOLAT_LAT_SLOTS];
	struct group *disks, *procs, *cgroups;
	size_t ndisks, cap_disks, nprocs, cap_procs, ncgroups, cap_cgroups;
	struct cgroup_cache names; /* cgroup ids to paths */
};

struct trace_summary *trace_summary_new(void)
{
	struct trace_summary *s = calloc(1, sizeof(*s));

	char root[PATH_MAX] = "";

	if (s && buckets_build_latency(&s->lat, s->lat_store, NULL, 0)) {
		free(s);
		return NULL;
	}
	if (s) {
		/* No io hierarchy: cgroups are shown by id. */
		cgroups_io_root(root, sizeof(root));
		cgroup_cache_init(&s->names, root);
	}
	return s;
}

void trace_summary_free(struct trace_summary *s)
{
	if (!s)
		return;
	free(s->disks);
	free(s->procs);
	free(s->cgroups);
	cgroup_cache_free(&s->names);
	free(s);
}

static struct group *find_group(struct group *g, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(g[i].name, name))
			return &g[i];
	return NULL;
}

static struct group *group_of(struct group **g, size_t *n, size_t *cap, const char *name)
{
	struct group *found = find_group(*g, *n, name);

	if (found)
		return found;
	if (array_make_room((void **)g, cap, *n, sizeof(**g), 8))
		return NULL;
	memset(&(*g)[*n], 0, sizeof(**g));
	snprintf((*g)[*n].name, sizeof((*g)[0].name), "%s", name);
	return &(*g)[(*n)++];
}

/* The span's length, or -1 if a stage of it was not seen (or G2D where the
 * request went through an insert, which G2I and I2D cover). */
static int64_t span_ns(const struct trace_record *r, enum span sp)
{
	uint64_t a = r->ts[span_from[sp]], b = r->ts[span_to[sp]];

	if (sp == SPAN_G2D && r->ts[TRACE_I])
		return -1;
	/* A merged bio's insert, if any, is inside its M2D. */
	if (sp == SPAN_I2D && r->ts[TRACE_M])
		return -1;
	return a && b && b >= a ? (int64_t)(b - a) : -1;
}

static void add_to(struct group *g, const struct bucket_table *t, const struct trace_record *r)
{
	if (!r->ts[TRACE_C])
		return;
	g->ios++;
	g->merged += !!r->ts[TRACE_M];
	for (int sp = 0; sp < SPAN_COUNT; sp++) {
		int64_t ns = span_ns(r, (enum span)sp);
		struct iolat_lat *l = &g->span[sp];

		if (ns < 0)
			continue;
		if (!l->count || (uint64_t)ns < g->min_ns[sp])
			g->min_ns[sp] = (uint64_t)ns;
		l->count++;
		l->sum_ns += (uint64_t)ns;
		if ((uint64_t)ns > l->max_ns)
			l->max_ns = (uint64_t)ns;
		l->slots[buckets_slot_of(t, (uint64_t)ns)]++;
	}
}

/* The group of a process, or "other" once there are MAX_PROCESSES. */
static struct group *proc_group(struct trace_summary *s, const char *comm, uint32_t pid)
{
	char proc[48];

	snprintf(proc, sizeof(proc), "%.16s[%u]", comm, pid);
	if (s->nprocs >= MAX_PROCESSES && !find_group(s->procs, s->nprocs, proc))
		snprintf(proc, sizeof(proc), "other");
	return group_of(&s->procs, &s->nprocs, &s->cap_procs, proc);
}

static void add_pc(struct group *g, const struct bucket_table *t, uint64_t ns, uint32_t bytes)
{
	struct iolat_lat *l = &g->pc_wait;

	if (!l->count || ns < g->pc_min_ns)
		g->pc_min_ns = ns;
	l->count++;
	l->sum_ns += ns;
	if (ns > l->max_ns)
		l->max_ns = ns;
	l->slots[buckets_slot_of(t, ns)]++;
	g->pc_bytes += bytes;
}

int trace_summary_add_pc(struct trace_summary *s, const struct trace_pc_link *l)
{
	uint64_t ns = trace_pc_wait_ns(l);
	const char *path = l->cgroup ? cgroup_cache_path(&s->names, l->cgroup) : NULL;
	char cg[48];
	struct group *p, *c;

	if (path)
		snprintf(cg, sizeof(cg), "%s", path);
	else
		snprintf(cg, sizeof(cg), "cgroup %llu", (unsigned long long)l->cgroup);
	p = proc_group(s, l->comm, l->pid);
	c = group_of(&s->cgroups, &s->ncgroups, &s->cap_cgroups, cg);
	if (!p || !c)
		return -ENOMEM;
	add_pc(p, &s->lat, ns, l->bytes);
	add_pc(c, &s->lat, ns, l->bytes);
	return 0;
}

int trace_summary_add(struct trace_summary *s, const char *disk, const struct trace_record *r)
{
	struct group *d, *p;

	d = group_of(&s->disks, &s->ndisks, &s->cap_disks, disk);
	p = proc_group(s, r->comm, r->pid);
	if (!d || !p)
		return -ENOMEM;
	add_to(d, &s->lat, r);
	add_to(p, &s->lat, r);
	return 0;
}

/* Share of the group's total time (summed Q2C) a span took, in percent. */
static double share(const struct group *g, enum span sp)
{
	uint64_t total = g->span[SPAN_Q2C].sum_ns;

	return total ? 100.0 * (double)g->span[sp].sum_ns / (double)total : 0;
}

/* One row of the text table: a span's (or the page-cache wait's) count,
 * min, mean, percentiles and max in ms, and its share (< 0: none). */
static void lat_row(FILE *f, const char *name, const struct iolat_lat *l, uint64_t min_ns,
		    const struct bucket_table *t, double share_pct)
{
	struct histo_summary h;

	histo_summarize(l, t, &h);
	fprintf(f, "    %-5s %8llu %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f", name,
		(unsigned long long)h.count, (double)min_ns / 1e6, h.mean / 1e6, h.p50 / 1e6,
		h.p90 / 1e6, h.p99 / 1e6, h.max / 1e6);
	if (share_pct < 0)
		fprintf(f, " %7s\n", "-");
	else
		fprintf(f, " %6.1f%%\n", share_pct);
}

/* The same as a JSON object under `name`, left open for the caller's own
 * fields. */
static void lat_json_begin(struct json *j, const char *name, const struct iolat_lat *l,
			   uint64_t min_ns, const struct bucket_table *t)
{
	struct histo_summary h;

	histo_summarize(l, t, &h);
	json_key(j, name);
	json_begin_object(j);
	json_kv_uint(j, "count", h.count);
	json_kv_uint(j, "min_ns", min_ns);
	json_kv_double(j, "mean_ns", h.mean);
	json_kv_double(j, "p50_ns", h.p50);
	json_kv_double(j, "p90_ns", h.p90);
	json_kv_double(j, "p99_ns", h.p99);
	json_kv_uint(j, "max_ns", l->max_ns);
}

static void print_group_text(const struct group *g, const struct bucket_table *t, FILE *f)
{
	/* A writer seen only through the page cache queued no I/O itself. */
	if (g->ios || !g->pc_wait.count)
		fprintf(f, "  %s: %llu I/Os", g->name, (unsigned long long)g->ios);
	else
		fprintf(f, "  %s", g->name);
	if (g->merged)
		fprintf(f, " (%llu of them merged into another's request)",
			(unsigned long long)g->merged);
	if (g->pc_wait.count)
		fprintf(f, "%s%llu bytes of its buffered writes written back later",
			g->ios ? "; " : ": ", (unsigned long long)g->pc_bytes);
	fprintf(f, "\n    %-5s %8s %9s %9s %9s %9s %9s %9s %7s\n", "span", "count", "min", "avg",
		"p50", "p90", "p99", "max", "share");
	for (int sp = 0; sp < SPAN_COUNT; sp++)
		if (g->span[sp].count)
			lat_row(f, span_names[sp], &g->span[sp], g->min_ns[sp], t,
				share(g, (enum span)sp));
	if (g->pc_wait.count)
		lat_row(f, "PCW", &g->pc_wait, g->pc_min_ns, t, -1);
}

static void print_group_json(struct json *j, const struct group *g, const struct bucket_table *t)
{
	json_begin_object(j);
	json_kv_string(j, "name", g->name);
	json_kv_uint(j, "ios", g->ios);
	json_kv_uint(j, "merged", g->merged);
	json_key(j, "spans");
	json_begin_object(j);
	for (int sp = 0; sp < SPAN_COUNT; sp++) {
		if (!g->span[sp].count)
			continue;
		lat_json_begin(j, span_names[sp], &g->span[sp], g->min_ns[sp], t);
		json_kv_double(j, "share_pct", share(g, (enum span)sp));
		json_end_object(j);
	}
	json_end_object(j);
	if (g->pc_wait.count) {
		lat_json_begin(j, "page_cache_wait", &g->pc_wait, g->pc_min_ns, t);
		json_kv_uint(j, "bytes", g->pc_bytes);
		json_end_object(j);
	}
	json_end_object(j);
}

void trace_summary_print(const struct trace_summary *s, FILE *f, bool json)
{
	struct json j;

	if (!json) {
		fprintf(f, "Summary by device (times in ms; share: of the summed Q2C)\n");
		for (size_t i = 0; i < s->ndisks; i++)
			print_group_text(&s->disks[i], &s->lat, f);
		fprintf(f, "\nSummary by process (PCW: page-cache wait of its buffered "
			   "writes, dirty -> queued)\n");
		for (size_t i = 0; i < s->nprocs; i++)
			print_group_text(&s->procs[i], &s->lat, f);
		if (s->ncgroups)
			fprintf(f, "\nPage-cache wait by the writers' cgroup\n");
		for (size_t i = 0; i < s->ncgroups; i++)
			print_group_text(&s->cgroups[i], &s->lat, f);
		return;
	}
	json_init(&j, f);
	json_begin_object(&j);
	json_kv_string(&j, "type", "summary");
	json_key(&j, "devices");
	json_begin_array(&j);
	for (size_t i = 0; i < s->ndisks; i++)
		print_group_json(&j, &s->disks[i], &s->lat);
	json_end_array(&j);
	json_key(&j, "processes");
	json_begin_array(&j);
	for (size_t i = 0; i < s->nprocs; i++)
		print_group_json(&j, &s->procs[i], &s->lat);
	json_end_array(&j);
	json_key(&j, "cgroups");
	json_begin_array(&j);
	for (size_t i = 0; i < s->ncgroups; i++)
		print_group_json(&j, &s->cgroups[i], &s->lat);
	json_end_array(&j);
	json_end_object(&j);
	fputc('\n', f);
}
