/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * exporter.h - turns the collector's cumulative series and its own
 * statistics into a metric_set for `iolat serve` (exporter_render, which only
 * reads), and keeps the kernel maps bounded and the state saved in a
 * separate step on the daemon's own schedule (exporter_maintain).
 * Both are serialised by the caller; counts are cumulative since start and
 * never reset.
 */
#ifndef IOLAT_EXPORTER_H
#define IOLAT_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/collector.h"
#include "metrics/metrics.h"
#include "serve/wlabels.h"

struct exporter_opts {
	bool device_view, total_view, size_view; /* which histograms to export */
	const uint64_t *lat_le;			 /* classic bounds, ns, ascending; NULL: defaults */
	size_t nlat_le;
	const uint64_t *size_le; /* classic bounds, bytes; NULL: defaults */
	size_t nsize_le;
	const uint64_t *wl_lat_le; /* per-workload histograms' bounds, ns; NULL: defaults */
	size_t nwl_lat_le;
	bool no_op_label;    /* sum operations: series per disk only */
	bool size_label;     /* a size label (class) on the per-disk families;
			      * needs a collector keyed by size class */
	bool workloads;	     /* iolat_workload_* (needs a cgroup-keyed collector) */
	unsigned wl_labels;  /* uprog/builtins.h: labels a workload's series keep */
	unsigned wl_metrics; /* and its families */
	struct wlabels_opts wl;
	const struct workload_rule *rules; /* user naming rules; copied */
	size_t nrules;
	/* where Kubernetes pods are named from (sys/kubenames.h); "": not read */
	char kube_pods_dir[512];
	char kube_containers_dir[512];
	unsigned int synthetic_disks; /* testing: this many fake disks' series */
	unsigned int disk_expire_s;   /* disks.expire: how long a gone disk's series
				       * stay; 0: 5m */
	double maintain_s;	      /* how often passes run, for its gauge */
};

struct exporter;

/*
 * Snaps the requested `le` bounds to the table (a bound not in the table
 * becomes the largest table bound below it, so every bucket stays exact).
 * Returns 0, or -errno with a reason in err.
 */
int exporter_new(struct exporter **out, struct collector *c, const struct exporter_opts *o,
		 char *err, size_t errlen);
void exporter_free(struct exporter *e);

/* Whether o asks for the system-call families (workloads on and one of
 * them in its metrics): their programs are attached by exporter_new then,
 * and an exporter_prepare that would turn them on or off is refused. */
bool exporter_wants_syscalls(const struct exporter_opts *o);

/*
 * A reload in two steps. exporter_prepare checks new options and builds
 * everything they need off to the side; it changes nothing the exporter
 * shows, so it may run while a scrape does. 0, or -errno with a reason in
 * err. exporter_apply then swaps them in and cannot fail; the caller keeps
 * it from running during exporter_render or exporter_maintain. Counts are
 * untouched.
 */
struct exporter_settings;
int exporter_prepare(struct exporter *e, const struct exporter_opts *o,
		     struct exporter_settings **out, char *err, size_t errlen);
void exporter_apply(struct exporter *e, struct exporter_settings *st);
/* Drops prepared settings that will not be applied; NULL is fine. */
void exporter_settings_free(struct exporter_settings *st);

/*
 * A render: builds the current metrics into set (cleared first) and
 * changes nothing else. Its block counts are the kernel's at this call (a
 * fold on demand into the exporter's own memory, collector_peek): no
 * kernel map or file is written and no maintenance pass runs for it. The
 * workload label sets, retired cgroups and expired disks are as the last
 * maintenance pass left them: a cgroup it has not named yet shows from the
 * render after it has. build_info labels come from the running kernel and
 * the collector's attach path. The caller keeps it apart from
 * exporter_maintain and exporter_apply. Returns 0, or -errno with what
 * failed in err (a map read's own words when the block families could not
 * be read).
 */
int exporter_render(struct exporter *e, struct metric_set *set, char *err, size_t errlen);

/*
 * A maintenance pass, which the daemon runs on its own schedule, never for
 * a scrape: folds the kernel's counters into the collector's series (and,
 * pinned, saves them when due), names the cgroups the fold found, moves the
 * keys of gone cgroups and gone disks to user space, expires workload
 * label sets (workloads.expire) and gone disks (disks.expire), forgets a
 * gone disk whose number another disk took, and logs maps that fill up.
 * Each pass compares what it folds with the pass before. The caller keeps
 * it apart from renders and exporter_apply. 0 or -errno.
 */
int exporter_maintain(struct exporter *e);

/* Records a finished maintenance pass and its length (including the
 * collector's own maintenance), for the iolat_maintenance_* metrics. */
void exporter_pass_done(struct exporter *e, double seconds);

/*
 * With --handover, the workload label sets go on across an adopted
 * restart (wlstate.h). exporter_workloads_files names the files (borrowed;
 * NULL: none): from then on each maintenance pass that finds the
 * collector's series saved since the last pass saves the label sets, before
 * it changes them, so both files describe one moment. Like
 * exporter_maintain, the caller keeps these apart from renders.
 */
struct wlstate_files;
void exporter_workloads_files(struct exporter *e, struct wlstate_files *f);

/* Saves the label sets now (at stop, after the last pass: the collector's
 * last save follows). 0 (also with nothing to save) or -errno, logged
 * once while it stays the same. */
int exporter_workloads_save(struct exporter *e);

/* Before the first maintenance pass of a run that adopted the collector
 * and read its series: reads f's file into the label sets, and their
 * state in *out (if not NULL). 0; -EOPNOTSUPP without workload series;
 * wlstate_read's and wlabels_restore's errors (the sets stay empty, and
 * the restored series of retired sets are folded as expired ones). */
int exporter_workloads_restore(struct exporter *e, const struct wlstate_files *f,
			       struct wlabels_stats *out);

/* Records how long the last scrape took, for iolat_scrape_duration_seconds. */
void exporter_scrape_done(struct exporter *e, double seconds, size_t bytes);

#endif
