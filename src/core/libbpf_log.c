// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libbpf_log.c - where libbpf's messages go (libbpf_log.h). */
#define _GNU_SOURCE
#include "core/libbpf_log.h"

#include <bpf/libbpf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/verifier_log.h"

/* Process-wide: libbpf has one print callback, and it takes no context.
 * The capture is locked, as libbpf prints from whichever thread loads. */
static bool verbose;
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
static struct libbpf_capture *capture;

/* The program named by "prog 'NAME'" in msg, if any, into cap->prog. */
static void capture_prog_name(struct libbpf_capture *cap, const char *msg)
{
	const char *s = strstr(msg, "prog '");
	const char *e;

	if (!s)
		return;
	s += strlen("prog '");
	e = strchr(s, '\'');
	if (e && (size_t)(e - s) < sizeof(cap->prog))
		snprintf(cap->prog, sizeof(cap->prog), "%.*s", (int)(e - s), s);
}

/* One warning into cap: the program it names, and its verifier log's tail
 * or, without a log, the warning itself. */
static void capture_note(struct libbpf_capture *cap, const char *fmt, va_list ap)
{
	const char *log, *end;
	char *msg;

	if (vasprintf(&msg, fmt, ap) < 0)
		return;
	capture_prog_name(cap, msg);
	log = verifier_log_find(msg, &end);
	if (log) {
		verifier_log_tail(log, end, LIBBPF_CAPTURE_LINES, cap->tail, sizeof(cap->tail));
	} else {
		msg[strcspn(msg, "\n")] = '\0';
		if (*msg)
			snprintf(cap->last, sizeof(cap->last), "%s", msg);
	}
	free(msg);
}

/* To the load that captures, or to the verifier-log reason. */
static void note(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	pthread_mutex_lock(&capture_lock);
	if (!capture)
		verifier_log_note(fmt, ap);
	else if (level != LIBBPF_DEBUG)
		capture_note(capture, fmt, ap);
	pthread_mutex_unlock(&capture_lock);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list copy;

	va_copy(copy, ap);
	note(level, fmt, copy);
	va_end(copy);
	/* A daemon at --log.level=debug: libbpf's warnings and notes (not its
	 * own debug stream, the whole verifier log) as debug lines. */
	if (!verbose && level != LIBBPF_DEBUG && log_enabled(LOG_DEBUG_L)) {
		char text[512];

		vsnprintf(text, sizeof(text), fmt, ap);
		text[strcspn(text, "\n")] = '\0';
		log_debug("libbpf", LOG_STR("text", text));
		return 0;
	}
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void libbpf_log_verbose(bool on)
{
	verbose = on;
}

void libbpf_log_install(void)
{
	libbpf_set_print(libbpf_print);
}

void libbpf_log_capture_begin(struct libbpf_capture *cap)
{
	memset(cap, 0, sizeof(*cap));
	libbpf_log_install();
	pthread_mutex_lock(&capture_lock);
	capture = cap;
	pthread_mutex_unlock(&capture_lock);
}

void libbpf_log_capture_end(void)
{
	pthread_mutex_lock(&capture_lock);
	capture = NULL;
	pthread_mutex_unlock(&capture_lock);
}
