// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* log.c - leveled logfmt or JSON logging, journald-aware (log.h). */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const level_names[] = { "debug", "info", "warn", "error" };
static const char *const format_names[] = { "logfmt", "json" };

/* Process-wide: the daemon has one log, set from its flags and config on
 * start and on each reload, and every module logs without a handle. */
static enum log_level threshold = LOG_INFO_L;
static enum log_format format = LOG_LOGFMT;

void log_set_level(enum log_level l)
{
	threshold = l;
}

void log_set_format(enum log_format f)
{
	format = f;
}

static int index_of(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

int log_level_from_name(const char *name)
{
	return index_of(level_names, 4, name);
}

int log_format_from_name(const char *name)
{
	return index_of(format_names, 2, name);
}

/*
 * msg as the inside of a double-quoted string: logfmt escapes " and \ and
 * folds newlines to spaces; JSON (RFC 8259) must also escape every other
 * control character.
 */
static void put_quoted(const char *msg, FILE *f)
{
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n' || *p == '\t')
			fputc(' ', f);
		else if (*p < 0x20)
			fprintf(f, format == LOG_JSON ? "\\u%04x" : "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

void log_msg(enum log_level l, const char *fmt, ...)
{
	static const int syslog_prio[] = { 7, 6, 4, 3 };
	char msg[1024], ts[48];
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
	/* One fprintf-run per line under the stream lock: lines from the HTTP
	 * threads and the main loop never interleave. */
	flockfile(stderr);
	if (getenv("JOURNAL_STREAM"))
		fprintf(stderr, "<%d>", syslog_prio[l]);
	if (format == LOG_JSON)
		fprintf(stderr, "{\"ts\":\"%s.%03ldZ\",\"level\":\"%s\",\"msg\":\"", ts,
			now.tv_nsec / 1000000, level_names[l]);
	else
		fprintf(stderr, "ts=%s.%03ldZ level=%s msg=\"", ts, now.tv_nsec / 1000000,
			level_names[l]);
	put_quoted(msg, stderr);
	fputs(format == LOG_JSON ? "\"}\n" : "\"\n", stderr);
	funlockfile(stderr);
}
