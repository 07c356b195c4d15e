// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* log.c - leveled logfmt logging, journald-aware (log.h). */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static enum log_level threshold = LOG_INFO_L;

void log_set_level(enum log_level l)
{
	threshold = l;
}

void log_msg(enum log_level l, const char *fmt, ...)
{
	static const char *const names[] = { "debug", "info", "warn", "error" };
	static const int syslog_prio[] = { 7, 6, 4, 3 };
	char msg[1024], ts[32];
	struct timespec now;
	struct tm tm;
	va_list ap;

	if (l < threshold)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	if (getenv("JOURNAL_STREAM"))
		fprintf(stderr, "<%d>", syslog_prio[l]);
	fprintf(stderr, "ts=%s.%03ldZ level=%s msg=\"", ts, now.tv_nsec / 1000000, names[l]);
	for (const char *p = msg; *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', stderr);
		fputc(*p == '\n' ? ' ' : *p, stderr);
	}
	fputs("\"\n", stderr);
}
