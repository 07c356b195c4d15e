// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * check_series.c - `iolat check --series`: what serve's answer costs a
 * metrics store on a host (see check_series.h).
 */
#include "cli/check_series.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The per-host budget the defaults are made to fit (docs/sizing.md): 24
 * disks, each read and written, and 500 workloads. */
#define BUDGET_CLASSIC 10000
#define BUDGET_NATIVE 2000

/*
 * Serve's own families, the same on every host: its process, HTTP
 * connections, BPF programs and maps, reloads, maintenance and, with
 * workloads, their cap and folds, one series each (measured on this
 * build; the answer's iolat_series gives them exactly, and test_series.sh
 * checks these against it).
 */
#define SELF_FAMILIES 33
#define SELF_SERIES 70
#define SELF_WL_FAMILIES 6
/* With the system-call families: iolat_workload_syscall_lost_total. */
#define SELF_SYSCALL_FAMILIES 1

struct tally {
	size_t families, classic, native;
};

static void row(struct tally *t, const char *family, const char *per, size_t classic, size_t native)
{
	printf("  %-42s %-16s %8zu %8zu\n", family, per, classic, native);
	t->families++;
	t->classic += classic;
	t->native += native;
}

/* The labels that multiply a metric's series, "disk,op". */
static void per_of(const struct umetric_conf *m, char *out, size_t len)
{
	size_t used = 0;

	out[0] = '\0';
	for (size_t k = 0; k < m->nfields && used < len; k++) {
		const char *n = m->field[k].name;

		if (strcmp(n, "device") && strcmp(n, "op") && strcmp(n, "size") &&
		    strcmp(n, "workload") && strcmp(n, "view"))
			continue;
		used += (size_t)snprintf(out + used, len - used, "%s%s", used ? "," : "",
					 !strcmp(n, "device") ? "disk" : n);
	}
	if (!out[0])
		snprintf(out, len, "host");
}

static int config_rows(const struct builtins_opts *o, enum builtins_set which,
		       const struct builtins_host *h, struct tally *t, char *err, size_t len)
{
	struct uconfig c;
	char per[64];
	int rc = builtins_config(o, which, &c, err, len);

	if (rc)
		return rc;
	for (size_t i = 0; i < c.nmetrics; i++) {
		per_of(&c.metric[i], per, sizeof(per));
		row(t, c.metric[i].name, per, builtins_metric_series(&c.metric[i], which, h, false),
		    builtins_metric_series(&c.metric[i], which, h, true));
	}
	uconfig_free(&c);
	return 0;
}

static void print_budget(const struct tally *t)
{
	bool classic_ok = t->classic <= BUDGET_CLASSIC, native_ok = t->native <= BUDGET_NATIVE;

	printf("\nBudget per host (docs/sizing.md; made for 24 disks and 500 workloads): "
	       "%d classic, %d native.\n",
	       BUDGET_CLASSIC, BUDGET_NATIVE);
	printf("  classic: %zu, %s\n", t->classic,
	       classic_ok ? "within" : "over: see docs/sizing.md for what each knob costs");
	printf("  native:  %zu, %s\n", t->native,
	       native_ok ? "within" : "over: see docs/sizing.md for what each knob costs");
}

int check_series(const struct builtins_opts *o, const struct builtins_host *h, char *err,
		 size_t len)
{
	struct tally t = { 0 };
	size_t disk_ops = (size_t)h->disks * h->ops, self, wl_self;
	int rc;

	printf("Series iolat serve adds to a metrics store, on a host of %u disks (%u operations "
	       "each)",
	       h->disks, h->ops);
	if (h->workloads)
		printf(" and %u workloads (each on %u disk%s, %u operations)", h->workloads,
		       h->wl_disks, h->wl_disks == 1 ? "" : "s", h->wl_ops);
	printf(":\n  %-42s %-16s %8s %8s\n", "family", "per", "classic", "native");
	rc = config_rows(o, BUILTINS_BLOCK, h, &t, err, len);
	if (rc)
		return rc;
	row(&t, "iolat_block_device_info", "disk", h->disks, h->disks);
	row(&t, "iolat_block_kernel_completed_total", "disk,op", disk_ops, disk_ops);
	row(&t, "iolat_block_unseen_completions", "disk,op", disk_ops, disk_ops);
	if (h->workloads) {
		rc = config_rows(o, BUILTINS_WORKLOADS, h, &t, err, len);
		if (rc)
			return rc;
	}
	wl_self = h->workloads ? SELF_WL_FAMILIES : 0;
	if (h->workloads && builtins_wl_wants_syscalls(o->wl_metrics))
		wl_self += SELF_SYSCALL_FAMILIES;
	self = SELF_SERIES + wl_self;
	row(&t, "serve's own families (about)", "host", self, self);
	t.families += SELF_FAMILIES - 1 + wl_self;
	row(&t, "iolat_series", "family", 2 * (t.families + 1), 2 * (t.families + 1));
	printf("  %-42s %-16s %8zu %8zu\n", "total", "", t.classic, t.native);
	print_budget(&t);
	return 0;
}
