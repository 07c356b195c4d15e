// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_umetrics.c - the map -> metric path (uprog/umetrics.h) over a source
 * held in memory: maps whose keys and values the test packs, read through
 * configs parsed from strings. Checks the exact families it makes (labels
 * from each decoder kind, a users' histogram, one of iolat's own), the
 * entries a regexp drops, and the errors a config meets against the maps.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include <linux/bpf.h>

#include "core/buckets.h"
#include "iolat.h"
#include "uprog/umetrics.h"

/* The key of map "events", as a program would declare it. */
struct event_key {
	uint32_t cpu;
	uint32_t pad;
	uint64_t addr;
	char comm[16];
	uint8_t op;
	uint8_t pad2[7];
};

/* "waits": a users' exp2 histogram, the bucket the key's last field. */
struct wait_key {
	uint32_t op;
	uint32_t bucket;
};

/* "io_lat": one of iolat's histograms per disk number. */
struct disk_key {
	uint32_t dev;
};

#define MAX_ENTRIES 8

struct fake_map {
	const char *name;
	unsigned int type, key_size, value_size;
	bool iolat_hist;
	bool broken; /* its read fails */
	size_t n;
	const void *keys[MAX_ENTRIES];
	struct uvalue vals[MAX_ENTRIES];
};

/* The source: its maps, the latency table, and what was asked of it. */
struct fake {
	struct fake_map *maps;
	size_t nmaps;
	uint64_t lat_store[IOLAT_LAT_SLOTS];
	struct bucket_table lat;
	size_t reads;
};

static int fake_map(void *ctx, const char *name, struct umap *out, char *err, size_t errlen)
{
	struct fake *f = ctx;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < f->nmaps; i++) {
		const struct fake_map *m = &f->maps[i];

		if (strcmp(m->name, name))
			continue;
		out->m = (struct uprog_map){ .fd = (int)i,
					     .type = m->type,
					     .key_size = m->key_size,
					     .value_size = m->value_size,
					     .max_entries = MAX_ENTRIES,
					     .name = m->name };
		out->iolat_hist = m->iolat_hist;
		return 0;
	}
	snprintf(err, errlen, "map %s not found in the fake source", name);
	return -1;
}

static int fake_read(void *ctx, const struct umap *um, usource_fn fn, void *arg, char *err,
		     size_t errlen)
{
	struct fake *f = ctx;
	const struct fake_map *m = &f->maps[um->m.fd];

	f->reads++;
	if (m->broken) {
		snprintf(err, errlen, "reading map %s: it broke", m->name);
		return -EIO; /* -errno, as the user-program reader says it */
	}
	for (size_t i = 0; i < m->n; i++) {
		int rc = fn(arg, m->keys[i], &m->vals[i]);

		if (rc)
			return rc;
	}
	return 0;
}

static const struct bucket_table *fake_table(void *ctx, enum ubucket_type t)
{
	struct fake *f = ctx;

	return t == UBUCKET_IOLAT_LATENCY ? &f->lat : NULL;
}

static const uint64_t *fake_le(void *ctx, enum ubucket_type t, size_t *n)
{
	(void)ctx;
	(void)t;
	*n = buckets_default_le_count;
	return buckets_default_le_ns;
}

/* The entries, static so that the metrics may borrow the slots they hold. */
static const struct event_key events[] = {
	{ .cpu = 0, .addr = 0xffff1000, .comm = "fio", .op = 0 },
	{ .cpu = 0, .addr = 0xffff1000, .comm = "kworker/0:1", .op = 1 },
	{ .cpu = 0, .addr = 0xffff1000, .comm = "kworker/0:2", .op = 1 }, /* the same labels */
	{ .cpu = 1, .addr = 0xabc, .comm = "bash", .op = 0 },		  /* dropped */
	{ .cpu = 1, .addr = 0xabc, .comm = "fio", .op = 5 },		  /* op unmapped */
	{ .cpu = 2, .addr = 0xabc, .comm = "sshd", .op = 1 },		  /* dropped */
};
static const uint64_t event_counts[] = { 10, 3, 4, 100, 2, 50 };

static const struct wait_key waits[] = {
	{ .op = 0, .bucket = 0 }, { .op = 0, .bucket = 2 },
	{ .op = 0, .bucket = 9 }, /* past bucket_max: the last bucket */
	{ .op = 0, .bucket = 4 }, /* bucket_max + 1: the sum */
	{ .op = 1, .bucket = 1 },
};
static const uint64_t wait_counts[] = { 1, 5, 2, 1234, 7 };

static const struct disk_key disks[] = { { 8 << 20 }, { 8 << 20 }, { (259 << 20) | 1 } };
static __u64 disk_slots[3][IOLAT_LAT_SLOTS];

/* Values of 1 ms and 2 ms, so many of each per disk entry. */
static const uint64_t disk_1ms[] = { 3, 1, 0 }, disk_2ms[] = { 1, 0, 2 };

/* A map of n u64 counters, its keys an array of key_size-byte structs. */
static void counter_map(struct fake_map *m, const char *name, unsigned int type, const void *keys,
			size_t key_size, const uint64_t *counts, size_t n)
{
	*m = (struct fake_map){ .name = name,
				.type = type,
				.key_size = (unsigned int)key_size,
				.value_size = 8,
				.n = n };
	for (size_t i = 0; i < n; i++) {
		m->keys[i] = (const char *)keys + i * key_size;
		m->vals[i].u64 = counts[i];
	}
}

static int setup(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct fake_map *m = calloc(5, sizeof(*m));

	assert_non_null(f);
	assert_non_null(m);
	assert_int_equal(buckets_build_latency(&f->lat, f->lat_store, NULL, 0), 0);
	counter_map(&m[0], "events", BPF_MAP_TYPE_HASH, events, sizeof(events[0]), event_counts,
		    sizeof(event_counts) / sizeof(event_counts[0]));
	counter_map(&m[1], "waits", BPF_MAP_TYPE_PERCPU_HASH, waits, sizeof(waits[0]), wait_counts,
		    sizeof(wait_counts) / sizeof(wait_counts[0]));
	m[2] = (struct fake_map){ .name = "io_lat",
				  .type = BPF_MAP_TYPE_HASH,
				  .key_size = sizeof(struct disk_key),
				  .value_size = sizeof(struct iolat_lat),
				  .iolat_hist = true,
				  .n = 3 };
	for (size_t i = 0; i < m[2].n; i++) {
		memset(disk_slots[i], 0, sizeof(disk_slots[i]));
		disk_slots[i][buckets_slot_of(&f->lat, 1000000)] = disk_1ms[i];
		disk_slots[i][buckets_slot_of(&f->lat, 2000000)] = disk_2ms[i];
		m[2].keys[i] = &disks[i];
		m[2].vals[i] =
		    (struct uvalue){ .slots = disk_slots[i],
				     .count = disk_1ms[i] + disk_2ms[i],
				     .sum_raw = disk_1ms[i] * 1000000 + disk_2ms[i] * 2000000 };
	}
	m[3] = (struct fake_map){
		.name = "wide", .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 16
	};
	m[4] = (struct fake_map){ .name = "broken",
				  .type = BPF_MAP_TYPE_ARRAY,
				  .key_size = 4,
				  .value_size = 8,
				  .broken = true };
	f->maps = m;
	f->nmaps = 5;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;

	free(f->maps);
	free(f);
	return 0;
}

static void fake_source(struct fake *f, struct usource *out)
{
	*out = (struct usource){
		.ctx = f, .map = fake_map, .read = fake_read, .table = fake_table, .le = fake_le
	};
}

/* Decoders that name things from the system find nothing here. */
static struct decoder_env *no_system(void)
{
	static const struct decoder_env_paths none = { .kallsyms = "/nonexistent",
						       .sys_dev_block = "/nonexistent",
						       .cgroup_root = "/nonexistent" };
	struct decoder_env *env = decoder_env_new(&none);

	assert_non_null(env);
	return env;
}

static void parse(const char *yaml, struct uconfig *c)
{
	char err[512] = "";

	if (uconfig_parse_buffer("fake.yaml", yaml, strlen(yaml), c, err, sizeof(err)))
		fail_msg("%s", err);
}

/* One config's metrics over the fake maps, and the set they collect into. */
struct run {
	struct decoder_env *env;
	struct metric_set *set;
	struct umetrics *u;
	struct uconfig c;
};

static void run_start(struct fake *f, const char *yaml, struct run *r)
{
	struct usource src;
	char err[512] = "";

	r->env = no_system();
	r->set = calloc(1, sizeof(*r->set));
	assert_non_null(r->set);
	parse(yaml, &r->c);
	fake_source(f, &src);
	if (umetrics_new(&r->u, &r->c, &src, r->env, err, sizeof(err)))
		fail_msg("%s", err);
}

static void run_end(struct run *r)
{
	metrics_clear(r->set);
	umetrics_free(r->u);
	uconfig_free(&r->c);
	decoder_env_free(r->env);
	free(r->set);
}

static void assert_double(double got, double want)
{
	if (got != want)
		fail_msg("%.17g, want %.17g", got, want);
}

static const struct metric_family *family(const struct metric_set *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->fam[i].name, name))
			return &set->fam[i];
	fail_msg("no family %s", name);
	return NULL;
}

static void assert_labels(const struct metric_family *f, const char *const *want)
{
	int n = 0;

	for (; want[n]; n++)
		assert_string_equal(f->labels[n], want[n]);
	assert_int_equal(f->nlabels, n);
	assert_null(f->labels[n]);
}

/* Series i of f has these label values (as many as f has labels). */
static void assert_series(const struct metric_family *f, size_t i, const char *const *want)
{
	assert_true(i < f->n);
	for (int l = 0; l < f->nlabels; l++)
		if (strcmp(f->series[i].values[l], want[l]))
			fail_msg("%s series %zu: %s=\"%s\", want \"%s\"", f->name, i, f->labels[l],
				 f->series[i].values[l], want[l]);
}

static const char counters_yaml[] =
    "name: fake\n"
    "object: fake.bpf.o\n"
    "metrics:\n"
    "  counters:\n"
    "    - name: fake_events_total\n"
    "      help: Events by CPU, address, command and op\n"
    "      map: events\n"
    "      labels:\n"
    "        - {name: cpu, size: 4, padding: 4, decoders: [{name: uint}]}\n"
    "        - {name: addr, size: 8, decoders: [{name: hex}]}\n"
    "        - name: comm\n"
    "          size: 16\n"
    "          decoders:\n"
    "            - name: string\n"
    "            - {name: regexp, regexp: '^(kworker|fio)', replace: '\\1'}\n"
    "        - name: op\n"
    "          size: 1\n"
    "          padding: 7\n"
    "          decoders:\n"
    "            - name: uint\n"
    "            - {name: static_map, static_map: {'0': read, '1': write}}\n";

/*
 * Each entry decoded field by field: kworker/0:1 and kworker/0:2 become one
 * series whose value is their sum, bash and sshd fail the regexp and are
 * dropped (and counted), op 5 is not in the static_map: "unknown".
 */
static void test_counter_labels(void **state)
{
	static const char *const names[] = { "cpu", "addr", "comm", "op", NULL };
	static const char *const want[][4] = {
		{ "0", "0xffff1000", "fio", "read" },
		{ "0", "0xffff1000", "kworker", "write" },
		{ "1", "0xabc", "fio", "unknown" },
	};
	static const double values[] = { 10, 3 + 4, 2 };
	struct fake *f = *state;
	const struct metric_family *fam;
	struct run r;
	char err[512] = "";

	run_start(f, counters_yaml, &r);
	assert_int_equal(f->reads, 0); /* checking the config reads no map */
	/* Twice: a collect starts its count of dropped entries afresh. */
	for (int round = 0; round < 2; round++) {
		if (umetrics_collect(r.u, r.set, err, sizeof(err)))
			fail_msg("%s", err);
		assert_int_equal(r.set->n, 1);
		fam = family(r.set, "fake_events_total");
		assert_string_equal(fam->help, "Events by CPU, address, command and op");
		assert_int_equal(fam->type, METRIC_COUNTER);
		assert_labels(fam, names);
		assert_int_equal(fam->n, 3);
		for (size_t i = 0; i < 3; i++) {
			assert_series(fam, i, want[i]);
			assert_double(fam->series[i].value, values[i]);
		}
		assert_int_equal(umetrics_dropped(r.u), 2);
		metrics_clear(r.set);
	}
	assert_int_equal(f->reads, 2);
	run_end(&r);
}

/* The series of round r of test_counter_labels_kept, in order. */
static void assert_counter_round(const struct metric_set *set, const char *const (*want)[4],
				 const double *values, size_t n)
{
	const struct metric_family *fam = family(set, "fake_events_total");

	assert_int_equal(fam->n, n);
	for (size_t i = 0; i < n; i++) {
		assert_series(fam, i, want[i]);
		assert_double(fam->series[i].value, values[i]);
	}
}

/*
 * Scrapes that keep the last one's memory (metrics_reset, as serve's do):
 * every decoder of the config is pure, so a key met again where the last
 * scrape had it takes its series without decoding. Keys that come in
 * another order, and a key changed in place, get their own labels all the
 * same; a family that had another's place takes none of its series.
 */
static void test_counter_labels_kept(void **state)
{
	static const char *const want[][4] = {
		{ "0", "0xffff1000", "fio", "read" },
		{ "0", "0xffff1000", "kworker", "write" },
		{ "1", "0xabc", "fio", "unknown" },
	};
	static const char *const moved[][4] = {
		{ "1", "0xabc", "fio", "unknown" },
		{ "0", "0xffff1000", "kworker", "write" },
		{ "0", "0xffff1000", "fio", "read" },
	};
	static const char *const changed[][4] = {
		{ "7", "0x1", "fio", "write" },
		{ "0", "0xffff1000", "kworker", "write" },
		{ "0", "0xffff1000", "fio", "read" },
	};
	static const struct event_key other = { .cpu = 7, .addr = 0x1, .comm = "fio", .op = 1 };
	static const double values[] = { 10, 3 + 4, 2 }, moved_values[] = { 2, 3 + 4, 10 };
	static const char *const other_labels[] = { "cpu", "addr", "comm", "op", NULL };
	static const char *const other_values[] = { "x", "y", "z", "w" };
	struct fake *f = *state;
	struct fake_map *m = &f->maps[0];
	struct metric_family *fam;
	struct run r;
	char err[512] = "";

	run_start(f, counters_yaml, &r);
	for (int round = 0; round < 2; round++) { /* the second takes every series again */
		metrics_reset(r.set);
		assert_int_equal(umetrics_collect(r.u, r.set, err, sizeof(err)), 0);
		assert_counter_round(r.set, want, values, 3);
	}
	/* fio's entries swapped: the order breaks at the first key. */
	m->keys[0] = &events[4];
	m->keys[4] = &events[0];
	m->vals[0].u64 = event_counts[4];
	m->vals[4].u64 = event_counts[0];
	metrics_reset(r.set);
	assert_int_equal(umetrics_collect(r.u, r.set, err, sizeof(err)), 0);
	assert_counter_round(r.set, moved, moved_values, 3);
	/* The first key changed in place, the rest as last time. */
	m->keys[0] = &other;
	metrics_reset(r.set);
	assert_int_equal(umetrics_collect(r.u, r.set, err, sizeof(err)), 0);
	assert_counter_round(r.set, changed, moved_values, 3);
	/* Another family in this one's place for a scrape, then this one back:
	 * the keys are as before, the series kept here are not its own. */
	metrics_reset(r.set);
	fam = metrics_family(r.set, "other_total", "Other", METRIC_COUNTER, other_labels);
	assert_int_equal(metrics_set_value(fam, other_values, 1), 0);
	metrics_reset(r.set);
	assert_int_equal(umetrics_collect(r.u, r.set, err, sizeof(err)), 0);
	assert_counter_round(r.set, changed, moved_values, 3);
	m->keys[0] = &events[0];
	m->keys[4] = &events[4];
	m->vals[0].u64 = event_counts[0];
	m->vals[4].u64 = event_counts[4];
	run_end(&r);
}

static const char histograms_yaml[] =
    "name: fake\n"
    "object: fake.bpf.o\n"
    "metrics:\n"
    "  histograms:\n"
    "    - name: fake_wait_seconds\n"
    "      help: Waits\n"
    "      map: waits\n"
    "      bucket_type: exp2\n"
    "      bucket_multiplier: 0.001\n"
    "      bucket_min: 0\n"
    "      bucket_max: 3\n"
    "      labels:\n"
    "        - {name: op, size: 4, decoders: [{name: uint}]}\n"
    "        - {name: bucket, size: 4, decoders: [{name: uint}]}\n"
    "    - name: fake_io_latency_seconds\n"
    "      help: I/O latency\n"
    "      map: io_lat\n"
    "      bucket_type: iolat_latency\n"
    "      labels:\n"
    "        - {name: disk, size: 4, decoders: [{name: majorminor}]}\n";

/* exp2 buckets 0..3 in ms: bounds 1, 2, 4 and 8 ms; key 4 is the sum. */
static void check_waits(const struct metric_family *fam)
{
	static const char *const names[] = { "op", NULL };
	static const char *const op0[] = { "0" }, *const op1[] = { "1" };
	const struct metric_series *s;

	assert_int_equal(fam->type, METRIC_HISTOGRAM);
	assert_labels(fam, names); /* the bucket field is no label */
	assert_null(fam->le);
	assert_int_equal(fam->nule, 4);
	for (int b = 0; b < 4; b++)
		assert_double(fam->ule[b], ldexp(1.0, b) * 0.001);
	assert_int_equal(fam->n, 2);
	assert_series(fam, 0, op0);
	s = &fam->series[0];
	assert_null(s->hist.table);
	assert_int_equal(s->hist.owned[0], 1);
	assert_int_equal(s->hist.owned[1], 0);
	assert_int_equal(s->hist.owned[2], 5);
	assert_int_equal(s->hist.owned[3], 2); /* bucket 9 clamped into the last */
	assert_int_equal(s->hist.owned[4], 0); /* +Inf */
	assert_int_equal(s->hist.count, 8);
	assert_double(s->hist.sum, (double)1234 * 0.001);
	assert_series(fam, 1, op1);
	s = &fam->series[1];
	assert_int_equal(s->hist.owned[1], 7);
	assert_int_equal(s->hist.count, 7);
	assert_double(s->hist.sum, 0); /* no sum key */
}

/* iolat's histograms: the source's table and le bounds; entries with the
 * same labels summed slot by slot. */
static void check_io_latency(const struct fake *f, const struct metric_family *fam)
{
	static const char *const names[] = { "disk", NULL };
	static const char *const sda[] = { "8:0" }, *const nvme[] = { "259:1" };
	const struct metric_series *s;

	assert_int_equal(fam->type, METRIC_HISTOGRAM);
	assert_labels(fam, names);
	assert_ptr_equal(fam->le, buckets_default_le_ns);
	assert_int_equal(fam->nle, buckets_default_le_count);
	assert_int_equal(fam->nule, 0);
	assert_int_equal(fam->n, 2);
	assert_series(fam, 0, sda);
	s = &fam->series[0];
	assert_ptr_equal(s->hist.table, &f->lat);
	assert_int_equal(s->hist.count, 3 + 1 + 1);
	assert_int_equal(metrics_hist_cumulative(s, 1000000), 3 + 1);
	assert_int_equal(metrics_hist_cumulative(s, 2500000), 3 + 1 + 1);
	assert_int_equal(s->hist.sum_raw, 4 * 1000000 + 1 * 2000000);
	assert_double(s->hist.sum, 0.006);
	assert_series(fam, 1, nvme);
	s = &fam->series[1];
	assert_int_equal(s->hist.count, 2);
	assert_int_equal(metrics_hist_cumulative(s, 1000000), 0);
	assert_int_equal(s->hist.sum_raw, 4000000);
}

static void test_histograms(void **state)
{
	struct fake *f = *state;
	struct run r;
	char err[512] = "";

	run_start(f, histograms_yaml, &r);
	if (umetrics_collect(r.u, r.set, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(r.set->n, 2);
	check_waits(family(r.set, "fake_wait_seconds"));
	check_io_latency(f, family(r.set, "fake_io_latency_seconds"));
	assert_int_equal(umetrics_dropped(r.u), 0);
	run_end(&r);
}

/* A counter (a histogram, with extra lines) over `map` whose key is one
 * field of `size` bytes; the metric starts at line 5, column 7. */
static void counter_yaml(char *out, size_t len, const char *map, unsigned int size,
			 const char *extra)
{
	snprintf(out, len,
		 "name: fake\n"
		 "object: fake.bpf.o\n"
		 "metrics:\n"
		 "  %s:\n"
		 "    - name: fake_total\n"
		 "      help: Things\n"
		 "      map: %s\n"
		 "%s"
		 "      labels:\n"
		 "        - {name: key, size: %u, decoders: [{name: uint}]}\n",
		 extra[0] ? "histograms" : "counters", map, extra, size);
}

/* umetrics_new's error for the config: its rc, and err exactly. */
static void expect_error(struct fake *f, const char *map, unsigned int size, const char *extra,
			 const char *want)
{
	struct decoder_env *env = no_system();
	struct usource src;
	struct umetrics *u = NULL;
	struct uconfig c;
	char yaml[1024], err[512] = "";

	counter_yaml(yaml, sizeof(yaml), map, size, extra);
	parse(yaml, &c);
	fake_source(f, &src);
	assert_int_equal(umetrics_new(&u, &c, &src, env, err, sizeof(err)), -EINVAL);
	assert_null(u);
	assert_string_equal(err, want);
	uconfig_free(&c);
	decoder_env_free(env);
}

static void test_errors(void **state)
{
	struct fake *f = *state;

	/* The source's own words, at the metric's place in the file. */
	expect_error(f, "missing", 4, "",
		     "fake.yaml:5:7: map missing not found in the fake source");
	expect_error(f, "events", 8, "",
		     "fake.yaml:5:7: the labels of 'fake_total' (sizes and padding) add up to 8 "
		     "bytes, but map 'events' has 40-byte keys: give every field of the key "
		     "struct, in order, with its padding");
	expect_error(f, "wide", 4, "",
		     "fake.yaml:5:7: map 'wide' holds 16-byte values: a metric reads one u64 (8 "
		     "bytes) per key; make the value a __u64");
	expect_error(f, "io_lat", 4, "",
		     "fake.yaml:5:7: map 'io_lat' holds iolat's histograms: read it with "
		     "bucket_type iolat_latency or iolat_size");
	expect_error(f, "waits", 4, "      bucket_type: iolat_size\n",
		     "fake.yaml:5:7: bucket_type iolat_latency and iolat_size are for iolat's own "
		     "histograms; a program's maps use exp2, linear or fixed");
	assert_int_equal(f->reads, 0);
}

/* A map that fails to read: collect says so with the source's words. */
static void test_read_error(void **state)
{
	struct fake *f = *state;
	struct run r;
	char yaml[1024], err[512] = "";

	counter_yaml(yaml, sizeof(yaml), "broken", 4, "");
	run_start(f, yaml, &r);
	assert_int_equal(umetrics_collect(r.u, r.set, err, sizeof(err)), -EIO);
	assert_string_equal(err, "reading map broken: it broke");
	run_end(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_counter_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counter_labels_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_histograms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_error, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
