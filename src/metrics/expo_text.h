/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * expo_text.h - text exposition formats: Prometheus 0.0.4 and OpenMetrics
 * 1.0. Both render a metric_set into a buffer; neither touches the kernel.
 */
#ifndef IOLAT_EXPO_TEXT_H
#define IOLAT_EXPO_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/metrics.h"
#include "util/buf.h"

#define EXPO_TEXT_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define EXPO_OPENMETRICS_CONTENT_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Appends every non-empty family. Returns 0 or -ENOMEM. */
int expo_text(const struct metric_set *set, bool openmetrics, struct buf *out);

/* Shortest decimal form of v that parses back to v; "+Inf", "NaN". */
void expo_format_double(char *out, size_t len, double v);

/* The same for the double num / den, den a power of ten, in a fraction of
 * the time (no printf, no strtod): how many chars it wrote, or 0 where it
 * does not apply (num of 10^15 or more, a whole quotient, den no power of
 * ten, len under 32). */
size_t expo_format_ratio(char *out, size_t len, uint64_t num, uint64_t den);

/*
 * A table bound num / den (den 1 or a power of ten up to 10^18) as a plain
 * decimal, never with an exponent, and without trailing zeros: the shortest
 * exact spelling, as Prometheus' Go client writes `le` ("0.00003",
 * "0.0001", "2.5", "10"). 30000 ns / 1e9 is "0.00003", not "3e-05". How
 * many chars it wrote (the text is cut to len - 1).
 */
size_t expo_format_fixed(char *out, size_t len, uint64_t num, uint64_t den);

#endif
