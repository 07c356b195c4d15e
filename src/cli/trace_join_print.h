/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * trace_join_print.h - `iolat trace --join`'s output: one line (or JSON
 * object) per matched chain, then the summary: the clock, how many guest
 * requests matched and why the rest did not, and each span's p50, p90,
 * p99, max and share of the guest's total time, overall and in the tail.
 */
#ifndef IOLAT_TRACE_JOIN_PRINT_H
#define IOLAT_TRACE_JOIN_PRINT_H

#include <stdbool.h>

#include "cli/trace_join.h"

/* To stdout; summary_only: no chain lines (--summary). 0, or -1 out of
 * memory. */
int trace_join_print(const struct join_result *r, bool json, bool summary_only);

#endif
