/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * builtins.h - iolat's own metric configs (the YAML files of builtin/) as serve's
 * options edit them, and the series they make: what `iolat serve` exports
 * per disk and per workload, and what `iolat check --series` projects from
 * the same edited configs, so the two cannot tell different stories.
 */
#ifndef IOLAT_BUILTINS_H
#define IOLAT_BUILTINS_H

#include <stdbool.h>
#include <stddef.h>

#include "uprog/uconfig.h"

/* Labels a workload's series may keep (workloads.labels): each multiplies
 * its series by the disks or operations the workload uses. */
enum {
	BUILTINS_WL_DEVICE = 1 << 0,
	BUILTINS_WL_OP = 1 << 1,
	BUILTINS_WL_ALL_LABELS = (1 << 2) - 1,
};

/* The per-workload families (workloads.metrics), in builtin/workloads.yaml's
 * order. */
enum {
	BUILTINS_WL_DEVICE_TIME = 1 << 0,
	BUILTINS_WL_TOTAL_TIME = 1 << 1,
	BUILTINS_WL_REQUEST_SIZE = 1 << 2,
	BUILTINS_WL_COMPLETIONS = 1 << 3,
	BUILTINS_WL_BYTES = 1 << 4,
	BUILTINS_WL_ERRORS = 1 << 5,
	/* "all": the block families. */
	BUILTINS_WL_BLOCK_METRICS = (1 << 6) - 1,
	/* The system-call families (core/systimes.h): their own programs,
	 * attached only when one of them is named (not by "all", which kept
	 * its meaning and cost when they came). */
	BUILTINS_WL_SYSCALL_TIME = 1 << 6,
	BUILTINS_WL_SYSCALL_BYTES = 1 << 7,
	BUILTINS_WL_SYSCALL_ERRORS = 1 << 8,
	BUILTINS_WL_SYSCALLS =
	    BUILTINS_WL_SYSCALL_TIME | BUILTINS_WL_SYSCALL_BYTES | BUILTINS_WL_SYSCALL_ERRORS,
	BUILTINS_WL_ALL_METRICS = (1 << 9) - 1,
};

/* The defaults fit a host of 24 disks and 500 workloads in 10 000 classic
 * and 2 000 native series (docs/sizing.md): a workload is one latency
 * histogram and one byte counter, summed over its disks and operations. */
#define BUILTINS_WL_LABELS_DEFAULT 0u
#define BUILTINS_WL_METRICS_DEFAULT (BUILTINS_WL_DEVICE_TIME | BUILTINS_WL_BYTES)

enum builtins_set { BUILTINS_BLOCK, BUILTINS_WORKLOADS };

struct builtins_opts {
	bool device_view, total_view, size_view; /* histograms kept (both sets) */
	bool no_op_label;			 /* ops summed everywhere */
	bool size_label;			 /* the block families' size class label */
	unsigned wl_labels;			 /* BUILTINS_WL_DEVICE | _OP */
	unsigned wl_metrics;			 /* BUILTINS_WL_* families */
};

/*
 * A list of names, "device,op" (for workloads.labels) or
 * "device_time,bytes" (workloads.metrics; "all" for every block family),
 * into bits;
 * "" is none (labels) or refused (metrics: a workload needs a family). 0, or -EINVAL with what is
 * wrong and the names there are in err.
 */
int builtins_wl_labels_parse(const char *list, unsigned *out, char *err, size_t len);
int builtins_wl_metrics_parse(const char *list, unsigned *out, char *err, size_t len);
/* Whether families wl_metrics names need the system-call programs. */
bool builtins_wl_wants_syscalls(unsigned wl_metrics);
/* One name's bit, 0 for none (a YAML sequence's items one at a time). */
unsigned builtins_wl_label_bit(const char *name);
unsigned builtins_wl_metric_bit(const char *name);
/* The names of bits, "device_time,bytes" ("" for none), into out. */
void builtins_wl_metrics_names(unsigned bits, char *out, size_t len);
void builtins_wl_labels_names(unsigned bits, char *out, size_t len);

/* Parses one built-in config into c and edits it for o. 0, or -errno with
 * err (the caller frees c on success only). */
int builtins_config(const struct builtins_opts *o, enum builtins_set which, struct uconfig *c,
		    char *err, size_t len);

/* What a host is made of, for a projection. */
struct builtins_host {
	unsigned disks;		  /* disks with I/O */
	unsigned ops;		  /* operations each disk sees (read, write: 2) */
	unsigned workloads;	  /* workload label sets */
	unsigned wl_disks;	  /* disks each workload uses */
	unsigned wl_ops;	  /* operations each workload does */
	size_t nlat_le, nsize_le; /* classic bounds of each histogram kind */
	size_t nwl_lat_le;
};

/*
 * The series one metric of an edited config makes on host h: classic (a
 * histogram's every bucket, +Inf, _sum and _count) or native (a histogram
 * is one series). Its labels multiply: device by disks, op by ops, size by
 * the size classes, kind and workload by workloads; the rest name a
 * workload and do not.
 */
size_t builtins_metric_series(const struct umetric_conf *m, enum builtins_set which,
			      const struct builtins_host *h, bool native);

#endif /* IOLAT_BUILTINS_H */
