/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * monotonic.h - CLOCK_MONOTONIC, the one clock iolat measures intervals,
 * timeouts and rate limits with (it never jumps with the wall clock).
 * Wall-clock times, for timestamps people read, use time() or
 * CLOCK_REALTIME where they are printed.
 */
#ifndef IOLAT_MONOTONIC_H
#define IOLAT_MONOTONIC_H

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_MSEC 1000000ULL

static inline uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* The same clock in seconds, for durations reported as fractions. */
static inline double monotonic_s(void)
{
	return (double)monotonic_ns() / (double)NSEC_PER_SEC;
}

/* A time of this clock (ns) as a timespec, for waits that take an absolute
 * deadline (pthread_cond_timedwait on a condition set to CLOCK_MONOTONIC). */
static inline struct timespec monotonic_timespec(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};

	return ts;
}

#endif
