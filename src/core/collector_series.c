// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* collector_series.c - the collector's 64-bit series: folding the kernel
 * map's 32-bit counters into them (or into a copy, for a peek), and moving
 * keys out of the map into user space (collector.h).
 */

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/collector_internal.h"
#include "core/handover.h"
#include "core/histo.h"
#include "util/buf.h"
#include "util/monotonic.h"

/* Folds the kernel values `raw` (c->nvals of them) of key k, and its dense
 * row's value if it has one, into its live series in st: the series, or
 * NULL on allocation failure. */
static struct series *fold_key(struct collector *c, struct snapshot_store *st,
			       const struct iolat_key *k, const struct iolat_kval *raw)
{
	struct series *s = snapshot_store_live(st, k);
	int row = rows_find(&c->rows, k);

	if (s && row >= 0) {
		c->rows.folded[row] = true;
		histo_fold_spans(&s->val, rows_add(&c->rows, raw, c->nvals, row), 1, s->span);
	} else if (s) {
		histo_fold_spans(&s->val, raw, c->nvals, s->span);
	}
	return s;
}

/* Folds the live rows whose keys the hash no longer (or not yet) holds: a
 * key's value is its hash value plus its row's, and either may be 0. */
static int fold_rows_rest(struct collector *c, struct snapshot_store *st)
{
	struct iolat_key k;

	for (int i = 0; (i = rows_next_rest(&c->rows, (uint32_t)i, &k)) >= 0; i++) {
		struct series *s = snapshot_store_live(st, &k);

		if (!s)
			return -ENOMEM;
		histo_fold_spans(&s->val, &c->rows.val[i], 1, s->span);
	}
	return 0;
}

/* Removes key k's live series, adding what it counted to `into` (if
 * given). Through the index: thousands of keys retired in one pass cost a
 * lookup each, not a scan and an index rebuild each. */
static void unfold_key(struct collector *c, const struct iolat_key *k, struct iolat_val *into)
{
	snapshot_store_unlive(&c->series, k, into);
}

/* mapbatch_walk's callback: one entry of the kernel map into the store. */
struct fold_walk {
	struct collector *c;
	struct snapshot_store *st;
};

static int fold_entry(void *arg, const void *key, const void *vals)
{
	struct fold_walk *w = arg;

	return fold_key(w->c, w->st, key, vals) ? 0 : -ENOMEM;
}

/* Folds the map in BPF_MAP_LOOKUP_BATCH calls (core/mapbatch.h): 0 or
 * -errno; c->fold.refused when the kernel has none (nothing folded). */
static int fold_batches(struct collector *c, struct snapshot_store *st)
{
	const struct mapbatch_map m = {
		.fd = bpf_map__fd(c->hists),
		.key_size = sizeof(struct iolat_key),
		.max_entries = bpf_map__max_entries(c->hists),
		.val_size = (size_t)c->nvals * sizeof(struct iolat_kval),
	};
	struct fold_walk w = { c, st };

	return mapbatch_walk(&c->fold, &m, fold_entry, &w);
}

/* Folds the map a key at a time: get_next_key, then a lookup. */
static int fold_keys(struct collector *c, struct snapshot_store *st)
{
	int fd = bpf_map__fd(c->hists);
	struct iolat_key key, next;
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, c->percpu))
			continue; /* deleted under us */
		if (!fold_key(c, st, &key, c->percpu))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Folds every key of the kernel map into st's live series: the collector's
 * own, or a copy of them that a peek folds into. In batches where the
 * kernel has them (5.6+): at 500 workloads a handful of syscalls instead of
 * a thousand, ~a fifth of a scrape; key by key where it has not.
 */
static int fold_map(struct collector *c, struct snapshot_store *st)
{
	/* refused from the start: tests take the older kernels' path
	 * (collector_test_knobs), as users' maps do (uprog.h). */
	int rc = rows_read(&c->rows);

	if (!rc)
		rc = fold_batches(c, st);
	if (!rc && c->fold.refused)
		rc = fold_keys(c, st);
	return rc ? rc : fold_rows_rest(c, st);
}

/* Folds the kernel map into the collector's series; pinned, saves them when
 * that is due. */
int collector_fold(struct collector *c)
{
	int rc = fold_map(c, &c->series);

	collector_rows_repoint(c);
	if (!rc && c->prev)
		rc = handover_fold(c->prev, &c->series);
	if (rc)
		return rc;
	c->folded_ns = monotonic_ns();
	c->folded_all = true;
	if (c->pins.pinned && monotonic_ns() >= c->saved_ns + COLLECTOR_SAVE_S * NSEC_PER_SEC)
		return collector_save_series(c);
	return 0;
}

int collector_read(struct collector *c, struct snapshot *snap)
{
	int rc = collector_fold(c);
	struct snapshot live = c->series.all, kept = snapshot_store_kept(&c->series);

	live.n = c->series.nlive;
	snap->n = 0;
	if (!rc)
		rc = snapshot_append(snap, &live);
	/* A disk that came back counts on from what it had when it went;
	 * retired keys carry user-space cgroup ids, never equal to live ones. */
	return rc ? rc : snapshot_merge(snap, &kept);
}

int collector_peek(struct collector *c, struct snapshot_store *out)
{
	int rc = snapshot_store_copy(out, &c->series);

	if (!rc)
		rc = fold_map(c, out);
	/* During a handover's grace, what the collector taken over counted
	 * since the last fold too (its copy of its series is folded). */
	if (!rc && c->prev)
		rc = handover_peek(c->prev, out);
	return rc;
}

const struct snapshot *collector_series(const struct collector *c)
{
	return &c->series.all;
}

/*
 * Takes key k out of the kernel map, and its series out of c->folded into
 * *out (zeroed first): 1, 0 if the map had no such key, or -errno. Atomic
 * on 5.14+ (lookup-and-delete); before that a completion between the lookup
 * and the delete is lost. A dense row goes out of use with its key: its
 * index entry is cleared first, and its value read after the hash's, so
 * that a completion that found the row before the clear is in it (one that
 * runs on past the map calls between is the exception: a program's run).
 */
static int take_key(struct collector *c, const struct iolat_key *k, struct iolat_val *out)
{
	int fd = bpf_map__fd(c->hists), rc = 1, row = collector_rows_detach(c, k);

	memset(out, 0, sizeof(*out));
	if (bpf_map_lookup_and_delete_elem(fd, k, c->percpu)) {
		if (bpf_map_lookup_elem(fd, k, c->percpu))
			rc = errno == ENOENT ? 0 : -errno;
		else
			bpf_map_delete_elem(fd, k);
	}
	if (row >= 0) {
		rows_read_one(&c->rows, (uint32_t)row);
		if (!rc && !rows_empty(&c->rows.val[row])) {
			memset(c->percpu, 0, (size_t)c->nvals * sizeof(*c->percpu));
			rc = 1; /* counted in its row alone */
		}
	}
	if (rc > 0 && !fold_key(c, &c->series, k, c->percpu))
		rc = -ENOMEM;
	unfold_key(c, k, rc > 0 ? out : NULL);
	collector_rows_retire(c, row);
	return rc;
}

int collector_retire(struct collector *c, const struct iolat_key *k, uint64_t into)
{
	struct iolat_key moved = *k;
	struct iolat_val *sum = calloc(1, sizeof(*sum));
	bool gone;
	int rc;

	if (!sum)
		return -ENOMEM;
	rc = take_key(c, k, sum);
	/* What the key had on a disk that went and came back moves with it. */
	gone = rc >= 0 && snapshot_store_unkeep(&c->series, k, sum);
	if (rc > 0 || gone) {
		moved.cgroup = into;
		rc = snapshot_store_keep(&c->series, &moved, sum);
	}
	free(sum);
	return rc < 0 ? rc : 0;
}

int collector_forget(struct collector *c, const struct iolat_key *k)
{
	int row = collector_rows_detach(c, k);

	collector_rows_retire(c, row);
	if (bpf_map_delete_elem(bpf_map__fd(c->hists), k) && errno != ENOENT)
		return -errno;
	unfold_key(c, k, NULL);
	return 0;
}

/* Adds to the *n keys of disk dev in *keys those only its live rows hold. */
static int disk_row_keys(struct collector *c, uint32_t dev, struct iolat_key **keys, size_t *n)
{
	size_t cap = *n;

	for (uint32_t i = 0; i < c->rows.cap; i++) {
		struct iolat_key k = { .dev = dev, .op = c->rows.key[i].op };
		bool have = false;

		if (c->rows.key[i].state != IOLAT_ROW_LIVE || c->rows.key[i].dev != dev)
			continue;
		for (size_t j = 0; j < *n && !have; j++)
			have = !memcmp(&(*keys)[j], &k, sizeof(k));
		if (have)
			continue;
		if (array_make_room((void **)keys, &cap, *n, sizeof(**keys), 16)) {
			free(*keys);
			*keys = NULL;
			return -ENOMEM;
		}
		(*keys)[(*n)++] = k;
	}
	return 0;
}

/* The kernel map's keys of disk dev, in *out (malloc'd; *n of them), and
 * those only a dense row holds. */
static int disk_keys(struct collector *c, uint32_t dev, struct iolat_key **out, size_t *n)
{
	int fd = bpf_map__fd(c->hists);
	struct iolat_key key, next, *keys = NULL;
	size_t cap = 0;
	void *prev = NULL;

	*n = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (key.dev != dev)
			continue;
		if (array_make_room((void **)&keys, &cap, *n, sizeof(*keys), 16)) {
			free(keys);
			return -ENOMEM;
		}
		keys[(*n)++] = key;
	}
	*out = keys;
	return disk_row_keys(c, dev, out, n);
}

int collector_retire_disk(struct collector *c, uint32_t dev)
{
	struct iolat_val *sum = calloc(1, sizeof(*sum));
	struct iolat_key *keys = NULL;
	size_t n = 0;
	int rc = sum ? disk_keys(c, dev, &keys, &n) : -ENOMEM, moved = 0;

	for (size_t i = 0; !rc && i < n; i++) {
		rc = take_key(c, &keys[i], sum);
		if (rc <= 0)
			continue; /* gone meanwhile: nothing to keep */
		rc = snapshot_store_keep(&c->series, &keys[i], sum);
		moved++;
	}
	free(keys);
	free(sum);
	return rc < 0 ? rc : moved;
}

int collector_drop_disk(struct collector *c, uint32_t dev)
{
	int fd = bpf_map__fd(c->hists);
	struct iolat_key *keys = NULL;
	size_t n = 0;
	int rc = disk_keys(c, dev, &keys, &n);

	for (size_t i = 0; !rc && i < n; i++) {
		collector_rows_retire(c, collector_rows_detach(c, &keys[i]));
		if (bpf_map_delete_elem(fd, &keys[i]) && errno != ENOENT)
			rc = -errno;
		unfold_key(c, &keys[i], NULL);
	}
	free(keys);
	if (!rc) {
		struct snapshot kept = snapshot_store_kept(&c->series);

		snapshot_drop_dev(&kept, dev);
		snapshot_store_kept_done(&c->series, &kept);
	}
	return rc;
}

int collector_refold(struct collector *c, uint64_t from, uint64_t into)
{
	struct snapshot kept = snapshot_store_kept(&c->series);
	int rc = snapshot_refold(&kept, from, into);

	snapshot_store_kept_done(&c->series, &kept);
	return rc;
}
