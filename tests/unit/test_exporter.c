// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_exporter.c - serve's exporter against an in-memory collector
 * (fake_collector.h): a render shows the kernel's counts at once and
 * changes nothing (no fold, no kernel map write, the collector's series as
 * the last pass left them); a maintenance pass folds, and retires a gone
 * disk's keys with its counts kept; the pass's own gauges.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_collector.h"
#include "metrics/expo_text.h"
#include "serve/exporter.h"
#include "util/buf.h"

/* A disk number no machine has (major 250 is unassigned for block
 * devices here): sysfs has no such disk, so a pass that finds its counts
 * unchanged takes it for gone. */
#define GONE_DEV ((250u << 20) | 77u)

struct fixture {
	struct collector *c;
	struct exporter *e;
	struct metric_set set;
	struct buf out;
};

static int setup(void **state)
{
	struct exporter_opts o = {
		.device_view = true, .total_view = true, .size_view = true, .maintain_s = 10
	};
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	assert_non_null(f);
	f->c = fake_collector_new(false);
	assert_non_null(f->c);
	assert_int_equal(exporter_new(&f->e, f->c, &o, err, sizeof(err)), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	exporter_free(f->e);
	metrics_clear(&f->set);
	fake_collector_free(f->c);
	free(f->out.data);
	free(f);
	return 0;
}

/* Renders as text; the exposition, valid until the next render. */
static const char *render(struct fixture *f)
{
	char err[256];

	assert_int_equal(exporter_render(f->e, &f->set, err, sizeof(err)), 0);
	f->out.len = 0;
	assert_int_equal(expo_text(&f->set, false, &f->out), 0);
	assert_true(buf_reserve(&f->out, f->out.len + 1));
	f->out.data[f->out.len] = '\0';
	return f->out.data;
}

/* The value of the one sample whose line starts with `series `. */
static double sample(const char *text, const char *series)
{
	size_t n = strlen(series);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, series, n) && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	fail_msg("no sample %s", series);
	return -1;
}

static const struct iolat_key read_key = { .dev = GONE_DEV, .op = IOLAT_OP_READ };

static void complete(struct fixture *f, int n)
{
	for (int i = 0; i < n; i++)
		assert_int_equal(fake_collector_complete(f->c, &read_key, 4096, 300000), 0);
}

#define READS "iolat_block_completions_total{device=\"250:77\",op=\"read\"}"

static void test_render_only_reads(void **state)
{
	struct fixture *f = *state;
	struct fake_collector_calls calls;

	complete(f, 3);
	assert_true(sample(render(f), READS) == 3);
	complete(f, 2);
	assert_true(sample(render(f), READS) == 5);
	assert_true(sample(render(f), "iolat_block_device_latency_seconds_count{device=\"250:77\","
				      "op=\"read\"}") == 5);
	fake_collector_calls(f->c, &calls);
	assert_int_equal(calls.peeks, 3);
	assert_int_equal(calls.folds, 0);
	assert_int_equal(calls.map_writes, 0);
	/* The collector's own series are as no pass has folded them. */
	assert_int_equal(collector_series(f->c)->n, 0);
}

static void test_pass_folds_and_retires_a_gone_disk(void **state)
{
	struct fixture *f = *state;
	struct fake_collector_calls calls;

	complete(f, 5);
	assert_int_equal(exporter_maintain(f->e), 0); /* sees the disk */
	fake_collector_calls(f->c, &calls);
	assert_int_equal(calls.folds, 1);
	assert_int_equal(collector_series(f->c)->n, 1);
	assert_true(collector_series(f->c)->s[0].val.ios == 5);
	assert_int_equal(fake_collector_kernel_keys(f->c), 1);

	/* Unchanged since the pass before, and not in sysfs: gone. Its keys
	 * leave the kernel map; its counts stay in every render. */
	assert_int_equal(exporter_maintain(f->e), 0);
	fake_collector_calls(f->c, &calls);
	assert_int_equal(calls.map_writes, 1);
	assert_int_equal(fake_collector_kernel_keys(f->c), 0);
	assert_true(sample(render(f), READS) == 5);
	assert_true(sample(render(f), "iolat_disks_retired_total") == 1);

	/* Back under its number: counts on from what was kept. */
	complete(f, 1);
	assert_true(sample(render(f), READS) == 6);
	fake_collector_calls(f->c, &calls);
	assert_int_equal(calls.folds, 2); /* the renders folded nothing */
}

static void test_maintenance_gauges(void **state)
{
	struct fixture *f = *state;
	const char *t = render(f);

	assert_true(sample(t, "iolat_maintenance_passes_total") == 0);
	assert_true(sample(t, "iolat_maintenance_interval_seconds") == 10);
	assert_int_equal(exporter_maintain(f->e), 0);
	exporter_pass_done(f->e, 0.25);
	t = render(f);
	assert_true(sample(t, "iolat_maintenance_passes_total") == 1);
	assert_true(sample(t, "iolat_maintenance_duration_seconds") == 0.25);
}

static void test_full_map_counter(void **state)
{
	struct fixture *f = *state;

	fake_collector_set_stat(f->c, IOLAT_STAT_HIST_FULL, 7);
	assert_true(sample(render(f), "iolat_collector_events_total{event=\"hist_map_full\"}") ==
		    7);
}

/* The default bounds, as written, down to 5 us; each bucket exact for
 * reads of 300 us (and 5 us, on the lowest bound itself). */
static void test_default_bounds_as_written(void **state)
{
	struct fixture *f = *state;
	const char *text;

	complete(f, 3);
	assert_int_equal(fake_collector_complete(f->c, &read_key, 4096, 5000), 0);
	text = render(f);
#define DEV_LAT "iolat_block_device_latency_seconds_bucket{device=\"250:77\",op=\"read\",le="
	assert_true(sample(text, DEV_LAT "\"0.000005\"}") == 1);
	assert_true(sample(text, DEV_LAT "\"0.00001\"}") == 1);
	assert_true(sample(text, DEV_LAT "\"0.00025\"}") == 1);
	assert_true(sample(text, DEV_LAT "\"0.0005\"}") == 4);
	assert_true(sample(text, DEV_LAT "\"0.01\"}") == 4);
	assert_true(sample(text, DEV_LAT "\"10\"}") == 4);
#undef DEV_LAT
}

/* A reload cannot lay new slots: a bound the running table lacks is
 * refused with the exact ones near it; one it has is taken as it is. */
static void test_reload_bound_not_in_table(void **state)
{
	static const uint64_t lat_new[] = { 30000, 100000 }, lat_have[] = { 29223, 100000 };
	struct exporter_opts o = { .device_view = true, .lat_le = lat_new, .nlat_le = 2 };
	struct fixture *f = *state;
	struct exporter_settings *st = NULL;
	char err[512] = "";

	assert_int_equal(exporter_prepare(f->e, &o, &st, err, sizeof(err)), -EINVAL);
	assert_null(st);
	assert_string_equal(err, "latency bucket bound 0.00003 is not one the running collector "
				 "counts at (its slots are laid at start): restart iolat serve "
				 "to add it, or use one near it that it has, 0.000029223 or "
				 "0.000030517");
	o.lat_le = lat_have;
	assert_int_equal(exporter_prepare(f->e, &o, &st, err, sizeof(err)), 0);
	exporter_apply(f->e, st); /* frees st */
	complete(f, 2);
	assert_true(sample(render(f), "iolat_block_device_latency_seconds_bucket{device=\"250:77\","
				      "op=\"read\",le=\"0.000029223\"}") == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_render_only_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pass_folds_and_retires_a_gone_disk, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_maintenance_gauges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_map_counter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_default_bounds_as_written, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_bound_not_in_table, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
