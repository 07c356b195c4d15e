// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* parse.c - numbers and durations from flags and config files (parse.h). */
#include "util/parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+')
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

	if (!s || !*s)
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
	char *end;
	double d = strtod(s, &end);
	double scale = !strcmp(end, "") || !strcmp(end, "s") ? 1
		       : !strcmp(end, "m")		   ? 60
		       : !strcmp(end, "h")		   ? 3600
							   : 0;

	if (end == s || !scale || !isfinite(d) || d < 0 || d * scale > 30 * 86400)
		return -EINVAL;
	*out = (unsigned int)llround(d * scale);
	return 0;
}
