// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_builtin.c - iolat's own configs (the YAML of builtin/) against the C side
 * they describe: their op and size class names equal core/names.c's, and a
 * series packed by serve's views (builtin_views.c) and decoded by the
 * layout the YAML declares comes out with every field in its place. A
 * change to either side alone fails here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "core/buckets.h"
#include "core/names.h"
#include "serve/builtin_views.h"
#include "serve/wlabels.h"
#include "uprog/builtin_configs.h"
#include "uprog/umetrics.h"

static const struct {
	const char *file, *yaml;
} configs[] = {
	{ "builtin/block.yaml", builtin_block_yaml },
	{ "builtin/workloads.yaml", builtin_workloads_yaml },
};

static void parse(size_t i, struct uconfig *c)
{
	char err[512] = "";

	if (uconfig_parse_buffer(configs[i].file, configs[i].yaml, strlen(configs[i].yaml), c, err,
				 sizeof(err)))
		fail_msg("%s", err);
}

/* The field's static_map must be index -> name(index), for every index. */
static void check_names(const char *where, const struct ulabel_conf *f, const char *(*name)(int),
			int count)
{
	const struct udec_conf *d = NULL;
	char index[16];

	for (size_t i = 0; i < f->ndec; i++)
		if (f->dec[i].kind == UDEC_STATIC_MAP)
			d = &f->dec[i];
	if (!d)
		fail_msg("%s: label %s has no static_map", where, f->name);
	if (d->nmap != (size_t)count)
		fail_msg("%s: label %s names %zu values, core/names.c %d", where, f->name, d->nmap,
			 count);
	for (int v = 0; v < count; v++) {
		snprintf(index, sizeof(index), "%d", v);
		if (strcmp(d->from[v], index) || strcmp(d->to[v], name(v)))
			fail_msg(
			    "%s: label %s maps \"%s\" to \"%s\"; core/names.c says %d is \"%s\"",
			    where, f->name, d->from[v], d->to[v], v, name(v));
	}
}

/* Every op and size label in builtin/ spells the names core/names.c does. */
static void test_names_match(void **state)
{
	size_t checked = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		struct uconfig c;

		parse(i, &c);
		for (size_t m = 0; m < c.nmetrics; m++) {
			const struct umetric_conf *mc = &c.metric[m];
			char where[160];

			snprintf(where, sizeof(where), "%s: %s", configs[i].file, mc->name);
			for (size_t f = 0; f < mc->nfields; f++) {
				if (!strcmp(mc->field[f].name, "op")) {
					check_names(where, &mc->field[f], names_op, IOLAT_OP_COUNT);
					checked++;
				} else if (!strcmp(mc->field[f].name, "size")) {
					check_names(where, &mc->field[f], names_size_class,
						    IOLAT_SIZE_CLASSES);
					checked++;
				}
			}
		}
		uconfig_free(&c);
	}
	/* block: 7 metrics with op and size; workloads: 9 with op. */
	assert_int_equal(checked, 7 * 2 + 9);
}

static void test_names_table(void **state)
{
	(void)state;
	assert_string_equal(names_op(IOLAT_OP_DISCARD), "discard");
	assert_null(names_op(IOLAT_OP_COUNT));
	assert_null(names_op(-1));
	assert_int_equal(names_op_rwbs(IOLAT_OP_WRITE), 'W');
	assert_int_equal(names_op_rwbs(IOLAT_OP_WRITE_ZEROES), 'N');
	assert_int_equal(names_op_rwbs(200), 'N');
	assert_string_equal(names_size_class(IOLAT_SIZE_16K), "4-16KiB");
	assert_null(names_size_class(IOLAT_SIZE_CLASSES));
	assert_string_equal(names_flag(5), "fua");
	assert_null(names_flag(IOLAT_F_COUNT));
	assert_string_equal(names_stat(IOLAT_STAT_PARTIAL), "partial_completion");
	assert_string_equal(names_stat(IOLAT_STAT_COUNT), "unknown");
	for (int s = 0; s < IOLAT_STAT_COUNT; s++)
		assert_string_not_equal(names_stat(s), "unknown");
	for (int o = 0; o < IOLAT_OP_COUNT; o++)
		assert_non_null(names_op(o));
}

/* One series through the views and back through the YAML's layout. */
struct fixture {
	uint64_t lat_store[IOLAT_LAT_SLOTS], size_store[IOLAT_SIZE_SLOTS];
	struct bucket_table lat, size;
	struct snapshot snap;
	struct series s;
	struct wl_label label;
	const struct wl_label *labels[1];
	struct builtin_views views;
	struct decoder_env *env;
	struct metric_set set;
};

/* A disk number no system has (major 4095, as --test.synthetic-disks),
 * named by the decoder as the number itself. */
#define DEV ((4095u << 20) | 7)

static int setup(void **state)
{
	static const struct decoder_env_paths none = { .kallsyms = "/nonexistent",
						       .sys_dev_block = "/nonexistent",
						       .cgroup_root = "/nonexistent" };
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(buckets_build_latency(&f->lat, f->lat_store, NULL, 0), 0);
	assert_int_equal(buckets_build_size(&f->size, f->size_store, NULL, 0), 0);
	f->s.key = (struct iolat_key){ .cgroup = 42,
				       .dev = DEV,
				       .flags = IOLAT_F_SYNC,
				       .op = IOLAT_OP_DISCARD,
				       .size_class = IOLAT_SIZE_64K };
	f->s.val.ios = 11;
	f->s.val.bytes = 11 * 32768;
	f->s.val.errors = 3;
	f->s.val.size_slots[buckets_slot_of(&f->size, 32768)] = 11;
	f->s.val.lat[IOLAT_VIEW_DEVICE].count = 9;
	f->s.val.lat[IOLAT_VIEW_DEVICE].unseen = 2;
	f->s.val.lat[IOLAT_VIEW_DEVICE].slots[buckets_slot_of(&f->lat, 1000000)] = 9;
	f->s.val.lat[IOLAT_VIEW_TOTAL].count = 6;
	f->s.val.lat[IOLAT_VIEW_TOTAL].unseen = 5;
	f->s.val.lat[IOLAT_VIEW_TOTAL].slots[buckets_slot_of(&f->lat, 2000000)] = 6;
	f->snap.s = &f->s;
	f->snap.n = 1;
	snprintf(f->label.kind, sizeof(f->label.kind), "vm");
	snprintf(f->label.name, sizeof(f->label.name), "web01");
	snprintf(f->label.ns, sizeof(f->label.ns), "kube-system");
	snprintf(f->label.pod, sizeof(f->label.pod), "virt-launcher-web01-x7k2p");
	snprintf(f->label.container, sizeof(f->label.container), "compute");
	f->labels[0] = &f->label;
	f->views = (struct builtin_views){ .snap = &f->snap,
					   .lat = &f->lat,
					   .size = &f->size,
					   .lat_le = buckets_default_le_ns,
					   .nlat_le = buckets_default_le_count,
					   .labels = f->labels,
					   .sys = &f->snap,
					   .sys_labels = f->labels };
	f->env = decoder_env_new(&none);
	assert_non_null(f->env);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	metrics_clear(&f->set);
	decoder_env_free(f->env);
	free(f);
	return 0;
}

/* What every label of the fixture's series must decode to. */
static const char *want_label(const char *name, size_t series)
{
	static const struct {
		const char *label, *value;
	} want[] = {
		{ "device", "4095:7" },
		{ "op", "discard" },
		{ "size", "16-64KiB" },
		{ "kind", "vm" },
		{ "workload", "web01" },
		{ "namespace", "kube-system" },
		{ "pod", "virt-launcher-web01-x7k2p" },
		{ "container", "compute" },
	};

	if (!strcmp(name, "view"))
		return series ? "total" : "device"; /* the views' order: device first */
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strcmp(name, want[i].label))
			return want[i].value;
	fail_msg("unexpected label %s", name);
	return NULL;
}

/* A family's value for the fixture: counters' values, histograms' counts. */
static double want_value(const char *family, size_t series)
{
	if (strstr(family, "untimed_total"))
		return series ? 5 : 2; /* unseen: the device view's, then the total's */
	if (strstr(family, "completions_total") || strstr(family, "request_size_bytes"))
		return 11;
	if (strstr(family, "bytes_total"))
		return 11 * 32768;
	if (strstr(family, "errors_total"))
		return 3;
	if (strstr(family, "device_latency_seconds") || strstr(family, "syscall_latency_seconds"))
		return 9; /* a system call's time is in its device view */
	if (strstr(family, "total_latency_seconds"))
		return 6;
	fail_msg("unexpected family %s", family);
	return 0;
}

static void check_family(const struct metric_family *fam)
{
	assert_int_equal(fam->n, strstr(fam->name, "untimed") ? 2 : 1);
	for (size_t i = 0; i < fam->n; i++) {
		const struct metric_series *s = &fam->series[i];
		double v = fam->type == METRIC_HISTOGRAM ? (double)s->hist.count : s->value;

		for (int l = 0; l < fam->nlabels; l++)
			if (strcmp(s->values[l], want_label(fam->labels[l], i)))
				fail_msg("%s: label %s is \"%s\", packed as \"%s\"", fam->name,
					 fam->labels[l], s->values[l],
					 want_label(fam->labels[l], i));
		if (v != want_value(fam->name, i))
			fail_msg("%s: %g, packed as %g", fam->name, v, want_value(fam->name, i));
	}
}

static void collect(struct fixture *f, size_t config, size_t nfamilies, size_t nlabels)
{
	struct uconfig c;
	struct usource src;
	struct umetrics *u;
	char err[512] = "";

	parse(config, &c);
	builtin_views_source(&f->views, &src);
	if (umetrics_new(&u, &c, &src, f->env, err, sizeof(err)))
		fail_msg("%s", err);
	if (umetrics_collect(u, &f->set, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(umetrics_dropped(u), 0);
	assert_int_equal(f->set.n, nfamilies);
	for (size_t i = 0; i < f->set.n; i++) {
		const struct metric_family *fam = &f->set.fam[i];

		/* A system call has no disk: no device label. */
		assert_int_equal(fam->nlabels, nlabels + (strstr(fam->name, "untimed") ? 1 : 0) -
						   (strstr(fam->name, "syscall") ? 1 : 0));
		check_family(fam);
	}
	umetrics_free(u);
	uconfig_free(&c);
}

/* builtin/block.yaml over the views: device, op, size (and view). */
static void test_block_layout(void **state)
{
	collect(*state, 0, 7, 3);
}

/* builtin/workloads.yaml over the views: device, op, kind, workload,
 * namespace, pod, container; the syscall families the same without device. */
static void test_workload_layout(void **state)
{
	collect(*state, 1, 9, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_table),
		cmocka_unit_test(test_names_match),
		cmocka_unit_test_setup_teardown(test_block_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workload_layout, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
