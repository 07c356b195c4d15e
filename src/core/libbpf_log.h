/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libbpf_log.h - libbpf's messages, through its one print callback: every
 * one is noted for the verifier-log reason (util/verifier_log.h), so a
 * refused program is explained in one line, or, while a load captures
 * them, kept for that load's own message; they are printed to stderr only
 * when a command's -v asked.
 */
#ifndef IOLAT_LIBBPF_LOG_H
#define IOLAT_LIBBPF_LOG_H

#include <stdbool.h>

/* Makes this module libbpf's print callback; once, before any BPF call. */
void libbpf_log_install(void);

/* Whether libbpf's messages are also printed (-v). */
void libbpf_log_verbose(bool on);

/* Verifier log lines a capture keeps. */
#define LIBBPF_CAPTURE_LINES 10

/* What libbpf said during one load (a user's program). */
struct libbpf_capture {
	char prog[128];	 /* the program the last "prog 'NAME': ..." named */
	char tail[1024]; /* the last lines of its verifier log, " | "-joined */
	char last[512];	 /* the last warning, for failures without a log */
};

/*
 * From now until libbpf_log_capture_end, libbpf's warnings fill cap
 * (emptied here) instead of the verifier-log reason; -v still prints them.
 * Installs the callback if need be. One capture at a time: libbpf's
 * callback takes no context, so cap is process-wide meanwhile.
 */
void libbpf_log_capture_begin(struct libbpf_capture *cap);
void libbpf_log_capture_end(void);

#endif
