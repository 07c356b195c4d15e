// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_builtins.c - serve's options over iolat's own configs
 * (uprog/builtins.c): which families and labels each setting leaves, the
 * series a described host gets from them (what `iolat check --series`
 * prints), and the words of a bad workloads.labels or .metrics list.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "core/buckets.h"
#include "uprog/builtins.h"

static const struct builtins_opts defaults = {
	.device_view = true,
	.total_view = true,
	.size_view = true,
	.wl_labels = BUILTINS_WL_LABELS_DEFAULT,
	.wl_metrics = BUILTINS_WL_METRICS_DEFAULT,
};

/* The budget's host: 24 disks read and written, 500 workloads on one disk. */
static const struct builtins_host fleet_host = {
	.disks = 24,
	.ops = 2,
	.workloads = 500,
	.wl_disks = 1,
	.wl_ops = 2,
	.nlat_le = 20,
	.nsize_le = 11,
	.nwl_lat_le = 8,
};

static const struct umetric_conf *metric(const struct uconfig *c, const char *name)
{
	for (size_t i = 0; i < c->nmetrics; i++)
		if (!strcmp(c->metric[i].name, name))
			return &c->metric[i];
	fail_msg("no metric %s", name);
	return NULL;
}

/* By default a workload is one latency histogram and one byte counter,
 * summed over its disks and operations: device (4 bytes) and op (1 and 3
 * of padding) are folded into the key's skip. */
static void test_workload_defaults(void **state)
{
	const struct umetric_conf *m;
	struct uconfig c;
	char err[256];

	(void)state;
	assert_int_equal(builtins_config(&defaults, BUILTINS_WORKLOADS, &c, err, sizeof(err)), 0);
	assert_int_equal(c.nmetrics, 2);
	m = metric(&c, "iolat_workload_device_latency_seconds");
	assert_int_equal(m->bucket_type, UBUCKET_IOLAT_WORKLOAD_LATENCY);
	assert_int_equal(m->skip, 8);
	assert_int_equal(m->nfields, 5);
	assert_string_equal(m->field[0].name, "kind");
	assert_string_equal(m->field[1].name, "workload");
	m = metric(&c, "iolat_workload_bytes_total");
	assert_int_equal(m->skip, 8);
	assert_int_equal(builtins_metric_series(m, BUILTINS_WORKLOADS, &fleet_host, false), 500);
	assert_int_equal(
	    builtins_metric_series(&c.metric[0], BUILTINS_WORKLOADS, &fleet_host, false), 500 * 11);
	assert_int_equal(
	    builtins_metric_series(&c.metric[0], BUILTINS_WORKLOADS, &fleet_host, true), 500);
	uconfig_free(&c);
}

/* Every label and family back: each multiplies by what the workload uses. */
static void test_workload_full(void **state)
{
	struct builtins_opts o = defaults;
	struct builtins_host h = fleet_host;
	const struct umetric_conf *m;
	struct uconfig c;
	char err[256];

	(void)state;
	o.wl_labels = BUILTINS_WL_DEVICE | BUILTINS_WL_OP;
	o.wl_metrics = BUILTINS_WL_ALL_METRICS;
	h.wl_disks = 3;
	assert_int_equal(builtins_config(&o, BUILTINS_WORKLOADS, &c, err, sizeof(err)), 0);
	assert_int_equal(c.nmetrics, 9);
	/* A system call is tied to no disk: its series multiply by op only. */
	m = metric(&c, "iolat_workload_syscall_latency_seconds");
	assert_int_equal(m->nfields, 6);
	assert_int_equal(builtins_metric_series(m, BUILTINS_WORKLOADS, &h, false), 500 * 2 * 11);
	assert_int_equal(builtins_metric_series(m, BUILTINS_WORKLOADS, &h, true), 500 * 2);
	m = metric(&c, "iolat_workload_syscall_bytes_total");
	assert_int_equal(builtins_metric_series(m, BUILTINS_WORKLOADS, &h, false), 500 * 2);
	m = metric(&c, "iolat_workload_total_latency_seconds");
	assert_int_equal(m->skip, 0);
	assert_int_equal(m->nfields, 7);
	assert_int_equal(builtins_metric_series(m, BUILTINS_WORKLOADS, &h, false),
			 500 * 3 * 2 * 11);
	m = metric(&c, "iolat_workload_request_size_bytes");
	assert_int_equal(builtins_metric_series(m, BUILTINS_WORKLOADS, &h, false),
			 500 * 3 * 2 * 14);
	assert_int_equal(builtins_metric_series(m, BUILTINS_WORKLOADS, &h, true), 500 * 3 * 2);
	uconfig_free(&c);
	/* op alone; --no-label.op folds it for workloads too. */
	o.wl_labels = BUILTINS_WL_OP;
	o.no_op_label = true;
	assert_int_equal(builtins_config(&o, BUILTINS_WORKLOADS, &c, err, sizeof(err)), 0);
	assert_int_equal(metric(&c, "iolat_workload_errors_total")->skip, 8);
	/* The syscall key begins with op: folded, it is skipped with its padding. */
	assert_int_equal(metric(&c, "iolat_workload_syscall_errors_total")->skip, 4);
	uconfig_free(&c);
}

/* The per-disk families: device time by disk and op, 20 bounds. */
static void test_block(void **state)
{
	struct builtins_opts o = defaults;
	struct uconfig c;
	char err[256];

	(void)state;
	assert_int_equal(builtins_config(&o, BUILTINS_BLOCK, &c, err, sizeof(err)), 0);
	assert_int_equal(c.nmetrics, 7);
	assert_int_equal(builtins_metric_series(metric(&c, "iolat_block_device_latency_seconds"),
						BUILTINS_BLOCK, &fleet_host, false),
			 24 * 2 * 23);
	assert_int_equal(builtins_metric_series(metric(&c, "iolat_block_untimed_total"),
						BUILTINS_BLOCK, &fleet_host, false),
			 24 * 2 * 2);
	uconfig_free(&c);
	/* A size label: five classes each. */
	o.size_label = true;
	o.total_view = false;
	assert_int_equal(builtins_config(&o, BUILTINS_BLOCK, &c, err, sizeof(err)), 0);
	assert_int_equal(c.nmetrics, 6);
	assert_int_equal(builtins_metric_series(metric(&c, "iolat_block_completions_total"),
						BUILTINS_BLOCK, &fleet_host, true),
			 24 * 2 * 5);
	uconfig_free(&c);
}

static void test_lists(void **state)
{
	unsigned bits;
	char err[256], names[160];

	(void)state;
	assert_int_equal(builtins_wl_labels_parse("op,device", &bits, err, sizeof(err)), 0);
	assert_int_equal(bits, BUILTINS_WL_DEVICE | BUILTINS_WL_OP);
	assert_int_equal(builtins_wl_labels_parse("", &bits, err, sizeof(err)), 0);
	assert_int_equal(bits, 0);
	assert_int_equal(builtins_wl_labels_parse("device,disk", &bits, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "workloads.labels: unknown name 'disk': use a comma-separated "
				 "list of device,op");
	/* "all" is every block family: the syscall ones attach programs of
	 * their own and are named. */
	assert_int_equal(builtins_wl_metrics_parse("all", &bits, err, sizeof(err)), 0);
	assert_int_equal(bits, BUILTINS_WL_BLOCK_METRICS);
	assert_false(builtins_wl_wants_syscalls(bits));
	assert_int_equal(
	    builtins_wl_metrics_parse("device_time,syscall_time", &bits, err, sizeof(err)), 0);
	assert_int_equal(bits, BUILTINS_WL_DEVICE_TIME | BUILTINS_WL_SYSCALL_TIME);
	assert_true(builtins_wl_wants_syscalls(bits));
	assert_true(builtins_wl_wants_syscalls(BUILTINS_WL_SYSCALL_ERRORS));
	assert_false(builtins_wl_wants_syscalls(BUILTINS_WL_METRICS_DEFAULT));
	assert_int_equal(builtins_wl_metrics_parse("bytes,device_time", &bits, err, sizeof(err)),
			 0);
	assert_int_equal(bits, BUILTINS_WL_METRICS_DEFAULT);
	assert_int_equal(builtins_wl_metrics_parse("device_time,,bytes", &bits, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(builtins_wl_metrics_parse("", &bits, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "workloads.metrics: name at least one family, e.g. device_time");
	builtins_wl_metrics_names(BUILTINS_WL_ALL_METRICS, names, sizeof(names));
	assert_string_equal(names, "device_time,total_time,request_size,completions,bytes,errors,"
				   "syscall_time,syscall_bytes,syscall_errors");
	assert_int_equal(builtins_wl_metric_bit("errors"), BUILTINS_WL_ERRORS);
	assert_int_equal(builtins_wl_label_bit("size"), 0);
}

/* The defaults' bounds are the default set's, so they cost no slot. */
static void test_workload_bounds(void **state)
{
	size_t k = 0;

	(void)state;
	for (size_t i = 0; i < buckets_default_le_count && k < buckets_workload_le_count; i++)
		k += buckets_default_le_ns[i] == buckets_workload_le_ns[k];
	assert_int_equal(k, buckets_workload_le_count);
	assert_int_equal(buckets_workload_le_count, fleet_host.nwl_lat_le);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_workload_defaults),
		cmocka_unit_test(test_workload_full),
		cmocka_unit_test(test_block),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_workload_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
