/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * builtins.c - iolat's own metric configs edited by serve's options, and
 * the series they make on a host (see builtins.h).
 */
#include "uprog/builtins.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "iolat.h"
#include "metrics/metrics.h"
#include "uprog/builtin_configs.h"

/* workloads.yaml's families, in the bits' order. */
static const char *const wl_metric_names[] = {
	"device_time", "total_time",   "request_size",	"completions",	  "bytes",
	"errors",      "syscall_time", "syscall_bytes", "syscall_errors",
};
static const char *const wl_metric_families[] = {
	"iolat_workload_device_latency_seconds",
	"iolat_workload_total_latency_seconds",
	"iolat_workload_request_size_bytes",
	"iolat_workload_completions_total",
	"iolat_workload_bytes_total",
	"iolat_workload_errors_total",
	"iolat_workload_syscall_latency_seconds",
	"iolat_workload_syscall_bytes_total",
	"iolat_workload_syscall_errors_total",
};
static const char *const wl_label_names[] = { "device", "op" };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static unsigned bit_of(const char *const *names, size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(names[i]) == len && !strncmp(names[i], name, len))
			return 1u << i;
	return 0;
}

unsigned builtins_wl_label_bit(const char *name)
{
	return bit_of(wl_label_names, COUNT(wl_label_names), name, strlen(name));
}

unsigned builtins_wl_metric_bit(const char *name)
{
	return bit_of(wl_metric_names, COUNT(wl_metric_names), name, strlen(name));
}

static void names_of(const char *const *names, size_t n, unsigned bits, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++)
		if (bits & (1u << i))
			used += (size_t)snprintf(out + used, len - used, "%s%s", used ? "," : "",
						 names[i]);
}

void builtins_wl_metrics_names(unsigned bits, char *out, size_t len)
{
	names_of(wl_metric_names, COUNT(wl_metric_names), bits, out, len);
}

void builtins_wl_labels_names(unsigned bits, char *out, size_t len)
{
	names_of(wl_label_names, COUNT(wl_label_names), bits, out, len);
}

static int parse_list(const char *list, const char *const *names, size_t n, const char *what,
		      unsigned *out, char *err, size_t len)
{
	char known[200];

	*out = 0;
	for (const char *p = list; *p;) {
		size_t l = strcspn(p, ",");
		unsigned b = bit_of(names, n, p, l);

		if (!b) {
			names_of(names, n, (1u << n) - 1, known, sizeof(known));
			snprintf(err, len,
				 "%s: unknown name '%.*s': use a comma-separated list of %s", what,
				 (int)l, p, known);
			return -EINVAL;
		}
		*out |= b;
		p += l + (p[l] == ',');
	}
	return 0;
}

int builtins_wl_labels_parse(const char *list, unsigned *out, char *err, size_t len)
{
	return parse_list(list, wl_label_names, COUNT(wl_label_names), "workloads.labels", out, err,
			  len);
}

int builtins_wl_metrics_parse(const char *list, unsigned *out, char *err, size_t len)
{
	if (!strcmp(list, "all")) {
		*out = BUILTINS_WL_BLOCK_METRICS;
		return 0;
	}
	if (!*list) {
		snprintf(err, len, "workloads.metrics: name at least one family, e.g. device_time");
		return -EINVAL;
	}
	return parse_list(list, wl_metric_names, COUNT(wl_metric_names), "workloads.metrics", out,
			  err, len);
}

/* Drops the histograms of views that are off, and the per-workload
 * families not asked for. */
static void drop_metrics(const struct builtins_opts *o, enum builtins_set which, struct uconfig *c)
{
	static const char *const views[] = { "device_latency_seconds", "total_latency_seconds",
					     "request_size_bytes" };
	const bool on[] = { o->device_view, o->total_view, o->size_view };
	char name[64];

	for (size_t i = 0; i < COUNT(views); i++) {
		if (on[i])
			continue;
		snprintf(name, sizeof(name), "iolat_%s_%s",
			 which == BUILTINS_BLOCK ? "block" : "workload", views[i]);
		uconfig_drop_metric(c, name);
	}
	if (which != BUILTINS_WORKLOADS)
		return;
	for (size_t i = 0; i < COUNT(wl_metric_families); i++)
		if (!(o->wl_metrics & (1u << i)))
			uconfig_drop_metric(c, wl_metric_families[i]);
}

bool builtins_wl_wants_syscalls(unsigned wl_metrics)
{
	return (wl_metrics & BUILTINS_WL_SYSCALLS) != 0;
}

int builtins_config(const struct builtins_opts *o, enum builtins_set which, struct uconfig *c,
		    char *err, size_t len)
{
	const char *file =
	    which == BUILTINS_BLOCK ? "builtin/block.yaml" : "builtin/workloads.yaml";
	const char *yaml = which == BUILTINS_BLOCK ? builtin_block_yaml : builtin_workloads_yaml;
	bool fold_op =
	    o->no_op_label || (which == BUILTINS_WORKLOADS && !(o->wl_labels & BUILTINS_WL_OP));
	bool fold_dev = which == BUILTINS_WORKLOADS && !(o->wl_labels & BUILTINS_WL_DEVICE);
	int rc;

	rc = uconfig_parse_buffer(file, yaml, strlen(yaml), c, err, len);
	if (rc)
		return rc;
	drop_metrics(o, which, c);
	if (!c->nmetrics) {
		uconfig_free(c);
		snprintf(err, len, "%s: no family left: ask for at least one", file);
		return -EINVAL;
	}
	if ((fold_op && uconfig_fold_label(c, "op")) ||
	    (!o->size_label && uconfig_fold_label(c, "size")) ||
	    (fold_dev && uconfig_fold_label(c, "device"))) {
		uconfig_free(c);
		snprintf(err, len, "%s: cannot fold a label away", file);
		return -EINVAL;
	}
	return 0;
}

/* How many values field `name` takes on host h. */
static size_t label_values(const char *name, enum builtins_set which, const struct builtins_host *h)
{
	bool wl = which == BUILTINS_WORKLOADS;

	if (!strcmp(name, "device"))
		return wl ? h->wl_disks : h->disks;
	if (!strcmp(name, "op"))
		return wl ? h->wl_ops : h->ops;
	if (!strcmp(name, "size"))
		return IOLAT_SIZE_CLASSES;
	if (!strcmp(name, "workload"))
		return h->workloads;
	if (!strcmp(name, "view"))
		return 2; /* untimed: device and total */
	return 1;	  /* kind and Kubernetes names go with the workload */
}

size_t builtins_metric_series(const struct umetric_conf *m, enum builtins_set which,
			      const struct builtins_host *h, bool native)
{
	size_t n = 1, nle;

	for (size_t k = 0; k < m->nfields; k++)
		n *= label_values(m->field[k].name, which, h);
	if (!m->histogram || native)
		return n;
	nle = m->bucket_type == UBUCKET_IOLAT_SIZE		 ? h->nsize_le
	      : m->bucket_type == UBUCKET_IOLAT_WORKLOAD_LATENCY ? h->nwl_lat_le
								 : h->nlat_le;
	return n * metrics_hist_samples(nle);
}
