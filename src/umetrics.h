/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * umetrics.h - the map -> metric path: a loaded BPF object's maps become
 * metric families as its config (uconfig.h) says. Each key is cut into its
 * fields, each field decoded into a label value (decoders.h); the u64 value
 * is a counter's value, or, with the last field as the bucket, a
 * histogram's bucket count (docs/userprogs.md).
 */
#ifndef IOLAT_UMETRICS_H
#define IOLAT_UMETRICS_H

#include <stddef.h>

#include "decoders.h"
#include "metrics.h"
#include "uconfig.h"
#include "uprog.h"

struct umetrics;

/*
 * Checks every metric of c against the loaded object p (its map exists and
 * holds u64 values, the fields add up to the key) and compiles the
 * decoders. c, p and env must outlive the result. Returns 0, or -1 with one
 * line "file:line:col: what is wrong" in err.
 */
int umetrics_new(struct umetrics **out, const struct uconfig *c, struct uprog *p,
		 struct decoder_env *env, char *err, size_t errlen);
void umetrics_free(struct umetrics *u);

/* Reads the maps into families of set. 0, or -1 with err set (the families
 * made so far stay in set). */
int umetrics_collect(struct umetrics *u, struct metric_set *set, char *err, size_t errlen);

/* Entries read in the last collect that were left out: a regexp decoder
 * dropped them, or a field did not decode. */
size_t umetrics_dropped(const struct umetrics *u);

#endif /* IOLAT_UMETRICS_H */
