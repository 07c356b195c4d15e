// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * exporter_maintain.c - the exporter's maintenance pass (exporter.h): the
 * fold, naming and retiring cgroups, expiring label sets and disks, the
 * warnings about maps that fill up, and the label sets saved beside the
 * collector's series for a restart that adopts it (wlstate.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/names.h"
#include "serve/exporter_internal.h"
#include "serve/wlstate.h"
#include "util/log.h"
#include "util/monotonic.h"

/*
 * One warning the first time a counter of I/O that did not fit in a full
 * kernel map leaves zero: counters never reset, so that is once per run,
 * whatever the scrape rate. The counter itself says how much since.
 */
static void log_full_maps(struct exporter *e, const uint64_t st[IOLAT_STAT_COUNT])
{
	struct map_stats m;
	const char *lost;

	for (int i = 0; i < IOLAT_STAT_COUNT; i++) {
		if (!st[i] || (e->full_logged & 1u << i) ||
		    !collector_stat_map(e->c, (enum iolat_stat)i, &m, &lost))
			continue;
		e->full_logged |= 1u << i;
		log_warn("BPF map full", LOG_STR("map", m.name), LOG_UINT("entries", m.capacity),
			 LOG_STR("effect", lost),
			 LOG_STR("counter", "iolat_collector_events_total"),
			 LOG_STR("event", names_stat(i)));
	}
}

/*
 * A warning when a map reaches MAPSIZE_WARN_PCT % of its capacity, before
 * it is full (mapsize_fill_warn: again only after it fell below
 * MAPSIZE_REARM_PCT %), with what a full one loses and how to raise it.
 */
static void log_filling_maps(struct exporter *e, const struct map_stats *ms, int n)
{
	static const char *const loses[MAPSIZE_COUNT] = {
		[MAPSIZE_HISTS] = "I/O of a disk, operation or workload not in it yet will not be "
				  "counted",
		[MAPSIZE_RQ_STARTS] = "requests whose times it cannot hold will be counted but "
				      "not timed",
		[MAPSIZE_BIO_STARTS] = "bios it cannot hold will not be counted",
		[MAPSIZE_COMMS] = "processes will be shown without their names",
	};

	for (int i = 0; i < n; i++) {
		int m = mapsize_from_name(ms[i].name);
		char flag[128];

		if (m < 0 || !mapsize_fill_warn(&e->fill_warned[m], ms[i].entries, ms[i].capacity))
			continue;
		snprintf(flag, sizeof(flag),
			 "give it more with --bpf.map-size=%s=ENTRIES or bpf_map_sizes in the "
			 "config file",
			 mapsize_name((enum mapsize_map)m));
		log_warn("BPF map filling up", LOG_STR("map", ms[i].name),
			 LOG_UINT("percent", ms[i].entries * 100 / ms[i].capacity),
			 LOG_UINT("entries", ms[i].entries), LOG_UINT("capacity", ms[i].capacity),
			 LOG_STR("effect", loses[m]), LOG_STR("hint", flag));
	}
}

/* What a maintenance pass changed, for its debug line. */
struct pass_tally {
	uint64_t t0_ns;
	struct wlabels_stats wl;
	struct disklife_stats disks;
};

static void pass_tally(const struct exporter *e, struct pass_tally *t)
{
	memset(t, 0, sizeof(*t));
	t->t0_ns = monotonic_ns();
	if (e->wl)
		wlabels_stats(e->wl, &t->wl);
	exporter_disks_stats(e->disks, &t->disks);
}

/* One debug line per pass: how long it took, what it read, what it retired,
 * folded and expired. */
static void log_pass(const struct exporter *e, const struct snapshot *snap,
		     const struct pass_tally *before, int rc)
{
	struct pass_tally now;

	pass_tally(e, &now);
	log_debug("maintenance pass",
		  LOG_DBL("duration_seconds", (double)(now.t0_ns - before->t0_ns) / 1e9),
		  LOG_UINT("series", snap->n),
		  LOG_UINT("cgroups_retired", now.wl.retired_cgroups - before->wl.retired_cgroups),
		  LOG_UINT("cgroups_folded", now.wl.folded_cgroups - before->wl.folded_cgroups),
		  LOG_UINT("workloads_expired", now.wl.expired_sets - before->wl.expired_sets),
		  LOG_UINT("workloads", now.wl.sets),
		  LOG_UINT("disks_retired", now.disks.retired - before->disks.retired),
		  LOG_UINT("disks_expired", now.disks.expired - before->disks.expired),
		  LOG_UINT("disks", now.disks.disks), LOG_STR("err", rc ? strerror(-rc) : NULL));
}

/* A map filling up or full: logged by the pass, so scrapes only read. */
static void log_maps(struct exporter *e)
{
	struct map_stats ms[8];
	uint64_t st[IOLAT_STAT_COUNT];
	int nm = collector_map_stats(e->c, ms, 8);

	log_filling_maps(e, ms, nm);
	if (!collector_stats(e->c, st))
		log_full_maps(e, st);
}

/*
 * The system calls' cgroups named as the collector's are (a VM whose calls
 * the page cache served has no bio to be named by; their calls count as
 * its I/O for the idle test), and the series of gone idle ones removed.
 */
static int syscalls_pass(struct exporter *e, time_t now)
{
	struct snapshot tmp;
	int rc = systimes_read(e->sys, &e->sys_pass[0]);

	if (!rc)
		rc = wlabels_assign(e->wl, &e->sys_pass[0], now);
	if (!rc)
		rc = systimes_forget_gone(e->sys, &e->sys_pass[0], &e->sys_pass[1], e->names_of);
	tmp = e->sys_pass[1];
	e->sys_pass[1] = e->sys_pass[0];
	e->sys_pass[0] = tmp;
	return rc;
}

/*
 * The kernel map writes and file writes, in the order a pass needs them: a
 * gone disk whose number another disk took is dropped before the fold, so
 * the fold cannot count the newcomer's keys under the old name; then, on
 * what the fold found, cgroups are named and the idle gone ones retired,
 * label sets and disks expired.
 */
int exporter_maintain(struct exporter *e)
{
	bool debug = log_enabled(LOG_DEBUG_L);
	const struct snapshot *snap = collector_series(e->c);
	struct pass_tally before;
	time_t now = time(NULL);
	int rc;

	if (debug)
		pass_tally(e, &before);
	rc = exporter_disks_check(e->disks);
	if (!rc)
		rc = collector_fold(e->c);
	/* The fold saved the collector's series: the label sets are saved too,
	 * before this pass changes them, so both files describe one moment. */
	if (!rc && e->wl && e->wl_files && wlstate_series_changed(e->wl_files))
		exporter_workloads_save(e);
	if (!rc && exporter_shows_workloads(e))
		rc = wlabels_assign(e->wl, snap, now);
	if (!rc && exporter_shows_workloads(e) && e->sys)
		rc = syscalls_pass(e, now);
	/* Both read the collector's own series and write the collector: they
	 * act on what they gathered after they are done reading. */
	if (!rc && exporter_shows_workloads(e))
		rc = wlabels_prune(e->wl, snap, now);
	if (!rc)
		rc = exporter_disks_prune(e->disks, snap, now, e->o.disk_expire_s);
	if (!rc)
		rc = exporter_kstat_pass(e->kstat, snap);
	log_maps(e);
	if (debug)
		log_pass(e, snap, &before, rc);
	return rc;
}

void exporter_workloads_files(struct exporter *e, struct wlstate_files *f)
{
	e->wl_files = f;
}

int exporter_workloads_save(struct exporter *e)
{
	struct wlstate st;
	int rc;

	if (!e->wl || !e->wl_files)
		return 0;
	rc = wlabels_save(e->wl, &st);
	if (!rc)
		rc = wlstate_write(e->wl_files->path, &e->wl_files->owner, &st);
	wlstate_free(&st);
	if (rc && rc != e->wl_files->last_rc)
		log_warn("cannot save the workload label sets", LOG_STR("file", e->wl_files->path),
			 LOG_STR("err", strerror(-rc)),
			 LOG_STR("effect", "a restart would name workloads afresh"));
	e->wl_files->last_rc = rc;
	return rc;
}

int exporter_workloads_restore(struct exporter *e, const struct wlstate_files *f,
			       struct wlabels_stats *out)
{
	struct wlstate st;
	int rc;

	if (!e->wl)
		return -EOPNOTSUPP;
	rc = wlstate_read(f->path, &f->owner, &st);
	if (!rc)
		rc = wlabels_restore(e->wl, &st, collector_series(e->c));
	wlstate_free(&st);
	/* Named afresh: the retired series restored with the collector's have
	 * no set now, and their ids must not label a new one. */
	if (rc) {
		st.next_id = WLABELS_ID_FIRST_SET;
		wlabels_restore(e->wl, &st, collector_series(e->c));
	}
	if (!rc && out)
		wlabels_stats(e->wl, out);
	return rc;
}
