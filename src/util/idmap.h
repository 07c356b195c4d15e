/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * idmap.h - a hash map from non-zero 64-bit ids (cgroup ids) to pointers,
 * with deletion, for the tables that follow cgroups as they come and go.
 */
#ifndef IOLAT_IDMAP_H
#define IOLAT_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap {
	struct idmap_slot {
		uint64_t id;
		void *val;
	} * slot;
	size_t cap, n;
};

/* The value of id, or NULL. */
void *idmap_get(const struct idmap *m, uint64_t id);

/* Sets id's value (id != 0). 0 or -ENOMEM. */
int idmap_put(struct idmap *m, uint64_t id, void *val);

/* Removes id; returns its value (NULL if it had none). */
void *idmap_del(struct idmap *m, uint64_t id);

/* Calls fn for every entry (fn must not change the map). */
void idmap_each(const struct idmap *m, void (*fn)(void *ctx, uint64_t id, void *val), void *ctx);

/* Frees the table (not the values). */
void idmap_free(struct idmap *m);

/* Frees the table and every value with free(): for maps that own their
 * values. The map is empty and usable again. */
void idmap_free_all(struct idmap *m);

#endif
