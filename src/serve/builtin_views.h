/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * builtin_views.h - the collector's series as the maps iolat's own configs
 * read (builtin/block.yaml, builtin/workloads.yaml), so its block metrics are made by the same map
 * -> metric path as a user's program's (umetrics.h).
 *
 * Each view is a map keyed by
 *   struct builtin_block_key   { __u32 dev; __u8 op; __u8 size_class; __u16 pad; };
 *   struct builtin_untimed_key { __u32 dev; __u8 op; __u8 size_class; __u8 view; __u8 pad; };
 *   struct builtin_workload_key { __u32 dev; __u8 op; __u8 pad[3];
 *                                 char kind[16]; char workload[128]; };
 * (builtin/block.yaml reads the first two, builtin/workloads.yaml the
 * third: a series under its cgroup's workload label set, from wlabels.c)
 * with one entry per kernel series (several series of one disk, op and
 * size class, from different cgroups or flags, are summed by the metric
 * path, as series with the same labels are).
 */
#ifndef IOLAT_BUILTIN_VIEWS_H
#define IOLAT_BUILTIN_VIEWS_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"
#include "uprog/umetrics.h"

struct wl_label;

struct builtin_views {
	const struct snapshot *snap; /* this scrape's series */
	const struct bucket_table *lat, *size;
	const uint64_t *lat_le, *size_le; /* classic bounds, raw units */
	size_t nlat_le, nsize_le;
	unsigned int synthetic; /* testing: this many fake disks of 2 ops each */
	/* Per series of snap: its workload's label set (wlabels.c), NULL for
	 * a workload not shown; NULL as a whole: no workload views. */
	const struct wl_label *const *labels;
};

/* The source over v; v must outlive it. */
void builtin_views_source(struct builtin_views *v, struct usource *out);

#endif
