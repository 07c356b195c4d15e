// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cmd_check.c - `iolat check`: what the running kernel offers iolat, which
 * path it will take, and (by loading and detaching the collector) whether it
 * can run. Exit status 0 means it can.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cli/check_maps.h"
#include "cli/check_series.h"
#include "cli/cmdutil.h"
#include "commands.h"
#include "core/buckets.h"
#include "core/collector.h"
#include "core/libbpf_log.h"
#include "core/names.h"
#include "core/pin.h"
#include "core/tracer.h"
#include "sys/cgroups.h"
#include "sys/disks.h"
#include "sys/holders.h"
#include "sys/privileges.h"
#include "util/errors.h"
#include "util/monotonic.h"
#include "util/opts.h"
#include "util/parse.h"

void cmd_check_usage(FILE *f)
{
	fprintf(f, "Usage: iolat check [OPTIONS]\n"
		   "\n"
		   "Reports kernel BTF, each block tracepoint (tp_btf and raw_tp), the\n"
		   "tracepoint argument layout, which disks get request timestamps from the\n"
		   "kernel, which are bio-based, the attach path iolat will use, which\n"
		   "bio submit stamp the kernel keeps (none predates blk-throttle), and\n"
		   "what 'trace --syscalls' can follow (page cache, page faults). Unless\n"
		   "--no-load, it then loads and detaches the collector to prove it works.\n"
		   "Exit status: 0 iolat can run here, 1 it cannot, 2 bad usage.\n"
		   "\n"
		   "It also prints the sizes serve gives the collector's maps on this host,\n"
		   "and why (from the CPUs, the disks' queues, the workload cap, MemTotal).\n"
		   "\n"
		   "With --memory it inspects nothing: it prints the kernel memory the\n"
		   "collector's maps take, as each command sizes them, on this host or on\n"
		   "one described by --cpus, --disks, --workloads, --queue-depth and\n"
		   "--mem-total (each defaults to this host's), and whether the keys such\n"
		   "a host needs fit.\n"
		   "\n"
		   "Options:\n"
		   "      --no-load   only inspect; do not load the BPF programs\n"
		   "      --memory    print the maps' kernel memory and key capacity\n"
		   "      --cpus N    with --memory: possible CPUs (default: this host's)\n"
		   "      --disks N   with --memory: disks (default: this host's)\n"
		   "      --workloads N  with --memory: workloads (VMs, pods...) serve keys\n"
		   "                  (default 500, serve's workloads.max)\n"
		   "      --queue-depth N  with --memory: requests each disk holds at once\n"
		   "                  (nr_requests x hardware queues; default: 1024 for\n"
		   "                  described disks, else this host's disks')\n"
		   "      --mem-total SIZE  with --memory: MemTotal, e.g. 2G (default: this\n"
		   "                  host's)\n"
		   "      --bpf.map-size=MAP=ENTRIES[,...]  sizes set as serve's flag sets them\n"
		   "      --series    print the series serve's answer adds to a metrics store,\n"
		   "                  per family, classic and native, on this host or on one\n"
		   "                  described by --disks and --workloads, against the budget\n"
		   "      --ops N     with --series: operations each disk sees (default 2)\n"
		   "      --workload-disks N  with --series: disks each workload uses (1)\n"
		   "      --workload-ops N  with --series: operations each does (--ops)\n"
		   "      --workloads.labels=LIST, --workloads.metrics=LIST,\n"
		   "      --no-collector.workloads  with --series: as serve's flags set them\n"
		   "  -v, --verbose   show libbpf's messages while loading\n"
		   "  -h, --help      this help\n"
		   "  -V, --version   print the version\n"
		   "\n"
		   "Examples:\n"
		   "  iolat check\n"
		   "  iolat check --no-load\n"
		   "  iolat check --memory --cpus 192 --disks 24 --workloads 500\n"
		   "  iolat check --memory --cpus 4 --disks 2 --mem-total 1G\n"
		   "  iolat check --series --disks 24 --workloads 500\n"
		   "  iolat check --series --workloads.labels=op --workloads.metrics=all\n"
		   "\n"
		   "See iolat-check(1).\n");
}

static const char *yes(bool b)
{
	return b ? "yes" : "no";
}

static void print_tracepoints(const struct probe_result *pr)
{
	printf("\nTracepoints               present  tp_btf  role\n");
	for (int i = 0; i < TP_COUNT; i++) {
		static const char *const roles[TP_COUNT] = {
			[TP_RQ_COMPLETE] = "required: times every request at completion",
			[TP_RQ_ISSUE] = "issue time: restamping (6.9+), or where the queue keeps "
					"no stats",
			[TP_IO_START] = "creation time: restamping (6.9+), or where "
					"start_time_ns is unset",
			[TP_RQ_INSERT] = "fallback for block_io_start on kernels before 6.5",
			[TP_BIO_QUEUE] = "bio-based disks: start",
			[TP_BIO_COMPLETE] = "bio-based disks: completion",
		};
		printf("  %-22s  %-7s  %-6s  %s\n", probe_tp_name(i), yes(pr->tp_exists[i]),
		       yes(pr->tp_btf[i]), roles[i]);
	}
	printf("  block_rq_issue arguments: %s\n",
	       pr->rq_tp_has_queue ? "(q, rq) - before 5.11" : "(rq)");
	printf("  block_bio_queue arguments: %s\n",
	       pr->bio_tp_has_queue ? "(q, bio) - before 5.11" : "(bio)");
	if (pr->rqf_enum)
		printf(
		    "  request flags (BTF): IO_STAT bit %d, USE_SCHED %d, STATS %d, FLUSH_SEQ %d\n",
		    pr->rqf_io_stat_bit, pr->rqf_use_sched_bit, pr->rqf_stats_bit,
		    pr->rqf_flush_seq_bit);
	else
		printf(
		    "  request flags: macros, not in BTF (older kernels): a stamp the kernel did\n"
		    "    not write is zero, and FLUSH_SEQ is bit 4\n");
	if (pr->plug_clock)
		printf(
		    "  plug clock: yes (6.9+): a request created and issued inside one plug gets\n"
		    "    one cached time for both stamps; where the plug holds one, iolat reads\n"
		    "    its own clock at block_io_start and block_rq_issue and times those views\n"
		    "    from it (%s); stamps it could not replace are counted as %s\n",
		    names_stat(IOLAT_STAT_RESTAMPED), names_stat(IOLAT_STAT_UNTRUE_STAMPS));
	else
		printf("  plug clock: no: start and issue stamps are each read when they happen\n");
	if (pr->queue_stats_bit >= 0)
		printf("  QUEUE_FLAG_STATS bit: %d (from BTF)\n", pr->queue_stats_bit);
	else
		printf("  QUEUE_FLAG_STATS: not in BTF; should the issue-side fallback be needed,\n"
		       "    it records every request's issue time, not only unstamped ones\n");
}

/*
 * Issue 15: could a kernel stamp give a bio's time from its submission, so
 * that a cgroup's wait in blk-throttle shows in its latency? No kernel keeps
 * one that predates that wait. Checked in Debian's 5.10.262, 6.1.192 and
 * 6.12.117 sources and in the 6.18 commits named here:
 * - Before 5.18 (block/blk-core.c, submit_bio_checks()): a bio blk_throtl_bio()
 *   holds returns early; blk_throtl_dispatch_work_fn() (block/blk-throttle.c)
 *   resubmits it through submit_bio_noacct(), BIO_THROTTLED lets it past the
 *   throttle, and only then blkcg_bio_issue_init() stamps bi_issue, just
 *   before trace_block_bio_queue(). Until b781d8db580c ("blkcg: Remove extra
 *   blkcg_bio_issue_init", 5.16) the held branch stamped it too, and the
 *   release overwrote that stamp.
 * - 3f98c753717c (5.18) made the dispatcher call submit_bio_noacct_nocheck(),
 *   which skipped the stamp and block_bio_queue for released bios;
 *   0f7c8f0f7934 ("block: Fix io statistics for cgroup in throttle path",
 *   6.3; Debian's 6.1.192 has it) moved both into submit_bio_noacct_nocheck(),
 *   after blk_throtl_bio() in submit_bio_noacct().
 * - 6.18: 1733e8887483 turned bi_issue into issue_time_ns, 1f963bdd6420
 *   stamps it in blk_mq_submit_bio() (after block_bio_queue), and
 *   ea3d1f104db6 only on queues with QUEUE_FLAG_BIO_ISSUE_TIME (io.latency).
 * rq-qos (wbt, io.latency, io.cost) waits in rq_qos_throttle(), which
 * blk_mq_submit_bio() (block/blk-mq.c; 5.10 and 6.12 checked) calls after
 * block_bio_queue and before the request, and its start_time_ns, exist.
 */
static void print_submit_time(const struct probe_result *pr)
{
	printf("\nSubmit time (above the block layer): no kernel stamp predates blk-throttle "
	       "here\n");
	switch (pr->bio_stamp) {
	case PROBE_BIO_STAMP_ISSUE_TIME_NS:
		printf("  bio stamp: bio.issue_time_ns, %s\n",
		       pr->bio_stamp_flag
			   ? "set in blk_mq_submit_bio() after block_bio_queue,\n"
			     "    and only on disks with io.latency on (QUEUE_FLAG_BIO_ISSUE_TIME)"
			   : "set after blk_throtl_bio() lets the bio go, at or after\n"
			     "    block_bio_queue");
		break;
	case PROBE_BIO_STAMP_BI_ISSUE:
		if (pr->bio_noacct_nocheck)
			printf("  bio stamp: bio.bi_issue, set after blk_throtl_bio(), just before "
			       "block_bio_queue;\n"
			       "    a released bio gets both in submit_bio_noacct_nocheck() (since "
			       "0f7c8f0f7934,\n"
			       "    6.3; 5.18-6.2 kernels without that change give it neither)\n");
		else
			printf("  bio stamp: bio.bi_issue, set in submit_bio_checks() after "
			       "blk_throtl_bio(),\n"
			       "    just before block_bio_queue; a held bio passes there again "
			       "when released\n");
		break;
	default:
		printf("  bio stamp: none (a kernel without CONFIG_BLK_CGROUP: no blk-throttle "
		       "either)\n");
		return;
	}
	printf("  a bio blk-throttle holds gets its stamp and its block_bio_queue no earlier "
	       "than its\n"
	       "    release: that wait is in no view (trace shows the releasing kworker as its "
	       "task)\n"
	       "  rq-qos waits (wbt, io.latency, io.cost) come after block_bio_queue, before the\n"
	       "    request exists: in trace's Q2G and Q2C, not in the total time of hist, top,\n"
	       "    serve (it starts at the request)\n");
}

/* What `trace --syscalls` can follow here beyond the syscall itself. */
static void print_linkage(const struct probe_result *pr)
{
	struct tracer_linkage lk;

	if (tracer_linkage(pr, &lk))
		return;
	printf("\nTrace linkage (trace --syscalls)\n");
	if (lk.page_cache)
		printf("  page cache: yes (%s, bpf_loop):\n"
		       "    buffered writes followed to the bios that write them back\n",
		       lk.dirty_tp);
	else
		printf("  page cache: no: %s\n",
		       !lk.dirty_tp	  ? "no writeback_dirty_folio (or _page) tracepoint"
		       : lk.bpf_loop == 0 ? "no bpf_loop (5.17+) for the page walk"
					  : "unknown: probing bpf_loop needs CAP_BPF");
	printf("  page faults: %s\n",
	       lk.faults ? "yes (mm_filemap_fault): I/O of faults on mapped files linked"
			 : "no (no mm_filemap_fault tracepoint): fault I/O is not linked");
}

/* Where bios' cgroups come from: the hierarchy the io controller is on. */
static void print_cgroups(void)
{
	char root[PATH_MAX], path[PATH_MAX + 32];

	if (cgroups_io_root(root, sizeof(root))) {
		printf("\nCgroups: no io (blkio) controller mounted: I/O is per disk and process "
		       "only\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	printf("\nCgroups: io controller on %s (%s); workloads are named from its paths\n",
	       access(path, F_OK) ? "cgroup v1 blkio" : "cgroup v2", root);
}

/*
 * What a pinned collector's lease says (collector_opts.lease_ns): held by a
 * run that renews it, left for a successor (and for how long), or over:
 * then its programs are attached but count nothing, at the cost of an
 * almost empty program, until a start or --unpin removes them.
 */
static void print_lease(const struct pin_instance *in, bool owner_gone)
{
	uint64_t now = monotonic_ns();

	if (!in->has_lease || !in->lease_ns)
		printf("    no lease: counts until removed\n");
	else if (in->lease_ns <= now)
		printf("    lease over %.0f s ago: attached but counting nothing; the next "
		       "serve --handover=%s or --unpin=%s removes it\n",
		       (double)(now - in->lease_ns) / 1e9, in->name, in->name);
	else if (owner_gone)
		printf("    left for a successor: counts on for %.0f s more, then nothing\n",
		       (double)(in->lease_ns - now) / 1e9);
	else
		printf("    held: its run renews the lease (%.0f s left)\n",
		       (double)(in->lease_ns - now) / 1e9);
}

/* Collectors serve --handover left pinned: what they are and who holds them. */
static void print_pins(void)
{
	struct pin_instance in[16];
	int n = pin_list(in, 16);

	if (n <= 0) {
		printf("\nPinned collectors (serve --handover): %s\n",
		       n < 0 ? "cannot read " PIN_ROOT : "none");
		return;
	}
	printf("\nPinned collectors (serve --handover), in %s:\n", PIN_ROOT);
	for (int i = 0; i < n && i < 16; i++) {
		const struct pin_control *c = &in[i].control;
		char when[64] = "?";
		time_t t = (time_t)(c->created_ns / 1000000000ULL);
		struct tm tm;
		bool owner_gone;

		if (!in[i].has_control) {
			printf("  %-12s not iolat's (no control map): %d links, %d maps\n",
			       in[i].name, in[i].links, in[i].maps);
			continue;
		}
		owner_gone = kill((pid_t)c->owner, 0) && errno == ESRCH;
		if (gmtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
		printf("  %s: made by iolat %s at %s, map layout %u%s\n", in[i].name, c->version,
		       when, c->layout,
		       c->layout == IOLAT_LAYOUT_VERSION
			   ? ""
			   : " (not this iolat's: a start replaces it)");
		printf(
		    "    %d programs attached, %d maps; taken over %u times, last by pid %u (%s)\n",
		    in[i].links, in[i].maps, c->adoptions, c->owner,
		    owner_gone ? "gone" : "running");
		print_lease(&in[i], owner_gone);
	}
	printf("  (iolat serve --unpin=NAME removes one and detaches its programs)\n");
}

/* What check's tree shows: the disks, and the VMs that hold them open. */
struct disk_view {
	const struct disk_info *d;
	int n;
	const struct holder *held;
	int nheld;
	struct holders_stats hst;
};

/* Appends ", WHAT VALUE" (the first without the comma) when value is set. */
static void add_name(char *out, size_t len, const char *what, const char *value)
{
	size_t at = strlen(out);

	if (value[0] && at < len)
		snprintf(out + at, len - at, "%s%s %s", at ? ", " : "", what, value);
}

/* The names disk i is known by, as sysfs and the VMs holding it say:
 * "dm vg0-lv1, LVM vg0/lv1, VM vm7", "" if none. */
static void disk_names(const struct disk_view *v, int i, char *out, size_t len)
{
	const struct disk_ids *id = &v->d[i].ids;
	char lvm[sizeof(id->lvm_vg) + sizeof(id->lvm_lv)] = "";

	out[0] = '\0';
	if (id->lvm_vg[0])
		snprintf(lvm, sizeof(lvm), "%s/%s", id->lvm_vg, id->lvm_lv);
	add_name(out, len, "dm", id->dm_name);
	add_name(out, len, "LVM", lvm);
	add_name(out, len, "md", id->md_name);
	add_name(out, len, "nsid", id->nvme_nsid);
	add_name(out, len, "serial", id->serial);
	add_name(out, len, "wwid", id->wwid);
	for (int k = 0; k < v->nheld; k++)
		if (v->held[k].dev == v->d[i].dev)
			add_name(out, len, "VM", v->held[k].vm[0] ? v->held[k].vm : "(no -name)");
}

/* Prints disk i's tree: the disks it is built on, indented below it. */
static void print_tree(const struct disk_view *v, int i, int depth)
{
	char rest[128], names[768], *save = NULL, *w;

	disk_names(v, i, names, sizeof(names));
	printf("  %*s%s%s (%s layer)%s%s%s\n", depth * 4, "", depth ? "`- " : "", v->d[i].name,
	       v->d[i].bio_based ? "bio" : "request", names[0] ? " [" : "", names,
	       names[0] ? "]" : "");
	if (depth >= 8)
		return; /* stacks are never this deep: a loop in sysfs */
	snprintf(rest, sizeof(rest), "%s", v->d[i].stack.slaves);
	for (w = strtok_r(rest, " ", &save); w; w = strtok_r(NULL, " ", &save))
		for (int k = 0; k < v->n; k++)
			if (!strcmp(v->d[k].name, w))
				print_tree(v, k, depth + 1);
}

/*
 * Stacked devices (device-mapper, md) as trees, top layer first, each disk
 * with the names it is known by. Each layer has its own series: a dm or md
 * device is timed at the bio layer (its time includes its legs'), its legs
 * at the request layer; a raid1 write is one I/O on md and one on each leg.
 * Totals over disks (hist without -D, top) take the top layers only, so
 * nothing is counted twice.
 */
static void print_stacks(const struct disk_view *v)
{
	bool any = false;

	for (int i = 0; i < v->n; i++) {
		if (!v->d[i].stack.slaves[0] || v->d[i].stack.holders[0])
			continue;
		if (!any)
			printf(
			    "\nStacks  (each layer timed on its own; totals over disks count top "
			    "layers only)\n");
		any = true;
		print_tree(v, i, 0);
	}
}

/* The VMs (qemu processes) holding disks open, stacked or not. */
static void print_vms(const struct disk_view *v)
{
	if (!v->hst.qemus)
		return;
	printf("\nVMs     (qemu processes holding disks open, by -name)\n");
	for (int k = 0; k < v->nheld; k++) {
		char name[DISK_NAME_MAX];

		disks_name(v->held[k].dev, name, sizeof(name));
		printf("  %-20s %s (pid %d)\n", v->held[k].vm[0] ? v->held[k].vm : "(no -name)",
		       name, v->held[k].pid);
	}
	if (v->hst.denied)
		printf("  %u qemu processes whose descriptors cannot be read: another user's, "
		       "seen with CAP_SYS_PTRACE\n",
		       v->hst.denied);
}

/* The trees and VMs of the disks print_disks listed. */
static void print_named(const struct disk_info *d, int n)
{
	struct holder *held = calloc(HOLDERS_MAX, sizeof(*held));
	struct disk_view v = { .d = d, .n = n, .held = held };

	if (held)
		v.nheld = holders_scan("/proc", held, HOLDERS_MAX, &v.hst);
	if (v.nheld < 0)
		v.nheld = 0;
	print_stacks(&v);
	print_vms(&v);
	free(held);
}

/* How iolat will time each disk, from what its queue settings make the kernel stamp. */
static void print_disks(void)
{
	struct disk_info *d;
	int n = disks_list_new(&d);

	for (int i = 0; i < n; i++)
		disks_ids_fill(&d[i]);
	printf("\nDisks   (start_time_ns needs iostats or a scheduler; io_start_time_ns "
	       "needs queue stats, e.g. wbt)\n");
	for (int i = 0; i < n; i++) {
		bool start = d[i].iostats || (d[i].scheduler[0] && strcmp(d[i].scheduler, "none"));

		printf("  %-10s %3u:%-4u ", d[i].name, disk_major(d[i].dev), disk_minor(d[i].dev));
		if (d[i].bio_based) {
			printf("bio-based: timed block_bio_queue -> block_bio_complete\n");
			continue;
		}
		printf("request-based  scheduler %-11s iostats %-3s wbt %-3s -> %s\n",
		       d[i].scheduler[0] ? d[i].scheduler : "?", yes(d[i].iostats), yes(d[i].wbt),
		       start && d[i].wbt ? "kernel timestamps (fast path)"
					 : "request map for missing timestamps");
	}
	if (n <= 0)
		printf("  (no disks in /sys/block)\n");
	print_named(d, n);
	free(d);
}

static int try_load(const struct probe_result *pr)
{
	struct collector_opts o = { .attach = cmd_attach_mode(ATTACH_AUTO) };
	struct hist_map_info h;
	struct collector *c;
	char err[256] = "";
	int rc = collector_test_knobs(&o, getenv, err, sizeof(err));

	if (!rc)
		rc = collector_open(&c, &o, pr, err, sizeof(err));
	if (rc) {
		printf("\nLoad test: FAILED: %s\n", err);
		return 1;
	}
	collector_hist_map(c, &h);
	printf("\nLoad test: loaded and attached with %s%s, then detached\n",
	       attach_mode_name(collector_mode(c)),
	       collector_bio_attached(c) ? " (bio-layer programs too)" : "");
	printf("  histogram map: %s, %u keys of %d x %zu bytes, preallocated: %.1f MiB of kernel\n"
	       "    memory; I/O of keys beyond these is counted as %s\n",
	       h.name, h.keys, h.values_per_key, h.value_bytes,
	       (double)h.keys * h.values_per_key * h.value_bytes / (1 << 20),
	       names_stat(IOLAT_STAT_HIST_FULL));
	collector_close(c);
	return 0;
}

static int host_count(const char *flag, const char *arg, uint64_t max, uint64_t *out)
{
	if (parse_uint(arg, 1, max, out)) {
		errorf(NULL, "%s: '%s' is not a count from 1 to %llu", flag, arg,
		       (unsigned long long)max);
		return -EINVAL;
	}
	return 0;
}

/* "SIZE" with an optional binary unit (K, M, G, T; bytes without) into *out. */
static int mem_size(const char *arg, uint64_t *out)
{
	static const char units[] = "KMGT";
	char num[32];
	size_t len = strlen(arg);
	const char *u = len ? strchr(units, arg[len - 1]) : NULL;
	uint64_t v;

	if (!len || len >= sizeof(num))
		goto bad;
	snprintf(num, sizeof(num), "%.*s", (int)(u ? len - 1 : len), arg);
	if (parse_uint(num, 1, 1ULL << 40, &v))
		goto bad;
	for (const char *k = units; u && k <= u; k++)
		v <<= 10;
	if (v < (16ULL << 20) || v > (1ULL << 52))
		goto bad;
	*out = v;
	return 0;
bad:
	errorf("e.g. 512M, 4G or 1T; 16M at least", "--mem-total: '%s' is not a memory size", arg);
	return -EINVAL;
}

enum {
	OPT_NO_LOAD = 256,
	OPT_MEMORY,
	OPT_CPUS,
	OPT_DISKS,
	OPT_WORKLOADS,
	OPT_QUEUE,
	OPT_MEM_TOTAL,
	OPT_MAP_SIZE,
	OPT_SERIES,
	OPT_OPS,
	OPT_WL_DISKS,
	OPT_WL_OPS,
	OPT_WL_LABELS,
	OPT_WL_METRICS,
	OPT_NO_WL,
};

const struct opt cmd_check_opts[] = {
	{ "no-load", 0, OPT_NO_VALUE, OPT_NO_LOAD },
	{ "memory", 0, OPT_NO_VALUE, OPT_MEMORY },
	{ "cpus", 0, OPT_VALUE, OPT_CPUS },
	{ "disks", 0, OPT_VALUE, OPT_DISKS },
	{ "workloads", 0, OPT_VALUE, OPT_WORKLOADS },
	{ "queue-depth", 0, OPT_VALUE, OPT_QUEUE },
	{ "mem-total", 0, OPT_VALUE, OPT_MEM_TOTAL },
	{ "bpf.map-size", 0, OPT_VALUE, OPT_MAP_SIZE },
	{ "series", 0, OPT_NO_VALUE, OPT_SERIES },
	{ "ops", 0, OPT_VALUE, OPT_OPS },
	{ "workload-disks", 0, OPT_VALUE, OPT_WL_DISKS },
	{ "workload-ops", 0, OPT_VALUE, OPT_WL_OPS },
	{ "workloads.labels", 0, OPT_VALUE, OPT_WL_LABELS },
	{ "workloads.metrics", 0, OPT_VALUE, OPT_WL_METRICS },
	{ "no-collector.workloads", 0, OPT_NO_VALUE, OPT_NO_WL },
	{ "verbose", 'v', OPT_NO_VALUE, 'v' },
	{},
};

struct check_args {
	struct check_host h;
	uint64_t queue; /* --queue-depth; 0: not given */
	bool load, memory, described, disks_given;
	/* --series: serve's options and what the host's disks and workloads do */
	bool series, series_described, no_workloads;
	struct builtins_opts so;
	struct builtins_host sh;
};

/* --ops, --workload-disks, --workload-ops, --workloads.labels,
 * --workloads.metrics and --no-collector.workloads into a (--series). */
static int series_option(int c, const char *v, struct check_args *a)
{
	char err[256];
	uint64_t n;

	a->series_described = true;
	switch (c) {
	case OPT_WL_LABELS:
	case OPT_WL_METRICS:
		if (c == OPT_WL_LABELS
			? builtins_wl_labels_parse(v, &a->so.wl_labels, err, sizeof(err))
			: builtins_wl_metrics_parse(v, &a->so.wl_metrics, err, sizeof(err))) {
			errorf(NULL, "--%s", err);
			return -EINVAL;
		}
		return 0;
	case OPT_NO_WL:
		a->no_workloads = true;
		return 0;
	}
	if (host_count(c == OPT_OPS	   ? "--ops"
		       : c == OPT_WL_DISKS ? "--workload-disks"
					   : "--workload-ops",
		       v, c == OPT_WL_DISKS ? 1 << 20 : IOLAT_OP_COUNT, &n))
		return -EINVAL;
	*(c == OPT_OPS	      ? &a->sh.ops
	  : c == OPT_WL_DISKS ? &a->sh.wl_disks
			      : &a->sh.wl_ops) = (unsigned)n;
	return 0;
}

/* --cpus, --disks, --workloads or --queue-depth into a. */
static int host_option(int c, const char *v, struct check_args *a)
{
	uint64_t n;

	if (host_count(c == OPT_CPUS	    ? "--cpus"
		       : c == OPT_DISKS	    ? "--disks"
		       : c == OPT_WORKLOADS ? "--workloads"
					    : "--queue-depth",
		       v, c == OPT_WORKLOADS ? MAPSIZE_MAX_WORKLOADS : 1 << 20, &n))
		return -EINVAL;
	if (c == OPT_CPUS)
		a->h.h.cpus = (uint32_t)n;
	else if (c == OPT_DISKS)
		a->h.h.disks = (uint32_t)n;
	else if (c == OPT_WORKLOADS)
		a->h.workloads = (long)n;
	else
		a->queue = n;
	a->disks_given |= c == OPT_DISKS;
	a->described = true;
	return 0;
}

/* Each option with the mode it is for. */
static int check_modes(const struct check_args *a)
{
	if (a->memory && a->series) {
		errorf("run one, then the other", "--memory and --series are two reports");
		return -EINVAL;
	}
	if (a->series_described && !a->series) {
		errorf("add --series",
		       "--ops, --workload-disks, --workload-ops, --workloads.labels, "
		       "--workloads.metrics and --no-collector.workloads describe "
		       "serve's series for --series");
		return -EINVAL;
	}
	if (a->described && !a->memory && !a->series) {
		errorf("add --memory (or --series)",
		       "--cpus, --disks, --workloads, --queue-depth and "
		       "--mem-total describe a host for --memory");
		return -EINVAL;
	}
	return 0;
}

/* --series: serve's defaults, over what the command line described. */
static int run_series(struct check_args *a)
{
	char err[256];

	a->sh.disks = a->h.h.disks;
	a->sh.workloads = a->no_workloads ? 0 : (unsigned)a->h.workloads;
	a->sh.wl_ops = a->sh.wl_ops ? a->sh.wl_ops : a->sh.ops;
	if (check_series(&a->so, &a->sh, err, sizeof(err))) {
		errorf(NULL, "%s", err);
		return 1;
	}
	return 0;
}

/* 0: run; OPTS_EXIT (help or version printed) or -EINVAL (printed). */
static int parse_args(int argc, char **argv, struct check_args *a)
{
	char err[512];
	struct opts o;
	int c;

	opts_begin(&o, cmd_check_opts, cmd_check_usage, argc, argv);
	while ((c = opts_next(&o)) > 0) {
		switch (c) {
		case OPT_NO_LOAD:
			a->load = false;
			break;
		case OPT_MEMORY:
			a->memory = true;
			break;
		case OPT_SERIES:
			a->series = true;
			break;
		case OPT_OPS:
		case OPT_WL_DISKS:
		case OPT_WL_OPS:
		case OPT_WL_LABELS:
		case OPT_WL_METRICS:
		case OPT_NO_WL:
			if (series_option(c, o.value, a))
				return -EINVAL;
			break;
		case OPT_CPUS:
		case OPT_DISKS:
		case OPT_WORKLOADS:
		case OPT_QUEUE:
			if (host_option(c, o.value, a))
				return -EINVAL;
			break;
		case OPT_MEM_TOTAL:
			if (mem_size(o.value, &a->h.h.mem_bytes))
				return -EINVAL;
			a->described = true;
			break;
		case OPT_MAP_SIZE:
			if (mapsize_parse(o.value, a->h.set, err, sizeof(err))) {
				errorf("e.g. --bpf.map-size=rq_starts=65536,hists=4096",
				       "--bpf.map-size: %s", err);
				return -EINVAL;
			}
			break;
		case 'v':
			libbpf_log_verbose(true);
			break;
		}
	}
	if (c < 0)
		return c;
	if (opts_no_operand(&o, o.next))
		return -EINVAL;
	return check_modes(a);
}

int cmd_check(int argc, char **argv)
{
	struct check_args a = {
		.h.workloads = MAPSIZE_DEFAULT_WORKLOADS,
		.load = true,
		.so = { .device_view = true,
			.total_view = true,
			.size_view = true,
			.wl_labels = BUILTINS_WL_LABELS_DEFAULT,
			.wl_metrics = BUILTINS_WL_METRICS_DEFAULT },
		.sh = { .ops = 2,
			.wl_disks = 1,
			.nlat_le = buckets_default_le_count,
			.nsize_le = buckets_default_size_le_count,
			.nwl_lat_le = buckets_workload_le_count },
	};
	struct probe_result pr;
	struct utsname u;
	const char *hint;
	char err[512];
	int rc;

	mapsize_host_read(&a.h.h, (uint32_t)libbpf_num_possible_cpus());
	rc = parse_args(argc, argv, &a);
	if (rc)
		return opts_exit_status(rc);
	/* Described disks hold --queue-depth requests each (default
	 * MAPSIZE_DEFAULT_QUEUE); this host's, what their queues say. */
	if (a.disks_given || a.queue)
		a.h.h.inflight =
		    (uint64_t)a.h.h.disks * (a.queue ? a.queue : MAPSIZE_DEFAULT_QUEUE);
	if (a.memory)
		return check_maps_memory(&a.h);
	if (a.series)
		return run_series(&a);
	uname(&u);
	printf("Kernel %s %s\n", u.release, u.machine);
	if (probe_kernel_at(&pr, getenv("IOLAT_BTF"))) {
		printf("  BTF: no (%s missing)\n", pr.btf_path);
		errorf("iolat needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		       "iolat cannot run here: no kernel BTF");
		return 1;
	}
	printf("  BTF: yes (%s)\n", pr.btf_path);
	printf("  attach path: %s\n", pr.tp_btf[TP_RQ_COMPLETE]	     ? "tp_btf (raw_tp as fallback)"
				      : pr.tp_exists[TP_RQ_COMPLETE] ? "raw_tp"
								     : "none");
	print_tracepoints(&pr);
	print_disks();
	check_maps_sizes(&a.h);
	print_cgroups();
	print_pins();
	print_submit_time(&pr);
	print_linkage(&pr);
	if (!pr.tp_exists[TP_RQ_COMPLETE]) {
		errorf(NULL, "iolat cannot run here: no block_rq_complete tracepoint");
		return 1;
	}
	if (!a.load)
		return 0;
	if (require_bpf_privileges(err, sizeof(err), &hint)) {
		errorf(hint, "%s", err);
		return 1;
	}
	return try_load(&pr);
}
