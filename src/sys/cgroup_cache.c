// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cgroup_cache.c - cgroup ids to paths, capped (cgroup_cache.h). */
#define _GNU_SOURCE
#include "sys/cgroup_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/cgroups.h"
#include "util/monotonic.h"

/* A walk of the hierarchy costs a stat per cgroup: at most one a second. */
#define CGROUP_WALK_EVERY_NS 1000000000ULL

void cgroup_cache_init(struct cgroup_cache *c, const char *root)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->root, sizeof(c->root), "%s", root);
}

void cgroup_cache_free(struct cgroup_cache *c)
{
	idmap_free_all(&c->paths);
}

size_t cgroup_cache_count(const struct cgroup_cache *c)
{
	return c->paths.n;
}

struct cgroup_fill {
	struct idmap *m;
	uint64_t wanted;
};

/* Keeps the last slot for the id being looked up until the walk meets it. */
static void cgroup_seen(void *ctx, uint64_t id, const char *rel)
{
	struct cgroup_fill *fill = ctx;
	size_t room = CGROUP_CACHE_CAP - fill->m->n;
	char *path;

	if (!id || !room || idmap_get(fill->m, id))
		return;
	if (room == 1 && id != fill->wanted && !idmap_get(fill->m, fill->wanted))
		return;
	if (asprintf(&path, "%s%s", rel[0] == '/' ? "" : "/", rel) < 0)
		return;
	if (idmap_put(fill->m, id, path))
		free(path);
}

/* Rebuilds the cache from the hierarchy: ids of removed cgroups go, and
 * there is room again. Cgroup ids are never reused, so hits stay right. */
static void rewalk(struct cgroup_cache *c, uint64_t wanted)
{
	struct cgroup_fill fill = { .m = &c->paths, .wanted = wanted };

	c->walked = true;
	c->walked_ns = monotonic_ns();
	idmap_free_all(&c->paths);
	cgroups_walk(c->root, cgroup_seen, &fill);
}

/* Unknown ids are not cached: a cgroup created after the walk is found by
 * the next. */
const char *cgroup_cache_path(struct cgroup_cache *c, uint64_t id)
{
	const char *path = id ? idmap_get(&c->paths, id) : NULL;

	if (path || !id)
		return path;
	if (c->walked && monotonic_ns() - c->walked_ns < CGROUP_WALK_EVERY_NS)
		return NULL;
	rewalk(c, id);
	return idmap_get(&c->paths, id);
}
