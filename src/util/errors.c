// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* errors.c - error reporting for the command layer (errors.h). */
#include "util/errors.h"

#include <stdarg.h>
#include <stdio.h>

#include "util/log.h"

/* Process-wide, as the log's settings are: set once by the daemon, as soon
 * as its flags say which format its log has. */
static const char *log_msg;

void errors_to_log(const char *msg)
{
	log_msg = msg;
}

void errorf(const char *hint, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	if (log_msg) {
		va_start(ap, fmt);
		vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
		log_error(log_msg, LOG_ERR(what), LOG_STR("hint", hint));
		return;
	}
	fputs("iolat: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (hint)
		fprintf(stderr, " (%s)", hint);
	fputc('\n', stderr);
}
