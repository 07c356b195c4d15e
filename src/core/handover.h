/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * handover.h - taking over from a pinned collector of another build or
 * other settings (core/pin.h) without losing or doubling a count.
 *
 * A program attached to a tracepoint cannot be swapped for another, so for
 * a while both collectors' programs run. Each counts only the I/O that
 * began inside its window (struct iolat_window, bpf/iolat.h): the older one
 * what began before a switch time a moment ahead, ours what began after.
 * Both decide by the same time, read from the request or from the map
 * entry both share, so exactly one of them counts each I/O. Meanwhile the
 * older one's counters are folded into our series as kept values; after a
 * grace, long enough for the I/O it still counts to complete, its programs
 * are detached, its last counts folded in, and its maps freed.
 *
 * Maps are read in the layout they were made with, as long as it is one
 * this iolat knows (IOLAT_LAYOUT_VERSION and the ones before it): fields
 * are only ever appended, so an older value is a prefix of ours.
 */
#ifndef IOLAT_HANDOVER_H
#define IOLAT_HANDOVER_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buckets.h"
#include "core/pin.h"
#include "core/snapshot.h"
#include "iolat.h"

/* How far ahead of now the switch time is set: both windows are written
 * before it comes, so no I/O sees one changed and not the other. */
#define HANDOVER_LEAD_MS 100
/* How long the older programs keep counting what began before the switch.
 * A request in flight longer than that when they go is not counted. */
#define HANDOVER_GRACE_S 10

struct handover;

/*
 * Opens what is pinned in dir, made by the collector ctl describes: its
 * links (which keep its programs attached while this holds them), its maps,
 * and the series it saved at series_path (seriesfile.h; missing or stale:
 * its maps are read from zero, which is exact while no 32-bit counter of
 * theirs wrapped). Call before the pins are removed. 0; -EPROTO with a
 * reason in why if its maps cannot be read or it cannot hand over (made
 * before windows existed); or another -errno.
 */
int handover_open(struct handover **out, const char *dir, const struct pin_control *ctl,
		  const char *series_path, int ncpus, char *why, size_t len);

/*
 * Where the older collector's slots go in ours (lat, size: our tables),
 * read from its programs (handover_bounds.h): its counts are moved there
 * as they are folded. 0; or -errno if its bounds cannot be read, and its
 * slots are taken for ours, as before collectors had bounds of their own.
 */
int handover_map_slots(struct handover *h, const struct bucket_table *lat,
		       const struct bucket_table *size);

/* Before load: our map m takes the older collector's map of the same name
 * if both are laid out alike, so that both collectors read one entry per
 * request in flight. Not alike: m stays ours (0). 0 or -errno. */
int handover_share(struct handover *h, struct bpf_map *m);

/* Whether the older collector had a program attached by the pin link_name
 * (so ours is attached too before the switch). */
bool handover_had_link(const struct handover *h, const char *link_name);

/*
 * With our programs attached and counting nothing (ours->from_ns at
 * UINT64_MAX): sets the switch time HANDOVER_LEAD_MS ahead in both windows,
 * ours through `ours` (our window map's memory); the older programs go
 * grace_s after it (HANDOVER_GRACE_S; tests that hand over more than once
 * give less). Returns 0, or -ETIME if the
 * switch time had passed when both were written (the older collector may
 * have counted some I/O ours counted too), or another -errno.
 */
int handover_switch(struct handover *h, struct iolat_window *ours, unsigned int grace_s);

/* Adds what the older collector counted since the last call (on the first,
 * everything it counted since its maps were made) to into's kept series.
 * 0 or -errno. */
int handover_fold(struct handover *h, struct snapshot_store *into);

/* What handover_fold would add to into now, without changing h (a scrape's
 * peek, collector_peek): it folds a copy of h's series. 0 or -errno. */
int handover_peek(struct handover *h, struct snapshot_store *into);

/* Its collector-wide counters (enum iolat_stat): what it saved and what
 * its map holds now, summed over CPUs, added to out. */
void handover_add_stats(struct handover *h, uint64_t out[IOLAT_STAT_COUNT]);

/* When the grace ends (monotonic ns). */
uint64_t handover_due_ns(const struct handover *h);

/*
 * Detaches the older collector's programs, folds in its last counts, adds
 * its counters to stats, and frees it; our window then counts all I/O
 * (ours->from_ns = 0). 0 or -errno (the fold's: the counts it could not
 * fold are lost, the rest is done).
 */
int handover_finish(struct handover *h, struct snapshot_store *into,
		    uint64_t stats[IOLAT_STAT_COUNT], struct iolat_window *ours);

/* Frees h without folding (an open that failed later on). Its programs
 * stop with the links: use it only before the switch. */
void handover_free(struct handover *h);

#endif /* IOLAT_HANDOVER_H */
