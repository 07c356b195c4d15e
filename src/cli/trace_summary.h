/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * trace_summary.h - `iolat trace --summary`: a btt-like report of traced
 * I/O per device and per process: for each span between stages (Q2G, G2I,
 * I2D, G2D where there was no insert; Q2M and M2D for merged bios; D2C,
 * Q2C) its count, min, mean, percentiles and max, and the share of the
 * total time (Q2C) it took; and the page-cache wait (PCW, dirty -> queued)
 * of buffered writes, per writer process and cgroup. Spans are counted in iolat's one histogram
 * table (buckets.h), so the percentiles have the same error bound as everywhere else.
 */
#ifndef IOLAT_TRACE_SUMMARY_H
#define IOLAT_TRACE_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace.h"
#include <linux/types.h>

struct trace_summary;

struct trace_summary *trace_summary_new(void);
void trace_summary_free(struct trace_summary *s);

/* Adds one record (one without a completion is left out); disk is the
 * record's disk name. 0 or -ENOMEM. */
int trace_summary_add(struct trace_summary *s, const char *disk, const struct trace_record *r);

/* A link's page-cache wait: its data's dirty -> its bio's Q, in ns. */
static inline uint64_t trace_pc_wait_ns(const struct trace_pc_link *l)
{
	return l->queue_ns > l->dirty_ns ? l->queue_ns - l->dirty_ns : 0;
}

/* Adds one page-cache link (--syscalls): the page-cache wait of a write's
 * data, to its writer's process and cgroup. 0 or -ENOMEM. */
int trace_summary_add_pc(struct trace_summary *s, const struct trace_pc_link *l);

/* Prints the report, as text or as one JSON object. */
void trace_summary_print(const struct trace_summary *s, FILE *f, bool json);

#endif
