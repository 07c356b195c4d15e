/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * exporter_internal.h - what the exporter's files share (exporter.h is the
 * interface): its state, and the calls from the render (exporter.c) into
 * the self-metrics (exporter_self.c). Maintenance (exporter_maintain.c)
 * changes the state; the render only reads it.
 */
#ifndef IOLAT_EXPORTER_INTERNAL_H
#define IOLAT_EXPORTER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/collector.h"
#include "core/systimes.h"
#include "serve/builtin_views.h"
#include "serve/exporter.h"
#include "serve/exporter_disks.h"
#include "serve/exporter_kstat.h"
#include "serve/wlabels.h"
#include "uprog/umetrics.h"

struct exporter {
	struct collector *c;
	struct exporter_opts o;
	uint64_t lat_le[IOLAT_LAT_SLOTS], size_le[IOLAT_SIZE_SLOTS], wl_lat_le[IOLAT_LAT_SLOTS];
	size_t nlat_le, nsize_le, nwl_lat_le;
	/* A render's series: the collector's as a fold now would make them,
	 * in memory of the exporter's own (collector_peek), so a scrape
	 * changes nothing; snap is its view. */
	struct snapshot_store peeked;
	const struct snapshot *snap;
	double last_scrape_s;
	size_t last_scrape_bytes;
	uint64_t scrapes;
	/* Maintenance passes (exporter_pass_done), for the iolat_maintenance_*
	 * gauges: how many, the last one's length. */
	uint64_t passes;
	double last_pass_s;
	/* Per map: warned at 90 % and not re-armed yet (mapsize_fill_warn). */
	bool fill_warned[MAPSIZE_COUNT];
	time_t started;
	char kernel[65];
	/* The per-disk families: builtin/block.yaml, edited by the options,
	 * over the collector's views; the same path as users' programs. */
	struct uconfig *block_conf, *wl_conf;
	struct umetrics *block, *wl_metrics;
	struct builtin_views views;	/* written by views_fill only */
	const struct wl_label **labels; /* per snapshot series, this render */
	size_t labels_cap;
	struct decoder_env *env;
	struct workload_cache *names_of; /* cgroup id -> workload (with workloads on) */
	struct wlabels *wl;
	struct wlstate_files *wl_files; /* --handover: where wl is saved; borrowed */
	uint64_t folded_ios;		/* completions under workload="other", this render */
	struct exporter_disks *disks;	/* gone disks: keys retired, series expired */
	struct exporter_kstat *kstat;	/* the kernel's counts beside iolat's; known disks */
	uint32_t full_logged;		/* 1 << enum iolat_stat: a full map already logged */
	char events_help[640];		/* iolat_collector_events_total's, naming each event */
	/* The system-call families' programs (NULL: off, nothing attached),
	 * attached at start only: a reload may not turn them on or off. A
	 * render's series of them and their label sets; the maintenance
	 * pass's own two reads, this pass's and the last. */
	struct systimes *sys;
	struct snapshot sys_snap;
	const struct wl_label **sys_labels;
	size_t sys_labels_cap;
	struct snapshot sys_pass[2];
};

/* Workload series are shown: turned on, and their state made. */
static inline bool exporter_shows_workloads(const struct exporter *e)
{
	return e->wl && e->o.workloads;
}

/* Fills e->events_help, once, at exporter_new. */
void exporter_self_init(struct exporter *e);

/* The exporter's own families (iolat_bpf_*, iolat_collector_*, scrape and
 * maintenance gauges, build info, process_*, and with workloads shown
 * iolat_workload_label_sets*), read from the collector and the state the
 * last pass left. 0 or -ENOMEM. */
int exporter_self_metrics(struct exporter *e, struct metric_set *set, bool workloads);

#endif
