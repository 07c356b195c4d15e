// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* trace_out.c - text, JSON, summary and file output of trace records (trace_out.h). */
#include "cli/trace_out.h"

#include <errno.h>
#include <string.h>

#include "cli/render.h"
#include "cli/trace_file.h"
#include "core/names.h"
#include "core/trace_syscalls.h"
#include "iolat.h"
#include "util/json.h"

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
	int n = 0;

	if (r->rq_flags & IOLAT_F_PREFLUSH)
		out[n++] = 'F';
	out[n++] = names_op_rwbs(r->op);
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

/*
 * A completion status (blk_status_t, include/linux/blk_types.h) as the
 * errno the kernel turns it into (blk_status_to_errno, block/blk-core.c):
 * "EIO" for BLK_STS_IOERR. Codes this table lacks are shown as "status N".
 */
static const char *status_name(int status, char *buf, size_t len)
{
	static const char *const names[] = {
		[1] = "EOPNOTSUPP", [2] = "ETIMEDOUT", [3] = "ENOSPC",	[4] = "ENOLINK",
		[5] = "EREMOTEIO",  [6] = "EBADE",     [7] = "ENODATA", [8] = "EILSEQ",
		[9] = "ENOMEM",	    [10] = "EIO",      [12] = "EAGAIN", [13] = "EBUSY",
		[16] = "ENODEV",
	};

	/* cppcheck 2.10 takes the bound check for a redundant one. */
	// cppcheck-suppress arrayIndexOutOfBoundsCond
	if (status > 0 && (size_t)status < sizeof(names) / sizeof(names[0]) && names[status])
		return names[status]; // cppcheck-suppress arrayIndexOutOfBoundsCond
	snprintf(buf, len, "status %d", status);
	return buf;
}

/* The latency between two stages in ns, or -1 if either was not seen. */
static int64_t span(const struct trace_record *r, enum trace_stage a, enum trace_stage b)
{
	if (!r->ts[a] || !r->ts[b] || r->ts[b] < r->ts[a])
		return -1;
	return (int64_t)(r->ts[b] - r->ts[a]);
}

/* A kernel timestamp in seconds since tracing started (0 for earlier). */
static double since_start(const struct trace_out *t, uint64_t ns)
{
	return ns > t->t0_ns ? (double)(ns - t->t0_ns) / 1e9 : 0;
}

/* The page-cache wait of the oldest followed write's data the bio carries
 * (dirty -> Q) in ns, or -1 if it carries none. */
static int64_t pc_wait(const struct trace_record *r)
{
	if (!r->pc_links || r->ts[TRACE_Q] < r->pc_dirty_ns)
		return -1;
	return (int64_t)(r->ts[TRACE_Q] - r->pc_dirty_ns);
}

/* When the record ended (completion, or the merge for a merged bio), in
 * seconds since tracing started. */
static double seconds(const struct trace_out *t, const struct trace_record *r)
{
	uint64_t end = r->ts[TRACE_C] ? r->ts[TRACE_C] : r->ts[TRACE_M];

	return since_start(t, end);
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
	{ "q2g", TRACE_Q, TRACE_G },
	{ "g2i", TRACE_G, TRACE_I },
	{ "i2d", TRACE_I, TRACE_D },
	{ "d2c", TRACE_D, TRACE_C },
	{ "q2c", TRACE_Q, TRACE_C },
	{ "q2m", TRACE_Q, TRACE_M },
	/* JSON only: G to D when no I was seen (the none scheduler issues
	 * directly), so the spans still add up to Q2C. */
	{ "g2d", TRACE_G, TRACE_D },
};
#define TEXT_SPANS 6 /* the columns: the first six */

void trace_out_header(bool syscalls)
{
	printf("%-11s %-16s %-7s %-7s %-4s %-12s %-7s %-5s %8s %8s %8s %8s %8s %8s", "TIME(s)",
	       "COMM", "PID", "DISK", "T", "SECTOR", "BYTES", "ERR", "Q2G", "G2I", "I2D", "D2C",
	       "Q2C", "Q2M");
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

/* The writer slot of a bio's page-cache data (see struct pc_writer). */
static struct pc_writer *pc_writer_slot(struct trace_out *t, uint64_t io_id)
{
	return &t->writers[((io_id * 0x9e3779b97f4a7c15ull) >> 32) % PC_WRITERS];
}

static void print_text(struct trace_out *t, const struct trace_record *r)
{
	char op[8], status[24], disk[40];

	rwbs(r, op);
	/* "^" marks a bio a dm or md device sent to this disk (its parent). */
	snprintf(disk, sizeof(disk), "%s%s", r->flags & TRACE_F_REMAP ? "^" : "",
		 disk_name(t, r->dev));
	printf("%-11.6f %-16.16s %-7u %-7s %-4s %-12llu %-7u %-5s", seconds(t, r), r->comm, r->pid,
	       disk, op, (unsigned long long)r->sector, r->bytes,
	       r->error ? status_name(r->error, status, sizeof(status)) : "-");
	for (size_t i = 0; i < TEXT_SPANS; i++)
		print_ms(span(r, derived[i].from, derived[i].to));
	if (t->syscalls)
		printf(" %s", r->sys_enter_ns ? sys_name(r->sys_nr) : "-");
	/* Written back for followed buffered writes: how many, how much of
	 * the bio, and how long the oldest of that data waited dirty. */
	if (r->pc_links) {
		struct pc_writer *w = pc_writer_slot(t, r->id);

		printf(" <- %u write%s", r->pc_links, r->pc_links == 1 ? "" : "s");
		if (w->io_id == r->id && w->several)
			printf(" by several processes");
		else if (w->io_id == r->id)
			printf(" by %s[%u]", w->comm, w->pid);
		printf(", %u B, dirty %.3f ms before Q", r->pc_bytes, (double)pc_wait(r) / 1e6);
		w->io_id = 0;
	}
	putchar('\n');
}

static void print_json(struct trace_out *t, const struct trace_record *r)
{
	static const char *const stage[TRACE_STAGES] = { "q", "g", "m", "i", "d", "r", "c" };
	char op[8], dev[24], comm[sizeof(r->comm) + 1], status[24], flags[96];
	struct json j;

	rwbs(r, op);
	/* Every flag, by the names `hist --flags-split` uses; RWBS has letters for
	 * only five of them. */
	render_flags((int)r->rq_flags, flags, sizeof(flags));
	disk_number(r->dev, dev, sizeof(dev));
	snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(r->comm), r->comm);
	json_init(&j, stdout);
	json_begin_object(&j);
	json_kv_string(&j, "type", "io");
	json_kv_double(&j, "time_s", seconds(t, r));
	json_kv_string(&j, "dev", dev);
	json_kv_string(&j, "disk", disk_name(t, r->dev));
	json_kv_string(&j, "rwbs", op);
	json_kv_string(&j, "flags", flags);
	json_kv_uint(&j, "pid", r->pid);
	json_kv_uint(&j, "tid", r->tid);
	json_kv_string(&j, "comm", comm);
	json_kv_uint(&j, "cgroup", r->cgroup);
	json_kv_uint(&j, "sector", r->sector);
	json_kv_uint(&j, "bytes", r->bytes);
	json_kv_uint(&j, "error", (uint64_t)(int64_t)r->error);
	if (r->error)
		json_kv_string(&j, "error_name", status_name(r->error, status, sizeof(status)));
	else
		json_kv_null(&j, "error_name");
	json_kv_uint(&j, "id", r->id);
	if (r->parent)
		json_kv_uint(&j, "parent", r->parent);
	else
		json_kv_null(&j, "parent");
	json_kv_uint(&j, "rq_sector", r->rq_sector);
	json_kv_uint(&j, "rq_bytes", r->rq_bytes);
	json_kv_bool(&j, "merged", r->flags & TRACE_F_MERGED);
	json_kv_bool(&j, "split", r->flags & TRACE_F_SPLIT);
	json_kv_bool(&j, "remapped", r->flags & TRACE_F_REMAP);
	json_kv_bool(&j, "bio_based", r->flags & TRACE_F_BIO_BASED);
	json_kv_bool(&j, "bio_completion", r->flags & TRACE_F_BIO_DONE);
	json_kv_uint(&j, "splits", r->splits);
	json_kv_uint(&j, "requeues", r->requeues);
	if (t->syscalls && r->sys_enter_ns) {
		json_kv_string(&j, "syscall", sys_name(r->sys_nr));
		json_kv_uint(&j, "syscall_enter_ns", r->sys_enter_ns);
		if (r->sys_nr == TRACE_SYS_FAULT) {
			/* the mapped file's inode and the page faulted on */
			json_kv_uint(&j, "fault_ino", r->fault_ino);
			json_kv_uint(&j, "fault_index", r->fault_index);
		}
	} else if (t->syscalls) {
		json_kv_null(&j, "syscall");
	}
	if (t->syscalls) {
		/* Page-cache linkage: the followed writes whose data it
		 * carries ("page_cache" records name each). */
		json_kv_uint(&j, "pc_links", r->pc_links);
		json_kv_uint(&j, "pc_bytes", r->pc_bytes);
		if (r->pc_links)
			json_kv_uint(&j, "pc_dirty_ns", r->pc_dirty_ns);
		else
			json_kv_null(&j, "pc_dirty_ns");
	}
	/* The request's own stamps (0: the kernel wrote none). */
	json_kv_uint(&j, "k_start_ns", r->k_start_ns);
	json_kv_uint(&j, "k_issue_ns", r->k_issue_ns);
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
	/* Page-cache wait: the oldest linked data's dirty -> Q. */
	if (pc_wait(r) >= 0)
		json_kv_uint(&j, "pcw", (uint64_t)pc_wait(r));
	json_end_object(&j);
	json_end_object(&j);
	putchar('\n');
}

/*
 * Whether the cap (--max-rate) leaves room for r in the second it ended in
 * (its last stage's time from t0; records arrive about in that order, and
 * a late one counts in the current second). Counts what it refuses.
 */
static bool under_cap(struct trace_out *t, const struct trace_record *r)
{
	uint64_t end = 0, second;

	if (!t->max_rate)
		return true;
	for (int i = 0; i < TRACE_STAGES; i++)
		end = r->ts[i] > end ? r->ts[i] : end;
	second = end > t->t0_ns ? (end - t->t0_ns) / 1000000000ULL : 0;
	if (second > t->window) {
		t->window = second;
		t->in_window = 0;
	}
	if (t->in_window >= t->max_rate) {
		t->capped++;
		return false;
	}
	t->in_window++;
	return true;
}

int trace_out_record(void *ctx, const struct trace_record *r)
{
	struct trace_out *t = ctx;

	if (!under_cap(t, r))
		return 0;

	/* A fault has no record of its own to join (no end event). */
	if (t->syscalls && r->sys_enter_ns && r->sys_nr != TRACE_SYS_FAULT) {
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
		trace_out_header(t->syscalls);
		t->header_pending = false;
	}
	if (t->json)
		print_json(t, r);
	else
		print_text(t, r);
	return 0;
}

/* The file a syscall worked on, if it names one: its descriptor, file
 * system device and inode, the device a block-device file is, and the
 * offset it started at. */
static void json_syscall_file(struct json *j, const struct trace_syscall *s)
{
	char dev[24];

	if (s->fd < 0)
		return;
	json_kv_int(j, "fd", s->fd);
	if (!s->file_dev && !s->file_ino)
		return;
	disk_number(s->file_dev, dev, sizeof(dev));
	json_kv_string(j, "file_dev", dev);
	json_kv_uint(j, "file_ino", s->file_ino);
	if (s->file_rdev) {
		disk_number(s->file_rdev, dev, sizeof(dev));
		json_kv_string(j, "file_rdev", dev);
	}
	if (s->pos >= 0)
		json_kv_int(j, "offset", s->pos);
}

/*
 * A syscall in which followed I/O was queued, at its exit: its latency and
 * the block time of its records seen before it (summed Q2C: I/Os in flight
 * together count each).
 */
int trace_out_syscall(void *ctx, const struct trace_syscall *s)
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
		json_kv_double(&j, "time_s", since_start(t, s->exit_ns));
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
		json_kv_uint(&j, "folios", s->folios);
		json_kv_uint(&j, "cgroup", s->cgroup);
		json_syscall_file(&j, s);
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
	} else if (s->folios && !s->bios) {
		printf("  %s by %s[%u/%u] returned %lld: %.3f ms in the syscall; it dirtied %u "
		       "page-cache folio%s, linked to the bios that write them back\n",
		       sys_name(s->nr), comm, s->pid, s->tid, (long long)s->ret, (double)lat / 1e6,
		       s->folios, s->folios == 1 ? "" : "s");
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

/*
 * A page-cache link, when its bio is queued: JSON shows each; text shows
 * them summed on the bio's line (the record comes at its completion).
 */
int trace_out_pc_link(void *ctx, const struct trace_pc_link *l)
{
	struct trace_out *t = ctx;
	char comm[sizeof(l->comm) + 1], dev[24];
	struct json j;

	t->pc_emitted++;
	if (t->file && trace_file_append(t->file, l, sizeof(*l)))
		return -EIO;
	if (t->summary)
		return trace_summary_add_pc(t->summary, l);
	if (t->file)
		return 0;
	snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(l->comm), l->comm);
	if (!t->json) {
		struct pc_writer *w = pc_writer_slot(t, l->bio_id);

		if (w->io_id != l->bio_id) {
			w->io_id = l->bio_id;
			w->pid = l->pid;
			w->several = false;
			snprintf(w->comm, sizeof(w->comm), "%s", comm);
		} else if (w->pid != l->pid) {
			w->several = true;
		}
		return 0;
	}
	disk_number(l->dev, dev, sizeof(dev));
	json_init(&j, stdout);
	json_begin_object(&j);
	json_kv_string(&j, "type", "page_cache");
	json_kv_double(&j, "time_s", since_start(t, l->queue_ns));
	json_kv_uint(&j, "io_id", l->bio_id);
	json_kv_string(&j, "dev", dev);
	json_kv_string(&j, "disk", disk_name(t, l->dev));
	json_kv_string(&j, "syscall", sys_name(l->sys_nr));
	json_kv_uint(&j, "syscall_enter_ns", l->sys_enter_ns);
	json_kv_uint(&j, "pid", l->pid);
	json_kv_uint(&j, "tid", l->tid);
	json_kv_string(&j, "comm", comm);
	json_kv_uint(&j, "cgroup", l->cgroup);
	json_kv_uint(&j, "bytes", l->bytes);
	json_kv_uint(&j, "folios", l->folios);
	json_kv_uint(&j, "dirty_ns", l->dirty_ns);
	json_kv_uint(&j, "queue_ns", l->queue_ns);
	json_kv_uint(&j, "wait_ns", trace_pc_wait_ns(l));
	json_end_object(&j);
	putchar('\n');
	return 0;
}
