// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* strv.c - copies of strings and of arrays of strings (strv.h). */
#include "util/strv.h"

#include <stdlib.h>
#include <string.h>

char *strv_dup_or_null(const char *p, bool *oom)
{
	char *d = p ? strdup(p) : NULL;

	*oom |= p && !d;
	return d;
}

char **strv_dup(char *const *l, size_t n, bool *oom)
{
	char **d;

	if (!n)
		return NULL;
	d = calloc(n, sizeof(*d));
	if (!d) {
		*oom = true;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		d[i] = strv_dup_or_null(l[i], oom);
	return d;
}

void strv_free(char **l, size_t n)
{
	for (size_t i = 0; l && i < n; i++)
		free(l[i]);
	free(l);
}
