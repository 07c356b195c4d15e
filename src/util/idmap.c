// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* idmap.c - open addressing with linear probing (idmap.h). */
#include "util/idmap.h"

#include <errno.h>
#include <stdlib.h>

static size_t home_of(const struct idmap *m, uint64_t id)
{
	return (size_t)(id * 0x9e3779b97f4a7c15ULL) & (m->cap - 1);
}

static struct idmap_slot *find(const struct idmap *m, uint64_t id)
{
	size_t i = home_of(m, id);

	while (m->slot[i].id && m->slot[i].id != id)
		i = (i + 1) & (m->cap - 1);
	return &m->slot[i];
}

static int grow(struct idmap *m)
{
	struct idmap old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->slot = calloc(m->cap, sizeof(*m->slot));
	if (!m->slot) {
		*m = old;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old.cap; i++)
		if (old.slot[i].id)
			*find(m, old.slot[i].id) = old.slot[i];
	free(old.slot);
	return 0;
}

void *idmap_get(const struct idmap *m, uint64_t id)
{
	return m->cap ? find(m, id)->val : NULL;
}

int idmap_put(struct idmap *m, uint64_t id, void *val)
{
	struct idmap_slot *s;

	if ((m->n + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	s = find(m, id);
	if (!s->id)
		m->n++;
	s->id = id;
	s->val = val;
	return 0;
}

void *idmap_del(struct idmap *m, uint64_t id)
{
	struct idmap_slot *s = m->cap ? find(m, id) : NULL;
	size_t hole, i;
	void *val;

	if (!s || !s->id)
		return NULL;
	val = s->val;
	hole = (size_t)(s - m->slot);
	s->id = 0;
	s->val = NULL;
	m->n--;
	/* Pull back later entries of the run whose home is not in (hole, i]. */
	for (i = (hole + 1) & (m->cap - 1); m->slot[i].id; i = (i + 1) & (m->cap - 1)) {
		size_t home = home_of(m, m->slot[i].id);
		int movable = i > hole ? (home <= hole || home > i) : (home <= hole && home > i);

		if (movable) {
			m->slot[hole] = m->slot[i];
			m->slot[i].id = 0;
			m->slot[i].val = NULL;
			hole = i;
		}
	}
	return val;
}

void idmap_each(const struct idmap *m, void (*fn)(void *ctx, uint64_t id, void *val), void *ctx)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slot[i].id)
			fn(ctx, m->slot[i].id, m->slot[i].val);
}

void idmap_free(struct idmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}

static void free_value(void *ctx, uint64_t id, void *val)
{
	(void)ctx;
	(void)id;
	free(val);
}

void idmap_free_all(struct idmap *m)
{
	idmap_each(m, free_value, NULL);
	idmap_free(m);
}
