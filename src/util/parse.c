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

int parse_duration(const char *s, unsigned int *out)
{
	char *unit;
	double d, scale;

	if (!starts_number(s, 1))
		return -EINVAL;
	d = strtod(s, &unit);
	scale = !strcmp(unit, "") || !strcmp(unit, "s") ? 1
		: !strcmp(unit, "m")			? 60
		: !strcmp(unit, "h")			? 3600
							: 0;
	if (unit == s || !scale || !isfinite(d) || d * scale > 30 * 86400)
		return -EINVAL;
	*out = (unsigned int)llround(d * scale);
	return 0;
}
