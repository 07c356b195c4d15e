/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * builtin_views.h - the collector's series as the maps iolat's own configs
 * read (builtin/block.yaml, builtin/workloads.yaml), so its block metrics
 * are made by the same map -> metric path as a user's program's
 * (uprog/umetrics.h).
 *
 * Each view has one entry per kernel series (several series of one disk,
 * op and size class, from different cgroups or flags, are summed by the
 * metric path, as series with the same labels are). Its key is one of the
 * structs at the top of builtin_views.c; the YAML's labels declare the
 * same bytes, and tests/unit/test_builtin.c decodes a packed key through
 * them, so the two cannot drift apart.
 */
#ifndef IOLAT_BUILTIN_VIEWS_H
#define IOLAT_BUILTIN_VIEWS_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"
#include "uprog/umetrics.h"

struct wl_label;

struct builtin_views {
	const struct snapshot *snap;	       /* this scrape's series */
	const struct bucket_table *lat, *size; /* also read by umetrics_new, at any time */
	const uint64_t *lat_le, *size_le;      /* classic bounds, raw units */
	size_t nlat_le, nsize_le;
	const uint64_t *wl_lat_le; /* the per-workload histograms' (fewer) */
	size_t nwl_lat_le;
	unsigned int synthetic; /* testing: this many fake disks of 2 ops each */
	/* Disks known to be there (exporter_kstat_devs): each gets a zero
	 * read and write series in the block views, which adds nothing to a
	 * series it has and makes one it lacks. */
	const uint32_t *known_devs;
	size_t nknown;
	/* Per series of snap: its workload's label set (wlabels.c), NULL for
	 * a workload not shown; NULL as a whole: no workload views. */
	const struct wl_label *const *labels;
	/* The system calls' series (core/systimes.h) and, per series, its
	 * workload's label set; NULL: none (the syscall families are off). */
	const struct snapshot *sys;
	const struct wl_label *const *sys_labels;
};

/* The source over v; v must outlive it. */
void builtin_views_source(struct builtin_views *v, struct usource *out);

#endif
