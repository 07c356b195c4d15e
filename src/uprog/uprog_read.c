// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uprog_read.c - reads a loaded object's map in one pass (uprog.h:
 * uprog_map_read): through a BPF iterator where the kernel can, else in
 * batches, else key by key, each way decided at the first read and kept.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "uprog/mapiter.h"
#include "uprog/uprog_internal.h"

/* One walk over a map: buffers sized for it, and where values go. */
struct walk {
	const struct uprog_map *m;
	size_t vstride; /* bytes per entry's value: per-CPU ones round to 8 */
	unsigned ncpus;
	uprog_entry_fn fn;
	void *arg;
	bool stopped; /* fn returned nonzero: its return, not the walk's error */
};

static uint64_t value_of(const struct walk *w, const unsigned char *v)
{
	uint64_t sum = 0, x;

	if (!w->m->percpu) {
		memcpy(&x, v, sizeof(x));
		return x;
	}
	/* The kernel hands out per-CPU values 8-byte aligned, one per possible CPU. */
	for (unsigned c = 0; c < w->ncpus; c++) {
		memcpy(&x, v + (size_t)c * 8, sizeof(x));
		sum += x;
	}
	return sum;
}

/* The map's index in p, or -1 for a map not of this object. */
static int index_of(const struct uprog *p, int fd)
{
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->map_fd[i] == fd)
			return (int)i;
	return -1;
}

/* Per entry of a batch or an iterator: the value summed, to fn. */
static int raw_entry(void *arg, const void *key, const void *value)
{
	struct walk *w = arg;
	int rc = w->fn(w->arg, key, value_of(w, value));

	w->stopped = rc != 0;
	return rc;
}

/*
 * BPF_MAP_LOOKUP_BATCH through b's buffers (core/mapbatch.h). Returns 0,
 * fn's return or -errno with err set; b->refused when the kernel refused
 * the first call (no entries seen yet), and the caller falls back.
 */
static int walk_batch(struct walk *w, struct mapbatch *b, char *err, size_t errlen)
{
	const struct uprog_map *m = w->m;
	const struct mapbatch_map bm = {
		.fd = m->fd,
		.key_size = m->key_size,
		.max_entries = m->max_entries,
		.val_size = w->vstride,
	};
	int rc = mapbatch_walk(b, &bm, raw_entry, w);

	if (!rc || w->stopped)
		return rc;
	return uprog_fail(rc, err, errlen, "map %s: batch lookup: %s", m->name, strerror(-rc));
}

/* get_next_key + lookup: any map with keys, on any kernel. */
static int walk_keys(struct walk *w, char *err, size_t errlen)
{
	const struct uprog_map *m = w->m;
	unsigned char *key = malloc(m->key_size), *next = malloc(m->key_size);
	unsigned char *val = malloc(w->vstride);
	void *prev = NULL;
	int rc = 0;

	if (!key || !next || !val)
		rc = uprog_fail(-ENOMEM, err, errlen, "map %s: %s", m->name, strerror(ENOMEM));
	errno = 0;
	while (!rc && !bpf_map_get_next_key(m->fd, prev, next)) {
		memcpy(key, next, m->key_size);
		prev = key;
		/* Deleted since get_next_key returned it: not an error, skip it. */
		if (bpf_map_lookup_elem(m->fd, key, val))
			continue;
		rc = w->fn(w->arg, key, value_of(w, val));
	}
	if (!rc && errno != ENOENT)
		rc = uprog_fail(-errno, err, errlen, "map %s: next key: %s", m->name,
				strerror(errno));
	free(key);
	free(next);
	free(val);
	return rc;
}

/* Arrays: every index below max_entries exists, so no get_next_key. */
static int walk_index(struct walk *w, char *err, size_t errlen)
{
	unsigned char *val = malloc(w->vstride);
	int rc = 0;

	if (!val)
		return uprog_fail(-ENOMEM, err, errlen, "map %s: %s", w->m->name, strerror(ENOMEM));
	for (uint32_t i = 0; i < w->m->max_entries && !rc; i++) {
		if (bpf_map_lookup_elem(w->m->fd, &i, val))
			rc = uprog_fail(-errno, err, errlen, "map %s: index %u: %s", w->m->name, i,
					strerror(errno));
		else
			rc = w->fn(w->arg, &i, value_of(w, val));
	}
	free(val);
	return rc;
}

/* Through an iterator: loaded at the map's first read, kept. */
static int walk_iter(struct uprog *p, int i, struct walk *w, bool *refused)
{
	if (!p->iter[i] &&
	    mapiter_open(&p->iter[i], w->m->fd, w->m->key_size, (unsigned)w->vstride)) {
		*refused = true;
		return 0;
	}
	return mapiter_read(p->iter[i], raw_entry, w);
}

int uprog_map_read(struct uprog *p, const struct uprog_map *m, uprog_entry_fn fn, void *arg,
		   char *err, size_t errlen)
{
	struct walk w = { .m = m, .ncpus = (unsigned)p->ncpus, .fn = fn, .arg = arg };
	enum read_state other = READ_KEYS; /* a map not among p's: key by key */
	int i = index_of(p, m->fd);
	enum read_state *how = i < 0 ? &other : &p->how[i];
	bool refused = false;
	int rc;

	if (m->value_size != 8)
		return uprog_fail(-EINVAL, err, errlen,
				  "map %s: values are %u bytes, not one u64 (8)", m->name,
				  m->value_size);
	w.vstride = m->percpu ? (size_t)w.ncpus * 8 : 8;
	if (*how == READ_UNKNOWN || *how == READ_ITER) {
		rc = walk_iter(p, i, &w, &refused);
		if (!refused) {
			*how = READ_ITER;
			return rc < 0 ? uprog_fail(rc, err, errlen, "map %s: iterator: %s", m->name,
						   strerror(-rc))
				      : rc;
		}
		*how = READ_BATCH; /* no iterators here: batches, if they work */
	}
	if (*how == READ_BATCH) {
		/* Only p's own maps get here (others are read key by key). */
		rc = walk_batch(&w, &p->batch[i], err, errlen);
		if (!p->batch[i].refused)
			return rc;
		/* Refused on its first call: this kernel or map type has no batch ops. */
		*how = READ_KEYS;
	}
	if (m->type == BPF_MAP_TYPE_ARRAY || m->type == BPF_MAP_TYPE_PERCPU_ARRAY)
		return walk_index(&w, err, errlen);
	return walk_keys(&w, err, errlen);
}
