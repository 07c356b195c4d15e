// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* mapbatch.c - a whole BPF map in BPF_MAP_LOOKUP_BATCH calls (mapbatch.h). */
#include "core/mapbatch.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of keys and values one call may return, at most: 10 000 users'
 * counters or ~100 of the collector's keys at 2 CPUs in one call; at 192
 * CPUs (~1 MiB a collector key) a key a call, still half the syscalls of a
 * lookup per key after a get_next_key each. Pages are resident only as far
 * as a walk fills them. */
#define MAPBATCH_BYTES (1u << 20)

void mapbatch_free(struct mapbatch *b)
{
	free(b->keys);
	free(b->vals);
	free(b->tokens);
	b->keys = b->vals = b->tokens = NULL;
	b->chunk = 0;
	b->key_size = b->val_size = 0;
}

/* The batch position tokens: a hash map's is a u32 bucket, an array's a
 * key; room for either. */
static size_t token_size(size_t key_size)
{
	return key_size > 8 ? key_size : 8;
}

/* Sizes b's buffers for `chunk` entries of m. 0 or -ENOMEM (b then holds
 * what it had; mapbatch_free frees it). */
static int mapbatch_size(struct mapbatch *b, const struct mapbatch_map *m, uint32_t chunk)
{
	void *keys = realloc(b->keys, (size_t)chunk * m->key_size), *vals, *tokens;

	if (!keys)
		return -ENOMEM;
	b->keys = keys;
	vals = realloc(b->vals, (size_t)chunk * m->val_size);
	if (!vals)
		return -ENOMEM;
	b->vals = vals;
	if (!b->tokens) {
		tokens = calloc(2, token_size(m->key_size));
		if (!tokens)
			return -ENOMEM;
		b->tokens = tokens;
	}
	b->chunk = chunk;
	b->key_size = m->key_size;
	b->val_size = m->val_size;
	return 0;
}

/* The first buffers for m: what MAPBATCH_BYTES holds, at most the map. */
static int mapbatch_first(struct mapbatch *b, const struct mapbatch_map *m)
{
	size_t fit = MAPBATCH_BYTES / (m->key_size + m->val_size);
	uint32_t chunk = fit < m->max_entries ? (uint32_t)fit : m->max_entries;

	/* Tests start from an entry a call, as on a host of ~200 CPUs, to take
	 * the growth at a bucket of more entries than that. */
	if (b->first_chunk && b->first_chunk < chunk)
		chunk = b->first_chunk;
	mapbatch_free(b); /* the tokens too: the key size may differ */
	return mapbatch_size(b, m, chunk ? chunk : 1);
}

/* Whether errno e from a first batch call says the kernel has no batch
 * lookups for this map (before 5.6; ENOTSUPP is the kernel's 524, which
 * has no name in user space). */
static bool batch_refused(int e)
{
	return e == EINVAL || e == EOPNOTSUPP || e == 524;
}

int mapbatch_walk(struct mapbatch *b, const struct mapbatch_map *m, mapbatch_fn fn, void *arg)
{
	size_t tok = token_size(m->key_size);
	bool first = true;
	int rc = 0;

	if (b->refused || !m->max_entries)
		return 0;
	if ((b->key_size != m->key_size || b->val_size != m->val_size) && mapbatch_first(b, m))
		return -ENOMEM;
	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		uint32_t count = b->chunk;
		int e = bpf_map_lookup_batch(m->fd, first ? NULL : b->tokens, b->tokens + tok,
					     b->keys, b->vals, &count, &opts)
			    ? errno
			    : 0;

		if (e == ENOSPC && !count && b->chunk < m->max_entries) {
			uint32_t twice =
			    b->chunk < m->max_entries / 2 ? b->chunk * 2 : m->max_entries;

			if (mapbatch_size(b, m, twice))
				return -ENOMEM;
			continue;
		}
		if (e && e != ENOENT && first && batch_refused(e)) {
			b->refused = true;
			mapbatch_free(b);
			return 0;
		}
		if (e && e != ENOENT)
			return -e;
		for (uint32_t i = 0; i < count && !rc; i++)
			rc = fn(arg, b->keys + (size_t)i * m->key_size,
				b->vals + (size_t)i * m->val_size);
		if (rc || e == ENOENT)
			return rc;
		memcpy(b->tokens, b->tokens + tok, tok);
		first = false;
	}
}
