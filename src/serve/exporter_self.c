// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * exporter_self.c - the exporter's families about itself: its BPF programs
 * and maps, the collector's events, scrapes and maintenance passes, build
 * info, the process, and how the workload label sets are kept bounded.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/names.h"
#include "serve/exporter_internal.h"
#include "sys/procstats.h"

/* The help of iolat_collector_events_total, with the events' names from the
 * one table every output uses. */
static void events_help(char *out, size_t len)
{
	snprintf(out, len,
		 "Collector events: I/O that did not fit in a full kernel map (%s: not counted; "
		 "%s: untimed; %s: not counted), completions whose start was not kept because "
		 "they were under way before iolat (%s, %s), partial completions skipped (%s), "
		 "completions whose kernel start and issue stamps were equal (%s: since Linux 6.9 "
		 "both can be one plug's cached clock, and then total time is device time).",
		 names_stat(IOLAT_STAT_HIST_FULL), names_stat(IOLAT_STAT_RQMAP_FULL),
		 names_stat(IOLAT_STAT_BIOMAP_FULL), names_stat(IOLAT_STAT_RQMAP_MISS),
		 names_stat(IOLAT_STAT_BIOMAP_MISS), names_stat(IOLAT_STAT_PARTIAL),
		 names_stat(IOLAT_STAT_SAME_STAMPS));
}

static int add_self(struct exporter *e, struct metric_set *set)
{
	static const char *const prog_l[] = { "program", NULL }, *const map_l[] = { "map", NULL },
				 *const ev_l[] = { "event", NULL },
				 *const build_l[] = { "version", "kernel", "attach", NULL };
	struct metric_family *runs, *rtime, *miss, *entries, *cap, *fill, *ev, *dur, *bytes, *build,
	    *start, *cstart;
	struct prog_stats ps[16];
	struct map_stats ms[8];
	uint64_t st[IOLAT_STAT_COUNT];
	int np = collector_prog_stats(e->c, ps, 16), nm = collector_map_stats(e->c, ms, 8), rc = 0;
	const char *bv[] = { IOLAT_VERSION, e->kernel, attach_mode_name(collector_mode(e->c)) };
	struct hist_map_info hm;

	collector_hist_map(e->c, &hm);

	runs = metrics_family(
	    set, "iolat_bpf_program_runs_total",
	    "Runs of each attached BPF program (kernel BPF stats; 0 unless enabled).",
	    METRIC_COUNTER, prog_l);
	rtime = metrics_family(
	    set, "iolat_bpf_program_run_seconds_total",
	    "Time spent in each attached BPF program (kernel BPF stats; 0 unless enabled).",
	    METRIC_COUNTER, prog_l);
	miss = metrics_family(
	    set, "iolat_bpf_program_recursion_misses_total",
	    "Runs the kernel skipped because the program was already running on that CPU.",
	    METRIC_COUNTER, prog_l);
	entries = metrics_family(set, "iolat_bpf_map_entries", "Entries in each BPF map.",
				 METRIC_GAUGE, map_l);
	cap = metrics_family(set, "iolat_bpf_map_capacity_entries",
			     "Maximum entries of each BPF map.", METRIC_GAUGE, map_l);
	_Static_assert(MAPSIZE_WARN_PCT == 90, "iolat_bpf_map_fill_ratio's help says 0.9");
	fill = metrics_family(set, "iolat_bpf_map_fill_ratio",
			      "Entries of each BPF map over its capacity, 0 to 1; the log warns at "
			      "0.9, and a full map's losses are in iolat_collector_events_total.",
			      METRIC_GAUGE, map_l);
	ev = metrics_family(set, "iolat_collector_events_total", e->events_help, METRIC_COUNTER,
			    ev_l);
	dur = metrics_family(set, "iolat_scrape_duration_seconds",
			     "How long the previous scrape took to build and render.", METRIC_GAUGE,
			     NULL);
	bytes = metrics_family(set, "iolat_scrape_size_bytes",
			       "Size of the previous scrape's response body, before compression.",
			       METRIC_GAUGE, NULL);
	build = metrics_family(set, "iolat_build_info",
			       "iolat's version, the kernel and the attach path in use.",
			       METRIC_GAUGE, build_l);
	start =
	    metrics_family(set, "iolat_start_time_seconds",
			   "Unix time this iolat process started: process counters begin there.",
			   METRIC_GAUGE, NULL);
	cstart =
	    metrics_family(set, "iolat_collector_start_time_seconds",
			   "Unix time the kernel collector started counting: block and workload "
			   "counters begin there (earlier than the process when it adopted a "
			   "collector, serve --handover).",
			   METRIC_GAUGE, NULL);
	if (!runs || !rtime || !miss || !entries || !cap || !fill || !ev || !dur || !bytes ||
	    !build || !start || !cstart)
		return -ENOMEM;
	for (int i = 0; i < np; i++) {
		const char *v[] = { ps[i].name };

		rc |= metrics_set_value(runs, v, (double)ps[i].run_cnt);
		rc |= metrics_set_value(rtime, v, (double)ps[i].run_time_ns / 1e9);
		rc |= metrics_set_value(miss, v, (double)ps[i].recursion_misses);
	}
	for (int i = 0; i < nm; i++) {
		const char *v[] = { ms[i].name };

		/* The histogram map's keys as this render's peek found them,
		 * not as the last pass did. */
		if (!strcmp(ms[i].name, hm.name))
			ms[i].entries = e->peeked.nlive;

		rc |= metrics_set_value(entries, v, (double)ms[i].entries);
		rc |= metrics_set_value(cap, v, (double)ms[i].capacity);
		rc |= metrics_set_value(
		    fill, v, ms[i].capacity ? (double)ms[i].entries / (double)ms[i].capacity : 0);
	}
	if (!collector_stats(e->c, st))
		for (int i = 0; i < IOLAT_STAT_COUNT; i++) {
			const char *v[] = { names_stat(i) };

			rc |= metrics_set_value(ev, v, (double)st[i]);
		}
	rc |= metrics_set_value(dur, NULL, e->last_scrape_s);
	rc |= metrics_set_value(bytes, NULL, (double)e->last_scrape_bytes);
	rc |= metrics_set_value(build, bv, 1);
	rc |= metrics_set_value(start, NULL, (double)e->started);
	rc |= metrics_set_value(cstart, NULL, (double)collector_started_ns(e->c) / 1e9);
	return rc ? -ENOMEM : 0;
}

/*
 * What each attached program measured of its own cost (bpf/iolat.h,
 * struct iolat_selfcost): there without the kernel's BPF statistics, which
 * need CAP_SYS_ADMIN. Its sampled time times the sampling interval is the
 * estimate: one counter to rate() and divide by the completions.
 */
static int add_selfcost(struct exporter *e, struct metric_set *set)
{
	static const char *const prog_l[] = { "program", NULL };
	struct metric_family *runs, *sruns, *sseconds, *est;
	struct prog_stats ps[16];
	int np = collector_prog_stats(e->c, ps, 16), rc = 0;

	_Static_assert(IOLAT_SELFCOST_EVERY == 64, "the selfcost helps say 1 in 64");
	runs = metrics_family(set, "iolat_bpf_self_runs_total",
			      "Runs of each attached BPF program, counted by the program itself "
			      "(always, without --bpf.stats too).",
			      METRIC_COUNTER, prog_l);
	sruns = metrics_family(set, "iolat_bpf_sampled_runs_total",
			       "Runs each program timed itself: 1 in 64 on each CPU.",
			       METRIC_COUNTER, prog_l);
	sseconds = metrics_family(
	    set, "iolat_bpf_sampled_seconds_total",
	    "Time of the runs each program timed, between two clock reads inside it: the "
	    "tracepoint's dispatch and the program's entry and exit are not in it.",
	    METRIC_COUNTER, prog_l);
	est = metrics_family(set, "iolat_bpf_estimated_seconds_total",
			     "Estimated time in each program: its sampled time times 64. Summed "
			     "over programs and divided by iolat_block_completions_total, iolat's "
			     "BPF time per I/O.",
			     METRIC_COUNTER, prog_l);
	if (!runs || !sruns || !sseconds || !est)
		return -ENOMEM;
	for (int i = 0; i < np; i++) {
		const char *v[] = { ps[i].name };

		rc |= metrics_set_value(runs, v, (double)ps[i].self_runs);
		rc |= metrics_set_value(sruns, v, (double)ps[i].sampled_runs);
		rc |= metrics_set_value(sseconds, v, (double)ps[i].sampled_ns / 1e9);
		rc |= metrics_set_value(est, v,
					(double)ps[i].sampled_ns * IOLAT_SELFCOST_EVERY / 1e9);
	}
	return rc ? -ENOMEM : 0;
}

/* The maintenance passes, which run on the daemon's own schedule. */
static int add_maintenance(struct exporter *e, struct metric_set *set)
{
	struct metric_family *passes, *dur, *every;

	passes = metrics_family(set, "iolat_maintenance_passes_total",
				"Maintenance passes run (folding the kernel's counters, naming "
				"and retiring cgroups, expiring disks, saving state).",
				METRIC_COUNTER, NULL);
	dur = metrics_family(set, "iolat_maintenance_duration_seconds",
			     "How long the last maintenance pass took; a scrape that arrives "
			     "during a pass waits at most this long.",
			     METRIC_GAUGE, NULL);
	every = metrics_family(set, "iolat_maintenance_interval_seconds",
			       "How often maintenance passes run (--maintenance.interval); label "
			       "sets and expiries in a scrape are at most this old.",
			       METRIC_GAUGE, NULL);
	if (!passes || !dur || !every)
		return -ENOMEM;
	return metrics_set_value(passes, NULL, (double)e->passes) |
		       metrics_set_value(dur, NULL, e->last_pass_s) |
		       metrics_set_value(every, NULL, e->o.maintain_s)
		   ? -ENOMEM
		   : 0;
}

/* The process_* figures read from /proc, and the heap (to tell a leak from
 * memory the allocator keeps). Left out when /proc cannot be read: nothing
 * rather than zeros. */
static int add_process_proc(struct metric_set *set)
{
	static const struct {
		const char *name, *help;
		enum metric_type type;
	} fam[] = {
		{ "process_cpu_seconds_total", "User and system CPU time spent, in seconds.",
		  METRIC_COUNTER },
		{ "process_resident_memory_bytes", "Resident memory size, in bytes.",
		  METRIC_GAUGE },
		{ "process_virtual_memory_bytes", "Virtual memory size, in bytes.", METRIC_GAUGE },
		{ "process_open_fds", "Open file descriptors.", METRIC_GAUGE },
		{ "process_max_fds", "Maximum open file descriptors (soft limit).", METRIC_GAUGE },
		{ "iolat_heap_allocated_bytes",
		  "Heap bytes in use by iolat (glibc mallinfo2); flat while resident memory grows "
		  "means freed memory the allocator keeps, not a leak.",
		  METRIC_GAUGE },
	};
	struct procstats ps;
	double v[6];
	int rc = 0;

	if (procstats_read(&ps))
		return 0;
	v[0] = ps.cpu_seconds;
	v[1] = (double)ps.resident_bytes;
	v[2] = (double)ps.virtual_bytes;
	v[3] = (double)ps.open_fds;
	v[4] = (double)ps.max_fds;
	v[5] = (double)ps.heap_bytes;
	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
		struct metric_family *f;

		/* No heap figure under another allocator (a sanitizer's): mallinfo2
		 * then says 0, and 0 would be a lie. */
		if (i == 5 && !ps.heap_bytes)
			continue;
		f = metrics_family(set, fam[i].name, fam[i].help, fam[i].type, NULL);
		rc |= f ? metrics_set_value(f, NULL, v[i]) : -ENOMEM;
	}
	return rc ? -ENOMEM : 0;
}

/* The process_* gauges every Prometheus client library exports, and the heap
 * (to tell a leak from memory the allocator keeps). Left out when /proc
 * cannot be read: nothing rather than zeros; but the start time, which is
 * not read there. */
static int add_process(struct exporter *e, struct metric_set *set)
{
	struct metric_family *start = metrics_family(
	    set, "process_start_time_seconds",
	    "Start time of the process since unix epoch in seconds.", METRIC_GAUGE, NULL);

	if (!start || metrics_set_value(start, NULL, (double)e->started))
		return -ENOMEM;
	return add_process_proc(set);
}

/* How the workload label sets are kept bounded. */
static int add_workload_self(struct exporter *e, struct metric_set *set)
{
	struct metric_family *sets, *max, *fc, *fi, *ret, *exp;
	struct wlabels_stats st;
	int rc = 0;

	wlabels_stats(e->wl, &st);
	sets = metrics_family(set, "iolat_workload_label_sets",
			      "Workload label sets exported now (\"other\" not counted).",
			      METRIC_GAUGE, NULL);
	max = metrics_family(set, "iolat_workload_label_sets_max",
			     "Cap on workload label sets (workloads.max); past it I/O counts under "
			     "workload=\"other\".",
			     METRIC_GAUGE, NULL);
	fc = metrics_family(
	    set, "iolat_workload_folded_cgroups_total",
	    "Cgroups counted under workload=\"other\" because of the cap (or never named).",
	    METRIC_COUNTER, NULL);
	fi = metrics_family(set, "iolat_workload_folded_completions_total",
			    "Completions counted under workload=\"other\".", METRIC_COUNTER, NULL);
	ret = metrics_family(set, "iolat_workload_retired_cgroups_total",
			     "Removed cgroups whose kernel keys moved to user space (counts kept).",
			     METRIC_COUNTER, NULL);
	exp = metrics_family(
	    set, "iolat_workload_expired_total",
	    "Workload label sets that left the output after workloads.expire without a live "
	    "cgroup.",
	    METRIC_COUNTER, NULL);
	if (!sets || !max || !fc || !fi || !ret || !exp)
		return -ENOMEM;
	rc |= metrics_set_value(sets, NULL, (double)st.sets);
	rc |= metrics_set_value(max, NULL, (double)e->o.wl.max_sets);
	rc |= metrics_set_value(fc, NULL, (double)st.folded_cgroups);
	rc |= metrics_set_value(fi, NULL, (double)e->folded_ios);
	rc |= metrics_set_value(ret, NULL, (double)st.retired_cgroups);
	rc |= metrics_set_value(exp, NULL, (double)st.expired_sets);
	return rc ? -ENOMEM : 0;
}

/* The system-call families' own loss: calls of keys the full map had no
 * room for (core/systimes.h). Only while those families are on. */
static int add_syscalls_self(struct exporter *e, struct metric_set *set)
{
	struct metric_family *lost;

	if (!e->sys)
		return 0;
	lost = metrics_family(set, "iolat_workload_syscall_lost_total",
			      "Positional file I/O system calls not counted in "
			      "iolat_workload_syscall_*: their workload and op found the "
			      "kernel map full.",
			      METRIC_COUNTER, NULL);
	if (!lost)
		return -ENOMEM;
	return metrics_set_value(lost, NULL, (double)systimes_lost(e->sys)) ? -ENOMEM : 0;
}

void exporter_self_init(struct exporter *e)
{
	events_help(e->events_help, sizeof(e->events_help));
}

int exporter_self_metrics(struct exporter *e, struct metric_set *set, bool workloads)
{
	int rc = add_self(e, set);

	if (!rc)
		rc = add_maintenance(e, set);
	if (!rc)
		rc = add_selfcost(e, set);
	if (!rc)
		rc = add_process(e, set);
	if (!rc && workloads)
		rc = add_workload_self(e, set);
	if (!rc && workloads)
		rc = add_syscalls_self(e, set);
	return rc;
}
