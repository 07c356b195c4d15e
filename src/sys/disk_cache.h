/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * disk_cache.h - disk numbers (dev_t) to names from sysfs, in a cache with
 * a fixed cap. Every few scrapes the names still asked for are read again,
 * since a new disk can take a freed number; a number sysfs no longer has
 * keeps its last name (a gone disk's series keep their label until they
 * expire), and names nothing asked for since the last refresh go.
 *
 * Not thread-safe.
 */
#ifndef IOLAT_DISK_CACHE_H
#define IOLAT_DISK_CACHE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "util/idmap.h"

/* Disk numbers seen at once: a host has a few hundred disks at most, so
 * more distinct numbers than this are garbage, not disks. */
#define DISK_CACHE_CAP 1024

/* Embedded by its owner; the members are disk_cache.c's own. */
struct disk_cache {
	char dir[PATH_MAX];
	struct idmap names; /* dev + 1 (0:0 is a number too) -> its name (owned) */
	unsigned scrapes;
};

/* Reads nothing yet; dir holds "M:m" entries (/sys/dev/block). */
void disk_cache_init(struct disk_cache *c, const char *dir);
void disk_cache_free(struct disk_cache *c);

/* dev's DEVNAME ("sda"), "M:m" for a number sysfs does not know, or NULL
 * when out of memory. Valid until the next call. */
const char *disk_cache_name(struct disk_cache *c, uint32_t dev);

/* Once per scrape: refreshes the names now and then (see above). */
void disk_cache_scrape_done(struct disk_cache *c);

/* Forgets dev's name (another disk has the number now): read again when
 * next asked. */
void disk_cache_forget(struct disk_cache *c, uint32_t dev);

/* Names held now. */
size_t disk_cache_count(const struct disk_cache *c);

#endif /* IOLAT_DISK_CACHE_H */
