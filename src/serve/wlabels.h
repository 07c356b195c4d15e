/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wlabels.h - the workload label sets `iolat serve` exports, kept bounded.
 *
 * Every cgroup that does I/O is named (workload.h) and joins the label set
 * of its (kind, name); several cgroups may share one (a VM's threads).
 * At most `max_sets` label sets exist; cgroups past the cap are counted
 * under kind="other" and the fold is counted. A cgroup that is gone has its
 * kernel keys moved to user space (collector_retire) under its label set,
 * so it stops taking kernel map space but keeps its name and counts; a
 * label set with no live cgroup left expires after `expire_s` and leaves
 * the output (its counts stay in the per-disk totals). So short-lived
 * cgroups never make series or memory grow without bound.
 */
#ifndef IOLAT_WLABELS_H
#define IOLAT_WLABELS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/collector.h"
#include "sys/workload.h"

struct wlabels_opts {
	size_t max_sets;       /* cap on label sets, "other" not counted */
	unsigned int expire_s; /* how long a set with no live cgroup stays */
};

/* A label set: kind and workload, and for a Kubernetes pod's cgroups the
 * namespace, pod and container names (workload.h; "" for the others). */
struct wl_label {
	char kind[16];
	char name[128];
	char ns[64];
	char pod[256];
	char container[64];
};

/*
 * The kernel map writes wlabels asks for: exporter.c passes the collector's
 * (collector_retire, collector_refold), tests a fake; so the label sets'
 * bookkeeping needs no collector. The ids are user-space cgroup ids, of
 * COLLECTOR_CG_USER and above.
 */
struct wlabels_ops {
	void *ctx;
	/* Moves key k's kernel values to user space under cgroup id `into`. 0 or -errno. */
	int (*retire)(void *ctx, const struct iolat_key *k, uint64_t into);
	/* Merges the user-space series of cgroup id `from` into `into`. 0 or -errno. */
	int (*refold)(void *ctx, uint64_t from, uint64_t into);
};

/* User-space ids of its own: the retired series of cgroups folded into
 * "other" are kept under WLABELS_ID_OTHER, an expired set's under
 * WLABELS_ID_EXPIRED (counted in the per-disk totals only). */
#define WLABELS_ID_OTHER (COLLECTOR_CG_USER | 1)
#define WLABELS_ID_EXPIRED (COLLECTOR_CG_USER | 2)
/* The first label set's id; the sets' ids count up from it. */
#define WLABELS_ID_FIRST_SET (COLLECTOR_CG_USER | 16)

struct wlabels;

/* names must outlive the result; ops is copied. NULL when out of memory. */
struct wlabels *wlabels_new(const struct wlabels_ops *ops, struct workload_cache *names,
			    const struct wlabels_opts *o);
void wlabels_free(struct wlabels *w);
void wlabels_set_opts(struct wlabels *w, const struct wlabels_opts *o);

/* Maintenance: follows and names the cgroups of a fresh snapshot
 * (collector_read). When the Kubernetes names changed
 * (workload_cache_refresh), a pod's cgroups already named move to the
 * label set of their names now: their live series follow, what they
 * retired stays with the old set. 0 or -ENOMEM. */
int wlabels_assign(struct wlabels *w, const struct snapshot *snap, time_t now);

/* The label set a snapshot series' cgroup id belongs to; NULL: not exported
 * (expired, or a cgroup not named yet: it shows once a maintenance pass has
 * named it). Only looks: a render calls it. */
const struct wl_label *wlabels_of(struct wlabels *w, uint64_t cgroup);

/* Whether that label set is the "other" fold. */
int wlabels_is_other(const struct wlabels *w, const struct wl_label *l);

/*
 * Maintenance, after wlabels_assign of the same snapshot: retires the keys
 * of cgroups gone with no I/O since the previous pass (ops->retire) and
 * expires label sets (ops->refold). snap may be the collector's own series,
 * which the retires change: it is read before them, not after. 0 or -errno.
 */
int wlabels_prune(struct wlabels *w, const struct snapshot *snap, time_t now);

struct wlabels_stats {
	size_t sets;		  /* label sets now, "other" not counted */
	size_t cgroups;		  /* cgroups followed now */
	uint64_t folded_cgroups;  /* cgroups put under "other", cumulative */
	uint64_t retired_cgroups; /* cgroups gone and moved out of the kernel map */
	uint64_t expired_sets;	  /* label sets that left the output */
};
void wlabels_stats(const struct wlabels *w, struct wlabels_stats *out);

/* For a restart that adopts the collector (wlstate.h): the label sets, the
 * cgroups followed (each with its set, "other", or none yet), the times
 * expiry counts from, and the counters of wlabels_stats. */
struct wlstate;

/* Copies w's state into out (freed with wlstate_free). 0 or -ENOMEM. */
int wlabels_save(const struct wlabels *w, struct wlstate *out);

/*
 * Takes a saved state into w, which must not have followed anything yet
 * (-EBUSY). series, if not NULL, is the collector's restored series:
 * user-space ids in it of no saved set (a crash between the collector's
 * save and serve's) are refolded under WLABELS_ID_EXPIRED (ops->refold)
 * and never given to a new set. 0; -EPROTO if the state does not hold
 * together (w is left as new); or -errno.
 */
int wlabels_restore(struct wlabels *w, const struct wlstate *in, const struct snapshot *series);

#endif
