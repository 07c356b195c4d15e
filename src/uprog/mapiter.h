/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mapiter.h - reads a whole BPF map through a map-element iterator
 * (bpf/mapiter.bpf.c, Linux 5.9+): one program attached to the map, and a
 * scrape is a few read() calls of packed (key, value) records.
 */
#ifndef IOLAT_MAPITER_H
#define IOLAT_MAPITER_H

#include <stddef.h>

struct mapiter;

/*
 * Loads and attaches an iterator over the map: value_bytes is what the
 * iterator gives per element (value_size; for per-CPU maps, value_size
 * rounded up to 8, times the possible CPUs). 0, or -errno when the kernel
 * cannot (no iterators, no BTF): the caller reads the map another way.
 */
int mapiter_open(struct mapiter **out, int map_fd, unsigned key_size, unsigned value_bytes);
void mapiter_close(struct mapiter *it);

typedef int (*mapiter_fn)(void *arg, const void *key, const void *value);

/* Calls fn for every element; 0, fn's nonzero return, or -errno. */
int mapiter_read(struct mapiter *it, mapiter_fn fn, void *arg);

#endif
