/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cgroup_cache.h - cgroup ids to paths, from walks of the hierarchy, in a
 * cache with a fixed cap. An id no walk has found starts a new walk, at
 * most one a second.
 *
 * Not thread-safe.
 */
#ifndef IOLAT_CGROUP_CACHE_H
#define IOLAT_CGROUP_CACHE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/idmap.h"

#define CGROUP_CACHE_CAP 4096

/* Embedded by its owner; the members are cgroup_cache.c's own. */
struct cgroup_cache {
	char root[PATH_MAX];
	struct idmap paths; /* cgroup id -> path (owned) */
	uint64_t walked_ns;
	bool walked;
};

/* Walks nothing yet; root is the hierarchy's mount (/sys/fs/cgroup), with
 * no trailing slash. */
void cgroup_cache_init(struct cgroup_cache *c, const char *root);
void cgroup_cache_free(struct cgroup_cache *c);

/* The path of cgroup id ("/system.slice/x"), or NULL for an id no walk has
 * found. Valid until the next call. */
const char *cgroup_cache_path(struct cgroup_cache *c, uint64_t id);

/* Paths held now. */
size_t cgroup_cache_count(const struct cgroup_cache *c);

#endif /* IOLAT_CGROUP_CACHE_H */
