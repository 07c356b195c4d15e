// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* log.c - leveled logfmt or JSON logging with fields, journald-aware (log.h). */
#include "util/log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const level_names[] = { "debug", "info", "warn", "error" };
static const char *const format_names[] = { "logfmt", "json" };

/* Process-wide: the daemon has one log, set from its flags and config on
 * start and on each reload, and every module logs without a handle. Read by
 * the HTTP threads too, hence the atomic accesses. */
static enum log_level threshold = LOG_INFO_L;
static enum log_format format = LOG_LOGFMT;

void log_set_level(enum log_level l)
{
	__atomic_store_n(&threshold, l, __ATOMIC_RELAXED);
}

void log_set_format(enum log_format f)
{
	__atomic_store_n(&format, f, __ATOMIC_RELAXED);
}

enum log_format log_get_format(void)
{
	return __atomic_load_n(&format, __ATOMIC_RELAXED);
}

bool log_enabled(enum log_level l)
{
	return l >= __atomic_load_n(&threshold, __ATOMIC_RELAXED);
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

const char *log_level_name(enum log_level l)
{
	return (unsigned)l < 4 ? level_names[l] : "unknown";
}

int log_format_from_name(const char *name)
{
	return index_of(format_names, 2, name);
}

const char *log_format_name(enum log_format f)
{
	return (unsigned)f < 2 ? format_names[f] : "unknown";
}

/*
 * A line is built in memory and written with one fwrite: one write(2) per
 * line, so lines from the HTTP threads and the main loop never interleave,
 * and a reader of a pipe never sees half of one. A line longer than
 * LOG_LINE_MAX has its last value cut short, still quoted and closed.
 */
#define LOG_LINE_MAX 4096
/* Room kept for what closes a line: a quote, "}", a newline. */
#define LINE_TAIL 8

struct line {
	char b[LOG_LINE_MAX];
	size_t n;
	bool full;
	enum log_format fmt;
};

static void put(struct line *ln, const char *s, size_t len)
{
	if (ln->full || ln->n + len + LINE_TAIL > sizeof(ln->b)) {
		ln->full = true;
		return;
	}
	memcpy(ln->b + ln->n, s, len);
	ln->n += len;
}

static void puts_(struct line *ln, const char *s)
{
	put(ln, s, strlen(s));
}

/* The tail always fits: put() keeps LINE_TAIL free. */
static void put_tail(struct line *ln, const char *s)
{
	size_t len = strlen(s);

	memcpy(ln->b + ln->n, s, len);
	ln->n += len;
}

/*
 * How many bytes the well-formed UTF-8 sequence at p takes (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), 0 if there is
 * none. JSON must be UTF-8, and log collectors decode it so.
 */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/*
 * The inside of a double-quoted value, the same in both formats (JSON's
 * escapes, which logfmt parsers take too): \" \\ \n \r \t, \u00XX for the
 * other control characters, and U+FFFD for a byte that is not UTF-8.
 */
static void put_escaped(struct line *ln, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	char esc[8];

	while (p < end && !ln->full) {
		size_t n = utf8_len(p);

		if (n > (size_t)(end - p))
			n = 0;
		if (*p == '"' || *p == '\\') {
			esc[0] = '\\', esc[1] = (char)*p;
			put(ln, esc, 2);
		} else if (*p == '\n') {
			put(ln, "\\n", 2);
		} else if (*p == '\r') {
			put(ln, "\\r", 2);
		} else if (*p == '\t') {
			put(ln, "\\t", 2);
		} else if (*p < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", *p);
			put(ln, esc, 6);
		} else if (!n) {
			put(ln, "\xef\xbf\xbd", 3);
			n = 1;
		} else {
			put(ln, (const char *)p, n);
		}
		p += n ? n : 1;
	}
}

/* Whether logfmt must quote s: empty, or holding a space, =, ", \, a
 * control character or a byte that is not UTF-8. */
static bool logfmt_needs_quotes(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	if (!len)
		return true;
	while (p < end) {
		size_t n = utf8_len(p);

		if (!n || n > (size_t)(end - p) || *p <= ' ' || *p == '=' || *p == '"' ||
		    *p == '\\' || *p == 0x7f)
			return true;
		p += n;
	}
	return false;
}

/* key= or ,"key": followed by the start of its value, all or nothing. */
static bool put_key(struct line *ln, const char *key, const char *value_start)
{
	char head[160];
	int n = snprintf(head, sizeof(head), ln->fmt == LOG_JSON ? ",\"%s\":%s" : " %s=%s", key,
			 value_start);

	if (n < 0 || (size_t)n >= sizeof(head)) {
		ln->full = true;
		return false;
	}
	put(ln, head, (size_t)n);
	return !ln->full;
}

/* A string value; a cut one is closed, and the line ends after it. */
static void put_string(struct line *ln, const char *s, size_t len)
{
	put_escaped(ln, s, len);
	put(ln, "\"", 1);
	if (ln->full)
		put_tail(ln, "\"");
}

static void put_string_field(struct line *ln, const char *key, const char *s, size_t len)
{
	size_t at = ln->n;

	if (ln->fmt == LOG_LOGFMT && !logfmt_needs_quotes(s, len)) {
		/* Bare, if all of it fits; quoted (and cut) if not. */
		if (put_key(ln, key, ""))
			put(ln, s, len);
		if (!ln->full)
			return;
		ln->n = at;
		ln->full = false;
	}
	if (put_key(ln, key, "\""))
		put_string(ln, s, len);
}

/* A number or literal, bare in both formats. */
static void put_bare_field(struct line *ln, const char *key, const char *s)
{
	put_key(ln, key, s);
}

/* "FILE:LINE:COL: rest": 0 with the parts, or -1. FILE may hold colons
 * itself, not ": "; the first ":digits:digits: " ends it. */
static int split_position(const char *s, size_t *file_len, unsigned long *line, unsigned long *col,
			  const char **rest)
{
	for (const char *p = strchr(s, ':'); p; p = strchr(p + 1, ':')) {
		char *e1, *e2;

		if (p == s || p[1] < '0' || p[1] > '9')
			continue;
		*line = strtoul(p + 1, &e1, 10);
		if (*e1 != ':' || e1[1] < '0' || e1[1] > '9')
			continue;
		*col = strtoul(e1 + 1, &e2, 10);
		if (e2[0] != ':' || e2[1] != ' ')
			continue;
		for (const char *q = s; q + 1 < p; q++)
			if (q[0] == ':' && q[1] == ' ')
				return -1; /* words before a position: not a FILE */
		*file_len = (size_t)(p - s);
		*rest = e2 + 2;
		return 0;
	}
	return -1;
}

static void put_field(struct line *ln, const struct log_field *f)
{
	char num[48];

	switch (f->type) {
	case LOG_T_END:
		return;
	case LOG_T_STR:
		if (f->s)
			put_string_field(ln, f->key, f->s, strlen(f->s));
		return;
	case LOG_T_INT:
		snprintf(num, sizeof(num), "%lld", f->i);
		break;
	case LOG_T_UINT:
		snprintf(num, sizeof(num), "%llu", f->u);
		break;
	case LOG_T_BOOL:
		snprintf(num, sizeof(num), "%s", f->u ? "true" : "false");
		break;
	case LOG_T_DBL:
		if (!isfinite(f->d)) { /* JSON has no NaN or Inf: a string */
			const char *v = isnan(f->d) ? "NaN" : f->d > 0 ? "+Inf" : "-Inf";

			put_string_field(ln, f->key, v, strlen(v));
			return;
		}
		snprintf(num, sizeof(num), "%.6g", f->d);
		break;
	case LOG_T_ERR: {
		unsigned long line, col;
		const char *rest = f->s;
		size_t file_len;

		if (!f->s)
			return;
		if (!split_position(f->s, &file_len, &line, &col, &rest)) {
			put_string_field(ln, "file", f->s, file_len);
			snprintf(num, sizeof(num), "%lu", line);
			put_bare_field(ln, "line", num);
			snprintf(num, sizeof(num), "%lu", col);
			put_bare_field(ln, "col", num);
		}
		put_string_field(ln, f->key, rest, strlen(rest));
		return;
	}
	}
	put_bare_field(ln, f->key, num);
}

void log_emit(enum log_level l, const char *msg, const struct log_field *fields)
{
	static const int syslog_prio[] = { 7, 6, 4, 3 };
	struct line ln = { .fmt = log_get_format() };
	char ts[64], stamp[48];
	struct timespec now;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts, sizeof(ts), "%s.%03ldZ", stamp, now.tv_nsec / 1000000);
	if (getenv("JOURNAL_STREAM")) {
		snprintf(stamp, sizeof(stamp), "<%d>", syslog_prio[l]);
		puts_(&ln, stamp);
	}
	if (ln.fmt == LOG_JSON) {
		puts_(&ln, "{\"ts\":\"");
		puts_(&ln, ts);
		puts_(&ln, "\",\"level\":\"");
		puts_(&ln, level_names[l]);
		puts_(&ln, "\",\"msg\":\"");
	} else {
		puts_(&ln, "ts=");
		puts_(&ln, ts);
		puts_(&ln, " level=");
		puts_(&ln, level_names[l]);
		puts_(&ln, " msg=\"");
	}
	put_string(&ln, msg, strlen(msg));
	for (const struct log_field *f = fields; f && f->type != LOG_T_END && !ln.full; f++)
		put_field(&ln, f);
	put_tail(&ln, ln.fmt == LOG_JSON ? "}\n" : "\n");
	fwrite(ln.b, 1, ln.n, stderr);
}
