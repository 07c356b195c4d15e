/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* verifier_log.h - why the kernel refused a BPF program, in one line.
 *
 * libbpf hands every message to one print callback, the verifier's log of
 * a failed load among them. verifier_log_note() is given each; after a
 * failed load, verifier_log_reason() says the verifier's last word and,
 * where it is a known one, the kernel feature behind it.
 */
#ifndef IOLAT_VERIFIER_LOG_H
#define IOLAT_VERIFIER_LOG_H

#include <stdarg.h>
#include <stddef.h>

/* One libbpf message (format and arguments, as libbpf's print callback
 * gets them). */
void verifier_log_note(const char *fmt, va_list ap);

/* The verifier's log in a libbpf message: its first line, with *end set
 * where it ends (its end marker, or the message's end); NULL if msg holds
 * no log. */
const char *verifier_log_find(const char *msg, const char **end);

/* The last `lines` non-empty lines of the log [log, end), " | "-joined with
 * runs of blanks squeezed to one (the verifier pads its state comments
 * into columns), into out (truncated to len). */
void verifier_log_tail(const char *log, const char *end, size_t lines, char *out, size_t len);

/* "; verifier: <reason> (<what it means>)" for the last program the kernel
 * refused since the previous call, or "" if none; into out. */
const char *verifier_log_reason(char *out, size_t len);

/* The known reasons' meanings, for a reason line; NULL if not known.
 * (Exposed for the unit tests.) */
const char *verifier_log_meaning(const char *reason);

#endif
