// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cmd_top.c - `iolat top`: a live table of block I/O per workload (VM, pod,
 * container, service, cgroup): IOPS, throughput, block size and latency
 * percentiles, from the cgroup each bio was charged to; with --syscalls,
 * beside them the host's service time of the workload's positional file
 * I/O system calls (a VM's disk I/O as qemu asks for it: core/systimes.h).
 */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
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
#include "core/systimes.h"
#include "sys/disks.h"
#include "sys/workload.h"
#include "util/buf.h"
#include "util/errors.h"
#include "util/json.h"
#include "util/monotonic.h"

enum column {
	COL_RIOPS,
	COL_WIOPS,
	COL_RMBS,
	COL_WMBS,
	COL_AVGBS,
	COL_RP50,
	COL_RP90,
	COL_RP99,
	COL_WP50,
	COL_WP90,
	COL_WP99,
	COL_SYS_IOPS, /* --syscalls */
	COL_SYS_P50,
	COL_SYS_P99,
	COL_NAME,
	COL_COUNT,
};

static const char *const col_names[COL_COUNT] = {
	"r_iops",   "w_iops",	"r_mbs",      "w_mbs",	    "avg_kib",
	"r_p50_ms", "r_p90_ms", "r_p99_ms",   "w_p50_ms",   "w_p90_ms",
	"w_p99_ms", "sys_iops", "sys_p50_ms", "sys_p99_ms", "name",
};

struct top_args {
	double interval;
	uint64_t count; /* intervals; 0: until Ctrl-C */
	bool once, json, csv, no_clear, total, process, wide;
	bool syscalls; /* the system-call columns, and their programs attached */
	enum column sort;
	struct cmd_trace_flags f; /* -d, -c, --attach, -v */
	bool clear;		  /* escape codes allowed (a terminal) and not -C */
	int columns;		  /* the terminal's width; 0: not a terminal */
};

/* One row: a workload's reads and writes over the interval. */
struct row {
	struct workload w;
	struct iolat_val rd, wr; /* deltas, device or total view per args */
	struct iolat_val sys;	 /* --syscalls: its calls' deltas, reads and writes */
	double v[COL_COUNT];
};

struct table {
	struct row *r;
	size_t n, cap;
	const struct top_args *a;
	struct workload_cache *names;
	double seconds;
	uint64_t sys_lost; /* --syscalls: calls the full map did not count, this interval */
	const struct bucket_table *lat;
	/* Disks under others (legs of dm or md): their I/O is also the upper
	 * disk's, so a workload's totals leave them out unless -d names one. */
	uint32_t lower[64];
	int nlower;
};

void cmd_top_usage(FILE *f)
{
	fprintf(f,
		"Usage: iolat top [OPTIONS] [INTERVAL [COUNT]]\n"
		"\n"
		"Block I/O per workload, refreshed every INTERVAL seconds (default 1), COUNT\n"
		"times (default: until Ctrl-C), like biotop: read/write IOPS and MB/s,\n"
		"average block size, p50/p90/p99 read and write latency (device time; -Q\n"
		"total time). A workload is the cgroup each bio was charged to, named by\n"
		"rules: libvirt VMs, Kubernetes pods, Docker containers, systemd services\n"
		"and scopes; otherwise its path.\n"
		"A disk under another (a leg of an LVM, dm-crypt or md device) is left out\n"
		"unless -d names it: its I/O is the upper device's, counted there.\n"
		"On a terminal the screen is cleared before each interval and NAME is cut\n"
		"to fit its width; into a pipe or a file, nothing is cleared or cut.\n"
		"\n"
		"Options:\n"
		"  -s, --sort=COLUMN    sort by r_iops, w_iops, r_mbs, w_mbs, avg_kib, r_p50_ms,\n"
		"                       r_p90_ms, r_p99_ms, w_p50_ms, w_p90_ms, w_p99_ms,\n"
		"                       sys_iops, sys_p50_ms, sys_p99_ms or name\n"
		"                       (default: r_iops + w_iops, descending; name ascending;\n"
		"                       the sys_ columns with -S only)\n"
		"  -Q, --queued         total time (request created -> complete), not device\n"
		"                       time\n"
		"  -P, --process        per submitting process (COMM[PID]) instead of per\n"
		"                       workload, for hosts without useful cgroups\n"
		"  -S, --syscalls       also the host's time for the workload's positional\n"
		"                       file I/O system calls (pread64, pwrite64, preadv,\n"
		"                       pwritev, preadv2, pwritev2: a VM's disk I/O as qemu\n"
		"                       asks for it): calls/s, p50 and p99 in columns\n"
		"                       sys_iops, sys_p50_ms, sys_p99_ms; attaches programs\n"
		"                       to those calls, which cost each call a little\n"
		"  -C, --no-clear       do not clear the screen between intervals\n"
		"  -w, --wide           never cut NAME, even on a narrow terminal\n"
		"      --once           one interval, then exit (COUNT 1; not with a COUNT)\n"
		"  -j, --json           one JSON object per interval\n"
		"      --csv            CSV rows (a header first), one line per workload and\n"
		"                       interval\n");
	cmd_trace_flags_usage(f, 23);
	fprintf(f, "  -h, --help           this help\n"
		   "  -V, --version        print the version\n"
		   "\n"
		   "Examples:\n"
		   "  iolat top\n"
		   "  iolat top -s r_p99_ms 5\n"
		   "  iolat top -S -s sys_p99_ms -c /sys/fs/cgroup/machine.slice\n"
		   "  iolat top --once --json 10\n"
		   "  iolat top -w -c /sys/fs/cgroup/machine.slice 2 30\n"
		   "\n"
		   "See iolat-top(1).\n");
}

static int parse_column(const char *s, enum column *out)
{
	for (int i = 0; i < COL_COUNT; i++)
		if (!strcmp(s, col_names[i])) {
			*out = (enum column)i;
			return 0;
		}
	return -EINVAL;
}

enum { OPT_ONCE = 256, OPT_CSV };

const struct opt cmd_top_opts[] = {
	{ "sort", 's', OPT_VALUE, 's' },
	{ "queued", 'Q', OPT_NO_VALUE, 'Q' },
	{ "process", 'P', OPT_NO_VALUE, 'P' },
	{ "syscalls", 'S', OPT_NO_VALUE, 'S' },
	{ "no-clear", 'C', OPT_NO_VALUE, 'C' },
	{ "wide", 'w', OPT_NO_VALUE, 'w' },
	{ "once", 0, OPT_NO_VALUE, OPT_ONCE },
	{ "json", 'j', OPT_NO_VALUE, 'j' },
	{ "csv", 0, OPT_NO_VALUE, OPT_CSV },
	CMD_TRACE_FLAG_OPTS,
	{},
};

/* 0: run; OPTS_EXIT (help or version printed) or -EINVAL (printed). */
static int parse_args(int argc, char **argv, struct top_args *a)
{
	struct opts o;
	int c, shared;

	memset(a, 0, sizeof(*a));
	a->interval = 1;
	a->sort = COL_COUNT; /* total IOPS */
	opts_begin(&o, cmd_top_opts, cmd_top_usage, argc, argv);
	while ((c = opts_next(&o)) > 0) {
		shared = cmd_trace_flag(c, o.value, &a->f);
		if (shared < 0)
			return shared;
		if (shared)
			continue;
		switch (c) {
		case 's':
			if (parse_column(o.value, &a->sort)) {
				errorf("see 'iolat top --help' for the columns",
				       "unknown sort column '%s'", o.value);
				return -EINVAL;
			}
			break;
		case 'Q':
			a->total = true;
			break;
		case 'w':
			a->wide = true;
			break;
		case 'C':
			a->no_clear = true;
			break;
		case OPT_ONCE:
			a->once = true;
			break;
		case 'j':
			a->json = true;
			break;
		case OPT_CSV:
			a->csv = true;
			break;
		case 'P':
			a->process = true;
			break;
		case 'S':
			a->syscalls = true;
			break;
		}
	}
	if (c < 0)
		return c;
	if (cmd_interval_count(&o, &a->interval, &a->count))
		return -EINVAL;
	if (a->json && a->csv) {
		errorf("pick one", "conflicting options: --json with --csv");
		return -EINVAL;
	}
	/* Two answers to "how many": refused rather than one of them ignored. */
	if (a->once && a->count) {
		errorf("--once is COUNT 1: give --once or a COUNT, not both",
		       "conflicting options: --once with COUNT %llu", (unsigned long long)a->count);
		return -EINVAL;
	}
	if (a->once)
		a->count = 1;
	if (!a->syscalls && a->sort >= COL_SYS_IOPS && a->sort <= COL_SYS_P99) {
		errorf("add -S (--syscalls) for the system-call columns",
		       "sort column '%s' is shown only with --syscalls", col_names[a->sort]);
		return -EINVAL;
	}
	return 0;
}

static struct row *row_for(struct table *t, const struct workload *w)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->r[i].w.name, w->name) && !strcmp(t->r[i].w.kind, w->kind))
			return &t->r[i];
	if (array_make_room((void **)&t->r, &t->cap, t->n, sizeof(*t->r), 16))
		return NULL;
	memset(&t->r[t->n], 0, sizeof(t->r[0]));
	t->r[t->n].w = *w;
	return &t->r[t->n++];
}

/* The lower layers of device stacks now (they come and go with dm and md).
 * 0 or -ENOMEM. */
static int find_lower(struct table *t)
{
	struct disk_info *d;
	int n;

	t->nlower = 0;
	if (t->a->f.disk)
		return 0;
	n = disks_list_new(&d);
	if (n == -ENOMEM)
		return -ENOMEM;
	for (int i = 0; i < n && t->nlower < (int)(sizeof(t->lower) / sizeof(t->lower[0])); i++)
		if (d[i].stack.holders[0])
			t->lower[t->nlower++] = d[i].dev;
	free(d);
	return 0;
}

static int add_key(void *ctx, const struct iolat_key *k, const struct iolat_val *delta)
{
	struct table *t = ctx;
	struct row *r;

	for (int i = 0; i < t->nlower; i++)
		if (k->dev == t->lower[i])
			return 0;
	r = row_for(t, workload_lookup(t->names, k->cgroup));
	if (!r)
		return -ENOMEM;
	if (k->op == IOLAT_OP_READ)
		histo_add(&r->rd, delta);
	else if (k->op == IOLAT_OP_WRITE)
		histo_add(&r->wr, delta);
	return 0;
}

/* A system-call series' delta: its workload's reads and writes together. */
static int add_sys_key(void *ctx, const struct iolat_key *k, const struct iolat_val *delta)
{
	struct table *t = ctx;
	struct row *r = row_for(t, workload_lookup(t->names, k->cgroup));

	if (!r)
		return -ENOMEM;
	histo_add(&r->sys, delta);
	return 0;
}

static double pct_ms(const struct iolat_lat *l, const struct bucket_table *t, double q)
{
	return l->count ? histo_quantile(l->slots, t, q, l->max_ns) / 1e6 : 0;
}

static void compute(struct table *t, struct row *r)
{
	enum iolat_view view = t->a->total ? IOLAT_VIEW_TOTAL : IOLAT_VIEW_DEVICE;
	uint64_t ios = r->rd.ios + r->wr.ios;

	r->v[COL_RIOPS] = (double)r->rd.ios / t->seconds;
	r->v[COL_WIOPS] = (double)r->wr.ios / t->seconds;
	r->v[COL_RMBS] = (double)r->rd.bytes / t->seconds / 1e6;
	r->v[COL_WMBS] = (double)r->wr.bytes / t->seconds / 1e6;
	r->v[COL_AVGBS] = ios ? (double)(r->rd.bytes + r->wr.bytes) / (double)ios / 1024 : 0;
	r->v[COL_RP50] = pct_ms(&r->rd.lat[view], t->lat, 0.50);
	r->v[COL_RP90] = pct_ms(&r->rd.lat[view], t->lat, 0.90);
	r->v[COL_RP99] = pct_ms(&r->rd.lat[view], t->lat, 0.99);
	r->v[COL_WP50] = pct_ms(&r->wr.lat[view], t->lat, 0.50);
	r->v[COL_WP90] = pct_ms(&r->wr.lat[view], t->lat, 0.90);
	r->v[COL_WP99] = pct_ms(&r->wr.lat[view], t->lat, 0.99);
	/* A call's time is in its device view (core/systimes.h). */
	r->v[COL_SYS_IOPS] = (double)r->sys.ios / t->seconds;
	r->v[COL_SYS_P50] = pct_ms(&r->sys.lat[IOLAT_VIEW_DEVICE], t->lat, 0.50);
	r->v[COL_SYS_P99] = pct_ms(&r->sys.lat[IOLAT_VIEW_DEVICE], t->lat, 0.99);
}

/* Whether column c is shown: the system-call ones with --syscalls only. */
static bool shown(const struct top_args *a, int c)
{
	return a->syscalls || c < COL_SYS_IOPS || c > COL_SYS_P99;
}

/* Rows by the column in *col (qsort_r's argument); COL_COUNT: total IOPS. */
static int cmp_rows(const void *pa, const void *pb, void *col)
{
	const struct row *a = pa, *b = pb;
	enum column sort_col = *(const enum column *)col;
	double x, y;

	if (sort_col == COL_NAME)
		return strcmp(a->w.name, b->w.name);
	x = sort_col == COL_COUNT ? a->v[COL_RIOPS] + a->v[COL_WIOPS] : a->v[sort_col];
	y = sort_col == COL_COUNT ? b->v[COL_RIOPS] + b->v[COL_WIOPS] : b->v[sort_col];
	return x < y ? 1 : x > y ? -1 : strcmp(a->w.name, b->w.name);
}

/* The text table's columns besides NAME: KIND and its blank (10), four
 * of 9 and seven of 8 characters; with --syscalls three more of 8. */
#define TEXT_FIXED_COLUMNS (10 + 4 * 9 + 7 * 8)
#define TEXT_SYS_COLUMNS (3 * 8)
/* The narrowest NAME a terminal gets, however narrow: a cut name shows this
 * much of itself, and the line wraps. */
#define TEXT_NAME_MIN 24

/*
 * NAME's width: the longest name (at least the header's), cut to what the
 * terminal leaves beside the other columns (never below TEXT_NAME_MIN);
 * never cut with --wide or when stdout is no terminal.
 */
static int name_width(const struct table *t)
{
	int longest = 4,
	    room = t->a->columns - TEXT_FIXED_COLUMNS - (t->a->syscalls ? TEXT_SYS_COLUMNS : 0);

	for (size_t i = 0; i < t->n; i++) {
		int len = (int)strlen(t->r[i].w.name);

		longest = len > longest ? len : longest;
	}
	if (t->a->wide || !t->a->columns || longest <= room)
		return longest;
	return room > TEXT_NAME_MIN ? room : TEXT_NAME_MIN;
}

static void print_text(const struct table *t, struct collector *c, uint64_t *untrue_seen)
{
	char ts[16];
	time_t now = time(NULL);
	int w = name_width(t);

	strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
	if (t->a->clear)
		fputs("\033[H\033[2J", stdout);
	printf("%s  %zu workloads  %s time (ms)\n", ts, t->n, t->a->total ? "total" : "device");
	printf("%-9s %-*s %8s %8s %8s %8s %7s %7s %7s %7s %7s %7s %7s", "KIND", w, "NAME", "R/s",
	       "W/s", "RMB/s", "WMB/s", "AVG_KiB", "R_P50", "R_P90", "R_P99", "W_P50", "W_P90",
	       "W_P99");
	if (t->a->syscalls)
		printf(" %7s %7s %7s", "SYS/s", "SYS_P50", "SYS_P99");
	putchar('\n');
	for (size_t i = 0; i < t->n; i++) {
		const double *v = t->r[i].v;

		printf("%-9s %-*.*s %8.1f %8.1f %8.2f %8.2f %7.1f %7.3f %7.3f %7.3f %7.3f %7.3f "
		       "%7.3f",
		       t->r[i].w.kind, w, w, t->r[i].w.name, v[COL_RIOPS], v[COL_WIOPS],
		       v[COL_RMBS], v[COL_WMBS], v[COL_AVGBS], v[COL_RP50], v[COL_RP90],
		       v[COL_RP99], v[COL_WP50], v[COL_WP90], v[COL_WP99]);
		if (t->a->syscalls)
			printf(" %7.1f %7.3f %7.3f", v[COL_SYS_IOPS], v[COL_SYS_P50],
			       v[COL_SYS_P99]);
		putchar('\n');
	}
	render_untrue_text(stdout, collector_stat_growth(c, IOLAT_STAT_UNTRUE_STAMPS, untrue_seen),
			   collector_keeps_cached_stamps(c));
	if (t->sys_lost)
		printf("%llu system calls not counted: more workloads than their map holds\n",
		       (unsigned long long)t->sys_lost);
	putchar('\n');
}

static void print_json(const struct table *t)
{
	struct json j;
	char ts[32];
	time_t now = time(NULL);

	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	json_init(&j, stdout);
	json_begin_object(&j);
	json_kv_string(&j, "time", ts);
	json_kv_double(&j, "interval_s", t->seconds);
	json_kv_string(&j, "latency", t->a->total ? "total" : "device");
	if (t->a->syscalls)
		json_kv_uint(&j, "syscalls_lost", t->sys_lost);
	json_key(&j, "workloads");
	json_begin_array(&j);
	for (size_t i = 0; i < t->n; i++) {
		const struct row *r = &t->r[i];

		json_begin_object(&j);
		json_kv_string(&j, "kind", r->w.kind);
		json_kv_string(&j, "name", r->w.name);
		json_kv_string(&j, "cgroup", r->w.path);
		json_kv_uint(&j, "reads", r->rd.ios);
		json_kv_uint(&j, "writes", r->wr.ios);
		json_kv_uint(&j, "read_bytes", r->rd.bytes);
		json_kv_uint(&j, "write_bytes", r->wr.bytes);
		if (t->a->syscalls) {
			json_kv_uint(&j, "syscalls", r->sys.ios);
			json_kv_uint(&j, "syscall_bytes", r->sys.bytes);
			json_kv_uint(&j, "syscall_errors", r->sys.errors);
		}
		for (int c = 0; c < COL_NAME; c++)
			if (shown(t->a, c))
				json_kv_double(&j, col_names[c], r->v[c]);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	putchar('\n');
}

/* CSV fields never contain quotes here but names may hold commas: quote. */
static void print_csv(const struct table *t, bool header)
{
	time_t now = time(NULL);

	if (header) {
		printf("time,kind,name");
		for (int c = 0; c < COL_NAME; c++)
			if (shown(t->a, c))
				printf(",%s", col_names[c]);
		putchar('\n');
	}
	for (size_t i = 0; i < t->n; i++) {
		printf("%lld,%s,\"%s\"", (long long)now, t->r[i].w.kind, t->r[i].w.name);
		for (int c = 0; c < COL_NAME; c++)
			if (shown(t->a, c))
				printf(",%.3f", t->r[i].v[c]);
		putchar('\n');
	}
}

/*
 * Keys of cgroups (or processes) that are gone and did no I/O this
 * interval leave the kernel map, so a long top on a host where cgroups come
 * and go does not fill it. top shows intervals: their totals are not needed.
 */
static void forget_gone(struct collector *c, const struct snapshot *now,
			const struct snapshot *before, struct workload_cache *names)
{
	for (size_t i = 0; i < now->n; i++) {
		const struct series *s = &now->s[i], *old = snapshot_find(before, &s->key);

		if (!s->key.cgroup || !old || old->val.ios != s->val.ios)
			continue;
		if (!workload_alive(names, s->key.cgroup) && !collector_forget(c, &s->key))
			workload_forget(names, s->key.cgroup);
	}
}

/* --syscalls: the calls' series at the last interval's end and now. */
struct sys_reads {
	struct systimes *s; /* NULL: off */
	struct snapshot before, now;
	uint64_t lost; /* systimes_lost at the last interval's end */
};

/* One interval of the system calls into t's rows (t's workloads are
 * looked up first, so gone cgroups are still named); then the series of
 * gone idle cgroups leave the kernel's map, as forget_gone's. */
static int sys_interval(struct table *t, struct sys_reads *sr)
{
	struct snapshot tmp;
	int rc;

	if (!sr->s)
		return 0;
	rc = systimes_read(sr->s, &sr->now);
	t->sys_lost = systimes_lost(sr->s) - sr->lost;
	sr->lost += t->sys_lost;
	if (!rc)
		rc = snapshot_deltas(&sr->now, &sr->before, add_sys_key, t);
	if (!rc)
		rc = systimes_forget_gone(sr->s, &sr->now, &sr->before, t->names);
	tmp = sr->before;
	sr->before = sr->now;
	sr->now = tmp;
	return rc;
}

static int comm_of(void *ctx, uint32_t pid, char *out, size_t len)
{
	return collector_comm(ctx, pid, out, len);
}

static int run(struct top_args *a, struct collector *c, struct sys_reads *sr)
{
	struct snapshot before = { 0 }, now = { 0 }, tmp;
	struct table t = { .a = a, .lat = collector_lat_table(c) };
	uint64_t start = monotonic_ns(), last = start, end, now_ns, untrue_seen = 0;
	int rc = 0;

	t.names = workload_cache_new();
	if (!t.names)
		return -ENOMEM;
	if (a->process)
		workload_cache_set_comm(t.names, comm_of, c);
	rc = collector_read(c, &before); /* the baseline: only I/O from now on */
	if (!rc && sr->s) {
		rc = systimes_read(sr->s, &sr->before);
		sr->lost = systimes_lost(sr->s);
	}
	collector_stat_growth(c, IOLAT_STAT_UNTRUE_STAMPS, &untrue_seen);
	/* Said once the baseline is read: I/O that follows the line counts. */
	cmd_say_tracing(a->process ? "block device I/O per process"
				   : "block device I/O per workload",
			!a->count);
	for (uint64_t i = 0; !rc && (!a->count || i < a->count) && !cmd_stop; i++) {
		/* From the start, not from the last read: intervals do not drift. */
		end = start + (uint64_t)(a->interval * (double)(i + 1) * NSEC_PER_SEC);
		rc = cmd_wait_until(c, end, NULL);
		if (!rc)
			rc = collector_read(c, &now);
		if (rc)
			break;
		t.n = 0;
		rc = find_lower(&t);
		if (rc)
			break;
		now_ns = monotonic_ns();
		t.seconds = (double)(now_ns - last) / NSEC_PER_SEC;
		last = now_ns;
		rc = snapshot_deltas(&now, &before, add_key, &t);
		if (!rc)
			rc = sys_interval(&t, sr);
		for (size_t k = 0; k < t.n; k++)
			compute(&t, &t.r[k]);
		if (t.n > 1)
			qsort_r(t.r, t.n, sizeof(*t.r), cmp_rows, &a->sort);
		forget_gone(c, &now, &before, t.names);
		if (a->json)
			print_json(&t);
		else if (a->csv)
			print_csv(&t, i == 0);
		else
			print_text(&t, c, &untrue_seen);
		fflush(stdout);
		tmp = before;
		before = now;
		now = tmp;
	}
	snapshot_free(&before);
	snapshot_free(&now);
	free(t.r);
	workload_cache_free(t.names);
	return rc;
}

int cmd_top(int argc, char **argv)
{
	struct collector_opts o = { .key_cgroup = true };
	struct sys_reads sr = { 0 };
	struct top_args a;
	struct collector *c;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return opts_exit_status(rc);
	o.key_cgroup = !a.process;
	o.key_process = a.process;
	o.attach = a.f.attach;
	if (cmd_resolve_filters(a.f.disk, a.f.cgroup, &o.filter_dev, &o.filter_cgroup,
				&o.filter_cgroup_level))
		return 2;
	a.clear = !a.no_clear && !a.json && !a.csv && cmd_stdout_escapes();
	a.columns = cmd_stdout_columns();
	rc = cmd_open_collector(&c, &o);
	if (rc)
		return rc;
	if (a.syscalls) {
		struct systimes_opts so = { .lat = collector_lat_table(c),
					    .filter_cgroup = o.filter_cgroup,
					    .filter_cgroup_level = o.filter_cgroup_level,
					    .key_process = a.process };
		char err[512];

		if (systimes_test_knobs(&so, getenv, err, sizeof(err)) ||
		    systimes_open(&sr.s, &so, err, sizeof(err))) {
			errorf("or run without --syscalls", "%s", err);
			collector_close(c);
			return 1;
		}
	}
	rc = run(&a, c, &sr);
	systimes_close(sr.s);
	snapshot_free(&sr.before);
	snapshot_free(&sr.now);
	collector_close(c);
	if (rc) {
		errorf(NULL, "reading the collector failed: %s", strerror(-rc));
		return 1;
	}
	return 0;
}
