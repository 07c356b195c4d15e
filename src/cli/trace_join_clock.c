// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* trace_join_clock.c - the clock a join's pairs allow (trace_join_clock.h). */
#include "cli/trace_join_clock.h"

#include <math.h>

/* Clocks of one machine's guest and host drift apart by far less than
 * this (TCG's calibration error and NTP's slewing are tens of ppm). */
#define DRIFT_SPAN 1e-3
/* Steps of the searches: each halves (bisection) or thirds the interval;
 * 100 take 2 ms of drift to far below 1e-15. */
#define SEARCH_STEPS 100
/* Drifts the bound is taken at, across those the pairs allow. */
#define BOUND_SAMPLES 512

/* The offsets (theta0) the pairs allow at drift k: [*a, *b], empty if
 * *a > *b. */
static void allowed(const struct clock_pair *p, size_t n, double k, double *a, double *b)
{
	*a = -INFINITY;
	*b = INFINITY;
	for (size_t i = 0; i < n; i++) {
		double lo = p[i].lo - k * p[i].t, hi = p[i].hi - k * p[i].t;

		if (lo > *a)
			*a = lo;
		if (hi < *b)
			*b = hi;
	}
}

static double width(const struct clock_pair *p, size_t n, double k)
{
	double a, b;

	allowed(p, n, k, &a, &b);
	return b - a;
}

/* The drift where the allowed offsets are widest: the width is a minimum
 * of lines less a maximum of lines, concave, so a ternary search finds it. */
static double widest(const struct clock_pair *p, size_t n, double from, double to)
{
	for (int i = 0; i < SEARCH_STEPS; i++) {
		double m1 = from + (to - from) / 3, m2 = to - (to - from) / 3;

		if (width(p, n, m1) < width(p, n, m2))
			from = m1;
		else
			to = m2;
	}
	return (from + to) / 2;
}

/* The last drift from `inside` (allowed) towards `outside` the pairs allow. */
static double edge(const struct clock_pair *p, size_t n, double inside, double outside)
{
	for (int i = 0; i < SEARCH_STEPS; i++) {
		double mid = (inside + outside) / 2;

		if (width(p, n, mid) >= 0)
			inside = mid;
		else
			outside = mid;
	}
	return inside;
}

void join_clock_fit(const struct clock_pair *p, size_t n, double guess, struct clock_fit *out)
{
	double k = widest(p, n, guess - DRIFT_SPAN, guess + DRIFT_SPAN), a, b, kmin, kmax;
	double tmin = INFINITY, tmax = -INFINITY;

	allowed(p, n, k, &a, &b);
	out->drift = k;
	out->theta0 = a + (b - a) / 2;
	if (b < a) {
		out->bound = -1;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		tmin = fmin(tmin, p[i].t);
		tmax = fmax(tmax, p[i].t);
	}
	kmin = edge(p, n, k, guess - DRIFT_SPAN);
	kmax = edge(p, n, k, guess + DRIFT_SPAN);
	/* Over every allowed (theta0, drift), how far its clock is from the
	 * fit's at the trace's first and last pair: the deviation is linear
	 * in t, so those two times bound it over the whole trace. */
	out->bound = (b - a) / 2;
	for (int s = 0; s <= BOUND_SAMPLES; s++) {
		double ks = kmin + (kmax - kmin) * s / BOUND_SAMPLES, as, bs;

		allowed(p, n, ks, &as, &bs);
		if (bs < as)
			continue;
		for (int e = 0; e < 2; e++) {
			double t = e ? tmax : tmin, fit = out->theta0 + k * t;

			out->bound = fmax(out->bound, fabs(as + ks * t - fit));
			out->bound = fmax(out->bound, fabs(bs + ks * t - fit));
		}
	}
}
