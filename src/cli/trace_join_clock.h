/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * trace_join_clock.h - the clock every matched pair of a join allows
 * (trace_join.c): guest and host CLOCK_MONOTONIC differ by an offset and
 * drift apart at a constant rate, host = guest + theta0 + k * t (t: guest
 * time since the join's origin). A matched pair puts theta(t) in [lo, hi]:
 * the host's call began after the guest issued the request and ended
 * before the guest saw it complete. All pairs together allow a set of
 * (theta0, k), a convex polygon; the fit is the drift under which the
 * offsets allowed are widest, the middle of those, and the bound the
 * farthest any allowed (theta0, k) is from it over the trace's time.
 */
#ifndef IOLAT_TRACE_JOIN_CLOCK_H
#define IOLAT_TRACE_JOIN_CLOCK_H

#include <stddef.h>

struct clock_pair {
	double t;      /* guest ns since the origin */
	double lo, hi; /* host - guest allowed, ns (less a common base) */
};

struct clock_fit {
	double theta0, drift; /* theta0 less the pairs' base */
	double bound;	      /* ns; < 0: the pairs allow no clock */
};

/* Fits n pairs (n >= 1), searching drifts within +-1000 ppm of guess. */
void join_clock_fit(const struct clock_pair *p, size_t n, double guess, struct clock_fit *out);

#endif
