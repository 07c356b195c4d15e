// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* disk_cache.c - disk numbers to names, capped and aged (disk_cache.h). */
#define _GNU_SOURCE
#include "disk_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disks.h"

/* Disk numbers are reused (a new nvme or loop device takes a freed minor):
 * the disk names are read again after this many scrapes. */
#define DISK_CACHE_AGE_SCRAPES 8

void disk_cache_init(struct disk_cache *c, const char *dir)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
}

void disk_cache_free(struct disk_cache *c)
{
	idmap_free_all(&c->names);
}

void disk_cache_scrape_done(struct disk_cache *c)
{
	if (++c->scrapes % DISK_CACHE_AGE_SCRAPES == 0)
		idmap_free_all(&c->names);
}

size_t disk_cache_count(const struct disk_cache *c)
{
	return c->names.n;
}

/* A disk's DEVNAME from its uevent, or "M:m" when sysfs has no such disk. */
static char *read_disk_name(const char *dir, uint32_t dev)
{
	char path[PATH_MAX + 32], line[256], *name = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u:%u/uevent", dir, disk_major(dev), disk_minor(dev));
	f = fopen(path, "re");
	while (f && !name && fgets(line, sizeof(line), f))
		if (!strncmp(line, "DEVNAME=", 8)) {
			line[strcspn(line, "\n")] = '\0';
			name = strdup(line + 8);
		}
	if (f)
		fclose(f);
	if (!name && asprintf(&name, "%u:%u", disk_major(dev), disk_minor(dev)) < 0)
		name = NULL;
	return name;
}

/* Unknown numbers are cached too (a miss costs a failed open); a full
 * cache starts over, so no stream of numbers grows it past its cap. */
const char *disk_cache_name(struct disk_cache *c, uint32_t dev)
{
	char *name = idmap_get(&c->names, (uint64_t)dev + 1);

	if (name)
		return name;
	if (c->names.n >= DISK_CACHE_CAP)
		idmap_free_all(&c->names);
	name = read_disk_name(c->dir, dev);
	if (name && idmap_put(&c->names, (uint64_t)dev + 1, name)) {
		free(name);
		name = NULL;
	}
	return name;
}
