/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * strv.h - copies of strings and of arrays of strings, for settings that
 * outlive what they were copied from. A failed allocation sets *oom and
 * the copy goes on, so that a caller copying many fields checks once and
 * frees what was made.
 */
#ifndef IOLAT_STRV_H
#define IOLAT_STRV_H

#include <stdbool.h>
#include <stddef.h>

/* A copy of p, or NULL for NULL (and on failure, with *oom set). */
char *strv_dup_or_null(const char *p, bool *oom);

/* A copy of the n strings of l (each by strv_dup_or_null); NULL if n is 0
 * (and on failure, with *oom set). */
char **strv_dup(char *const *l, size_t n, bool *oom);

/* Frees the n strings of l, then l; l may be NULL. */
void strv_free(char **l, size_t n);

#endif
