// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* disk_cache.c - disk numbers to names, capped and refreshed (disk_cache.h). */
#include "sys/disk_cache.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/disks.h"

/* Disk numbers are reused (a new nvme or loop device takes a freed minor):
 * the names are read again after this many scrapes. */
#define DISK_CACHE_AGE_SCRAPES 8

struct disk_name {
	bool stale; /* read before the last refresh: read again when next asked */
	bool asked; /* asked for since the last refresh */
	char name[];
};

void disk_cache_init(struct disk_cache *c, const char *dir)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
}

void disk_cache_free(struct disk_cache *c)
{
	idmap_free_all(&c->names);
}

struct unasked {
	uint64_t *id;
	size_t n, cap;
};

static void mark_stale(void *ctx, uint64_t id, void *val)
{
	struct unasked *u = ctx;
	struct disk_name *e = val;

	if (!e->asked && u->n < u->cap)
		u->id[u->n++] = id;
	e->stale = true;
	e->asked = false;
}

/*
 * Every few scrapes: names asked for since the last refresh are read again
 * when next asked; the others (numbers nothing shows any more) go.
 */
void disk_cache_scrape_done(struct disk_cache *c)
{
	struct unasked u = { .cap = c->names.n };

	if (++c->scrapes % DISK_CACHE_AGE_SCRAPES)
		return;
	u.id = calloc(u.cap ? u.cap : 1, sizeof(*u.id));
	if (!u.id) {
		idmap_free_all(&c->names);
		return;
	}
	idmap_each(&c->names, mark_stale, &u);
	for (size_t i = 0; i < u.n; i++)
		free(idmap_del(&c->names, u.id[i]));
	free(u.id);
}

void disk_cache_forget(struct disk_cache *c, uint32_t dev)
{
	free(idmap_del(&c->names, (uint64_t)dev + 1));
}

size_t disk_cache_count(const struct disk_cache *c)
{
	return c->names.n;
}

static struct disk_name *new_name(const char *name)
{
	size_t len = strlen(name) + 1;
	struct disk_name *e = malloc(sizeof(*e) + len);

	if (e) {
		e->stale = false;
		e->asked = true;
		memcpy(e->name, name, len);
	}
	return e;
}

/* Unknown numbers are cached too (a miss costs a failed open); a full
 * cache starts over, so no stream of numbers grows it past its cap. */
const char *disk_cache_name(struct disk_cache *c, uint32_t dev)
{
	uint64_t id = (uint64_t)dev + 1; /* 0:0 is a number too */
	struct disk_name *e = idmap_get(&c->names, id), *fresh;
	char name[DISK_NAME_MAX];

	if (e && !e->stale) {
		e->asked = true;
		return e->name;
	}
	if (e) {
		/* A number sysfs no longer has keeps the name it had: a gone
		 * disk's series keep their label until they expire. */
		if (disks_lookup(c->dir, dev, name, sizeof(name), NULL) || !strcmp(name, e->name)) {
			e->stale = false;
			e->asked = true;
			return e->name;
		}
	} else {
		if (c->names.n >= DISK_CACHE_CAP)
			idmap_free_all(&c->names);
		if (disks_lookup(c->dir, dev, name, sizeof(name), NULL))
			disk_number(dev, name, sizeof(name));
	}
	fresh = new_name(name);
	if (!fresh || idmap_put(&c->names, id, fresh)) {
		free(fresh);
		return NULL;
	}
	free(e); /* idmap_put replaced it */
	return fresh->name;
}
