// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* collector_rows.c - the dense rows (bpf/iolat.bpf.c, "Dense rows"): read
 * for the fold (collector_rows.h), given out on the programs' request and
 * taken out of use with their keys (collector_internal.h). */
#include "core/collector_rows.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/collector_internal.h"
#include "core/histo.h"

int rows_open(struct rows *r, int keys_fd, int vals_fd, int nvals, size_t stride, uint32_t cap)
{
	memset(r, 0, sizeof(*r));
	r->keys_fd = keys_fd;
	r->vals_fd = vals_fd;
	r->nvals = nvals;
	r->stride = stride;
	if (keys_fd < 0 || vals_fd < 0 || !cap || nvals < 1)
		return 0;
	r->key = calloc(cap, sizeof(*r->key));
	r->val = calloc(cap, sizeof(*r->val));
	r->folded = calloc(cap, sizeof(*r->folded));
	r->raw = calloc((size_t)nvals, stride);
	if (!r->key || !r->val || !r->folded || !r->raw) {
		rows_free(r);
		return -ENOMEM;
	}
	r->cap = cap;
	/* Adopted or taken over, the rows given out so far; new, all free. */
	for (uint32_t i = 0; i < cap; i++)
		if (bpf_map_lookup_elem(keys_fd, &i, &r->key[i]))
			memset(&r->key[i], 0, sizeof(r->key[i]));
	return 0;
}

void rows_free(struct rows *r)
{
	free(r->key);
	free(r->val);
	free(r->folded);
	free(r->raw);
	r->key = NULL;
	r->val = NULL;
	r->folded = NULL;
	r->raw = NULL;
	r->cap = 0;
}

void rows_read_one(struct rows *r, uint32_t row)
{
	struct iolat_kval one;
	size_t part = r->stride < sizeof(one) ? r->stride : sizeof(one);

	memset(&r->val[row], 0, sizeof(r->val[row]));
	/* A row the map does not hold (the unused one of the pair) is 0. */
	if (bpf_map_lookup_elem(r->vals_fd, &row, r->raw))
		return;
	for (int i = 0; i < r->nvals; i++) {
		memset(&one, 0, sizeof(one));
		memcpy(&one, r->raw + (size_t)i * r->stride, part);
		histo_kval_add(&r->val[row], &one);
	}
}

int rows_read(struct rows *r)
{
	for (uint32_t i = 0; i < r->cap; i++) {
		r->folded[i] = false;
		if (r->key[i].state == IOLAT_ROW_LIVE)
			rows_read_one(r, i);
	}
	return 0;
}

int rows_find(const struct rows *r, const struct iolat_key *k)
{
	if (k->cgroup || k->flags || k->size_class)
		return -1;
	for (uint32_t i = 0; i < r->cap; i++)
		if (r->key[i].state == IOLAT_ROW_LIVE && r->key[i].dev == k->dev &&
		    r->key[i].op == k->op)
			return (int)i;
	return -1;
}

const struct iolat_kval *rows_add(struct rows *r, const struct iolat_kval *raw, int n, int row)
{
	r->sum = r->val[row];
	for (int i = 0; i < n; i++)
		histo_kval_add(&r->sum, &raw[i]);
	return &r->sum;
}

bool rows_empty(const struct iolat_kval *v)
{
	if (v->bytes || v->unseen[IOLAT_VIEW_DEVICE])
		return false;
	for (size_t i = 0; i < IOLAT_LAT_SLOTS; i++)
		if (v->lat_slots[IOLAT_VIEW_DEVICE][i])
			return false;
	return true;
}

int rows_next_rest(const struct rows *r, uint32_t from, struct iolat_key *k)
{
	for (uint32_t i = from; i < r->cap; i++) {
		if (r->key[i].state != IOLAT_ROW_LIVE || r->folded[i] || rows_empty(&r->val[i]))
			continue;
		*k = (struct iolat_key){ .dev = r->key[i].dev, .op = r->key[i].op };
		return (int)i;
	}
	return -1;
}

/* Keys are disk and op only: the programs count in rows where they can. */
bool collector_rows_wanted(const struct collector_opts *o)
{
	return !o->key_cgroup && !o->key_process && !o->key_flags && !o->key_size_class;
}

/* The rows maps' sizes from the plan: the pair's unused one, and both
 * without rows, one entry (a map cannot have none). */
void collector_rows_size(struct iolat_bpf *skel, const struct mapsize_plan *p)
{
	uint32_t rows = p->rows ? p->rows : 1;

	bpf_map__set_max_entries(skel->maps.row_keys, rows);
	bpf_map__set_max_entries(p->shared ? skel->maps.rows_shared : skel->maps.rows, rows);
	bpf_map__set_max_entries(p->shared ? skel->maps.rows : skel->maps.rows_shared, 1);
}

/* Adopted pins: the requests the run before left unanswered (entries
 * (dev, 0)) are cleared, so that those disks ask again. */
static void forget_requests(struct collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.disk_rows);
	__u64 entry, none = 0;

	for (uint32_t i = 0; i < IOLAT_ROW_INDEX; i++)
		if (!bpf_map_lookup_elem(fd, &i, &entry) && entry && !(__u32)entry)
			bpf_map_update_elem(fd, &i, &none, BPF_ANY);
}

int collector_rows_start(struct collector *c)
{
	struct bpf_map *vals = c->shared ? c->skel->maps.rows_shared : c->skel->maps.rows;

	if (c->pins.adopted && c->plan.rows)
		forget_requests(c);
	return rows_open(&c->rows, bpf_map__fd(c->skel->maps.row_keys), bpf_map__fd(vals), c->nvals,
			 sizeof(struct iolat_kval),
			 c->plan.rows ? bpf_map__max_entries(c->skel->maps.row_keys) : 0);
}

/* Points index entry `index` at row `row` of disk dev. */
static int point(struct collector *c, uint32_t index, uint32_t dev, uint32_t row)
{
	__u64 entry = IOLAT_ROW_ENTRY(dev, row + 1);

	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.disk_rows), &index, &entry, BPF_ANY))
		return -errno;
	return 0;
}

int collector_rows_assign(struct collector *c, const struct iolat_wake *w)
{
	struct rows *r = &c->rows;
	struct iolat_key k = { .dev = w->dev, .op = (__u8)(w->index % IOLAT_ROW_OPS) };
	int row = rows_find(r, &k);
	uint32_t i;

	if (!r->cap || w->index >= IOLAT_ROW_INDEX)
		return 0;
	if (row >= 0) {
		/* The same disk and op on another queue (a disk that came
		 * back): its row counts on. */
		r->key[row].index = (__u16)w->index;
		if (bpf_map_update_elem(r->keys_fd, &row, &r->key[row], BPF_ANY))
			return -errno;
		return point(c, w->index, w->dev, (uint32_t)row);
	}
	for (i = 0; i < r->cap && r->key[i].state != IOLAT_ROW_FREE; i++)
		;
	if (i == r->cap)
		return 0; /* rows ran out: the hash counts the rest */
	r->key[i] = (struct iolat_row_key){
		.dev = w->dev, .index = (__u16)w->index, .op = k.op, .state = IOLAT_ROW_LIVE
	};
	/* The key first: whoever reads the pins finds every row in use named. */
	if (bpf_map_update_elem(r->keys_fd, &i, &r->key[i], BPF_ANY)) {
		memset(&r->key[i], 0, sizeof(r->key[i]));
		return -errno;
	}
	rows_read_one(r, i);
	return point(c, w->index, w->dev, i);
}

/*
 * A program that asked for a row while another ran the same test may write
 * its (dev, 0) after user space pointed the entry at the row: put back what
 * such a race undid, at every fold. A few lookups, one per row in use.
 */
void collector_rows_repoint(struct collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.disk_rows);
	struct rows *r = &c->rows;

	for (uint32_t i = 0; i < r->cap; i++) {
		uint32_t index = r->key[i].index;
		__u64 entry;

		if (r->key[i].state != IOLAT_ROW_LIVE || bpf_map_lookup_elem(fd, &index, &entry))
			continue;
		if (entry == IOLAT_ROW_ENTRY(r->key[i].dev, 0))
			point(c, index, r->key[i].dev, i);
	}
}

int collector_rows_detach(struct collector *c, const struct iolat_key *k)
{
	int row = rows_find(&c->rows, k);
	uint32_t index;
	__u64 none = 0;

	if (row < 0)
		return -1;
	index = c->rows.key[row].index;
	/* Completions from now on go to the hash, asking for a new row. */
	bpf_map_update_elem(bpf_map__fd(c->skel->maps.disk_rows), &index, &none, BPF_ANY);
	return row;
}

void collector_rows_retire(struct collector *c, int row)
{
	struct rows *r = &c->rows;

	if (row < 0)
		return;
	r->key[row].state = IOLAT_ROW_RETIRED;
	bpf_map_update_elem(r->keys_fd, &row, &r->key[row], BPF_ANY);
}
