// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* snapshot.c - sets of series (snapshot.h). */
#include "core/snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/histo.h"
#include "util/buf.h"

/* v added into s, whose spans are then not known. */
static void series_add(struct series *s, const struct iolat_val *v)
{
	histo_add(&s->val, v);
	memset(s->span, 0, sizeof(s->span));
}

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
		series_add(into, &snap->s[i].val);
		/* Fill the hole with the last series; it is looked at next. */
		snap->s[i] = snap->s[--snap->n];
	}
	return 0;
}

/* A 64-bit mix of a key's fields (16 bytes, no padding). */
static uint64_t key_hash(const struct iolat_key *k)
{
	uint64_t rest = (uint64_t)k->dev << 32 | (uint64_t)k->flags << 16 | (uint64_t)k->op << 8 |
			k->size_class;
	uint64_t h = k->cgroup * 0x9e3779b97f4a7c15ULL ^ rest * 0xc2b2ae3d27d4eb4fULL;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 29);
}

/* The slot of key k in an open-addressing table of series indexes + 1 (0:
 * empty) over snap: k's slot if there, else the empty slot it would take. */
static size_t index_slot(const uint32_t *slot, size_t mask, const struct snapshot *snap,
			 const struct iolat_key *k)
{
	size_t i = key_hash(k) & mask;

	while (slot[i] && memcmp(&snap->s[slot[i] - 1].key, k, sizeof(*k)))
		i = (i + 1) & mask;
	return i;
}

void snapshot_index_clear(struct snapshot_index *ix)
{
	ix->n = 0;
	if (ix->slot)
		memset(ix->slot, 0, ix->cap * sizeof(*ix->slot));
}

void snapshot_index_free(struct snapshot_index *ix)
{
	free(ix->slot);
	memset(ix, 0, sizeof(*ix));
}

/* Makes ix index every series of snap, with room for one more. */
static int index_catch_up(struct snapshot_index *ix, const struct snapshot *snap)
{
	size_t cap = ix->cap ? ix->cap : 16, j;

	while (cap < 2 * (snap->n + 1))
		cap <<= 1;
	if (cap > UINT32_MAX)
		return -ENOMEM;
	if (cap != ix->cap) {
		uint32_t *slot = calloc(cap, sizeof(*slot));

		if (!slot)
			return -ENOMEM;
		free(ix->slot);
		ix->slot = slot;
		ix->cap = cap;
		ix->n = 0;
	}
	for (; ix->n < snap->n; ix->n++) {
		j = index_slot(ix->slot, ix->cap - 1, snap, &snap->s[ix->n].key);
		if (!ix->slot[j])
			ix->slot[j] = (uint32_t)(ix->n + 1);
	}
	return 0;
}

struct series *snapshot_index_get(struct snapshot *snap, struct snapshot_index *ix,
				  const struct iolat_key *k)
{
	struct series *s;
	size_t j;

	if (ix->n > snap->n)
		snapshot_index_clear(ix); /* series were removed behind its back */
	if (index_catch_up(ix, snap))
		return NULL;
	j = index_slot(ix->slot, ix->cap - 1, snap, k);
	if (ix->slot[j])
		return &snap->s[ix->slot[j] - 1];
	s = snapshot_push(snap, k);
	if (!s)
		return NULL;
	ix->slot[j] = (uint32_t)snap->n;
	ix->n = snap->n;
	return s;
}

/* Empties slot j of the probe table, moving later entries of its run back
 * into the hole where their home allows (backward-shift deletion), so every
 * key stays reachable from its home without tombstones. */
static void index_unslot(struct snapshot_index *ix, const struct snapshot *snap, size_t j)
{
	size_t mask = ix->cap - 1, hole = j;

	for (size_t i = (j + 1) & mask; ix->slot[i]; i = (i + 1) & mask) {
		size_t home = key_hash(&snap->s[ix->slot[i] - 1].key) & mask;

		/* The entry at i may move to the hole if the hole lies on its
		 * probe path: no farther from its home than i is. */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			ix->slot[hole] = ix->slot[i];
			hole = i;
		}
	}
	ix->slot[hole] = 0;
}

bool snapshot_index_take(struct snapshot *snap, struct snapshot_index *ix,
			 const struct iolat_key *k, struct iolat_val *into)
{
	size_t j, at, last;
	struct iolat_val scratch;

	if (ix->n > snap->n)
		snapshot_index_clear(ix);
	if (index_catch_up(ix, snap)) {
		snapshot_index_clear(ix);
		return snapshot_take(snap, k, into ? into : &scratch);
	}
	j = index_slot(ix->slot, ix->cap - 1, snap, k);
	if (!ix->slot[j])
		return false;
	at = ix->slot[j] - 1;
	if (into)
		histo_add(into, &snap->s[at].val);
	index_unslot(ix, snap, j);
	last = snap->n - 1;
	if (at != last) {
		/* The last series fills the hole: its slot now says where. */
		ix->slot[index_slot(ix->slot, ix->cap - 1, snap, &snap->s[last].key)] =
		    (uint32_t)(at + 1);
		snap->s[at] = snap->s[last];
	}
	snap->n--;
	ix->n = snap->n;
	return true;
}

void snapshot_store_free(struct snapshot_store *st)
{
	snapshot_free(&st->all);
	snapshot_index_free(&st->live_ix);
	st->nlive = 0;
}

int snapshot_store_copy(struct snapshot_store *dst, const struct snapshot_store *src)
{
	int rc;

	dst->all.n = dst->nlive = 0;
	/* Its slots point at dst's old series: the next lookup indexes anew. */
	snapshot_index_clear(&dst->live_ix);
	rc = snapshot_append(&dst->all, &src->all);
	if (!rc)
		dst->nlive = src->nlive;
	return rc;
}

/* The live series as a snapshot: the index's view of the store. */
static struct snapshot live_of(const struct snapshot_store *st)
{
	return (struct snapshot){ .s = st->all.s, .n = st->nlive, .cap = st->nlive };
}

struct series *snapshot_store_live(struct snapshot_store *st, const struct iolat_key *k)
{
	struct snapshot live = live_of(st);
	struct snapshot_index *ix = &st->live_ix;
	struct series *s;
	size_t j;

	if (ix->n > live.n)
		snapshot_index_clear(ix);
	if (index_catch_up(ix, &live))
		return NULL;
	j = index_slot(ix->slot, ix->cap - 1, &live, k);
	if (ix->slot[j])
		return &st->all.s[ix->slot[j] - 1];
	if (array_make_room((void **)&st->all.s, &st->all.cap, st->all.n, sizeof(*st->all.s), 16))
		return NULL;
	/* The first kept series moves to the end to make room: kept ones are
	 * in no order. */
	if (st->all.n > st->nlive)
		st->all.s[st->all.n] = st->all.s[st->nlive];
	st->all.n++;
	s = &st->all.s[st->nlive++];
	memset(s, 0, sizeof(*s));
	s->key = *k;
	ix->slot[j] = (uint32_t)st->nlive;
	ix->n = st->nlive;
	return s;
}

bool snapshot_store_unlive(struct snapshot_store *st, const struct iolat_key *k,
			   struct iolat_val *into)
{
	struct snapshot live = live_of(st);

	if (!snapshot_index_take(&live, &st->live_ix, k, into))
		return false;
	/* The live series' last place is free: the last kept series fills it. */
	if (st->all.n > st->nlive)
		st->all.s[live.n] = st->all.s[st->all.n - 1];
	st->nlive = live.n;
	st->all.n--;
	return true;
}

struct snapshot snapshot_store_kept(const struct snapshot_store *st)
{
	return (struct snapshot){ .s = st->all.s + st->nlive,
				  .n = st->all.n - st->nlive,
				  .cap = st->all.n - st->nlive };
}

void snapshot_store_kept_done(struct snapshot_store *st, const struct snapshot *kept)
{
	st->all.n = st->nlive + kept->n;
}

int snapshot_store_keep(struct snapshot_store *st, const struct iolat_key *k,
			const struct iolat_val *v)
{
	struct snapshot kept = snapshot_store_kept(st);
	struct series *s = (struct series *)snapshot_find(&kept, k);

	if (!s)
		s = snapshot_push(&st->all, k);
	if (!s)
		return -ENOMEM;
	series_add(s, v);
	return 0;
}

bool snapshot_store_unkeep(struct snapshot_store *st, const struct iolat_key *k,
			   struct iolat_val *into)
{
	struct snapshot kept = snapshot_store_kept(st);
	bool was = snapshot_take(&kept, k, into);

	snapshot_store_kept_done(st, &kept);
	return was;
}

int snapshot_merge(struct snapshot *dst, const struct snapshot *src)
{
	struct snapshot_index ix = { 0 };
	int rc = 0;

	for (size_t i = 0; i < src->n; i++) {
		struct series *into = snapshot_index_get(dst, &ix, &src->s[i].key);

		if (!into) {
			rc = -ENOMEM;
			break;
		}
		series_add(into, &src->s[i].val);
	}
	snapshot_index_free(&ix);
	return rc;
}

bool snapshot_take(struct snapshot *snap, const struct iolat_key *k, struct iolat_val *into)
{
	for (size_t i = 0; i < snap->n; i++) {
		if (memcmp(&snap->s[i].key, k, sizeof(*k)))
			continue;
		histo_add(into, &snap->s[i].val);
		snap->s[i] = snap->s[--snap->n];
		return true;
	}
	return false;
}

size_t snapshot_drop_dev(struct snapshot *snap, uint32_t dev)
{
	size_t i = 0, dropped = 0;

	while (i < snap->n) {
		if (snap->s[i].key.dev != dev) {
			i++;
			continue;
		}
		/* Fill the hole with the last series; it is looked at next. */
		snap->s[i] = snap->s[--snap->n];
		dropped++;
	}
	return dropped;
}

int snapshot_append(struct snapshot *dst, const struct snapshot *src)
{
	/* One copy of the whole block: a read appends thousands of 10 KiB series. */
	if (!src->n)
		return 0;
	while (dst->cap < dst->n + src->n)
		if (array_make_room((void **)&dst->s, &dst->cap, dst->cap, sizeof(*dst->s), 16))
			return -ENOMEM;
	memcpy(&dst->s[dst->n], src->s, src->n * sizeof(*src->s));
	dst->n += src->n;
	return 0;
}

int snapshot_deltas(const struct snapshot *now, const struct snapshot *before,
		    int (*fn)(void *ctx, const struct iolat_key *k, const struct iolat_val *delta),
		    void *ctx)
{
	struct iolat_val *delta = malloc(sizeof(*delta)); /* 10 KiB: not on the stack */
	int rc = delta ? 0 : -ENOMEM;

	for (size_t i = 0; !rc && i < now->n; i++) {
		const struct series *cur = &now->s[i], *old = snapshot_find(before, &cur->key);

		if (old)
			histo_sub(delta, &cur->val, &old->val);
		else
			*delta = cur->val;
		if (delta->ios)
			rc = fn(ctx, &cur->key, delta);
	}
	free(delta);
	return rc;
}
