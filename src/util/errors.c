// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* errors.c - error reporting for the command layer (errors.h). */
#include "util/errors.h"

#include <stdarg.h>
#include <stdio.h>

void errorf(const char *hint, const char *fmt, ...)
{
	va_list ap;

	fputs("iolat: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (hint)
		fprintf(stderr, " (%s)", hint);
	fputc('\n', stderr);
}
