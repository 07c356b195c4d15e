// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cmd_hist.c - `iolat hist`: biolatency's interface over iolat's collector.
 * Reads cumulative series each interval and prints the interval's deltas.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cmdutil.h"
#include "cli/render.h"
#include "commands.h"
#include "core/collector.h"
#include "core/histo.h"
#include "core/kcompare.h"
#include "core/names.h"
#include "sys/cgroups.h"
#include "sys/disks.h"
#include "util/buf.h"
#include "util/errors.h"
#include "util/monotonic.h"
#include "util/opts.h"

struct hist_args {
	bool per_disk, per_flags, per_op, per_size, total, msecs, timestamps, json, sizes;
	struct cmd_trace_flags f; /* -d, -c, --attach, -v */
	double interval;	  /* seconds; 0: until Ctrl-C */
	uint64_t count;		  /* intervals; 0: unlimited */
};

void cmd_hist_usage(FILE *f)
{
	fprintf(f,
		"Usage: iolat hist [OPTIONS] [INTERVAL [COUNT]]\n"
		"\n"
		"Block-I/O latency histograms, like biolatency. Without INTERVAL, traces\n"
		"until Ctrl-C and prints once; with INTERVAL, prints every INTERVAL seconds,\n"
		"COUNT times (default: until Ctrl-C). Ctrl-C or SIGTERM prints the interval\n"
		"so far.\n"
		"\n"
		"Latency views (both always collected; text shows one):\n"
		"  device time  issue -> complete (blktrace D2C); the default\n"
		"  total time   request created -> complete (Q2C at the request layer); -Q\n"
		"\n"
		"Stacked devices (LVM and dm, dm-crypt, md RAID): with -D each layer is a\n"
		"disk of its own, timed where it is (dm and md at the bio layer: their time\n"
		"includes their legs'), named with the disks it is on or under. Without -D\n"
		"the lower layers are left out, so each I/O is counted once.\n"
		"\n"
		"Options:\n"
		"  -D, --disk-split     a histogram per disk\n"
		"  -O, --op-split       a histogram per operation (read, write, flush, ...)\n"
		"  -F, --flags-split    a histogram per request flag set (sync, fua, ...)\n"
		"  -S, --size-split     a histogram per request size class (%s, %s,\n"
		"                       %s, %s, %s)\n"
		"  -Q, --queued         show total time instead of device time\n"
		"  -m, --milliseconds   rows in msecs instead of usecs\n"
		"  -T, --timestamp      print a timestamp with each interval\n"
		"  -s, --sizes          also print request-size histograms\n"
		"  -j, --json           one JSON object per interval (ns and bytes)\n",
		names_size_class(IOLAT_SIZE_4K), names_size_class(IOLAT_SIZE_16K),
		names_size_class(IOLAT_SIZE_64K), names_size_class(IOLAT_SIZE_1M),
		names_size_class(IOLAT_SIZE_LARGER));
	cmd_trace_flags_usage(f, 23);
	fprintf(f, "  -h, --help           this help\n"
		   "  -V, --version        print the version\n"
		   "\n"
		   "Examples:\n"
		   "  iolat hist                   all disks, until Ctrl-C\n"
		   "  iolat hist -DO 1 5           per disk and operation, 5 x 1 s\n"
		   "  iolat hist -Q -m -d sda1     total time on sda, in msecs\n"
		   "  iolat hist -c /sys/fs/cgroup/machine.slice --json 10\n"
		   "\n"
		   "See iolat-hist(1).\n");
}

const struct opt cmd_hist_opts[] = {
	{ "disk-split", 'D', OPT_NO_VALUE, 'D' },
	{ "op-split", 'O', OPT_NO_VALUE, 'O' },
	{ "flags-split", 'F', OPT_NO_VALUE, 'F' },
	{ "size-split", 'S', OPT_NO_VALUE, 'S' },
	{ "queued", 'Q', OPT_NO_VALUE, 'Q' },
	{ "milliseconds", 'm', OPT_NO_VALUE, 'm' },
	{ "timestamp", 'T', OPT_NO_VALUE, 'T' },
	{ "sizes", 's', OPT_NO_VALUE, 's' },
	{ "json", 'j', OPT_NO_VALUE, 'j' },
	CMD_TRACE_FLAG_OPTS,
	{},
};

/* 0: run; OPTS_EXIT (help or version printed) or -EINVAL (printed). */
static int parse_args(int argc, char **argv, struct hist_args *a)
{
	struct opts o;
	int c, shared;

	memset(a, 0, sizeof(*a));
	opts_begin(&o, cmd_hist_opts, cmd_hist_usage, argc, argv);
	while ((c = opts_next(&o)) > 0) {
		shared = cmd_trace_flag(c, o.value, &a->f);
		if (shared < 0)
			return shared;
		if (shared)
			continue;
		switch (c) {
		case 'D':
			a->per_disk = true;
			break;
		case 'O':
			a->per_op = true;
			break;
		case 'F':
			a->per_flags = true;
			break;
		case 'S':
			a->per_size = true;
			break;
		case 'Q':
			a->total = true;
			break;
		case 'm':
			a->msecs = true;
			break;
		case 'T':
			a->timestamps = true;
			break;
		case 's':
			a->sizes = true;
			break;
		case 'j':
			a->json = true;
			break;
		}
	}
	if (c < 0)
		return c;
	if (cmd_interval_count(&o, &a->interval, &a->count))
		return -EINVAL;
	if (a->json && (a->msecs || a->sizes || a->timestamps)) {
		errorf("JSON always carries ns, sizes and the time; drop -m, -s and -T",
		       "conflicting options: %s with --json",
		       a->msecs	  ? "-m"
		       : a->sizes ? "-s"
				  : "-T");
		return -EINVAL;
	}
	return 0;
}

struct grouping {
	struct shown_series *s;
	size_t n, cap;
};

static struct shown_series *group_for(struct grouping *g, const struct shown_series *want)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->s[i].disk, want->disk) && g->s[i].op == want->op &&
		    g->s[i].flags == want->flags && g->s[i].size_class == want->size_class)
			return &g->s[i];
	if (array_make_room((void **)&g->s, &g->cap, g->n, sizeof(*g->s), 8))
		return NULL;
	g->s[g->n] = *want;
	return &g->s[g->n++];
}

static int cmp_shown(const void *pa, const void *pb)
{
	const struct shown_series *a = pa, *b = pb;
	int d = strcmp(a->disk, b->disk);

	if (d)
		return d;
	if (a->op != b->op)
		return a->op - b->op;
	if (a->flags != b->flags)
		return a->flags - b->flags;
	return a->size_class - b->size_class;
}

static const struct disk_info *disk_of(uint32_t dev, const struct disk_info *d, int nd)
{
	for (int i = 0; i < nd; i++)
		if (d[i].dev == dev)
			return &d[i];
	return NULL;
}

struct group_ctx {
	const struct hist_args *a;
	struct grouping *g;
	struct disk_info *disks; /* disks_list_new's */
	int nd;
};

static int group_one(void *ctx, const struct iolat_key *k, const struct iolat_val *delta)
{
	struct group_ctx *x = ctx;
	struct shown_series want = { .op = -1, .flags = -1, .size_class = -1 };
	const struct disk_info *d = disk_of(k->dev, x->disks, x->nd);
	struct shown_series *dst;

	if (x->a->per_disk) {
		disks_name(k->dev, want.disk, sizeof(want.disk));
		if (d) {
			want.bio_layer = d->bio_based;
			want.stack = d->stack;
		}
	} else if (d && d->stack.holders[0] && !x->a->f.disk) {
		return 0; /* a lower layer: the disk above counts its I/O */
	}
	if (x->a->per_op)
		want.op = k->op;
	if (x->a->per_flags)
		want.flags = k->flags;
	if (x->a->per_size)
		want.size_class = k->size_class;
	dst = group_for(x->g, &want);
	if (!dst)
		return -ENOMEM;
	histo_add(&dst->val, delta);
	return 0;
}

/* The interval's deltas, summed into the groups the flags ask for. */
static int group_interval(const struct hist_args *a, const struct snapshot *now,
			  const struct snapshot *before, struct grouping *g)
{
	struct group_ctx x = { .a = a, .g = g };
	int rc;

	x.nd = disks_list_new(&x.disks);
	if (x.nd == -ENOMEM)
		return -ENOMEM;
	g->n = 0;
	rc = snapshot_deltas(now, before, group_one, &x);
	if (!rc && g->n > 1)
		qsort(g->s, g->n, sizeof(*g->s), cmp_shown);
	free(x.disks);
	return rc;
}

static void print_text(const struct hist_args *a, struct collector *c, const struct grouping *g,
		       uint64_t *untrue_seen)
{
	const struct bucket_table *lat = collector_lat_table(c);
	enum iolat_view view = a->total ? IOLAT_VIEW_TOTAL : IOLAT_VIEW_DEVICE;

	if (a->timestamps) {
		char ts[32];
		time_t t = time(NULL);

		strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&t));
		printf("%s\n", ts);
	}
	if (!g->n)
		printf("no block I/O completed in this interval\n");
	for (size_t i = 0; i < g->n; i++) {
		const struct shown_series *s = &g->s[i];

		if (s->disk[0] || s->op >= 0 || s->flags >= 0 || s->size_class >= 0) {
			putchar('\n');
			render_labels_text(stdout, s);
		}
		render_latency_text(stdout, &s->val.lat[view], lat, a->msecs);
		if (a->sizes) {
			putchar('\n');
			render_size_text(stdout, s->val.size_slots, collector_size_table(c));
		}
	}
	render_untrue_text(stdout, collector_stat_growth(c, IOLAT_STAT_UNTRUE_STAMPS, untrue_seen),
			   collector_keeps_cached_stamps(c));
	putchar('\n');
}

static void collector_json(struct json *j, struct collector *c)
{
	uint64_t st[IOLAT_STAT_COUNT];
	struct prog_stats ps[16];
	uint64_t misses = 0;
	int np = collector_prog_stats(c, ps, 16);

	for (int i = 0; i < np; i++)
		misses += ps[i].recursion_misses;
	json_key(j, "collector");
	json_begin_object(j);
	json_kv_string(j, "attach", attach_mode_name(collector_mode(c)));
	json_kv_bool(j, "rq_map_forced", collector_rq_map_forced(c));
	json_kv_bool(j, "bio_layer", collector_bio_attached(c));
	json_kv_bool(j, "rq_map", collector_fallback_attached(c));
	if (!collector_stats(c, st))
		for (int i = 0; i < IOLAT_STAT_COUNT; i++)
			json_kv_uint(j, names_stat(i), st[i]);
	json_kv_uint(j, "recursion_misses", misses);
	json_end_object(j);
}

/*
 * The kernel's own completed-I/O counts beside iolat's, per interval, for
 * --json without -c (a cgroup's I/O is only part of its disks'). The
 * kernel's are read just before the collector's (the same order as
 * serve's, exporter_kstat.h): I/O completing in between counts in iolat's
 * column of this interval and the kernel's of the next. A disk listed at the interval's end and not
 * at its start (new, or made anew) waits for the next interval.
 */
struct kernel_side {
	bool on;
	uint32_t only_dev; /* -d's disk; 0: all */
	struct kcompare_disk *before, *now;
	int nbefore, nnow;
	uint32_t *devs;
	uint64_t (*iolat_before)[BLOCKSTAT_GROUPS], (*iolat_now)[BLOCKSTAT_GROUPS];
	struct kernel_row *rows;
	size_t nrows;
};

static void kernel_side_free(struct kernel_side *k)
{
	free(k->before);
	free(k->now);
	free(k->devs);
	free(k->iolat_before);
	free(k->iolat_now);
	free(k->rows);
}

/* Reads the kernel's counts into k->now. 0 or -errno. */
static int kernel_side_read(struct kernel_side *k)
{
	if (!k->on)
		return 0;
	k->nnow = kcompare_list("/sys/block", k->only_dev, k->now, DISKS_LIST_MAX);
	return k->nnow < 0 ? k->nnow : 0;
}

/* Allocates, and reads the first interval's start. 0 or -errno. */
static int kernel_side_init(struct kernel_side *k, const struct hist_args *a)
{
	memset(k, 0, sizeof(*k));
	k->on = a->json && !a->f.cgroup;
	if (!k->on)
		return 0;
	if (a->f.disk && disks_resolve(a->f.disk, &k->only_dev, NULL, 0))
		return -ENOENT;
	k->before = calloc(DISKS_LIST_MAX, sizeof(*k->before));
	k->now = calloc(DISKS_LIST_MAX, sizeof(*k->now));
	k->devs = calloc(DISKS_LIST_MAX, sizeof(*k->devs));
	k->iolat_before = calloc(DISKS_LIST_MAX, sizeof(*k->iolat_before));
	k->iolat_now = calloc(DISKS_LIST_MAX, sizeof(*k->iolat_now));
	k->rows = calloc(DISKS_LIST_MAX * BLOCKSTAT_GROUPS, sizeof(*k->rows));
	if (!k->before || !k->now || !k->devs || !k->iolat_before || !k->iolat_now || !k->rows)
		return -ENOMEM;
	k->nbefore = kcompare_list("/sys/block", k->only_dev, k->before, DISKS_LIST_MAX);
	return k->nbefore < 0 ? k->nbefore : 0;
}

/* The interval's rows, from the counts at its start (k->before, before)
 * and end (k->now, now); then the end becomes the next start. */
static void kernel_side_rows(struct kernel_side *k, const struct snapshot *now,
			     const struct snapshot *before)
{
	struct kcompare_disk *swap;

	k->nrows = 0;
	for (int i = 0; k->on && i < k->nnow; i++)
		k->devs[i] = k->now[i].dev;
	if (k->on) {
		kcompare_counts(k->devs, (size_t)k->nnow, now, k->iolat_now);
		kcompare_counts(k->devs, (size_t)k->nnow, before, k->iolat_before);
	}
	for (int i = 0, b = 0; k->on && i < k->nnow; i++) {
		const struct blockstat *end = &k->now[i].kernel, *start;

		while (b < k->nbefore && k->before[b].dev < k->now[i].dev)
			b++;
		if (b == k->nbefore || k->before[b].dev != k->now[i].dev ||
		    strcmp(k->before[b].name, k->now[i].name))
			continue;
		start = &k->before[b].kernel;
		for (int g = 0; g < BLOCKSTAT_GROUPS; g++) {
			/* Not kept (queue/iostats off, or no such field), or
			 * the disk was made anew: nothing to compare. */
			if (!end->has[g] || end->done[g] < start->done[g] ||
			    (g != BLOCKSTAT_FLUSH && (!end->iostats || !start->iostats)))
				continue;
			k->rows[k->nrows++] = (struct kernel_row){
				.disk = k->now[i].name,
				.group = g,
				.kernel = end->done[g] - start->done[g],
				.iolat = k->iolat_now[i][g] - k->iolat_before[i][g],
			};
		}
	}
	swap = k->before;
	k->before = k->now;
	k->now = swap;
	k->nbefore = k->nnow;
}

static void print_json(double seconds, struct collector *c, const struct grouping *g,
		       const struct kernel_side *k)
{
	char ts[32];
	time_t t = time(NULL);
	struct json j;

	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	json_init(&j, stdout);
	json_begin_object(&j);
	json_kv_string(&j, "time", ts);
	json_kv_double(&j, "interval_s", seconds);
	json_key(&j, "series");
	json_begin_array(&j);
	for (size_t i = 0; i < g->n; i++)
		render_series_json(&j, &g->s[i], collector_lat_table(c), collector_size_table(c));
	json_end_array(&j);
	if (k->on)
		render_kernel_json(&j, k->rows, k->nrows);
	collector_json(&j, c);
	json_end_object(&j);
	putchar('\n');
}

/* Says on stderr what the collector attached on demand (an operator's
 * clue that a disk lacks kernel timestamps, or that a bio-based disk came). */
static void report_attached(int what)
{
	if (what < 0)
		errorf(NULL, "attaching a program on demand failed: %s", strerror(-what));
	for (int bit = COLLECTOR_NOW_FALLBACK; what > 0 && bit <= COLLECTOR_NOW_BIO; bit <<= 1)
		if (what & bit)
			errorf(NULL, "%s", collector_now_reason(bit));
}

static int run(const struct hist_args *a, struct collector *c)
{
	/* Without INTERVAL, one interval that only a signal ends. */
	uint64_t interval_ns = (uint64_t)((a->interval > 0 ? a->interval : 1e9) * NSEC_PER_SEC);
	struct snapshot before = {}, now = {}, tmp;
	struct grouping g = {};
	struct kernel_side k;
	uint64_t started, untrue_seen = 0;
	int rc = kernel_side_init(&k, a);

	cmd_say_tracing("block device I/O", !a->count);
	for (uint64_t i = 0; !rc && (!a->count || i < a->count); i++) {
		started = monotonic_ns();
		rc = cmd_wait_until(c, started + interval_ns, report_attached);
		if (!rc)
			rc = kernel_side_read(&k);
		if (!rc)
			rc = collector_read(c, &now);
		if (!rc)
			rc = group_interval(a, &now, &before, &g);
		if (rc)
			break;
		kernel_side_rows(&k, &now, &before);
		if (a->json)
			print_json((double)(monotonic_ns() - started) / NSEC_PER_SEC, c, &g, &k);
		else
			print_text(a, c, &g, &untrue_seen);
		fflush(stdout);
		tmp = before;
		before = now;
		now = tmp;
		if (cmd_stop)
			break;
	}
	snapshot_free(&before);
	snapshot_free(&now);
	free(g.s);
	kernel_side_free(&k);
	return rc;
}

int cmd_hist(int argc, char **argv)
{
	struct collector_opts o = {};
	struct hist_args a;
	struct collector *c;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return opts_exit_status(rc);
	if (cmd_resolve_filters(a.f.disk, a.f.cgroup, &o.filter_dev, &o.filter_cgroup,
				&o.filter_cgroup_level))
		return 2;
	o.key_flags = a.per_flags;
	o.key_size_class = a.per_size;
	o.attach = a.f.attach;
	rc = cmd_open_collector(&c, &o);
	if (rc)
		return rc;
	rc = run(&a, c);
	collector_close(c);
	if (rc) {
		errorf(NULL, "reading the collector failed: %s", strerror(-rc));
		return 1;
	}
	return 0;
}
