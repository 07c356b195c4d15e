/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ksyms.h - kernel addresses to the names of the functions they are in,
 * from kallsyms. Loaded on first use; a miss rereads the file, at most once
 * a minute, so modules loaded later are found.
 *
 * Not thread-safe.
 */
#ifndef IOLAT_KSYMS_H
#define IOLAT_KSYMS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Embedded by its owner; the members are ksyms.c's own. */
struct ksyms {
	char path[PATH_MAX];
	struct ksym *sym;
	size_t n, cap;
	char *names;
	size_t nameslen, namescap;
	bool loaded;
	uint64_t loaded_ns;
};

/* Reads nothing yet; path is a kallsyms file (/proc/kallsyms). */
void ksyms_init(struct ksyms *k, const char *path);
/* Frees the table; ksyms_init starts it again. */
void ksyms_free(struct ksyms *k);

/*
 * The function addr is in, or NULL: below the first symbol, in data, past
 * _etext, or too far past the nearest symbol. The name stays valid until
 * the next lookup (a miss may reload the table).
 */
const char *ksyms_lookup(struct ksyms *k, uint64_t addr);

/* Symbols loaded now. */
size_t ksyms_count(const struct ksyms *k);

#endif /* IOLAT_KSYMS_H */
