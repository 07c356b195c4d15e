/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wlstate.h - serve's workload label state (wlabels.h) saved beside the
 * collector's series (core/seriesfile.h), for the run that adopts its pins
 * to go on with the same label sets.
 *
 * The collector saves its series, retired workloads' user-space ids
 * included, at a fold at most every few seconds; the label sets those ids
 * belong to, which cgroups are in which set or in "other", and when empty
 * sets began to age exist only in serve. They are saved to
 * PIN_STATE_ROOT/NAME/workloads right after each of the collector's saves
 * (wlstate_series_changed tells when), so the two files describe the same
 * moment, and at stop. Times are wall-clock seconds (time(NULL)): /run,
 * like bpffs, does not outlive a boot, and expiry is counted in them. The
 * file names the pins it belongs to (their creation time); one that does
 * not, is cut short, or is of another format is not read.
 */
#ifndef IOLAT_WLSTATE_H
#define IOLAT_WLSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/wlabels.h"

#define WLSTATE_FILE "workloads"

struct wlstate_owner {
	uint64_t created_ns; /* collector_pins' created_ns: which pins */
};

/* A label set. */
struct wlstate_set {
	uint64_t id;	     /* the user-space cgroup id of its retired series */
	int64_t empty_since; /* wall-clock s when its last cgroup went (if it has none) */
	struct wl_label label;
};

/* A cgroup followed (or a process, keyed by process). */
struct wlstate_cgroup {
	uint64_t id;	    /* its key's cgroup field (COLLECTOR_CG_USER - 1 for none) */
	uint64_t set;	    /* its set's id, WLABELS_ID_OTHER, or 0: not named yet */
	int64_t first_seen; /* wall-clock s */
};

struct wlstate {
	uint64_t next_id;					/* the next set's id */
	uint64_t folded_cgroups, retired_cgroups, expired_sets; /* wlabels_stats' counters */
	struct wlstate_set *sets;
	size_t nsets;
	struct wlstate_cgroup *cgroups;
	size_t ncgroups;
};

/* Frees what a wlstate holds and empties it. */
void wlstate_free(struct wlstate *s);

/* Writes s to path (util/atomicfile.h: a reader never sees half of it, a
 * failure leaves the old file). 0 or -errno. */
int wlstate_write(const char *path, const struct wlstate_owner *o, const struct wlstate *s);

/* Reads path into out (emptied first). 0; -ENOENT without a file;
 * -ESTALE if it belongs to other pins; -EPROTO if it is not a workloads
 * file of this format, or is cut short or damaged; or another -errno.
 * On failure out is empty. */
int wlstate_read(const char *path, const struct wlstate_owner *o, struct wlstate *out);

/* Where instance `name` keeps it, and the collector's series file beside
 * it, whose changes say when to save. */
struct wlstate_files {
	char path[512];
	char series[512];
	struct wlstate_owner owner;
	uint64_t seen_ino, seen_mtime_ns; /* the series file last seen */
	int last_rc;			  /* the last save's, to report a change once */
};

/* Fills f for instance name (making its state directory). 0 or -errno. */
int wlstate_files_init(struct wlstate_files *f, const char *name, const struct wlstate_owner *o);

/* Whether the collector's series file was rewritten since the last call
 * (the first call: since wlstate_files_init). */
bool wlstate_series_changed(struct wlstate_files *f);

#endif /* IOLAT_WLSTATE_H */
