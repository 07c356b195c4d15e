/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fake_collector.h - an in-memory collector behind core/collector.h, for
 * unit tests of what reads the collector (the exporter's render and
 * maintenance): a "kernel map" of cumulative values that a test counts
 * completions into, and the user-space series, kept and moved as the real
 * collector keeps and moves them. It counts the calls that would write
 * the kernel map or a file, so a test can say a render made none.
 */
#ifndef IOLAT_FAKE_COLLECTOR_H
#define IOLAT_FAKE_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "core/collector.h"

/* keyed_by_cgroup: keys carry a cgroup (serve's workloads). NULL on ENOMEM. */
struct collector *fake_collector_new(bool keyed_by_cgroup);
void fake_collector_free(struct collector *c);

/* One completion of `bytes` taking lat_ns in both views, under key k, in
 * the "kernel map" (a key it lacks is added). 0 or -ENOMEM. */
int fake_collector_complete(struct collector *c, const struct iolat_key *k, uint64_t bytes,
			    uint64_t lat_ns);

/* Sets a collector-wide counter (enum iolat_stat). */
void fake_collector_set_stat(struct collector *c, enum iolat_stat s, uint64_t v);

/* What was called: folds (the pass's reads), and writes to the kernel map
 * (keys taken out or dropped); a render must add to neither. */
struct fake_collector_calls {
	unsigned int folds, peeks, map_writes;
};
void fake_collector_calls(const struct collector *c, struct fake_collector_calls *out);

/* Keys in the "kernel map" now. */
size_t fake_collector_kernel_keys(const struct collector *c);

#endif
