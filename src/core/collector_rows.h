/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * collector_rows.h - a collector's dense rows read from user space (bpf/iolat.bpf.c,
 * "Dense rows"): which key each row counts for, and each live row's value,
 * so that a fold adds a key's row to its hash value. The collector reads
 * its own rows through it, and a handover the rows of the collector it
 * takes over, in that one's layout.
 */
#ifndef IOLAT_COLLECTOR_ROWS_H
#define IOLAT_COLLECTOR_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iolat.h"

struct rows {
	int keys_fd;		   /* row_keys */
	int vals_fd;		   /* the rows map (rows or rows_shared) */
	int nvals;		   /* values per row: CPUs, or 1 if shared */
	size_t stride;		   /* one value as a lookup returns it */
	uint32_t cap;		   /* rows the maps hold; 0: no rows */
	struct iolat_row_key *key; /* cap of them, as row_keys said when read */
	struct iolat_kval *val;	   /* each live row's value summed over CPUs, as last read */
	bool *folded;		   /* the pass since the last rows_read folded it */
	unsigned char *raw;	   /* one lookup's values */
	struct iolat_kval sum;	   /* rows_add's result */
};

/*
 * Reads row_keys (keys_fd, cap entries) for rows whose values are in
 * vals_fd, nvals values each of `stride` bytes (a prefix of ours, for an
 * older layout). cap 0 or keys_fd < 0: no rows, and every call finds none.
 * 0 or -ENOMEM.
 */
int rows_open(struct rows *r, int keys_fd, int vals_fd, int nvals, size_t stride, uint32_t cap);

void rows_free(struct rows *r);

/* Reads every live row's value and starts a pass (nothing folded). 0 or
 * -errno. */
int rows_read(struct rows *r);

/* Reads row `row`'s value again. */
void rows_read_one(struct rows *r, uint32_t row);

/* The live row of key k, or -1 (keys with more than disk and op have none). */
int rows_find(const struct rows *r, const struct iolat_key *k);

/* The n kernel values raw of a key, summed, plus its row's value: r->sum. */
const struct iolat_kval *rows_add(struct rows *r, const struct iolat_kval *raw, int n, int row);

/* Whether v counted nothing (every completion is in the device view). */
bool rows_empty(const struct iolat_kval *v);

/*
 * The first live row from `from` on that this pass has not folded (its key
 * was not in the hash map) and that counted something, with its key in *k:
 * its index, or -1. A fold adds r->val[row] to k's series: a key's value is
 * its hash value plus its row's, and either may be 0.
 */
int rows_next_rest(const struct rows *r, uint32_t from, struct iolat_key *k);

#endif
