/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * log.h - leveled logging for the daemon. logfmt lines on stderr
 * (level=info msg="..."), as Prometheus exporters write them; under systemd
 * (JOURNAL_STREAM set) each line also carries a <N> syslog priority prefix
 * so journald files it at the right level.
 */
#ifndef IOLAT_LOG_H
#define IOLAT_LOG_H

#include "config.h"

void log_set_level(enum log_level l);
void log_msg(enum log_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_DEBUG_L, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO_L, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN_L, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR_L, __VA_ARGS__)

#endif
