/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * check_maps.h - `iolat check`'s tables of the collector's maps on a host:
 * the sizes serve would give them, and their kernel memory (--memory).
 */
#ifndef IOLAT_CHECK_MAPS_H
#define IOLAT_CHECK_MAPS_H

#include <stdint.h>

#include "core/collector.h"
#include "core/mapsize.h"

/* A host to plan the maps for (check --memory), and serve's settings there. */
struct check_host {
	struct mapsize_host h;
	long workloads;
	uint32_t set[MAPSIZE_COUNT]; /* --bpf.map-size */
};

/* --memory: every map's entries and kernel memory, for hist and for serve
 * on host h, and whether the keys they need fit. Returns 0 (the exit status). */
int check_maps_memory(const struct check_host *h);

/* The sizes serve would give the maps on h, and why (all: --memory). */
void check_maps_sizes(const struct check_host *h);

#endif /* IOLAT_CHECK_MAPS_H */
