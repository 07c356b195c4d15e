// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* seriesfile.c - a collector's series saved to a file (seriesfile.h). */
#include "core/seriesfile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "iolat.h"
#include "util/atomicfile.h"

#define SERIESFILE_MAGIC 0x736c6f69u /* "iols" */
#define SERIESFILE_FORMAT 2
/* Room for the collector-wide counters, enum iolat_stat (extend only). */
#define SERIESFILE_STATS 16

_Static_assert(IOLAT_STAT_COUNT <= SERIESFILE_STATS, "more counters than a series file holds");

struct header {
	uint32_t magic;
	uint32_t format;
	uint32_t layout;   /* IOLAT_LAYOUT_VERSION of the writer: the kernel maps',
			    * not the file's (key_size and val_size say that) */
	uint32_t key_size; /* sizeof(struct iolat_key) */
	uint32_t val_size; /* sizeof(struct iolat_val) */
	uint32_t pad;
	uint64_t identity;
	uint64_t created_ns;
	uint64_t nlive, nkept;
	uint64_t stats[SERIESFILE_STATS];
};

static struct header header_of(const struct seriesfile_owner *owner)
{
	struct header h = {
		.magic = SERIESFILE_MAGIC,
		.format = SERIESFILE_FORMAT,
		.layout = IOLAT_LAYOUT_VERSION,
		.key_size = sizeof(struct iolat_key),
		.val_size = sizeof(struct iolat_val),
		.identity = owner->identity,
		.created_ns = owner->created_ns,
	};

	return h;
}

int seriesfile_write(const char *path, const struct seriesfile_owner *owner,
		     const struct snapshot_store *st, const uint64_t stats[IOLAT_STAT_COUNT])
{
	struct header h = header_of(owner);
	struct atomicfile_part parts[] = {
		{ &h, sizeof(h) },
		{ st->all.s, st->all.n * sizeof(st->all.s[0]) },
	};
	char why[128]; /* the caller words the failure from -errno and path */

	h.nlive = st->nlive;
	h.nkept = st->all.n - st->nlive;
	memcpy(h.stats, stats, IOLAT_STAT_COUNT * sizeof(stats[0]));
	return atomicfile_write(path, parts, sizeof(parts) / sizeof(parts[0]), why, sizeof(why));
}

int seriesfile_read(const char *path, const struct seriesfile_owner *owner,
		    struct snapshot_store *st, uint64_t stats[IOLAT_STAT_COUNT])
{
	struct header want = header_of(owner), h;
	struct series s;
	FILE *f = fopen(path, "re");
	int rc = 0;

	if (!f)
		return -errno;
	if (fread(&h, sizeof(h), 1, f) != 1 || h.magic != want.magic || h.format != want.format ||
	    h.key_size != want.key_size || h.val_size != want.val_size)
		rc = -EPROTO;
	else if (h.identity != want.identity || h.created_ns != want.created_ns)
		rc = -ESTALE;
	for (uint64_t i = 0; !rc && i < h.nlive + h.nkept; i++) {
		struct series *live;

		if (fread(&s, sizeof(s), 1, f) != 1) {
			rc = -EPROTO;
		} else if (i < h.nlive) {
			live = snapshot_store_live(st, &s.key);
			if (!live)
				rc = -ENOMEM;
			else
				live->val = s.val;
		} else {
			rc = snapshot_store_keep(st, &s.key, &s.val);
		}
	}
	fclose(f);
	if (rc)
		snapshot_store_free(st);
	else
		memcpy(stats, h.stats, IOLAT_STAT_COUNT * sizeof(stats[0]));
	return rc;
}
