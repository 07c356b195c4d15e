/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * check_series.h - `iolat check --series`: the series `iolat serve` adds to
 * a metrics store on a host, per family, classic and native, projected from
 * the same edited configs serve exports (uprog/builtins.h), and set against
 * the per-host budget of docs/sizing.md.
 */
#ifndef IOLAT_CHECK_SERIES_H
#define IOLAT_CHECK_SERIES_H

#include "uprog/builtins.h"

/* Prints the projection for host h with serve's options o. 0, or -errno
 * with err. */
int check_series(const struct builtins_opts *o, const struct builtins_host *h, char *err,
		 size_t len);

#endif /* IOLAT_CHECK_SERIES_H */
