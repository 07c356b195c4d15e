/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * log.h - leveled logging for the daemon, one line per message on stderr,
 * as Prometheus exporters write them: logfmt by default, or one JSON object
 * per line for collectors that parse JSON (--log.format=json). A line is
 * ts, level and msg, in that order, then the message's fields:
 *
 *   ts=2026-11-27T06:03:55.123Z level=info msg="listening on" address=127.0.0.1:19617 tls=false
 *   {"ts":"2026-11-27T06:03:55.123Z","level":"info","msg":"listening on",
 *    "address":"127.0.0.1:19617","tls":false}
 *
 * msg is a short constant sentence; every fact that varies is a field, so
 * a log collector can select on it:
 *
 *   log_info("listening on", LOG_STR("address", where), LOG_BOOL("tls", tls));
 *
 * Under systemd (JOURNAL_STREAM set) each line also carries a <N> syslog
 * priority prefix so journald files it at the right level; journald strips
 * the prefix, so the stored line is still logfmt or JSON.
 */
#ifndef IOLAT_LOG_H
#define IOLAT_LOG_H

#include <stdbool.h>

enum log_level { LOG_DEBUG_L = 0, LOG_INFO_L, LOG_WARN_L, LOG_ERROR_L };
enum log_format { LOG_LOGFMT = 0, LOG_JSON };

void log_set_level(enum log_level l);
void log_set_format(enum log_format f);
enum log_format log_get_format(void);

/* "debug" | "info" | "warn" | "error"; -1 if none. */
int log_level_from_name(const char *name);
/* And back: l's name, as --log.level takes it. */
const char *log_level_name(enum log_level l);
/* "logfmt" | "json"; -1 if none. */
int log_format_from_name(const char *name);
/* And back: f's name, as --log.format takes it. */
const char *log_format_name(enum log_format f);

/* Whether a line of level l would be written. */
bool log_enabled(enum log_level l);

enum log_type {
	LOG_T_END = 0,
	LOG_T_STR,  /* s; NULL leaves the field out */
	LOG_T_INT,  /* i */
	LOG_T_UINT, /* u */
	LOG_T_DBL,  /* d */
	LOG_T_BOOL, /* u: true or false */
	LOG_T_ERR,  /* s, an error message: see LOG_ERR */
};

struct log_field {
	const char *key; /* [a-z0-9_.], written as is */
	enum log_type type;
	union {
		const char *s;
		long long i;
		unsigned long long u;
		double d;
	};
};

/* Fields, for the lists log_debug() ... log_error() take. */
#define LOG_STR(k, v)                                                                              \
	{                                                                                          \
		.key = (k), .type = LOG_T_STR, .s = (v)                                            \
	}
#define LOG_INT(k, v)                                                                              \
	{                                                                                          \
		.key = (k), .type = LOG_T_INT, .i = (long long)(v)                                 \
	}
#define LOG_UINT(k, v)                                                                             \
	{                                                                                          \
		.key = (k), .type = LOG_T_UINT, .u = (unsigned long long)(v)                       \
	}
#define LOG_DBL(k, v)                                                                              \
	{                                                                                          \
		.key = (k), .type = LOG_T_DBL, .d = (double)(v)                                    \
	}
#define LOG_BOOL(k, v)                                                                             \
	{                                                                                          \
		.key = (k), .type = LOG_T_BOOL, .u = !!(v)                                         \
	}
/*
 * err=<text>; a text that begins "FILE:LINE:COL: " (what the YAML reader,
 * yamldoc.h, puts before each message, as compilers do) becomes the fields
 * file, line and col, and err the rest.
 */
#define LOG_ERR(v)                                                                                 \
	{                                                                                          \
		.key = "err", .type = LOG_T_ERR, .s = (v)                                          \
	}
#define LOG_END                                                                                    \
	{                                                                                          \
		.key = 0, .type = LOG_T_END                                                        \
	}

/*
 * Writes one line of level l: msg, then fields up to the LOG_END one. It
 * does not check the level; the macros below do, before they evaluate any
 * argument, so a debug line costs one load and compare at level info.
 */
void log_emit(enum log_level l, const char *msg, const struct log_field *fields);

#define log_at_(l, msg, ...)                                                                       \
	do {                                                                                       \
		if (log_enabled(l))                                                                \
			log_emit(l, msg, (const struct log_field[]){ __VA_ARGS__ });               \
	} while (0)

/* log_info("msg", LOG_STR("key", value), ...): zero or more fields. */
#define log_debug(msg, ...) log_at_(LOG_DEBUG_L, msg, ##__VA_ARGS__, LOG_END)
#define log_info(msg, ...) log_at_(LOG_INFO_L, msg, ##__VA_ARGS__, LOG_END)
#define log_warn(msg, ...) log_at_(LOG_WARN_L, msg, ##__VA_ARGS__, LOG_END)
#define log_error(msg, ...) log_at_(LOG_ERROR_L, msg, ##__VA_ARGS__, LOG_END)

#endif
