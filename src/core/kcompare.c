// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* kcompare.c - iolat's completions against the kernel's count (kcompare.h). */
#include "core/kcompare.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iolat.h"

int kcompare_group_of_op(int op)
{
	switch (op) {
	case IOLAT_OP_READ:
		return BLOCKSTAT_READ;
	case IOLAT_OP_WRITE:
	case IOLAT_OP_WRITE_ZEROES:
		return BLOCKSTAT_WRITE;
	case IOLAT_OP_DISCARD:
		return BLOCKSTAT_DISCARD;
	case IOLAT_OP_FLUSH:
		return BLOCKSTAT_FLUSH;
	default:
		return -1;
	}
}

static int cmp_disk(const void *pa, const void *pb)
{
	const struct kcompare_disk *a = pa, *b = pb;

	return a->dev < b->dev ? -1 : a->dev > b->dev;
}

int kcompare_list(const char *sys_block, uint32_t only_dev, struct kcompare_disk *out, size_t max)
{
	DIR *dir = opendir(sys_block);
	struct dirent *de;
	size_t n = 0;

	if (!dir)
		return -errno;
	while ((de = readdir(dir)) && n < max) {
		struct kcompare_disk *d = &out[n];
		uint64_t sectors;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(d->name) ||
		    blockstat_disk(sys_block, de->d_name, &d->dev, &sectors) || !sectors ||
		    (only_dev && d->dev != only_dev) ||
		    blockstat_read(sys_block, de->d_name, &d->kernel))
			continue; /* no medium, not asked for, or gone while listed */
		snprintf(d->name, sizeof(d->name), "%s", de->d_name);
		n++;
	}
	closedir(dir);
	qsort(out, n, sizeof(*out), cmp_disk);
	return (int)n;
}

static int cmp_dev(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	return a < b ? -1 : a > b;
}

void kcompare_counts(const uint32_t *devs, size_t n, const struct snapshot *snap,
		     uint64_t (*counts)[BLOCKSTAT_GROUPS])
{
	memset(counts, 0, n * sizeof(*counts));
	for (size_t i = 0; n && snap && i < snap->n; i++) {
		const struct series *s = &snap->s[i];
		int g = kcompare_group_of_op(s->key.op);
		const uint32_t *at;

		if (g < 0)
			continue;
		at = bsearch(&s->key.dev, devs, n, sizeof(*devs), cmp_dev);
		if (at)
			counts[at - devs][g] += s->val.ios;
	}
}
