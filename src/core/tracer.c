// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tracer.c - load, attach and drain the per-I/O tracer (tracer.h). */
#include "core/tracer.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/percpu.h"
#include "core/trace_syscalls.h"
#include "trace.skel.h"
#include "util/verifier_log.h"

/* Ring buffer samples are told apart by their length. */
_Static_assert(sizeof(struct trace_record) != sizeof(struct trace_syscall) &&
		   sizeof(struct trace_record) != sizeof(struct trace_pc_link) &&
		   sizeof(struct trace_syscall) != sizeof(struct trace_pc_link),
	       "record kinds must differ in size");

/* One stage's program in both forms (attach.h). */
struct stage_prog {
	const char *tp;
	bool required;
	struct bpf_program *prog[ATTACH_FORMS];
};

#define TRACER_PROGS 18
/* The page-cache walk at queue time: first, so that it runs before the
 * queue program on the same tracepoint (programs run in attach order). */
#define TRACER_PCQ 0
/* From here on, the programs of syscall linkage: sys_enter, sys_exit, file
 * page faults; then page-cache linkage's: a folio leaving the page cache,
 * and its dirtying (one name or the other, whichever exists). */
#define TRACER_FIRST_SYS 12
#define TRACER_FIRST_PC 15
#define TRACER_DIRTY 16

struct tracer {
	struct trace_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link *link[TRACER_PROGS];
	tracer_fn fn;
	int (*syscall_fn)(void *ctx, const struct trace_syscall *s);
	int (*pc_link_fn)(void *ctx, const struct trace_pc_link *l);
	void *ctx;
	int ncpus;
	bool page_cache;
};

static int stage_progs(struct trace_bpf *s, struct stage_prog *p)
{
	struct stage_prog all[TRACER_PROGS] = {
		{ "block_bio_queue", false, { s->progs.trace_pcq_btf, s->progs.trace_pcq_raw } },
		{ "block_bio_queue", true, { s->progs.trace_q_btf, s->progs.trace_q_raw } },
		{ "block_getrq", false, { s->progs.trace_g_btf, s->progs.trace_g_raw } },
		{ "block_split", false, { s->progs.trace_x_btf, s->progs.trace_x_raw } },
		{ "block_bio_backmerge", false, { s->progs.trace_mb_btf, s->progs.trace_mb_raw } },
		{ "block_bio_frontmerge", false, { s->progs.trace_mf_btf, s->progs.trace_mf_raw } },
		{ "block_rq_insert", false, { s->progs.trace_i_btf, s->progs.trace_i_raw } },
		{ "block_rq_issue", true, { s->progs.trace_d_btf, s->progs.trace_d_raw } },
		{ "block_rq_requeue", false, { s->progs.trace_r_btf, s->progs.trace_r_raw } },
		{ "block_rq_complete", true, { s->progs.trace_c_btf, s->progs.trace_c_raw } },
		{ "block_bio_complete", false, { s->progs.trace_bc_btf, s->progs.trace_bc_raw } },
		{ "block_bio_remap", false, { s->progs.trace_rm_btf, s->progs.trace_rm_raw } },
		/* raw_syscalls; only with syscall linkage */
		{ "sys_enter", true, { s->progs.trace_se_btf, s->progs.trace_se_raw } },
		{ "sys_exit", true, { s->progs.trace_sx_btf, s->progs.trace_sx_raw } },
		{ "mm_filemap_fault", false, { s->progs.trace_ff_btf, s->progs.trace_ff_raw } },
		{ "mm_filemap_delete_from_page_cache",
		  false,
		  { s->progs.trace_pd_btf, s->progs.trace_pd_raw } },
		/* page-cache linkage: the first of these the kernel has */
		{ "writeback_dirty_folio",
		  false,
		  { s->progs.trace_wd_btf, s->progs.trace_wd_raw } },
		{ "writeback_dirty_page",
		  false,
		  { s->progs.trace_wdp_btf, s->progs.trace_wdp_raw } },
	};

	memcpy(p, all, sizeof(all));
	return TRACER_PROGS;
}

static int on_sample(void *ctx, void *data, size_t len)
{
	struct tracer *t = ctx;

	if (len == sizeof(struct trace_syscall))
		return t->syscall_fn ? t->syscall_fn(t->ctx, data) : 0;
	if (len == sizeof(struct trace_pc_link))
		return t->pc_link_fn ? t->pc_link_fn(t->ctx, data) : 0;
	if (len < sizeof(struct trace_record))
		return 0;
	return t->fn(t->ctx, data);
}

static void detach_all(struct tracer *t)
{
	for (int i = 0; i < TRACER_PROGS; i++) {
		bpf_link__destroy(t->link[i]);
		t->link[i] = NULL;
	}
}

static void configure(struct tracer *t, const struct tracer_opts *o, const struct probe_result *pr,
		      bool page_cache)
{
	struct trace_bpf__rodata *ro = t->skel->rodata;
	uint32_t rb;

	ro->filter_dev = o->filter_dev;
	ro->filter_cgroup = o->filter_cgroup;
	ro->filter_cgroup_level = o->filter_cgroup_level;
	ro->filter_pid = o->filter_pid;
	ro->filter_op = o->filter_op;
	/* A threshold is decided at completion, so every I/O is followed. */
	ro->sample_every = o->min_ns || !o->sample_every ? 1 : o->sample_every;
	ro->min_ns = o->min_ns;
	PROBE_SET_BLOCK_RODATA(ro, pr);
	ro->link_syscalls = o->syscalls;
	ro->link_page_cache = page_cache;
	ro->self_pid = (uint32_t)getpid();
	for (size_t i = 0; o->syscalls && i < trace_syscalls_count; i++) {
		long nr = trace_syscalls[i].nr;

		if (nr < 0 || nr >= TRACE_SYS_MAX)
			continue;
		ro->sys_mask[nr / 64] |= 1ull << (nr % 64);
		ro->sys_file[nr] = (uint8_t)trace_syscalls[i].file;
		if (page_cache && trace_syscalls[i].writes)
			ro->sys_write_mask[nr / 64] |= 1ull << (nr % 64);
	}
	rb = o->ringbuf_bytes ? o->ringbuf_bytes : TRACE_RINGBUF_DEFAULT_BYTES;
	bpf_map__set_max_entries(t->skel->maps.records, rb);
	ro->wake_bytes = rb / 4;
}

/* The page-cache and fault linkage this kernel allows (tracer.h). */
static void linkage_of(const struct btf *btf, struct tracer_linkage *out)
{
	static const char *const dirty[] = { "writeback_dirty_folio", "writeback_dirty_page" };

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(dirty) / sizeof(dirty[0]) && !out->dirty_tp; i++)
		if (probe_tp_params(btf, dirty[i]) > 0)
			out->dirty_tp = dirty[i];
	/* The page walk's loop (5.17+): a kernel before it cannot even load
	 * a program naming a callback. */
	out->bpf_loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_loop, NULL);
	if (out->bpf_loop > 0)
		out->bpf_loop = 1;
	out->page_cache = out->dirty_tp && out->bpf_loop == 1;
	out->faults = probe_tp_params(btf, "mm_filemap_fault") > 0;
}

int tracer_linkage(const struct probe_result *pr, struct tracer_linkage *out)
{
	struct btf *btf = btf__parse(pr->btf_path, NULL);

	if (!btf)
		return -errno;
	linkage_of(btf, out);
	btf__free(btf);
	return 0;
}

/* What an attempt at a mode needs (attach_try_fn's ctx). */
struct open_attempt {
	struct tracer *t;
	const struct tracer_opts *o;
	const struct probe_result *pr;
	const struct btf *btf;
};

/* One attempt at one mode: open, configure, load, attach every present stage. */
static int try_mode(void *ctx, enum attach_mode mode, char *err, size_t len)
{
	struct open_attempt *at = ctx;
	struct tracer *t = at->t;
	const struct tracer_opts *o = at->o;
	struct stage_prog sp[TRACER_PROGS];
	struct bpf_program *prog[TRACER_PROGS];
	struct tracer_linkage lk = {};
	int rc;

	t->skel = trace_bpf__open();
	if (!t->skel) {
		rc = -errno;
		snprintf(err, len, "cannot open the trace BPF object: %s", strerror(errno));
		return rc;
	}
	stage_progs(t->skel, sp);
	/* Page-cache linkage follows writes: not with a read-only filter.
	 * Probed only when asked for (the bpf_loop probe loads a program). */
	if (o->syscalls)
		linkage_of(at->btf, &lk);
	t->page_cache = o->syscalls && o->filter_op != TRACE_OP_READ && lk.page_cache;
	configure(t, o, at->pr, t->page_cache);
	for (int i = 0; i < TRACER_PROGS; i++) {
		bool present = probe_tp_params(at->btf, sp[i].tp) > 0;

		if ((i >= TRACER_FIRST_SYS && !o->syscalls) ||
		    ((i >= TRACER_FIRST_PC || i == TRACER_PCQ) && !t->page_cache) ||
		    (i >= TRACER_DIRTY && strcmp(sp[i].tp, lk.dirty_tp))) {
			/* Linkage off (or the dirtying name this kernel lacks): not
			 * loaded, not paid for. */
			prog[i] = attach_pick(sp[i].prog, mode, false);
			continue;
		}
		if (sp[i].required && !present) {
			snprintf(err, len, "this kernel has no %s tracepoint", sp[i].tp);
			rc = -ENOTSUP;
			goto fail;
		}
		prog[i] = attach_pick(sp[i].prog, mode, present);
	}
	rc = trace_bpf__load(t->skel);
	if (rc) {
		char why[400];

		snprintf(err, len, "loading the %s trace programs failed: %s%s",
			 attach_mode_name(mode), strerror(-rc),
			 verifier_log_reason(why, sizeof(why)));
		goto fail;
	}
	for (int i = 0; i < TRACER_PROGS; i++) {
		if (!prog[i])
			continue;
		t->link[i] = bpf_program__attach(prog[i]);
		if (!t->link[i]) {
			rc = -errno;
			snprintf(err, len, "attaching the %s program on %s failed: %s",
				 attach_mode_name(mode), sp[i].tp, strerror(-rc));
			goto fail;
		}
	}
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.records), on_sample, t, NULL);
	if (!t->rb) {
		rc = -errno;
		snprintf(err, len, "cannot read the ring buffer: %s", strerror(-rc));
		goto fail;
	}
	return 0;
fail:
	detach_all(t);
	trace_bpf__destroy(t->skel);
	t->skel = NULL;
	return rc;
}

int tracer_open(struct tracer **out, const struct tracer_opts *opts, const struct probe_result *pr,
		tracer_fn fn, void *ctx, char *err, size_t len)
{
	struct open_attempt at = { .o = opts, .pr = pr };
	struct tracer *t;
	struct btf *btf;
	int rc;

	btf = btf__parse(pr->btf_path, NULL);
	if (!btf) {
		rc = errno ? -errno : -ENOENT;
		snprintf(err, len, "cannot read kernel BTF from %s: %s", pr->btf_path,
			 strerror(-rc));
		return rc;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		btf__free(btf);
		snprintf(err, len, "cannot open the tracer: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	t->fn = fn;
	t->syscall_fn = opts->syscall_fn;
	t->pc_link_fn = opts->pc_link_fn;
	t->ctx = ctx;
	t->ncpus = libbpf_num_possible_cpus();
	at.t = t;
	at.btf = btf;
	rc = attach_with_fallback(opts->attach, pr, try_mode, &at, err, len);
	btf__free(btf);
	if (rc) {
		free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int tracer_poll(struct tracer *t, int timeout_ms)
{
	int woken = ring_buffer__poll(t->rb, timeout_ms), rest;

	if (woken < 0)
		return woken;
	/* The kernel wakes us only once the buffer fills up a little (see
	 * wake_flag() in trace.bpf.c): take what waits without a wakeup too. */
	rest = ring_buffer__consume(t->rb);
	return rest < 0 ? rest : woken + rest;
}

int tracer_stats(struct tracer *t, uint64_t out[TRACE_STAT_COUNT])
{
	return percpu_array_sums(bpf_map__fd(t->skel->maps.stats), t->ncpus, out, TRACE_STAT_COUNT);
}

/* Entries in a map keyed by __u64 (bios, folios), one key at a time. */
static uint64_t map_entries(int fd)
{
	uint64_t n = 0;
	__u64 key, *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &key) == 0) {
		n++;
		prev = &key;
	}
	return n;
}

bool tracer_page_cache(const struct tracer *t, const uint64_t st[TRACE_STAT_COUNT],
		       struct tracer_pc_stats *out)
{
	uint64_t left;

	memset(out, 0, sizeof(*out));
	if (!t->page_cache)
		return false;
	left = map_entries(bpf_map__fd(t->skel->maps.folios));
	out->marked = st[TRACE_STAT_PC_MARKED];
	out->linked = st[TRACE_STAT_PC_LINKED];
	out->waiting = left;
	/* Marked folios are linked, dirtied again (their entry replaced),
	 * dropped from the page cache unwritten, still waiting, or evicted. */
	out->redirtied = st[TRACE_STAT_PC_REDIRTIED];
	out->dropped = st[TRACE_STAT_PC_DROPPED];
	left += out->redirtied + out->dropped;
	out->evicted = out->marked > out->linked + left ? out->marked - out->linked - left : 0;
	return true;
}

/*
 * The kernel's count goes up and down with its own inserts and deletes;
 * entries the LRU map evicted to make room are still in it. Counting the
 * entries left tells the two apart.
 */
uint64_t tracer_in_flight(const struct tracer *t, uint64_t *evicted)
{
	uint64_t counted = __atomic_load_n(&t->skel->bss->in_flight, __ATOMIC_RELAXED);
	uint64_t left = map_entries(bpf_map__fd(t->skel->maps.bios));

	*evicted = counted > left ? counted - left : 0;
	return left;
}

void tracer_close(struct tracer *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	detach_all(t);
	trace_bpf__destroy(t->skel);
	free(t);
}
