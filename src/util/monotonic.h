/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* monotonic.h - CLOCK_MONOTONIC in nanoseconds, for rate limits. */
#ifndef IOLAT_MONOTONIC_H
#define IOLAT_MONOTONIC_H

#include <stdint.h>
#include <time.h>

static inline uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
