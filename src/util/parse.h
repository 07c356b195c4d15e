/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * parse.h - the numbers and durations flags and config files take, parsed
 * one way everywhere: the whole string or nothing, range-checked.
 */
#ifndef IOLAT_PARSE_H
#define IOLAT_PARSE_H

#include <stdint.h>

/* A decimal integer in [min, max], no sign. 0 or -EINVAL. */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Seconds as a number > 0 and at most a year ("0.5", "10"). 0 or -EINVAL. */
int parse_seconds(const char *s, double *out);

/* "300", "90s", "5m", "1h" -> seconds (at most 30 days). 0 or -EINVAL. */
int parse_duration(const char *s, unsigned int *out);

/* "250ms", "2s", "5m", "1h" -> milliseconds (at most 30 days; a unit is
 * required). 0 or -EINVAL. */
int parse_duration_ms(const char *s, uint64_t *out);

#endif
