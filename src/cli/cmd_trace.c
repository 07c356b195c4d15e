// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cmd_trace.c - `iolat trace`: one line (or JSON object) per sampled block
 * I/O with the time of every stage it went through, like biosnoop with
 * blktrace's stages. What the ring buffer could not carry is counted and
 * reported at exit, never dropped silently.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmdutil.h"
#include "cli/trace_file.h"
#include "cli/trace_join.h"
#include "cli/trace_join_print.h"
#include "cli/trace_out.h"
#include "cli/trace_summary.h"
#include "commands.h"
#include "core/probe.h"
#include "core/tracer.h"
#include "sys/cgroups.h"
#include "util/errors.h"
#include "util/monotonic.h"
#include "util/opts.h"
#include "util/parse.h"

/* The records per second trace writes at most unless told otherwise (-s,
 * -D, --summary or --max-rate): a bound on what an unbounded run can write
 * to a screen or a file beside a busy disk, not a sampling method. */
#define TRACE_MAX_RATE_DEFAULT 10000u

struct trace_args {
	struct cmd_trace_flags f;	    /* -d, -c, --attach, -v */
	const char *write_file, *read_file; /* --write: record; --read: replay */
	const char *join_guest, *join_host; /* --join's two files */
	uint64_t pid, sample_every, ringbuf_kib;
	uint64_t max_rate;	   /* records per second; 0: no cap */
	bool max_rate_set;	   /* --max-rate given: it applies whatever else is */
	bool sampled;		   /* -s given (-s 1 too: every I/O, asked for) */
	double min_ms, duration_s; /* 0: no threshold; run until a signal */
	enum trace_op_filter op;
	bool json, syscalls, summary, join;
};

void cmd_trace_usage(FILE *f)
{
	fprintf(f,
		"Usage: iolat trace [OPTIONS]\n"
		"\n"
		"One record per sampled block I/O, with the time of every stage it went\n"
		"through (blktrace's letters): Q queued, G request allocated, M merged into\n"
		"a request, I inserted, D issued to the driver, C completed. Runs until\n"
		"Ctrl-C, SIGTERM or -D; then prints to stderr how many records were\n"
		"emitted, lost (ring buffer full) and dropped by the threshold or the cap.\n"
		"\n"
		"Without -s, -D or --summary, at most %u records a second are written\n"
		"(the rest are counted and dropped; a line on stderr says so at start):\n"
		"the cap is set with --max-rate, and lifted with --max-rate 0 (or -s 1).\n"
		"\n"
		"Columns (ms; '-' where a stage was not seen):\n"
		"  Q2G  queued -> request allocated    G2I  -> inserted\n"
		"  I2D  inserted -> issued             D2C  device time\n"
		"  Q2C  total                          Q2M  queued -> merged into an existing\n"
		"                                       request (the record ends there)\n"
		"\n"
		"Stacked devices: a followed bio of a dm or md device is followed on through\n"
		"block_bio_remap to each bio it is sent on as, on the disk below (DISK\n"
		"'^vda'; in JSON \"remapped\" and \"parent\", the upper bio's id), whatever\n"
		"the sampling: one chain from the top layer to the requests on its legs.\n"
		"\n"
		"Options:\n"
		"  -p, --pid=PID          only I/O queued by this process (tgid)\n"
		"  -o, --op=read|write    only reads or only writes\n"
		"  -s, --sample=N         follow 1 I/O in N (per CPU; default 1: every I/O)\n"
		"  -m, --min-ms=MS        only I/O whose Q2C is at least MS (decided at\n"
		"                         completion: every I/O is followed)\n"
		"  -j, --json             one JSON object per I/O (raw ns timestamps)\n"
		"      --syscalls         link each I/O to the read/write/fsync syscall it\n"
		"                         was issued in, and print that syscall's latency\n"
		"                         after its I/O; follow buffered writes through the\n"
		"                         page cache to the bios that write them back, and\n"
		"                         link I/O of page faults on mapped files; -s samples\n"
		"                         syscalls (costs a little on every syscall)\n"
		"      --summary          no record lines: at the end, per device and per\n"
		"                         process, each span's count, min, avg, p50/p90/p99,\n"
		"                         max and share of the total time (like btt); and\n"
		"                         with --syscalls the page-cache wait per writer and\n"
		"                         cgroup\n"
		"  -w, --write=FILE       records to FILE (a new file), not to the screen\n"
		"  -r, --read=FILE        print (or --summary) the records of FILE; no\n"
		"                         tracing, no privileges needed\n"
		"      --join GUEST HOST  match each request of a VM's trace (GUEST, made\n"
		"                         in the guest on its virtio disk) to the host\n"
		"                         call and block I/O that served it (HOST, made\n"
		"                         with --syscalls -p QEMU_PID): one chain per\n"
		"                         request, each layer's span; clocks aligned\n"
		"                         from the pairs, with their error bound\n"
		"  -D, --duration=SECONDS stop after SECONDS\n"
		"      --max-rate=N       write at most N records a second, dropping (and\n"
		"                         counting) the rest; 0: no cap (default %u\n"
		"                         without -s, -D and --summary, else 0)\n"
		"      --ringbuf-kib=K    ring buffer size in KiB, a power of two >= 4\n"
		"                         (default %u)\n",
		TRACE_MAX_RATE_DEFAULT, TRACE_MAX_RATE_DEFAULT, TRACE_RINGBUF_DEFAULT_BYTES / 1024);
	cmd_trace_flags_usage(f, 25);
	fprintf(f,
		"  -h, --help             this help\n"
		"  -V, --version          print the version\n"
		"\n"
		"Examples:\n"
		"  iolat trace -d vda                 I/O on vda (at most %u a second)\n"
		"  iolat trace -m 10 -j               I/O slower than 10 ms, as JSON\n"
		"  iolat trace -s 100 -o write -D 60  1 write in 100, for a minute\n"
		"  iolat trace --summary -D 30        where 30 s of I/O spent its time\n"
		"  iolat trace -w io.trace -D 60; iolat trace -r io.trace --summary\n"
		"  iolat trace --join vm.trace host.trace --summary\n"
		"\n"
		"See iolat-trace(1).\n",
		TRACE_MAX_RATE_DEFAULT);
}

static int bad(const char *hint, const char *what, const char *arg)
{
	errorf(hint, "bad %s '%s'", what, arg);
	return -EINVAL;
}

enum { OPT_SYSCALLS = 256, OPT_SUMMARY, OPT_RINGBUF, OPT_MAX_RATE, OPT_JOIN };

const struct opt cmd_trace_opts[] = {
	{ "pid", 'p', OPT_VALUE, 'p' },
	{ "op", 'o', OPT_VALUE, 'o' },
	{ "sample", 's', OPT_VALUE, 's' },
	{ "min-ms", 'm', OPT_VALUE, 'm' },
	{ "json", 'j', OPT_NO_VALUE, 'j' },
	{ "syscalls", 0, OPT_NO_VALUE, OPT_SYSCALLS },
	{ "summary", 0, OPT_NO_VALUE, OPT_SUMMARY },
	{ "write", 'w', OPT_VALUE, 'w' },
	{ "read", 'r', OPT_VALUE, 'r' },
	{ "join", 0, OPT_NO_VALUE, OPT_JOIN },
	{ "duration", 'D', OPT_VALUE, 'D' },
	{ "max-rate", 0, OPT_VALUE, OPT_MAX_RATE },
	{ "ringbuf-kib", 0, OPT_VALUE, OPT_RINGBUF },
	CMD_TRACE_FLAG_OPTS,
	{},
};

/* One option into a; -EINVAL (printed) on a bad value. */
static int parse_one(int c, const char *v, struct trace_args *a)
{
	switch (c) {
	case 'j':
		a->json = true;
		break;
	case OPT_SYSCALLS:
		a->syscalls = true;
		break;
	case OPT_SUMMARY:
		a->summary = true;
		break;
	case OPT_JOIN:
		a->join = true;
		break;
	case 'w':
		a->write_file = v;
		break;
	case 'r':
		a->read_file = v;
		break;
	case 'p':
		if (parse_uint(v, 1, INT32_MAX, &a->pid))
			return bad("give a process id, 1 or more", "pid", v);
		break;
	case 'o':
		if (!strcmp(v, "read"))
			a->op = TRACE_OP_READ;
		else if (!strcmp(v, "write"))
			a->op = TRACE_OP_WRITE;
		else
			return bad("use read or write", "operation", v);
		break;
	case 's':
		if (parse_uint(v, 1, UINT32_MAX, &a->sample_every))
			return bad("give N as a whole number, 1 or more (1 in N)", "sample rate",
				   v);
		a->sampled = true;
		break;
	case 'm':
		if (parse_seconds(v, &a->min_ms))
			return bad("give a positive number of milliseconds, e.g. 10 or 0.5",
				   "threshold", v);
		break;
	case 'D':
		if (parse_seconds(v, &a->duration_s))
			return bad("give a positive number of seconds", "duration", v);
		break;
	case OPT_RINGBUF:
		if (parse_uint(v, 4, 1024 * 1024, &a->ringbuf_kib) ||
		    (a->ringbuf_kib & (a->ringbuf_kib - 1)) ||
		    a->ringbuf_kib * 1024 % (uint64_t)sysconf(_SC_PAGESIZE))
			return bad("give a power of two of at least one page, e.g. 4 or 1024",
				   "ring buffer size (KiB)", v);
		break;
	case OPT_MAX_RATE:
		if (parse_uint(v, 0, UINT32_MAX, &a->max_rate))
			return bad("give records per second as a whole number (0: no cap)",
				   "--max-rate", v);
		a->max_rate_set = true;
		break;
	}
	return 0;
}

/* The options of argv through a; o->next: the first operand. 0, OPTS_EXIT
 * or -EINVAL (printed). */
static int parse_opts(struct opts *o, int argc, char **argv, struct trace_args *a)
{
	int c;

	opts_begin(o, cmd_trace_opts, cmd_trace_usage, argc, argv);
	while ((c = opts_next(o)) > 0) {
		int shared = cmd_trace_flag(c, o->value, &a->f);

		if (shared < 0 || (!shared && parse_one(c, o->value, a)))
			return -EINVAL;
	}
	return c;
}

/* --join's two files, the first operands; options may follow them
 * (`--join GUEST HOST --summary`). 0, OPTS_EXIT or -EINVAL (printed). */
static int parse_join_files(struct opts *o, int argc, char **argv, struct trace_args *a)
{
	char *rest[argc + 1];
	int n = 1, rc;

	if (o->next + 2 > argc) {
		errorf("e.g. iolat trace --join vm.trace host.trace",
		       "--join takes two trace files: the guest's, then the host's");
		return -EINVAL;
	}
	a->join_guest = argv[o->next];
	a->join_host = argv[o->next + 1];
	rest[0] = argv[0];
	for (int i = o->next + 2; i < argc; i++)
		rest[n++] = argv[i];
	rest[n] = NULL;
	rc = parse_opts(o, n, rest, a);
	if (!rc && opts_no_operand(o, o->next))
		return -EINVAL;
	return rc;
}

/* 0: run; OPTS_EXIT (help or version printed) or -EINVAL (printed). */
static int parse_args(int argc, char **argv, struct trace_args *a)
{
	struct opts o;
	int c;

	memset(a, 0, sizeof(*a));
	a->sample_every = 1;
	a->ringbuf_kib = TRACE_RINGBUF_DEFAULT_BYTES / 1024;
	c = parse_opts(&o, argc, argv, a);
	if (!c && a->join)
		c = parse_join_files(&o, argc, argv, a);
	else if (!c && opts_no_operand(&o, o.next))
		c = -EINVAL;
	if (c < 0 || a->join)
		return c;
	/* An open-ended run of every I/O is what the cap is for; one that
	 * samples, ends, or only sums (--summary) is bounded already. */
	if (!a->max_rate_set && !a->sampled && a->duration_s == 0 && !a->summary)
		a->max_rate = TRACE_MAX_RATE_DEFAULT;
	if (a->min_ms > 0 && a->sample_every > 1) {
		errorf("a threshold follows every I/O so that no slow one is missed; drop -s",
		       "conflicting options: -s with -m");
		return -EINVAL;
	}
	return 0;
}

/* Delivers records until a signal or the duration ends, then drains. */
static int run(const struct trace_args *a, struct tracer *tr, struct trace_out *t)
{
	uint64_t end = a->duration_s > 0 ? t->t0_ns + (uint64_t)(a->duration_s * 1e9) : 0;
	int rc = 0;

	while (!cmd_stop && (!end || monotonic_ns() < end)) {
		rc = tracer_poll(tr, 100);
		if (rc == -EINTR)
			rc = 0;
		if (rc < 0)
			break;
		fflush(stdout);
	}
	if (rc >= 0)
		rc = tracer_poll(tr, 0);
	fflush(stdout);
	return rc < 0 ? rc : 0;
}

/* The clock origin of the records of a file: its recording's start. */
static int replay_begin(void *ctx, const struct trace_file_info *info)
{
	struct trace_out *t = ctx;

	t->t0_ns = info->t0_ns;
	return 0;
}

/* --join: a guest's trace and its host's, matched (trace_join.h). */
static int join(const struct trace_args *a)
{
	struct join_result r;
	char err[512] = "";

	if (a->f.disk || a->f.cgroup || a->pid || a->op || a->sample_every != 1 || a->min_ms > 0 ||
	    a->write_file || a->read_file || a->duration_s > 0 || a->max_rate_set || a->syscalls) {
		errorf("filters, sampling and --syscalls apply while recording each trace",
		       "--join takes only --json and --summary");
		return 2;
	}
	if (trace_join(a->join_guest, a->join_host, &r, err, sizeof(err))) {
		errorf(NULL, "%s", err);
		return 1;
	}
	if (trace_join_print(&r, a->json, a->summary)) {
		trace_join_free(&r);
		errorf(NULL, "out of memory");
		return 1;
	}
	fflush(stdout);
	trace_join_free(&r);
	return 0;
}

/* --read: the records of a file through the same output, no tracing. */
static int replay(const struct trace_args *a, struct trace_out *t)
{
	struct trace_file_sink sink = { replay_begin, trace_out_record, trace_out_syscall,
					trace_out_pc_link, t };
	struct trace_file_info info = { 0 };
	char err[512] = "";
	int rc;

	if (a->f.disk || a->f.cgroup || a->pid || a->op || a->sample_every != 1 || a->min_ms > 0 ||
	    a->write_file || a->duration_s > 0 || a->max_rate_set) {
		errorf("filters, sampling, -D and --max-rate apply while recording",
		       "--read takes only --json, --summary and --syscalls");
		return 2;
	}
	/* The header once a valid file gives its first record. */
	t->header_pending = !a->json && !a->summary;
	t->max_rate = 0; /* the file has what was written: replay it all */
	rc = trace_file_read(a->read_file, &info, &sink, err, sizeof(err));
	if (t->summary) {
		trace_summary_print(t->summary, stdout, a->json);
		trace_summary_free(t->summary);
	}
	fflush(stdout);
	if (rc) {
		errorf(NULL, "%s", err);
		return 1;
	}
	fprintf(stderr, "iolat: %llu records read from %s\n", (unsigned long long)t->emitted,
		a->read_file);
	if (info.max_rate)
		fprintf(stderr,
			"iolat: %s was recorded with at most %llu records a second: %llu were "
			"dropped\n",
			a->read_file, (unsigned long long)info.max_rate,
			(unsigned long long)info.capped);
	return 0;
}

/* The tracer's settings from the flags (the filters are resolved apart). */
static void tracer_opts_from(const struct trace_args *a, struct tracer_opts *o)
{
	o->filter_pid = (uint32_t)a->pid;
	o->filter_op = a->op;
	o->sample_every = (uint32_t)a->sample_every;
	o->min_ns = (uint64_t)(a->min_ms * 1e6);
	o->ringbuf_bytes = (uint32_t)(a->ringbuf_kib * 1024);
	o->attach = cmd_attach_mode(a->f.attach);
	o->syscalls = a->syscalls;
	o->syscall_fn = trace_out_syscall;
	o->pc_link_fn = trace_out_pc_link;
}

/* What became of the page cache writes followed (pc; NULL: not followed). */
static void report_page_cache(const struct trace_args *a, const struct trace_out *t,
			      const struct tracer_pc_stats *pc)
{
	if (pc)
		fprintf(stderr,
			"iolat: page cache: %llu folios dirtied by followed writes, %llu of them "
			"written back in followed bios (%llu links), %llu dropped unwritten "
			"(truncated, deleted), %llu still dirty at exit\n",
			(unsigned long long)pc->marked, (unsigned long long)pc->linked,
			(unsigned long long)t->pc_emitted, (unsigned long long)pc->dropped,
			(unsigned long long)pc->waiting);
	else if (a->syscalls && a->op != TRACE_OP_READ)
		fprintf(stderr,
			"iolat: page cache: not followed: it needs the "
			"writeback_dirty_folio (or _page) tracepoint and bpf_loop (5.17+)\n");
}

/* Never silent about what did not reach the output: the counts at exit on
 * stderr (pc: the page cache's, NULL when it was not followed). */
static void report_counts(const struct trace_args *a, const struct trace_out *t,
			  const uint64_t st[TRACE_STAT_COUNT], const struct tracer_pc_stats *pc,
			  uint64_t in_flight, uint64_t evicted)
{
	fprintf(stderr,
		"iolat: %llu records emitted, %llu lost (ring buffer full), %llu dropped by "
		"threshold\n",
		(unsigned long long)t->emitted, (unsigned long long)st[TRACE_STAT_LOST],
		(unsigned long long)st[TRACE_STAT_FAST]);
	if (a->max_rate)
		fprintf(stderr,
			"iolat: %llu records dropped by the cap of %llu a second (--max-rate)\n",
			(unsigned long long)t->capped, (unsigned long long)a->max_rate);
	if (a->syscalls)
		fprintf(stderr, "iolat: %llu syscall records\n",
			(unsigned long long)t->sys_emitted);
	report_page_cache(a, t, pc);
	if (pc && pc->evicted)
		errorf(NULL,
		       "%llu dirty folios of followed writes evicted from the kernel's table "
		       "(more than %u dirty at once): their bios are not linked; a sample rate "
		       "(-s) follows fewer",
		       (unsigned long long)pc->evicted, TRACE_FOLIOS_MAX);
	if (st[TRACE_STAT_STALE])
		errorf(NULL, "%llu records dropped: the end of their I/O was not seen",
		       (unsigned long long)st[TRACE_STAT_STALE]);
	if (in_flight)
		errorf(NULL, "%llu followed I/Os still in flight at exit: not emitted",
		       (unsigned long long)in_flight);
	if (evicted)
		errorf(NULL,
		       "%llu followed I/Os evicted from the kernel's table (too many in "
		       "flight at once): not emitted; a sample rate (-s) follows fewer",
		       (unsigned long long)evicted);
	if (st[TRACE_STAT_LOST])
		errorf(NULL, "records were lost: a larger --ringbuf-kib or a sample rate (-s) "
			     "keeps up with more I/O");
}

int cmd_trace(int argc, char **argv)
{
	struct trace_out t = {};
	struct tracer_opts o = {};
	uint64_t st[TRACE_STAT_COUNT] = {}, in_flight, evicted;
	struct tracer_pc_stats pc;
	bool page_cache;
	struct probe_result pr;
	struct trace_args a;
	struct tracer *tr;
	char err[256] = "";
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		return opts_exit_status(rc);
	if (a.join) /* no disk or cgroup of this machine: its filters are refused */
		return join(&a);
	if (cmd_resolve_filters(a.f.disk, a.f.cgroup, &o.filter_dev, &o.filter_cgroup,
				&o.filter_cgroup_level))
		return 2;
	tracer_opts_from(&a, &o);
	t.json = a.json;
	t.syscalls = a.syscalls;
	t.max_rate = a.max_rate;
	if (a.read_file) {
		if (a.summary && !(t.summary = trace_summary_new())) {
			errorf(NULL, "out of memory");
			return 1;
		}
		return replay(&a, &t);
	}
	rc = cmd_prepare_bpf(&pr);
	if (rc)
		return rc;
	if (tracer_open(&tr, &o, &pr, trace_out_record, &t, err, sizeof(err))) {
		errorf("'iolat check' shows what this kernel offers", "%s", err);
		return 1;
	}
	if (a.summary && !(t.summary = trace_summary_new())) {
		tracer_close(tr);
		errorf(NULL, "out of memory");
		return 1;
	}
	t.t0_ns = monotonic_ns();
	if (a.write_file &&
	    trace_file_create(&t.file, a.write_file, t.t0_ns, a.max_rate, err, sizeof(err))) {
		tracer_close(tr);
		trace_summary_free(t.summary);
		errorf("give a new file's path", "%s", err);
		return 2;
	}
	cmd_say_tracing("block device I/O", a.duration_s == 0);
	if (a.max_rate)
		fprintf(stderr,
			"iolat: at most %llu records a second (the rest dropped and counted); "
			"--max-rate 0 lifts the cap, -s N samples 1 I/O in N\n",
			(unsigned long long)a.max_rate);
	if (!a.json && !a.summary && !a.write_file)
		trace_out_header(a.syscalls);
	fflush(NULL);
	rc = run(&a, tr, &t);
	if (t.file && (trace_file_finish(t.file, t.capped) | fclose(t.file)) && !rc)
		rc = -EIO;
	tracer_stats(tr, st);
	in_flight = tracer_in_flight(tr, &evicted);
	page_cache = tracer_page_cache(tr, st, &pc);
	tracer_close(tr);
	if (t.summary) {
		trace_summary_print(t.summary, stdout, a.json);
		trace_summary_free(t.summary);
	}
	report_counts(&a, &t, st, page_cache ? &pc : NULL, in_flight, evicted);
	if (rc) {
		errorf(NULL, "reading the ring buffer failed: %s", strerror(-rc));
		return 1;
	}
	return 0;
}
