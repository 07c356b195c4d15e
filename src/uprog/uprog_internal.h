/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * uprog_internal.h - what uprog.c (loading, attaching) and uprog_read.c
 * (reading the maps) share: a loaded object's state and how each of its
 * maps is read.
 */
#ifndef IOLAT_UPROG_INTERNAL_H
#define IOLAT_UPROG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/mapbatch.h"
#include "uprog/uprog.h"
#include "uprog/uprog_perf.h"

/* How a map is read, decided at its first read and kept: through an
 * iterator (mapiter.c) where the kernel can, else in batches, else key by
 * key. */
enum read_state { READ_UNKNOWN, READ_ITER, READ_BATCH, READ_KEYS };

struct uprog_prog {
	struct bpf_link *link;
	const char *name, *sec;
};

struct uprog {
	struct bpf_object *obj;
	char *path;
	struct uprog_prog *prog;
	size_t nprogs;
	struct perf_links perf; /* perf-event programs, one link per CPU */
	/* Per map, by the order bpf_object__for_each_map gives. */
	int *map_fd;
	enum read_state *how;
	struct mapiter **iter;
	struct mapbatch *batch; /* made at a map's first batch read */
	size_t nmaps;
	int ncpus;
};

/* Words a failure into err; returns rc, its -errno. */
int uprog_fail(int rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* IOLAT_UPROG_INTERNAL_H */
