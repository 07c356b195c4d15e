/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * uconfig_perf.h - the `perf_events:` section of a user-program config:
 * which perf events (a CPU clock, page faults, hardware counters) drive
 * which SEC("perf_event") program, sampled on every CPU.
 *
 *   perf_events:
 *     - type: software        # software | hardware
 *       name: cpu-clock       # or the event's number (perf_event_attr.config)
 *       sample_frequency: 99  # or sample_period: N (events per sample)
 *       program: on_cpu       # the program's function name
 */
#ifndef IOLAT_UCONFIG_PERF_H
#define IOLAT_UCONFIG_PERF_H

#include <yaml.h>

#include "uprog/uconfig.h"
#include "util/yamldoc.h"

/* Parses the list n into c->perf. 0, or -1 with the error in x. */
int uconfig_parse_perf_events(struct yamldoc *x, yaml_node_t *n, struct uconfig *c);

#endif
