// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_blockstat.c - the kernel's completed-I/O counts: /sys/block/X/stat
 * lines of 11, 15 and 17 fields (and what is not one), a disk's number and
 * size, and serve's comparison with iolat's counts (exporter_kstat) over a
 * sysfs-like fixture: the baseline, the difference, and each thing that
 * makes the baseline be taken again.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>
/* cmocka needs the four above first. */

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/kcompare.h"
#include "metrics/expo_text.h"
#include "serve/exporter_kstat.h"
#include "sys/blockstat.h"
#include "util/buf.h"

static char tmpdir[] = "/tmp/iolat-test-blockstat.XXXXXX";

static void test_parse_fields(void **state)
{
	struct blockstat b;

	(void)state;
	/* 4.18 and before: reads and writes only. */
	assert_int_equal(blockstat_parse("  5 0 40 3   7 1 56 2 0 4 5\n", &b), 0);
	assert_true(b.has[BLOCKSTAT_READ] && b.has[BLOCKSTAT_WRITE]);
	assert_false(b.has[BLOCKSTAT_DISCARD] || b.has[BLOCKSTAT_FLUSH]);
	assert_int_equal(b.done[BLOCKSTAT_READ], 5);
	assert_int_equal(b.done[BLOCKSTAT_WRITE], 7);
	/* 4.19 to 5.4: discards too. */
	assert_int_equal(blockstat_parse("5 0 40 3 7 1 56 2 0 4 5 9 0 72 1", &b), 0);
	assert_true(b.has[BLOCKSTAT_DISCARD] && !b.has[BLOCKSTAT_FLUSH]);
	assert_int_equal(b.done[BLOCKSTAT_DISCARD], 9);
	/* 5.5 and later: flushes; counts past 32 bits. */
	assert_int_equal(blockstat_parse("9881111 0 79665506 1251756 649039 1199 8668476 93073 "
					 "0 212444 1344838 12 0 12582912 0 251 7\n",
					 &b),
			 0);
	assert_true(b.has[BLOCKSTAT_FLUSH]);
	assert_int_equal(b.done[BLOCKSTAT_READ], 9881111);
	assert_int_equal(b.done[BLOCKSTAT_WRITE], 649039);
	assert_int_equal(b.done[BLOCKSTAT_DISCARD], 12);
	assert_int_equal(b.done[BLOCKSTAT_FLUSH], 251);
	assert_int_equal(blockstat_parse("4294967296 0 0 0 1 0 0 0 0 0 0 0 0 0 0 3 0", &b), 0);
	assert_true(b.done[BLOCKSTAT_READ] == 4294967296ull);
	/* A later kernel's extra fields are ignored. */
	assert_int_equal(blockstat_parse("1 0 0 0 2 0 0 0 0 0 0 3 0 0 0 4 0 99 98", &b), 0);
	assert_int_equal(b.done[BLOCKSTAT_FLUSH], 4);
	assert_string_equal(blockstat_group_name(BLOCKSTAT_DISCARD), "discard");
	assert_null(blockstat_group_name(BLOCKSTAT_GROUPS));
}

static void test_parse_refuses(void **state)
{
	static const char *const bad[] = {
		"",
		"1 2 3 4 5 6 7 8 9 10",			     /* 10 fields */
		"1 2 3 4 5 6 7 8 9 10 x",		     /* not a number */
		"1 2 3 4 5 6 7 8 9 10 -1",		     /* negative */
		"1 2 3 4 5 6 7 8 9 10 11z",		     /* trailing letters */
		"1 2 3 4 5 6 7 8 9 10 99999999999999999999", /* past 64 bits */
		"1 2 3 4 5 6 7 8 9 10 11\n1",		     /* two lines */
	};
	struct blockstat b;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(blockstat_parse(bad[i], &b), -EINVAL);
}

static void write_file(const char *dir, const char *leaf, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, leaf);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A disk in the fixture: name/{dev,size,stat,queue/iostats}. */
static void put_disk(const char *name, const char *dev, const char *size, const char *stat,
		     int iostats)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, name);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/%s/queue", tmpdir, name);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/%s", tmpdir, name);
	write_file(dir, "dev", dev);
	write_file(dir, "size", size);
	write_file(dir, "stat", stat);
	write_file(dir, "queue/iostats", iostats ? "1\n" : "0\n");
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(path);
}

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/iolat-test-blockstat.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void test_disk_files(void **state)
{
	struct blockstat b;
	struct kcompare_disk d[4];
	uint32_t dev;
	uint64_t sectors;

	(void)state;
	put_disk("loop9", "7:9\n", "131072\n", "3 0 0 0 4 0 0 0 0 0 0 0 0 0 0 1 0\n", 0);
	put_disk("loop8", "7:8\n", "0\n", "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", 1);
	put_disk("vdb", "254:16\n", "2048\n", "1 0 0 0 2 0 0 0 0 0 0\n", 1);
	assert_int_equal(blockstat_disk(tmpdir, "loop9", &dev, &sectors), 0);
	assert_int_equal(dev, (7u << 20) | 9);
	assert_int_equal(sectors, 131072);
	assert_int_equal(blockstat_read(tmpdir, "loop9", &b), 0);
	assert_false(b.iostats);
	assert_int_equal(b.done[BLOCKSTAT_WRITE], 4);
	assert_int_equal(blockstat_read(tmpdir, "nosuch", &b), -ENOENT);
	/* Only disks with a medium, ascending by number; -d's alone. */
	assert_int_equal(kcompare_list(tmpdir, 0, d, 4), 2);
	assert_string_equal(d[0].name, "loop9");
	assert_string_equal(d[1].name, "vdb");
	assert_int_equal(kcompare_list(tmpdir, (254u << 20) | 16, d, 4), 1);
	assert_string_equal(d[0].name, "vdb");
	assert_int_equal(kcompare_group_of_op(IOLAT_OP_WRITE_ZEROES), BLOCKSTAT_WRITE);
	assert_int_equal(kcompare_group_of_op(IOLAT_OP_OTHER), -1);
}

/* The sample of series `series` in k's exposition over snap; -1e9 if none. */
static double sample(struct exporter_kstat *k, const struct snapshot *snap, const char *series)
{
	struct metric_set *set = calloc(1, sizeof(*set));
	struct buf out = {};
	double v = -1e9;
	size_t n = strlen(series);

	assert_non_null(set);
	exporter_kstat_sample(k);
	assert_int_equal(exporter_kstat_metrics(k, snap, set), 0);
	assert_int_equal(expo_text(set, false, &out), 0);
	assert_true(buf_reserve(&out, out.len + 1));
	out.data[out.len] = '\0';
	for (const char *p = out.data; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, series, n) && p[n] == ' ')
			v = strtod(p + n + 1, NULL);
	metrics_clear(set);
	free(set);
	free(out.data);
	return v;
}

#define UNSEEN(op) "iolat_block_unseen_completions{device=\"vdb\",op=\"" op "\"}"
#define KERNEL(op) "iolat_block_kernel_completed_total{device=\"vdb\",op=\"" op "\"}"
#define VDB (254u << 20 | 16)

static void set_ios(struct snapshot *snap, int op, uint64_t ios)
{
	struct iolat_key key = { .dev = VDB, .op = (__u8)op };
	struct series *s = (struct series *)snapshot_find(snap, &key);

	if (!s)
		s = snapshot_push(snap, &key);
	assert_non_null(s);
	s->val.ios = ios;
}

static void test_kstat_baseline(void **state)
{
	struct exporter_kstat *k = exporter_kstat_new(tmpdir);
	struct snapshot snap = {};
	size_t n;

	(void)state;
	assert_non_null(k);
	/* Before a pass: no disk known, no series. */
	assert_true(sample(k, &snap, KERNEL("read")) == -1e9);
	/* Known at the pass with 100 reads behind it, iolat having seen 2. */
	put_disk("vdb", "254:16\n", "2048\n", "100 0 0 0 50 0 0 0 0 0 0 0 0 0 0 7 0\n", 1);
	set_ios(&snap, IOLAT_OP_READ, 2);
	assert_int_equal(exporter_kstat_pass(k, &snap), 0);
	assert_int_equal(exporter_kstat_devs(k, &n)[0], VDB);
	assert_int_equal(n, 1);
	assert_true(sample(k, &snap, KERNEL("read")) == 100);
	assert_true(sample(k, &snap, UNSEEN("read")) == 0);
	/* 10 reads, iolat sees 9; 3 writes (one a write zeroes) all seen;
	 * 2 flushes, iolat sees none. */
	put_disk("vdb", "254:16\n", "2048\n", "110 0 0 0 53 0 0 0 0 0 0 0 0 0 0 9 0\n", 1);
	set_ios(&snap, IOLAT_OP_READ, 11);
	set_ios(&snap, IOLAT_OP_WRITE, 2);
	set_ios(&snap, IOLAT_OP_WRITE_ZEROES, 1);
	set_ios(&snap, IOLAT_OP_OTHER, 40); /* no kernel group: left out */
	assert_true(sample(k, &snap, UNSEEN("read")) == 1);
	assert_true(sample(k, &snap, UNSEEN("write")) == 0);
	assert_true(sample(k, &snap, UNSEEN("flush")) == 2);
	assert_true(sample(k, &snap, UNSEEN("discard")) == 0);
	/* A pass keeps the baseline: the difference stays. */
	assert_int_equal(exporter_kstat_pass(k, &snap), 0);
	assert_true(sample(k, &snap, UNSEEN("read")) == 1);
	/* iostats off: the kernel stops counting reads and writes; their
	 * differences go, the flushes' stays, until a pass rebases. */
	put_disk("vdb", "254:16\n", "2048\n", "110 0 0 0 53 0 0 0 0 0 0 0 0 0 0 9 0\n", 0);
	assert_true(sample(k, &snap, UNSEEN("read")) == -1e9);
	assert_true(sample(k, &snap, KERNEL("read")) == 110);
	assert_true(sample(k, &snap, UNSEEN("flush")) == 2);
	assert_int_equal(exporter_kstat_pass(k, &snap), 0);
	assert_true(sample(k, &snap, UNSEEN("flush")) == 0);
	/* Made anew (counts from 0): the scrape shows no difference, the next
	 * pass rebases. */
	put_disk("vdb", "254:16\n", "2048\n", "1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", 1);
	assert_true(sample(k, &snap, UNSEEN("read")) == -1e9);
	assert_int_equal(exporter_kstat_pass(k, &snap), 0);
	assert_true(sample(k, &snap, UNSEEN("read")) == 0);
	/* iolat's counts dropped (the disk expired): rebased too. */
	set_ios(&snap, IOLAT_OP_READ, 0);
	assert_int_equal(exporter_kstat_pass(k, &snap), 0);
	put_disk("vdb", "254:16\n", "2048\n", "4 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", 1);
	set_ios(&snap, IOLAT_OP_READ, 3);
	assert_true(sample(k, &snap, UNSEEN("read")) == 0);
	/* No medium: no longer known, no series. */
	put_disk("vdb", "254:16\n", "0\n", "4 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", 1);
	assert_int_equal(exporter_kstat_pass(k, &snap), 0);
	exporter_kstat_devs(k, &n);
	assert_int_equal(n, 0);
	assert_true(sample(k, &snap, KERNEL("read")) == -1e9);
	snapshot_free(&snap);
	exporter_kstat_free(k);
}

/* A disk there at start: known at once (its zero series and the kernel's
 * count from the first scrape), its difference only once a pass took the
 * baseline against the collector's series as the fold left them. */
static void test_kstat_known_at_start(void **state)
{
	struct exporter_kstat *k;
	struct snapshot snap = {};
	size_t n;

	(void)state;
	put_disk("vdb", "254:16\n", "2048\n", "100 0 0 0 50 0 0 0 0 0 0 0 0 0 0 7 0\n", 1);
	k = exporter_kstat_new(tmpdir);
	assert_non_null(k);
	assert_int_equal(exporter_kstat_devs(k, &n)[0], VDB);
	assert_int_equal(n, 1);
	assert_true(sample(k, &snap, KERNEL("read")) == 100);
	assert_true(sample(k, &snap, UNSEEN("read")) == -1e9);
	/* The adopted collector's fold brings 40 reads: in the baseline. */
	set_ios(&snap, IOLAT_OP_READ, 40);
	assert_int_equal(exporter_kstat_pass(k, &snap), 0);
	assert_true(sample(k, &snap, UNSEEN("read")) == 0);
	snapshot_free(&snap);
	exporter_kstat_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fields),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test_setup_teardown(test_disk_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kstat_baseline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kstat_known_at_start, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
