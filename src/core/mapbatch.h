/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mapbatch.h - walks a whole BPF map in BPF_MAP_LOOKUP_BATCH calls (Linux
 * 5.6+), handing each entry's raw key and value to a callback: the one
 * batch reader of the collector's fold and of users' maps (uprog_read.c).
 */
#ifndef IOLAT_MAPBATCH_H
#define IOLAT_MAPBATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A walker's buffers, kept from walk to walk: made anew at every scrape,
 * and given back by malloc_trim, they cost a page fault a page each time. */
struct mapbatch {
	unsigned char *keys, *vals, *tokens; /* chunk keys, chunk values, in and out */
	uint32_t chunk;			     /* entries the buffers hold */
	size_t key_size, val_size;	     /* per entry, as they were made for */
	bool refused;			     /* the kernel has no batch lookups for the map */
	uint32_t first_chunk; /* testing: entries the first buffers hold; 0: what fits */
};

/* The map a walk reads. val_size is what the kernel copies out per entry:
 * value_size, or for per-CPU maps value_size rounded up to 8 times the
 * possible CPUs. */
struct mapbatch_map {
	int fd;
	uint32_t key_size, max_entries;
	size_t val_size;
};

/* Called once per entry with its raw key and value; nonzero stops the walk. */
typedef int (*mapbatch_fn)(void *arg, const void *key, const void *value);

/*
 * Calls fn for every entry of map m, through b's buffers (made at the first
 * walk, made again when m's sizes differ from the last walk's). Returns 0,
 * fn's nonzero return, or -errno (-ENOMEM, or the kernel's error after the
 * first call). A bucket bigger than the buffers (ENOSPC before any entry)
 * makes them twice as big, up to the map's size, and the call is made
 * again. If the kernel refuses the first call (before 5.6, or a map type
 * without batch lookups), nothing was handed to fn: b->refused is set, the
 * buffers are freed and it returns 0, so the caller walks the keys another
 * way; a walker already refused returns 0 at once.
 */
int mapbatch_walk(struct mapbatch *b, const struct mapbatch_map *m, mapbatch_fn fn, void *arg);

/* Frees b's buffers; keeps its settings (refused, first_chunk). */
void mapbatch_free(struct mapbatch *b);

#endif
