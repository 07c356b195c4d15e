/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * exporter_disks.h - the exporter's disks that come and go: disklife.h's
 * decisions carried out on the collector (collector_retire_disk,
 * collector_drop_disk) and the name cache, in exporter_maintain; and their
 * self-metrics (iolat_disks_*), read-only, in exporter_render. Not
 * thread-safe: the caller serialises the two.
 */
#ifndef IOLAT_EXPORTER_DISKS_H
#define IOLAT_EXPORTER_DISKS_H

#include <time.h>

#include "core/collector.h"
#include "core/snapshot.h"
#include "metrics/metrics.h"
#include "serve/disklife.h"
#include "uprog/decoders.h"

struct exporter_disks;

/* env: the decoders naming the disks (a name is forgotten when another
 * disk takes its number); may be NULL. NULL when out of memory. */
struct exporter_disks *exporter_disks_new(struct collector *c, struct decoder_env *env);
void exporter_disks_free(struct exporter_disks *d);

/* Maintenance, before its read of the collector: drops gone disks whose
 * number another disk has taken. 0 or -errno. */
int exporter_disks_check(struct exporter_disks *d);

/* What disklife_stats says of its disks (for the maintenance log). */
void exporter_disks_stats(const struct exporter_disks *d, struct disklife_stats *out);

/*
 * Maintenance, on its read (snap): retires and expires gone disks
 * (expire_s: disks.expire, 0 for the default, 5m), and finds the VMs that
 * hold disks open again when the last look is 10 s old. 0 or -errno.
 */
int exporter_disks_prune(struct exporter_disks *d, const struct snapshot *snap, time_t now,
			 unsigned int expire_s);

/*
 * A render: the iolat_disks_* families as the last maintenance pass left
 * them (a disk shows as gone from the pass that found it gone, and no
 * longer from the one that saw it busy again), and the disks' info
 * families. Changes nothing. 0 or -errno.
 */
int exporter_disks_metrics(struct exporter_disks *d, struct metric_set *set);

#endif /* IOLAT_EXPORTER_DISKS_H */
