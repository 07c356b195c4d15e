// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* probe.c - what the running kernel offers iolat (probe.h). */
#include "core/probe.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const tp_names[TP_COUNT] = {
	[TP_RQ_COMPLETE] = "block_rq_complete", [TP_RQ_ISSUE] = "block_rq_issue",
	[TP_IO_START] = "block_io_start",	[TP_RQ_INSERT] = "block_rq_insert",
	[TP_BIO_QUEUE] = "block_bio_queue",	[TP_BIO_COMPLETE] = "block_bio_complete",
};

const char *probe_tp_name(enum probe_tp tp)
{
	return tp_names[tp];
}

/* Every tracepoint has a __tracepoint_<name> symbol, with or without BTF. */
static void kallsyms_tracepoints(struct probe_result *r)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *sym = strstr(line, " __tracepoint_");

		if (!sym)
			continue;
		sym += strlen(" __tracepoint_");
		sym[strcspn(sym, " \t\n")] = '\0';
		for (int i = 0; i < TP_COUNT; i++)
			if (strcmp(sym, tp_names[i]) == 0)
				r->tp_exists[i] = true;
	}
	fclose(f);
}

/* Parameters of the btf_trace_<tp> typedef's prototype, or -1. */
int probe_tp_params(const struct btf *btf, const char *tp)
{
	char name[128];
	const struct btf_type *t;
	int id;

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, id);
	t = btf__type_by_id(btf, t->type); /* pointer */
	if (!t || !btf_is_ptr(t))
		return -1;
	t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t))
		return -1;
	return btf_vlen(t);
}

/* The value of an enumerator by name, searching every enum; -1 if none. */
static int enum_value(const struct btf *btf, const char *name)
{
	__u32 n = btf__type_cnt(btf);

	for (__u32 id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_enum *e;

		if (!btf_is_enum(t))
			continue;
		e = btf_enum(t);
		for (int i = 0; i < btf_vlen(t); i++, e++)
			if (strcmp(btf__name_by_offset(btf, e->name_off), name) == 0)
				return (int)e->val;
	}
	return -1;
}

/* Whether struct `type` has a member `member`. */
static bool has_member(const struct btf *btf, const char *type, const char *member)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(btf, id);
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (int i = 0; t && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), member))
			return true;
	return false;
}

int probe_kernel_at(struct probe_result *r, const char *path)
{
	struct btf *btf;

	memset(r, 0, sizeof(*r));
	r->queue_stats_bit = -1;
	r->rqf_io_stat_bit = r->rqf_use_sched_bit = r->rqf_stats_bit = r->rqf_flush_seq_bit = -1;
	snprintf(r->btf_path, sizeof(r->btf_path), "%s", path ? path : "/sys/kernel/btf/vmlinux");
	kallsyms_tracepoints(r);
	btf = btf__parse(r->btf_path, NULL);
	if (!btf)
		return -errno ? -errno : -ENOENT;
	r->btf = true;
	for (int i = 0; i < TP_COUNT; i++) {
		int params = probe_tp_params(btf, tp_names[i]);

		r->tp_btf[i] = params > 0;
		/* kallsyms may be hidden (kptr_restrict); BTF is evidence too. */
		if (params > 0)
			r->tp_exists[i] = true;
	}
	/* (void *ctx, struct request *) since 5.11; (ctx, q, rq) before. */
	r->rq_tp_has_queue = probe_tp_params(btf, tp_names[TP_RQ_ISSUE]) == 3;
	/* (void *ctx, struct bio *) since 5.11; (ctx, q, bio) before. */
	r->bio_tp_has_queue = probe_tp_params(btf, tp_names[TP_BIO_QUEUE]) == 3;
	r->queue_stats_bit = enum_value(btf, "QUEUE_FLAG_STATS");
	r->plug_clock = has_member(btf, "blk_plug", "cur_ktime");
	r->rqf_io_stat_bit = enum_value(btf, "__RQF_IO_STAT");
	r->rqf_use_sched_bit = enum_value(btf, "__RQF_USE_SCHED");
	r->rqf_stats_bit = enum_value(btf, "__RQF_STATS");
	r->rqf_flush_seq_bit = enum_value(btf, "__RQF_FLUSH_SEQ");
	r->rqf_enum = r->rqf_io_stat_bit >= 0;
	/* bio.bi_issue became bio.issue_time_ns in 1733e8887483 ("block:
	 * cleanup bio_issue", 6.18). */
	if (has_member(btf, "bio", "issue_time_ns"))
		r->bio_stamp = PROBE_BIO_STAMP_ISSUE_TIME_NS;
	else if (has_member(btf, "bio", "bi_issue"))
		r->bio_stamp = PROBE_BIO_STAMP_BI_ISSUE;
	r->bio_stamp_flag = enum_value(btf, "QUEUE_FLAG_BIO_ISSUE_TIME") >= 0;
	r->bio_noacct_nocheck =
	    btf__find_by_name_kind(btf, "submit_bio_noacct_nocheck", BTF_KIND_FUNC) > 0;

	btf__free(btf);
	return 0;
}
