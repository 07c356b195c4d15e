/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * log.h - leveled logging for the daemon, one line per message on stderr,
 * as Prometheus exporters write them: logfmt (ts=... level=info msg="...")
 * by default, or one JSON object per line for collectors that parse JSON
 * (--log.format=json). Under systemd (JOURNAL_STREAM set) each line also
 * carries a <N> syslog priority prefix so journald files it at the right
 * level; journald strips the prefix, so the stored line is still logfmt or
 * JSON.
 */
#ifndef IOLAT_LOG_H
#define IOLAT_LOG_H

enum log_level { LOG_DEBUG_L = 0, LOG_INFO_L, LOG_WARN_L, LOG_ERROR_L };
enum log_format { LOG_LOGFMT = 0, LOG_JSON };

void log_set_level(enum log_level l);
void log_set_format(enum log_format f);

/* "debug" | "info" | "warn" | "error"; -1 if none. */
int log_level_from_name(const char *name);
/* "logfmt" | "json"; -1 if none. */
int log_format_from_name(const char *name);

void log_msg(enum log_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_DEBUG_L, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO_L, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN_L, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR_L, __VA_ARGS__)

#endif
