/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * errors.h - the one place iolat's commands print errors: one line saying
 * what is wrong, and a hint saying what to do.
 */
#ifndef IOLAT_ERRORS_H
#define IOLAT_ERRORS_H

/*
 * Prints "iolat: <message>" and, if hint is not NULL, " (<hint>)". Once a
 * daemon has chosen its log format (errors_to_log), it logs the same as one
 * line at level error instead: msg, then err=<message> (with file, line and
 * col split off a "FILE:LINE:COL: " start, log.h's LOG_ERR) and hint.
 */
void errorf(const char *hint, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* From here on errorf logs under this msg (a constant string); NULL: it
 * prints again. */
void errors_to_log(const char *msg);

#endif
