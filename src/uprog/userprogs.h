/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * userprogs.h - the user programs `iolat serve` runs (docs/userprogs.md):
 * configs named by --config.dir and --config.names, each parsed, loaded,
 * attached and collected on its own, so that one broken config disables
 * itself, not the exporter (unless --config.strict).
 */
#ifndef IOLAT_USERPROGS_H
#define IOLAT_USERPROGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "metrics/metrics.h"
#include "uprog/uprog.h"

/*
 * What users' metric names get in front unless their config's
 * metrics_prefix says otherwise. ebpf_exporter puts its own name in front
 * of every metric (ebpf_exporter_); iolat's own families already take
 * iolat_AREA_, and an example's block_request_size_bytes would become
 * iolat's own iolat_block_request_size_bytes, so users' metrics have an
 * area of their own, beside their configs' iolat_user_config_* families.
 */
#define USERPROGS_METRICS_PREFIX "iolat_user_"

struct userprogs_opts {
	const char *dir;	      /* where the configs are */
	const char *names;	      /* comma-separated config names (NAME.yaml in dir);
				       * NULL: every *.yaml and *.yml in dir */
	bool strict;		      /* the first failure fails the whole */
	enum uprog_map_read map_read; /* how maps are read (uprog.h); tests force one */
};

struct userprogs;

/*
 * Parses and loads every config. Returns 0 with *out (some configs may
 * have failed: userprogs_config tells), or -errno with one line in err: the
 * directory cannot be read, a name has no file, or with strict, the first
 * config that failed.
 */
int userprogs_open(struct userprogs **out, const struct userprogs_opts *o, char *err,
		   size_t errlen);
void userprogs_close(struct userprogs *u);

/* The i-th config's name, and its error (NULL if it runs). False past the
 * last. */
bool userprogs_config(const struct userprogs *u, size_t i, const char **name, const char **error);

/* Every running config's families, then iolat_user_config_* self-metrics.
 * 0, or -ENOMEM. A config whose maps cannot be read is reported in the
 * self-metrics and left out of this scrape. */
int userprogs_collect(struct userprogs *u, struct metric_set *set);

/* For --config.check: each config's state, programs and metrics. */
void userprogs_describe(const struct userprogs *u, FILE *f);

#endif /* IOLAT_USERPROGS_H */
