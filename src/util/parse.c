// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* parse.c - numbers and durations from flags and config files (parse.h). */
#include "util/parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* strtoull and strtod skip leading blanks and take a sign: a number here
 * starts with a digit (or a point), so " 1" and "+1" are refused too. */
static int starts_number(const char *s, int point_ok)
{
	return s && (isdigit((unsigned char)*s) || (point_ok && *s == '.'));
}

int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!starts_number(s, 0))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!starts_number(s, 1))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v <= 0 || v > 86400 * 365)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A number and a unit among units (seconds per unit; "" for none) -> that
 * many seconds, at most 30 days. 0 or -EINVAL. */
static int duration_s(const char *s, const char *const *units, const double *scales, double *out)
{
	char *unit;
	double d;
	size_t i;

	if (!starts_number(s, 1))
		return -EINVAL;
	d = strtod(s, &unit);
	for (i = 0; units[i] && strcmp(unit, units[i]); i++)
		;
	if (unit == s || !units[i] || !isfinite(d) || d * scales[i] > 30 * 86400)
		return -EINVAL;
	*out = d * scales[i];
	return 0;
}

int parse_duration(const char *s, unsigned int *out)
{
	static const char *const units[] = { "", "s", "m", "h", NULL };
	static const double scales[] = { 1, 1, 60, 3600 };
	double d;

	if (duration_s(s, units, scales, &d))
		return -EINVAL;
	*out = (unsigned int)llround(d);
	return 0;
}

int parse_duration_ms(const char *s, uint64_t *out)
{
	static const char *const units[] = { "ms", "s", "m", "h", NULL };
	static const double scales[] = { 1e-3, 1, 60, 3600 };
	double d;

	if (duration_s(s, units, scales, &d))
		return -EINVAL;
	*out = (uint64_t)llround(d * 1e3);
	return 0;
}
