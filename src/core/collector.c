// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* collector.c - opens, configures, loads and closes the kernel collector,
 * and says how it was set up (collector.h).
 */
#include "core/collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/collector_internal.h"
#include "core/handover.h"
#include "core/mapsize.h"
#include "core/pin.h"
#include "sys/disks.h"
#include "util/monotonic.h"
#include "util/parse.h"
#include "util/verifier_log.h"

static int pairs_of(struct iolat_bpf *s, struct prog_pair *p)
{
	struct prog_pair all[] = {
		{ TP_RQ_COMPLETE, { s->progs.rq_complete_btf, s->progs.rq_complete_raw } },
		{ TP_RQ_ISSUE, { s->progs.rq_issue_btf, s->progs.rq_issue_raw } },
		{ TP_IO_START, { s->progs.io_start_btf, s->progs.io_start_raw } },
		{ TP_RQ_INSERT, { s->progs.rq_insert_btf, s->progs.rq_insert_raw } },
		{ TP_BIO_QUEUE, { s->progs.bio_queue_btf, s->progs.bio_queue_raw } },
		{ TP_BIO_COMPLETE, { s->progs.bio_complete_btf, s->progs.bio_complete_raw } },
	};

	memcpy(p, all, sizeof(all));
	return (int)(sizeof(all) / sizeof(all[0]));
}

/* Which tracepoints to attach: the request path, its fallbacks, the bio path. */
static void choose_tps(const struct probe_result *pr, bool want[TP_COUNT])
{
	want[TP_RQ_COMPLETE] = true;
	want[TP_RQ_ISSUE] = pr->tp_exists[TP_RQ_ISSUE];
	/* Request creation: block_io_start (6.5+), else block_rq_insert. */
	want[TP_IO_START] = pr->tp_exists[TP_IO_START];
	want[TP_RQ_INSERT] = !want[TP_IO_START] && pr->tp_exists[TP_RQ_INSERT];
	want[TP_BIO_QUEUE] = pr->tp_exists[TP_BIO_QUEUE] && pr->tp_exists[TP_BIO_COMPLETE];
	want[TP_BIO_COMPLETE] = want[TP_BIO_QUEUE];
}

/*
 * Sizes every map of skel for host h as o asks (mapsize.h: the histogram
 * map from its memory budget, and, keyed by workload, from the cap; the
 * start-time and name maps from the disks' queues and the CPUs; all within
 * a share of MemTotal; the operator's sizes over those). The histogram map
 * not in use shrinks to one entry. The plan, with its reasons, into *p.
 */
static void size_maps(struct iolat_bpf *skel, const struct collector_opts *o,
		      const struct mapsize_host *h, struct mapsize_plan *p)
{
	struct bpf_map *maps[MAPSIZE_COUNT] = {
		[MAPSIZE_HISTS] = skel->maps.hists_shared,
		[MAPSIZE_RQ_STARTS] = skel->maps.rq_starts,
		[MAPSIZE_BIO_STARTS] = skel->maps.bio_starts,
		[MAPSIZE_COMMS] = skel->maps.comms,
	};
	struct mapsize_want w = { .hist_budget =
				      o->map_budget ? o->map_budget : COLLECTOR_MAP_BUDGET,
				  .key_workload = o->key_cgroup || o->key_process,
				  .key_process = o->key_process,
				  .key_size_class = o->key_size_class,
				  .dense_rows = collector_rows_wanted(o),
				  .workloads = o->workloads };

	w.restamp_value_size = bpf_map__value_size(skel->maps.restamps);
	memcpy(w.set, o->map_size, sizeof(w.set));
	for (int m = 0; m < MAPSIZE_COUNT; m++) {
		w.key_size[m] = bpf_map__key_size(maps[m]);
		w.value_size[m] = bpf_map__value_size(maps[m]);
	}
	mapsize_plan(h, &w, p);
	if (o->test_rows && p->rows)
		p->rows = o->test_rows;
	if (o->test_shared_values)
		p->shared = true; /* the per-CPU plan's keys: fewer */
	maps[MAPSIZE_HISTS] = p->shared ? skel->maps.hists_shared : skel->maps.hists;
	bpf_map__set_max_entries(p->shared ? skel->maps.hists : skel->maps.hists_shared, 1);
	for (int m = 0; m < MAPSIZE_COUNT; m++)
		bpf_map__set_max_entries(maps[m], p->entries[m]);
	bpf_map__set_max_entries(skel->maps.restamps, p->restamp_slots);
	collector_rows_size(skel, p);
}

/* The restamps table as planned where restamping is on, else one slot;
 * the programs hash into as many slots as planned (a power of two, at
 * least MAPSIZE_RESTAMPS_MIN). */
static void size_restamps(struct collector *c, struct iolat_bpf__rodata *ro)
{
	ro->restamp_slots_log2 = (__u32)__builtin_ctz(c->plan.restamp_slots);
	if (!c->restamp)
		bpf_map__set_max_entries(c->skel->maps.restamps, 1);
}

/* The host to size the maps for: the one described in o, or this one. */
static void host_of(const struct collector_opts *o, int ncpus, struct mapsize_host *h)
{
	if (o->host)
		*h = *o->host;
	else
		mapsize_host_read(h, (uint32_t)ncpus);
}

static void configure(struct collector *c, const struct collector_opts *o,
		      const struct probe_result *pr)
{
	struct iolat_bpf__rodata *ro = c->skel->rodata;
	struct mapsize_host host;

	memcpy((void *)ro->lat_bounds, c->lat.bound, sizeof(ro->lat_bounds));
	memcpy((void *)ro->size_bounds, c->size.bound, sizeof(ro->size_bounds));
	buckets_cells(&c->lat, (uint32_t *)ro->lat_cells);
	buckets_cells(&c->size, (uint32_t *)ro->size_cells);
	ro->filter_dev = o->filter_dev;
	ro->filter_cgroup = o->filter_cgroup;
	ro->filter_cgroup_level = o->filter_cgroup_level;
	ro->key_flags = o->key_flags;
	ro->key_cgroup = o->key_cgroup;
	ro->key_process = o->key_process;
	c->key_cgroup = o->key_cgroup || o->key_process;
	c->key_process = o->key_process;
	ro->key_size_class = o->key_size_class;
	ro->force_rq_map = c->force_rq_map;
	/* Forced, the request map times every request by iolat's clock. */
	c->plug_clock = pr->plug_clock;
	c->restamp = pr->plug_clock && pr->tp_exists[TP_RQ_ISSUE] && pr->tp_exists[TP_IO_START] &&
		     !c->force_rq_map && !o->no_restamp;
	ro->restamp = c->restamp;
	c->fold.refused = o->test_fold_no_batch;
	c->fold.first_chunk = o->test_fold_batch_keys;
	PROBE_SET_BLOCK_RODATA(ro, pr);
	ro->queue_stats_bit =
	    pr->queue_stats_bit >= 0 ? (__u32)pr->queue_stats_bit : IOLAT_QUEUE_STATS_BIT_UNKNOWN;
	host_of(o, c->ncpus, &host);
	size_maps(c->skel, o, &host, &c->plan);
	size_restamps(c, ro);
	c->shared = c->plan.shared;
	ro->shared_values = c->shared;
	ro->dense_rows = c->plan.rows > 0;
	c->hists = c->shared ? c->skel->maps.hists_shared : c->skel->maps.hists;
	c->nvals = c->shared ? 1 : c->ncpus;
}

int collector_test_knobs(struct collector_opts *o, char *(*env)(const char *name), char *err,
			 size_t len)
{
	const char *m = env("IOLAT_FORCE_RQ_MAP"), *d = env("IOLAT_TEST_DISK");
	const char *sizes = env("IOLAT_TEST_MAX_ENTRIES"),
		   *grace = env("IOLAT_TEST_HANDOVER_GRACE_S");
	char why[160];
	uint64_t s;

	if (m && !strcmp(m, "1"))
		o->force_rq_map = true;
	m = env("IOLAT_TEST_NO_RESTAMP");
	if (m && !strcmp(m, "1"))
		o->no_restamp = true;
	m = env("IOLAT_TEST_RESTAMP_SLOTS");
	if (m && parse_uint(m, 1, 8192, &s)) {
		snprintf(err, len, "IOLAT_TEST_RESTAMP_SLOTS: want 1 to 8192, got '%s'", m);
		return -EINVAL;
	}
	if (m)
		o->test_restamp_slots = (uint32_t)s;
	if (env("IOLAT_FORCE_NO_BATCH"))
		o->test_fold_no_batch = true;
	m = env("IOLAT_FOLD_BATCH_KEYS");
	if (m && parse_uint(m, 1, UINT32_MAX, &s)) {
		snprintf(err, len, "IOLAT_FOLD_BATCH_KEYS: want a number of keys from 1, got '%s'",
			 m);
		return -EINVAL;
	}
	if (m)
		o->test_fold_batch_keys = (uint32_t)s;
	m = env("IOLAT_TEST_SHARED_VALUES");
	if (m && !strcmp(m, "1"))
		o->test_shared_values = true;
	m = env("IOLAT_TEST_ROWS");
	if (m && parse_uint(m, 1, MAPSIZE_ROWS_MAX, &s)) {
		snprintf(err, len, "IOLAT_TEST_ROWS: want 1 to %d rows, got '%s'", MAPSIZE_ROWS_MAX,
			 m);
		return -EINVAL;
	}
	if (m)
		o->test_rows = (uint32_t)s;
	if (d && disks_resolve(d, &o->filter_dev, NULL, 0)) {
		snprintf(err, len, "IOLAT_TEST_DISK: no such disk '%s'", d);
		return -ENOENT;
	}
	if (sizes && mapsize_parse(sizes, o->test_max_entries, why, sizeof(why))) {
		snprintf(err, len, "IOLAT_TEST_MAX_ENTRIES: %s", why);
		return -EINVAL;
	}
	if (grace && parse_uint(grace, 1, 60, &s)) {
		snprintf(err, len, "IOLAT_TEST_HANDOVER_GRACE_S: want 1 to 60 seconds, got '%s'",
			 grace);
		return -EINVAL;
	}
	if (grace)
		o->handover_grace_s = (unsigned int)s;
	return 0;
}

/* The tests' map capacities (collector_test_knobs), between open and load:
 * over the plan, which does not show them. */
static void test_map_sizes(struct collector *c, const uint32_t set[MAPSIZE_COUNT])
{
	for (int i = 0; i < MAPSIZE_COUNT; i++) {
		struct bpf_map *m = i == MAPSIZE_HISTS
					? c->hists
					: bpf_object__find_map_by_name(
					      c->skel->obj, mapsize_name((enum mapsize_map)i));

		if (set[i] && m)
			bpf_map__set_max_entries(m, set[i]);
	}
}

/* collector_internal.h: what the collector would load, as one number. */
uint64_t collector_identity_of(struct collector *c, enum attach_mode mode)
{
	uint32_t layout = IOLAT_LAYOUT_VERSION;
	struct bpf_map *m;
	size_t sz;
	const void *elf = iolat_bpf__elf_bytes(&sz);
	uint64_t h = pin_hash(0, elf, sz);

	h = pin_hash(h, &layout, sizeof(layout));
	h = pin_hash(h, &mode, sizeof(mode));
	bpf_object__for_each_map(m, c->skel->obj)
	{
		uint32_t n = bpf_map__max_entries(m);
		const void *init = bpf_map__initial_value(m, &sz);

		h = pin_hash(h, &n, sizeof(n));
		if (init)
			h = pin_hash(h, init, sz);
	}
	return h;
}

/* What an attempt at a mode needs (attach_try_fn's ctx). */
struct open_attempt {
	struct collector *c;
	const struct collector_opts *o;
	const struct probe_result *pr;
};

/* One attempt at one mode: open, configure, load, attach. */
static int try_mode(void *ctx, enum attach_mode mode, char *err, size_t len)
{
	struct open_attempt *at = ctx;
	struct collector *c = at->c;
	const struct probe_result *pr = at->pr;
	struct prog_pair pairs[TP_COUNT];
	bool want[TP_COUNT] = {};
	int n, rc;

	c->skel = iolat_bpf__open();
	if (!c->skel) {
		snprintf(err, len, "cannot open the BPF object: %s", strerror(errno));
		return -errno;
	}
	configure(c, at->o, pr);
	test_map_sizes(c, at->o->test_max_entries);
	if (at->o->test_restamp_slots)
		bpf_map__set_max_entries(c->skel->maps.restamps, at->o->test_restamp_slots);
	choose_tps(pr, want);
	n = pairs_of(c->skel, pairs);
	for (int i = 0; i < n; i++)
		c->prog[pairs[i].tp] = attach_pick(pairs[i].prog, mode, want[pairs[i].tp]);
	c->mode = mode;
	if (c->pins.dir[0]) {
		rc = collector_pins_before_load(c, mode, err, len);
		if (rc)
			goto fail;
	}
	rc = iolat_bpf__load(c->skel);
	if (rc) {
		char why[400];

		snprintf(err, len, "loading the %s programs failed: %s%s", attach_mode_name(mode),
			 strerror(-rc), verifier_log_reason(why, sizeof(why)));
		goto fail;
	}
	if (!c->pins.adopted && !c->pins.took_over)
		c->pins.created_ns = collector_realtime_ns();
	collector_window_after_load(c);
	if (c->pins.dir[0]) {
		rc = collector_pins_after_load(c);
		if (rc) {
			snprintf(err, len, "cannot pin the collector in %s: %s", c->pins.dir,
				 strerror(-rc));
			goto fail;
		}
	}
	rc = collector_rows_start(c);
	if (!rc)
		rc = collector_setup_wait(c);
	if (!rc)
		rc = collector_attach_needed(c);
	if (!rc && c->prev)
		rc = collector_switch_over(c);
	if (rc) {
		snprintf(err, len, "attaching the %s programs failed: %s", attach_mode_name(mode),
			 strerror(-rc));
		goto fail;
	}
	return 0;
fail:
	rows_free(&c->rows);
	collector_teardown_wait(c);
	/* Pins this attempt made go with it; adopted ones stay for the next,
	 * and so does a collector taken over (c->prev). */
	if (c->pins_made)
		pin_remove(c->pins.dir);
	snapshot_store_free(&c->series); /* restored from the adopted pins */
	memset(c->stats_base, 0, sizeof(c->stats_base));
	c->pins_made = c->pins.adopted = c->pins.pinned = false;
	collector_detach_all(c);
	iolat_bpf__destroy(c->skel);
	c->skel = NULL;
	return rc;
}

static int build_tables(struct collector *c, const struct collector_opts *o, char *err, size_t len)
{
	int rc =
	    buckets_build_latency(&c->lat, c->lat_store, o->extra_lat_bounds, o->nextra_lat_bounds);

	if (rc) {
		snprintf(err, len, "too many latency bucket bounds (at most %u in all)",
			 IOLAT_LAT_SLOTS - 1);
		return rc;
	}
	rc = buckets_build_size(&c->size, c->size_store, o->extra_size_bounds,
				o->nextra_size_bounds);
	if (rc)
		snprintf(err, len, "too many size bucket bounds (at most %u in all)",
			 IOLAT_SIZE_SLOTS - 1);
	return rc;
}

int collector_open(struct collector **out, const struct collector_opts *opts,
		   const struct probe_result *pr, char *err, size_t len)
{
	struct collector_opts o = *opts;
	struct open_attempt at = { .o = &o, .pr = pr };
	struct collector *c;
	int rc;

	if (!pr->tp_exists[TP_RQ_COMPLETE]) {
		snprintf(err, len, "this kernel has no block_rq_complete tracepoint");
		return -ENOTSUP;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->force_rq_map = o.force_rq_map;
	c->unpin_at_close = o.unpin_at_close;
	c->lease_ns = o.unpin_at_close ? 0 : o.lease_ns;
	c->pins.grace_s = o.handover_grace_s ? o.handover_grace_s : HANDOVER_GRACE_S;
	if (o.pin_instance)
		snprintf(c->pins.name, sizeof(c->pins.name), "%s", o.pin_instance);
	if (o.pin_instance && pin_dir_of(o.pin_instance, c->pins.dir, sizeof(c->pins.dir))) {
		snprintf(
		    err, len,
		    "'%s' is not an instance name: use letters, digits, '-' and '_' (at most 63)",
		    o.pin_instance);
		free(c);
		return -EINVAL;
	}
	c->epoll = c->uevents = -1;
	c->rescan_s = o.disk_rescan_s ? o.disk_rescan_s : 1;
	c->folded_ns = monotonic_ns(); /* nothing counted yet */
	c->ncpus = libbpf_num_possible_cpus();
	c->percpu = c->ncpus > 0 ? calloc((size_t)c->ncpus, sizeof(*c->percpu)) : NULL;
	if (!c->percpu) {
		free(c);
		return -ENOMEM;
	}
	rc = build_tables(c, &o, err, len);
	if (rc)
		goto fail;
	at.c = c;
	rc = attach_with_fallback(o.attach, pr, try_mode, &at, err, len);
	if (rc)
		goto fail;
	collector_renew_lease(c);
	*out = c;
	return 0;
fail:
	handover_free(c->prev); /* its programs stop: nothing can count on */
	mapbatch_free(&c->fold);
	free(c->percpu);
	free(c);
	return rc;
}

void collector_close(struct collector *c)
{
	if (!c)
		return;
	/* The next run goes on from here (what fails here, it cannot tell
	 * anyone: the series saved last stand). A handover under way ends
	 * early: what began before its switch and is still in flight is lost. */
	if (c->prev)
		collector_end_handover(c);
	if (c->pins.pinned && c->unpin_at_close)
		pin_instance_remove(c->pins.name); /* the links below detach */
	else if (c->pins.pinned && !collector_fold(c))
		collector_save_series(c);
	collector_renew_lease(c); /* a whole lease for a successor */
	collector_teardown_wait(c);
	collector_detach_all(c);
	iolat_bpf__destroy(c->skel);
	snapshot_store_free(&c->series);
	mapbatch_free(&c->fold);
	rows_free(&c->rows);
	free(c->percpu);
	free(c);
}

enum attach_mode collector_mode(const struct collector *c)
{
	return c->mode;
}

bool collector_rq_map_forced(const struct collector *c)
{
	return c->force_rq_map;
}

bool collector_keyed_by_cgroup(const struct collector *c)
{
	return c->key_cgroup && !c->key_process;
}

bool collector_keyed_by_process(const struct collector *c)
{
	return c->key_process;
}

int collector_comm(struct collector *c, uint32_t tgid, char *out, size_t len)
{
	char comm[IOLAT_COMM_LEN];

	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.comms), &tgid, comm))
		return -ENOENT;
	snprintf(out, len, "%.*s", (int)sizeof(comm), comm);
	return 0;
}

bool collector_bio_attached(const struct collector *c)
{
	return c->link[TP_BIO_QUEUE];
}

void collector_hist_map(const struct collector *c, struct hist_map_info *out)
{
	out->name = bpf_map__name(c->hists);
	out->keys = bpf_map__max_entries(c->hists);
	out->values_per_key = c->nvals;
	out->value_bytes = sizeof(struct iolat_kval);
}

bool collector_fallback_attached(const struct collector *c)
{
	return c->fallback_on;
}

bool collector_keeps_cached_stamps(const struct collector *c)
{
	return c->plug_clock && !c->restamp;
}

const struct bucket_table *collector_lat_table(const struct collector *c)
{
	return &c->lat;
}

const struct bucket_table *collector_size_table(const struct collector *c)
{
	return &c->size;
}

int collector_plan(const struct collector_opts *o, const struct mapsize_host *h,
		   struct map_def *out, int max, int *hist, struct mapsize_plan *plan)
{
	struct iolat_bpf *skel = iolat_bpf__open();
	struct bpf_map *m, *in_use;
	int n = 0;

	if (!skel)
		return -errno;
	size_maps(skel, o, h, plan);
	in_use = plan->shared ? skel->maps.hists_shared : skel->maps.hists;
	*hist = 0;
	bpf_object__for_each_map(m, skel->obj)
	{
		if (n == max)
			break;
		if (m == in_use)
			*hist = n;
		snprintf(out[n].name, sizeof(out[n].name), "%s", bpf_map__name(m));
		out[n].type = bpf_map__type(m);
		out[n].key_size = bpf_map__key_size(m);
		out[n].value_size = bpf_map__value_size(m);
		out[n].max_entries = bpf_map__max_entries(m);
		out[n].mmapable = bpf_map__map_flags(m) & BPF_F_MMAPABLE;
		n++;
	}
	iolat_bpf__destroy(skel);
	return n;
}

void collector_sizes(const struct collector *c, struct mapsize_plan *out)
{
	*out = c->plan;
}
