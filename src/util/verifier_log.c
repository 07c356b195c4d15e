// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* verifier_log.c - why the kernel refused a BPF program (verifier_log.h). */
#define _GNU_SOURCE
#include "util/verifier_log.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Process-wide: libbpf's print callback, which feeds this, takes no
 * context argument, so the last refusal's reason waits here until the
 * loader that caused it reads it; locked, as libbpf prints from whichever
 * thread loads.
 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char last[256]; /* the last refusal's reason, until read */

/* What a verifier message says about the kernel, by a piece of its text. */
static const struct {
	const char *text, *meaning;
} known[] = {
	{ "BPF_STX uses reserved fields",
	  "the kernel lacks atomic instructions that return a value (Linux 5.12)" },
	{ "run-time allocated hash maps",
	  "the kernel wants preallocated hash maps in tracing programs (before Linux 6.1)" },
	{ "unknown func", "the kernel lacks a BPF helper the program calls" },
	{ "invalid func unknown#", "a kernel type or field the program reads is not in this "
				   "kernel (CO-RE could not relocate it)" },
	{ "access beyond struct", "the program read a kernel struct with the wrong layout "
				  "(a tracepoint argument or field that differs in this kernel)" },
	{ "invalid mem access 'inv'", "a tp_btf program followed a pointer the verifier "
				      "cannot type (read it with BPF_CORE_READ)" },
	{ "modified ctx ptr", "a tracepoint argument read at a computed offset" },
	{ "has no valid kptr", "the kernel lacks a BTF type the program uses" },
	{ "doesn't have", "the tracepoint has fewer arguments in this kernel" },
};

const char *verifier_log_meaning(const char *reason)
{
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strstr(reason, known[i].text))
			return known[i].meaning;
	return NULL;
}

/* libbpf prints a failed program's verifier log as one message between these. */
#define LOG_BEGIN "-- BEGIN PROG LOAD LOG --\n"
#define LOG_END "-- END PROG LOAD LOG --"

const char *verifier_log_find(const char *msg, const char **end)
{
	const char *log = strstr(msg, LOG_BEGIN);

	if (!log)
		return NULL;
	log += strlen(LOG_BEGIN);
	*end = strstr(log, LOG_END);
	if (!*end)
		*end = log + strlen(log);
	return log;
}

/* The last line of a load log that is the verifier's verdict: not its
 * statistics ("processed N insns", "verification time") nor blank. */
static void keep_reason(const char *log, const char *end)
{
	const char *p, *line = NULL;
	size_t n = 0;

	for (p = log; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (len && strncmp(p, "processed ", 10) && strncmp(p, "verification time", 17) &&
		    strncmp(p, "stack depth", 11) && p[0] != ';') {
			line = p;
			n = len;
		}
		p = nl ? nl + 1 : end;
	}
	if (!line)
		return;
	if (n >= sizeof(last))
		n = sizeof(last) - 1;
	pthread_mutex_lock(&lock);
	memcpy(last, line, n);
	last[n] = '\0';
	pthread_mutex_unlock(&lock);
}

void verifier_log_note(const char *fmt, va_list ap)
{
	const char *log, *end;
	char *msg;

	if (!strstr(fmt, "PROG LOAD LOG") || vasprintf(&msg, fmt, ap) < 0)
		return;
	log = verifier_log_find(msg, &end);
	if (log)
		keep_reason(log, end);
	free(msg);
}

/* Appends [s, s + n) to out (used bytes so far, len in all) with runs of
 * blanks squeezed to one; returns the bytes used. */
static size_t squeeze_append(char *out, size_t len, size_t used, const char *s, size_t n)
{
	for (size_t i = 0; i < n && used + 1 < len; i++) {
		bool blank = s[i] == ' ' || s[i] == '\t';

		if (blank && used && out[used - 1] == ' ')
			continue;
		out[used++] = blank ? ' ' : s[i];
	}
	out[used] = '\0';
	return used;
}

/* Lines kept for a tail, at most. */
#define TAIL_MAX 32

void verifier_log_tail(const char *log, const char *end, size_t lines, char *out, size_t len)
{
	const char *start[TAIL_MAX];
	size_t llen[TAIL_MAX], n = 0, used = 0;

	if (!len)
		return;
	if (lines > TAIL_MAX)
		lines = TAIL_MAX;
	for (const char *l = log; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t ll = nl ? (size_t)(nl - l) : (size_t)(end - l);

		if (ll && lines) {
			start[n % lines] = l;
			llen[n % lines] = ll;
			n++;
		}
		l += ll + 1;
	}
	out[0] = '\0';
	for (size_t i = n > lines ? n - lines : 0; i < n; i++) {
		if (used)
			used = squeeze_append(out, len, used, " | ", 3);
		used = squeeze_append(out, len, used, start[i % lines], llen[i % lines]);
	}
}

const char *verifier_log_reason(char *out, size_t len)
{
	const char *meaning;

	pthread_mutex_lock(&lock);
	meaning = last[0] ? verifier_log_meaning(last) : NULL;
	if (!last[0])
		snprintf(out, len, "%s", "");
	else if (meaning)
		snprintf(out, len, "; verifier: %s (%s)", last, meaning);
	else
		snprintf(out, len, "; verifier: %s", last);
	last[0] = '\0';
	pthread_mutex_unlock(&lock);
	return out;
}
