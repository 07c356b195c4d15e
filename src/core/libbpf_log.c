// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libbpf_log.c - where libbpf's messages go (libbpf_log.h). */
#include "core/libbpf_log.h"

#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>

#include "util/log.h"
#include "util/verifier_log.h"

/* Process-wide: libbpf has one print callback, and it takes no context. */
static bool verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list copy;

	va_copy(copy, ap);
	verifier_log_note(fmt, copy);
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
