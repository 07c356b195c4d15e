// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cmd_trace.c - `iolat trace`: one line (or JSON object) per sampled block
 * I/O with the time of every stage it went through, like biosnoop with
 * blktrace's stages. What the ring buffer could not carry is counted and
 * reported at exit, never dropped silently.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroups.h"
#include "cmdutil.h"
#include "commands.h"
#include "disks.h"
#include "errors.h"
#include "json.h"
#include "probe.h"
#include "trace_file.h"
#include "trace_summary.h"
#include "tracer.h"

struct trace_args {
	const char *disk, *cgroup;
	const char *write_file, *read_file; /* --write: record; --read: replay */
	uint64_t pid, sample_every, ringbuf_kib;
	double min_ms, duration_s; /* 0: no threshold; run until a signal */
	enum trace_op_filter op;
	bool json, syscalls, summary;
	enum attach_mode attach;
};

/* Block records seen for one syscall, until its own record arrives (at its
 * exit, after the completions of its synchronous I/O). */
struct sys_link {
	uint64_t enter_ns; /* 0: free slot */
	uint32_t tid;
	uint32_t records;  /* block records shown */
	uint64_t q2c_ns, d2c_ns; /* summed over the completed ones */
};

#define SYS_LINKS 256

/* What the record callback needs: output, the clock origin, disk names. */
struct trace_out {
	bool json, syscalls;
	struct trace_summary *summary; /* --summary: records go here, not out */
	FILE *file;		       /* --write: records go here */
	bool header_pending;	       /* --read: text header before the first record */
	uint64_t t0_ns;
	uint64_t emitted, sys_emitted;
	struct sys_link links[SYS_LINKS];
	struct {
		uint32_t dev;
		char name[DISK_NAME_MAX];
	} names[16];
	int nnames;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: iolat trace [OPTIONS]\n"
		"\n"
		"One record per sampled block I/O, with the time of every stage it went\n"
		"through (blktrace's letters): Q queued, G request allocated, M merged into\n"
		"a request, I inserted, D issued to the driver, C completed. Runs until\n"
		"Ctrl-C, SIGTERM or -D; then prints to stderr how many records were\n"
		"emitted, lost (ring buffer full) and dropped by the threshold.\n"
		"\n"
		"Columns (ms; '-' where a stage was not seen):\n"
		"  Q2G  queued -> request allocated    G2I  -> inserted\n"
		"  I2D  inserted -> issued             D2C  device time\n"
		"  Q2C  total                          Q2M  queued -> merged into an existing\n"
		"                                       request (the record ends there)\n"
		"\n"
		"Options:\n"
		"  -d, --disk=DISK        only this disk (a partition means its disk)\n"
		"  -p, --pid=PID          only I/O queued by this process (tgid)\n"
		"  -c, --cgroup=PATH      only I/O charged to this cgroup or its children\n"
		"  -o, --op=read|write    only reads or only writes\n"
		"  -s, --sample=N         follow 1 I/O in N (per CPU; default 1: every I/O)\n"
		"  -m, --min-ms=MS        only I/O whose Q2C is at least MS (decided at\n"
		"                         completion: every I/O is followed)\n"
		"  -j, --json             one JSON object per I/O (raw ns timestamps)\n"
		"      --syscalls         link each I/O to the read/write/fsync syscall it\n"
		"                         was issued in, and print that syscall's latency\n"
		"                         after its I/O (costs a little on every syscall)\n"
		"      --summary          no record lines: at the end, per device and per\n"
		"                         process, each span's count, min, avg, p50/p90/p99,\n"
		"                         max and share of the total time (like btt)\n"
		"  -w, --write=FILE       records to FILE (a new file), not to the screen\n"
		"  -r, --read=FILE        print (or --summary) the records of FILE; no\n"
		"                         tracing, no privileges needed\n"
		"  -D, --duration=SECONDS stop after SECONDS\n"
		"      --ringbuf-kib=K    ring buffer size in KiB, a power of two >= 4\n"
		"                         (default 256)\n"
		"      --attach=MODE      auto (default), tp_btf or raw_tp\n"
		"  -v, --verbose          show libbpf's messages\n"
		"  -h, --help             this help\n"
		"\n"
		"Examples:\n"
		"  iolat trace -d vda                 every I/O on vda\n"
		"  iolat trace -m 10 -j               I/O slower than 10 ms, as JSON\n"
		"  iolat trace -s 100 -o write -D 60  1 write in 100, for a minute\n"
		"  iolat trace --summary -D 30        where 30 s of I/O spent its time\n"
		"  iolat trace -w io.trace -D 60; iolat trace -r io.trace --summary\n");
}

static int bad(const char *hint, const char *what, const char *arg)
{
	errorf(hint, "bad %s '%s'", what, arg);
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct trace_args *a)
{
	static const struct option opts[] = {
		{ "disk", required_argument, NULL, 'd' },   { "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'c' }, { "op", required_argument, NULL, 'o' },
		{ "sample", required_argument, NULL, 's' }, { "min-ms", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },	    { "duration", required_argument, NULL, 'D' },
		{ "ringbuf-kib", required_argument, NULL, 'R' },
		{ "attach", required_argument, NULL, 'A' }, { "verbose", no_argument, NULL, 'v' },
		{ "syscalls", no_argument, NULL, 'S' },
		{ "summary", no_argument, NULL, 'U' },
		{ "write", required_argument, NULL, 'w' }, { "read", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },	    {},
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->sample_every = 1;
	a->ringbuf_kib = 256;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+d:p:c:o:s:m:jD:w:r:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'd': a->disk = optarg; break;
		case 'c': a->cgroup = optarg; break;
		case 'j': a->json = true; break;
		case 'S': a->syscalls = true; break;
		case 'U': a->summary = true; break;
		case 'w': a->write_file = optarg; break;
		case 'r': a->read_file = optarg; break;
		case 'v': set_verbose(true); break;
		case 'h': usage(stdout); exit(0);
		case 'p':
			if (parse_uint(optarg, 1, INT32_MAX, &a->pid))
				return bad("give a process id, 1 or more", "pid", optarg);
			break;
		case 'o':
			if (!strcmp(optarg, "read"))
				a->op = TRACE_OP_READ;
			else if (!strcmp(optarg, "write"))
				a->op = TRACE_OP_WRITE;
			else
				return bad("use read or write", "operation", optarg);
			break;
		case 's':
			if (parse_uint(optarg, 1, UINT32_MAX, &a->sample_every))
				return bad("give N as a whole number, 1 or more (1 in N)",
					   "sample rate", optarg);
			break;
		case 'm':
			if (parse_seconds(optarg, &a->min_ms))
				return bad("give a positive number of milliseconds, e.g. 10 or 0.5",
					   "threshold", optarg);
			break;
		case 'D':
			if (parse_seconds(optarg, &a->duration_s))
				return bad("give a positive number of seconds", "duration", optarg);
			break;
		case 'R':
			if (parse_uint(optarg, 4, 1024 * 1024, &a->ringbuf_kib) ||
			    (a->ringbuf_kib & (a->ringbuf_kib - 1)) ||
			    a->ringbuf_kib * 1024 % (uint64_t)sysconf(_SC_PAGESIZE))
				return bad("give a power of two of at least one page, e.g. 4 or 1024",
					   "ring buffer size (KiB)", optarg);
			break;
		case 'A':
			if (!strcmp(optarg, "auto"))
				a->attach = ATTACH_AUTO;
			else if (!strcmp(optarg, "tp_btf"))
				a->attach = ATTACH_TP_BTF;
			else if (!strcmp(optarg, "raw_tp"))
				a->attach = ATTACH_RAW_TP;
			else {
				errorf("use auto, tp_btf or raw_tp", "unknown --attach mode '%s'", optarg);
				return -EINVAL;
			}
			break;
		default:
			errorf("see 'iolat trace --help'", "unknown or incomplete option '%s'",
			       argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		errorf("see 'iolat trace --help'", "unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (a->min_ms > 0 && a->sample_every > 1) {
		errorf("a threshold follows every I/O so that no slow one is missed; drop -s",
		       "conflicting options: -s with -m");
		return -EINVAL;
	}
	return 0;
}


static const char *disk_name(struct trace_out *t, uint32_t dev)
{
	int i;

	for (i = 0; i < t->nnames; i++)
		if (t->names[i].dev == dev)
			return t->names[i].name;
	i = t->nnames < 16 ? t->nnames++ : (int)(dev % 16);
	t->names[i].dev = dev;
	disks_name(dev, t->names[i].name, sizeof(t->names[i].name));
	return t->names[i].name;
}

/* blktrace's RWBS letters: F(preflush) then the op, then F(ua) A(head) S M. */
static void rwbs(const struct trace_record *r, char *out)
{
	static const char ops[IOLAT_OP_COUNT] = { 'R', 'W', 'F', 'D', 'N', 'N' };
	int n = 0;

	if (r->rq_flags & IOLAT_F_PREFLUSH)
		out[n++] = 'F';
	out[n++] = ops[r->op < IOLAT_OP_COUNT ? r->op : IOLAT_OP_OTHER];
	if (r->rq_flags & IOLAT_F_FUA)
		out[n++] = 'F';
	if (r->rq_flags & IOLAT_F_RAHEAD)
		out[n++] = 'A';
	if (r->rq_flags & IOLAT_F_SYNC)
		out[n++] = 'S';
	if (r->rq_flags & IOLAT_F_META)
		out[n++] = 'M';
	out[n] = '\0';
}

/* The latency between two stages in ns, or -1 if either was not seen. */
static int64_t span(const struct trace_record *r, enum trace_stage a, enum trace_stage b)
{
	if (!r->ts[a] || !r->ts[b] || r->ts[b] < r->ts[a])
		return -1;
	return (int64_t)(r->ts[b] - r->ts[a]);
}

/* When the record ended (completion, or the merge for a merged bio), in
 * seconds since tracing started. */
static double seconds(const struct trace_out *t, const struct trace_record *r)
{
	uint64_t end = r->ts[TRACE_C] ? r->ts[TRACE_C] : r->ts[TRACE_M];

	return end > t->t0_ns ? (double)(end - t->t0_ns) / 1e9 : 0;
}

static void print_ms(int64_t ns)
{
	if (ns < 0)
		printf(" %8s", "-");
	else
		printf(" %8.3f", (double)ns / 1e6);
}

static const struct {
	const char *name;
	enum trace_stage from, to;
} derived[] = {
	{ "q2g", TRACE_Q, TRACE_G }, { "g2i", TRACE_G, TRACE_I }, { "i2d", TRACE_I, TRACE_D },
	{ "d2c", TRACE_D, TRACE_C }, { "q2c", TRACE_Q, TRACE_C }, { "q2m", TRACE_Q, TRACE_M },
	/* JSON only: G to D when no I was seen (the none scheduler issues
	 * directly), so the spans still add up to Q2C. */
	{ "g2d", TRACE_G, TRACE_D },
};
#define TEXT_SPANS 6 /* the columns: the first six */

static void print_header(bool syscalls)
{
	printf("%-11s %-16s %-7s %-7s %-4s %-12s %-7s %8s %8s %8s %8s %8s %8s", "TIME(s)",
	       "COMM", "PID", "DISK", "T", "SECTOR", "BYTES", "Q2G", "G2I", "I2D", "D2C", "Q2C",
	       "Q2M");
	if (syscalls)
		printf(" %s", "SYSCALL");
	putchar('\n');
}

/* The linked syscall's name; "?" for a number linkage does not list. */
static const char *sys_name(uint32_t nr)
{
	const char *n = tracer_syscall_name(nr);

	return n ? n : "?";
}

/* The slot for (tid, enter_ns): its own, else a free one or the one it
 * evicts (a syscall whose record never came: lost, or still running). */
static struct sys_link *sys_link_slot(struct trace_out *t, uint32_t tid, uint64_t enter_ns)
{
	struct sys_link *l = &t->links[(tid * 2654435761u ^ (uint32_t)enter_ns) % SYS_LINKS];

	if (l->enter_ns != enter_ns || l->tid != tid) {
		memset(l, 0, sizeof(*l));
		l->enter_ns = enter_ns;
		l->tid = tid;
	}
	return l;
}

static void print_text(struct trace_out *t, const struct trace_record *r)
{
	char op[8];

	rwbs(r, op);
	printf("%-11.6f %-16.16s %-7u %-7s %-4s %-12llu %-7u", seconds(t, r), r->comm, r->pid,
	       disk_name(t, r->dev), op, (unsigned long long)r->sector, r->bytes);
	for (size_t i = 0; i < TEXT_SPANS; i++)
		print_ms(span(r, derived[i].from, derived[i].to));
	if (t->syscalls)
		printf(" %s", r->sys_enter_ns ? sys_name(r->sys_nr) : "-");
	putchar('\n');
}

static void print_json(struct trace_out *t, const struct trace_record *r)
{
	static const char *const stage[TRACE_STAGES] = { "q", "g", "m", "i", "d", "r", "c" };
	char op[8], dev[24], comm[sizeof(r->comm) + 1];
	struct json j;

	rwbs(r, op);
	snprintf(dev, sizeof(dev), "%u:%u", disk_major(r->dev), disk_minor(r->dev));
	snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(r->comm), r->comm);
	json_init(&j, stdout);
	json_begin_object(&j);
	json_kv_string(&j, "type", "io");
	json_kv_double(&j, "time_s", seconds(t, r));
	json_kv_string(&j, "dev", dev);
	json_kv_string(&j, "disk", disk_name(t, r->dev));
	json_kv_string(&j, "rwbs", op);
	json_kv_uint(&j, "pid", r->pid);
	json_kv_uint(&j, "tid", r->tid);
	json_kv_string(&j, "comm", comm);
	json_kv_uint(&j, "cgroup", r->cgroup);
	json_kv_uint(&j, "sector", r->sector);
	json_kv_uint(&j, "bytes", r->bytes);
	json_kv_uint(&j, "error", (uint64_t)(int64_t)r->error);
	json_kv_uint(&j, "id", r->id);
	if (r->parent)
		json_kv_uint(&j, "parent", r->parent);
	else
		json_kv_null(&j, "parent");
	json_kv_uint(&j, "rq_sector", r->rq_sector);
	json_kv_uint(&j, "rq_bytes", r->rq_bytes);
	json_kv_bool(&j, "merged", r->flags & TRACE_F_MERGED);
	json_kv_bool(&j, "split", r->flags & TRACE_F_SPLIT);
	json_kv_bool(&j, "bio_based", r->flags & TRACE_F_BIO_BASED);
	json_kv_bool(&j, "bio_completion", r->flags & TRACE_F_BIO_DONE);
	json_kv_uint(&j, "splits", r->splits);
	json_kv_uint(&j, "requeues", r->requeues);
	if (t->syscalls && r->sys_enter_ns) {
		json_kv_string(&j, "syscall", sys_name(r->sys_nr));
		json_kv_uint(&j, "syscall_enter_ns", r->sys_enter_ns);
	} else if (t->syscalls) {
		json_kv_null(&j, "syscall");
	}
	json_key(&j, "ts_ns");
	json_begin_object(&j);
	for (int i = 0; i < TRACE_STAGES; i++)
		json_kv_uint(&j, stage[i], r->ts[i]);
	json_end_object(&j);
	json_key(&j, "lat_ns");
	json_begin_object(&j);
	for (size_t i = 0; i < sizeof(derived) / sizeof(derived[0]); i++) {
		int64_t ns = span(r, derived[i].from, derived[i].to);

		if (ns >= 0)
			json_kv_uint(&j, derived[i].name, (uint64_t)ns);
	}
	/* The syscall's entry to the bio's queueing: VFS, page cache, and
	 * blk-throttle, which holds bios back before block_bio_queue. */
	if (t->syscalls && r->sys_enter_ns && r->ts[TRACE_Q] >= r->sys_enter_ns)
		json_kv_uint(&j, "s2q", r->ts[TRACE_Q] - r->sys_enter_ns);
	json_end_object(&j);
	json_end_object(&j);
	putchar('\n');
}

static int on_record(void *ctx, const struct trace_record *r)
{
	struct trace_out *t = ctx;

	if (t->syscalls && r->sys_enter_ns) {
		struct sys_link *l = sys_link_slot(t, r->tid, r->sys_enter_ns);
		int64_t q2c = span(r, TRACE_Q, TRACE_C), d2c = span(r, TRACE_D, TRACE_C);

		l->records++;
		l->q2c_ns += q2c > 0 ? (uint64_t)q2c : 0;
		l->d2c_ns += d2c > 0 ? (uint64_t)d2c : 0;
	}

	t->emitted++;
	if (t->file && trace_file_append(t->file, r, sizeof(*r)))
		return -EIO;
	if (t->summary)
		return trace_summary_add(t->summary, disk_name(t, r->dev), r);
	if (t->file)
		return 0;
	if (t->header_pending) {
		print_header(t->syscalls);
		t->header_pending = false;
	}
	if (t->json)
		print_json(t, r);
	else
		print_text(t, r);
	return 0;
}

/*
 * A syscall in which followed I/O was queued, at its exit: its latency and
 * the block time of its records seen before it (summed Q2C: I/Os in flight
 * together count each).
 */
static int on_syscall(void *ctx, const struct trace_syscall *s)
{
	struct trace_out *t = ctx;
	struct sys_link *l = sys_link_slot(t, s->tid, s->enter_ns);
	char comm[sizeof(s->comm) + 1];
	uint64_t lat = s->exit_ns > s->enter_ns ? s->exit_ns - s->enter_ns : 0;
	struct json j;

	snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(s->comm), s->comm);
	if (t->file && trace_file_append(t->file, s, sizeof(*s)))
		return -EIO;
	if (t->summary || t->file) {
		/* counted, not shown */
	} else if (t->json) {
		json_init(&j, stdout);
		json_begin_object(&j);
		json_kv_string(&j, "type", "syscall");
		json_kv_double(&j, "time_s", s->exit_ns > t->t0_ns ?
					 (double)(s->exit_ns - t->t0_ns) / 1e9 : 0);
		json_kv_string(&j, "syscall", sys_name(s->nr));
		json_kv_uint(&j, "nr", s->nr);
		json_kv_bool(&j, "async", tracer_syscall_async(s->nr));
		json_kv_uint(&j, "pid", s->pid);
		json_kv_uint(&j, "tid", s->tid);
		json_kv_string(&j, "comm", comm);
		json_kv_int(&j, "ret", s->ret);
		json_kv_uint(&j, "enter_ns", s->enter_ns);
		json_kv_uint(&j, "exit_ns", s->exit_ns);
		json_kv_uint(&j, "lat_ns", lat);
		json_kv_uint(&j, "ios", s->bios);
		json_kv_uint(&j, "ios_shown", l->records);
		json_kv_uint(&j, "q2c_sum_ns", l->q2c_ns);
		json_kv_uint(&j, "d2c_sum_ns", l->d2c_ns);
		json_end_object(&j);
		putchar('\n');
	} else if (tracer_syscall_async(s->nr)) {
		printf("  %s by %s[%u/%u] returned %lld: %.3f ms to submit %u followed block "
		       "I/O%s (they complete after it)\n",
		       sys_name(s->nr), comm, s->pid, s->tid, (long long)s->ret, (double)lat / 1e6,
		       s->bios, s->bios == 1 ? "" : "s");
	} else {
		printf("  %s by %s[%u/%u] returned %lld: %.3f ms in the syscall, %.3f ms of it in "
		       "%u block I/O%s (D2C %.3f ms)",
		       sys_name(s->nr), comm, s->pid, s->tid, (long long)s->ret, (double)lat / 1e6,
		       (double)l->q2c_ns / 1e6, l->records, l->records == 1 ? "" : "s",
		       (double)l->d2c_ns / 1e6);
		if (s->bios > l->records)
			printf("; %u more followed, not shown", s->bios - l->records);
		putchar('\n');
	}
	memset(l, 0, sizeof(*l));
	t->sys_emitted++;
	return 0;
}

static void on_stop_signal(int sig)
{
	(void)sig;
	cmd_stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Delivers records until a signal or the duration ends, then drains. */
static int run(const struct trace_args *a, struct tracer *tr, struct trace_out *t)
{
	uint64_t end = a->duration_s > 0 ? t->t0_ns + (uint64_t)(a->duration_s * 1e9) : 0;
	int rc = 0;

	while (!cmd_stop && (!end || now_ns() < end)) {
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

/* --read: the records of a file through the same output, no tracing. */
static int replay(const struct trace_args *a, struct trace_out *t)
{
	struct trace_file_sink sink = { on_record, on_syscall, t };
	char err[512] = "";
	int rc;

	if (a->disk || a->cgroup || a->pid || a->op || a->sample_every != 1 || a->min_ms > 0 ||
	    a->write_file || a->duration_s > 0) {
		errorf("filters, sampling and -D apply while recording",
		       "--read takes only --json, --summary and --syscalls");
		return 2;
	}
	/* The header once a valid file gives its first record. */
	t->header_pending = !a->json && !a->summary;
	rc = trace_file_read(a->read_file, &t->t0_ns, &sink, err, sizeof(err));
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
	return 0;
}

int cmd_trace(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	struct trace_out t = {};
	struct tracer_opts o = {};
	uint64_t st[TRACE_STAT_COUNT] = {}, in_flight, evicted;
	struct probe_result pr;
	struct trace_args a;
	struct tracer *tr;
	char err[256] = "";
	int rc;

	if (parse_args(argc, argv, &a) ||
	    cmd_resolve_filters(a.disk, a.cgroup, &o.filter_dev, &o.filter_cgroup,
				&o.filter_cgroup_level))
		return 2;
	o.filter_pid = (uint32_t)a.pid;
	o.filter_op = a.op;
	o.sample_every = (uint32_t)a.sample_every;
	o.min_ns = (uint64_t)(a.min_ms * 1e6);
	o.ringbuf_bytes = (uint32_t)(a.ringbuf_kib * 1024);
	o.attach = a.attach;
	o.syscalls = a.syscalls;
	o.syscall_fn = on_syscall;
	t.json = a.json;
	t.syscalls = a.syscalls;
	if (a.read_file) {
		if (a.summary && !(t.summary = trace_summary_new()))
			return 1;
		return replay(&a, &t);
	}
	if (!require_bpf_privileges())
		return 1;
	if (probe_kernel(&pr)) {
		errorf("iolat needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		       "this kernel has no BTF (%s is missing)", pr.btf_path);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (tracer_open(&tr, &o, &pr, on_record, &t, err, sizeof(err))) {
		errorf("'iolat check' shows what this kernel offers", "%s", err);
		return 1;
	}
	if (a.summary && !(t.summary = trace_summary_new())) {
		tracer_close(tr);
		errorf(NULL, "out of memory");
		return 1;
	}
	t.t0_ns = now_ns();
	if (a.write_file && trace_file_create(&t.file, a.write_file, t.t0_ns, err, sizeof(err))) {
		tracer_close(tr);
		trace_summary_free(t.summary);
		errorf("give a new file's path", "%s", err);
		return 2;
	}
	fprintf(stderr, "Tracing block device I/O... Hit Ctrl-C to end.\n");
	if (!a.json && !a.summary && !a.write_file)
		print_header(a.syscalls);
	fflush(NULL);
	rc = run(&a, tr, &t);
	if (t.file && fclose(t.file) && !rc)
		rc = -EIO;
	tracer_stats(tr, st);
	in_flight = tracer_in_flight(tr, &evicted);
	tracer_close(tr);
	if (t.summary) {
		trace_summary_print(t.summary, stdout, a.json);
		trace_summary_free(t.summary);
	}
	/* Never silent about what did not reach the output. */
	fprintf(stderr,
		"iolat: %llu records emitted, %llu lost (ring buffer full), %llu dropped by "
		"threshold\n",
		(unsigned long long)t.emitted, (unsigned long long)st[TRACE_STAT_LOST],
		(unsigned long long)st[TRACE_STAT_FAST]);
	if (a.syscalls)
		fprintf(stderr, "iolat: %llu syscall records\n", (unsigned long long)t.sys_emitted);
	if (st[TRACE_STAT_STALE])
		fprintf(stderr, "iolat: %llu records dropped: the end of their I/O was not "
				"seen\n", (unsigned long long)st[TRACE_STAT_STALE]);
	if (in_flight)
		fprintf(stderr, "iolat: %llu followed I/Os still in flight at exit: not "
				"emitted\n", (unsigned long long)in_flight);
	if (evicted)
		fprintf(stderr, "iolat: %llu followed I/Os evicted from the kernel's table "
				"(too many in flight at once): not emitted; a sample rate (-s) "
				"follows fewer\n", (unsigned long long)evicted);
	if (st[TRACE_STAT_LOST])
		fprintf(stderr, "iolat: records were lost: a larger --ringbuf-kib or a sample "
				"rate (-s) keeps up with more I/O\n");
	if (rc) {
		errorf(NULL, "reading the ring buffer failed: %s", strerror(-rc));
		return 1;
	}
	return 0;
}
