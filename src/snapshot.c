// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* snapshot.c - sets of series (snapshot.h). */
#include "snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "histo.h"

void snapshot_free(struct snapshot *snap)
{
	free(snap->s);
	snap->s = NULL;
	snap->n = snap->cap = 0;
}

struct series *snapshot_push(struct snapshot *snap, const struct iolat_key *k)
{
	struct series *s;

	if (array_make_room((void **)&snap->s, &snap->cap, snap->n, sizeof(*snap->s), 16))
		return NULL;
	s = &snap->s[snap->n++];
	memset(s, 0, sizeof(*s));
	s->key = *k;
	return s;
}

const struct series *snapshot_find(const struct snapshot *snap, const struct iolat_key *k)
{
	for (size_t i = 0; i < snap->n; i++)
		if (memcmp(&snap->s[i].key, k, sizeof(*k)) == 0)
			return &snap->s[i];
	return NULL;
}

int snapshot_add(struct snapshot *snap, const struct iolat_key *k, const struct iolat_val *v)
{
	struct series *s = (struct series *)snapshot_find(snap, k);

	if (!s)
		s = snapshot_push(snap, k);
	if (!s)
		return -ENOMEM;
	histo_add(&s->val, v);
	return 0;
}

int snapshot_refold(struct snapshot *snap, uint64_t from, uint64_t to)
{
	size_t i = 0;

	while (i < snap->n) {
		struct iolat_key k = snap->s[i].key;
		struct series *into;

		if (k.cgroup != from) {
			i++;
			continue;
		}
		k.cgroup = to;
		into = (struct series *)snapshot_find(snap, &k);
		if (!into) {
			snap->s[i].key.cgroup = to;
			i++;
			continue;
		}
		histo_add(&into->val, &snap->s[i].val);
		/* Fill the hole with the last series; it is looked at next. */
		snap->s[i] = snap->s[--snap->n];
	}
	return 0;
}

int snapshot_append(struct snapshot *dst, const struct snapshot *src)
{
	for (size_t i = 0; i < src->n; i++) {
		struct series *s = snapshot_push(dst, &src->s[i].key);

		if (!s)
			return -ENOMEM;
		s->val = src->s[i].val;
	}
	return 0;
}

int snapshot_deltas(const struct snapshot *now, const struct snapshot *before,
		    int (*fn)(void *ctx, const struct iolat_key *k, const struct iolat_val *delta),
		    void *ctx)
{
	static struct iolat_val delta; /* 10 KiB: not on the stack */
	int rc;

	for (size_t i = 0; i < now->n; i++) {
		const struct series *cur = &now->s[i], *old = snapshot_find(before, &cur->key);

		if (old)
			histo_sub(&delta, &cur->val, &old->val);
		else
			delta = cur->val;
		if (!delta.ios)
			continue;
		rc = fn(ctx, &cur->key, &delta);
		if (rc)
			return rc;
	}
	return 0;
}
