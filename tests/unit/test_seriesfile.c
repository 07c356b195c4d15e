// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_seriesfile.c - the series a pinned collector saves for the next run
 * (core/seriesfile.h): a round trip keeps every live and kept series and
 * the handed-over counters; a file of other pins, a cut-off file and one
 * that is not a series file are refused with their own error, leaving the
 * store empty and the counters as they were. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "core/seriesfile.h"

static const struct seriesfile_owner owner = { .identity = 0x1234abcd5678ef00ULL,
					       .created_ns = 1764000000000000000ULL };

static struct iolat_key key_of(uint64_t cgroup, uint32_t dev)
{
	struct iolat_key k;

	memset(&k, 0, sizeof(k));
	k.cgroup = cgroup;
	k.dev = dev;
	return k;
}

/* A store of 3 live series and 2 kept ones (one under a live key, as a
 * gone disk that came back has), each with values that say which it is. */
static void fill(struct snapshot_store *st)
{
	struct iolat_val v;

	for (uint32_t i = 0; i < 3; i++) {
		struct iolat_key k = key_of(i + 1, 8 << 20);
		struct series *s = snapshot_store_live(st, &k);

		assert_non_null(s);
		s->val.ios = 100 + i;
		s->val.lat[IOLAT_VIEW_DEVICE].slots[i] = 100 + i;
		s->val.lat[IOLAT_VIEW_DEVICE].count = 100 + i;
		s->val.bytes = 4096ULL * (100 + i);
	}
	memset(&v, 0, sizeof(v));
	v.ios = 7;
	v.errors = 2;
	{
		struct iolat_key gone = key_of(1, 8 << 20),
				 retired = key_of(1ULL << 63 | 5, 8 << 20);

		assert_int_equal(snapshot_store_keep(st, &gone, &v), 0);
		v.ios = 9;
		assert_int_equal(snapshot_store_keep(st, &retired, &v), 0);
	}
}

static char *temp_path(void)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/test_seriesfile.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	return path;
}

static void test_round_trip(void **state)
{
	struct snapshot_store in = { 0 }, out = { 0 };
	uint64_t stats[IOLAT_STAT_COUNT], back[IOLAT_STAT_COUNT] = { 0 };
	char *path = temp_path();

	(void)state;
	for (int i = 0; i < IOLAT_STAT_COUNT; i++)
		stats[i] = 1000 + (uint64_t)i;
	fill(&in);
	assert_int_equal(seriesfile_write(path, &owner, &in, stats), 0);
	assert_int_equal(seriesfile_read(path, &owner, &out, back), 0);
	assert_int_equal(out.nlive, in.nlive);
	assert_int_equal(out.all.n, in.all.n);
	for (size_t i = 0; i < in.all.n; i++) {
		assert_memory_equal(&out.all.s[i].key, &in.all.s[i].key, sizeof(in.all.s[i].key));
		assert_memory_equal(&out.all.s[i].val, &in.all.s[i].val, sizeof(in.all.s[i].val));
	}
	assert_memory_equal(back, stats, sizeof(stats));
	snapshot_store_free(&in);
	snapshot_store_free(&out);
	unlink(path);
}

/* Refused reads leave an empty store and the counters untouched. */
static void expect_refused(const char *path, const struct seriesfile_owner *o, int err)
{
	struct snapshot_store out = { 0 };
	uint64_t back[IOLAT_STAT_COUNT];

	memset(back, 0x5a, sizeof(back));
	assert_int_equal(seriesfile_read(path, o, &out, back), err);
	assert_int_equal(out.all.n, 0);
	for (int i = 0; i < IOLAT_STAT_COUNT; i++)
		assert_true(back[i] == 0x5a5a5a5a5a5a5a5aULL);
}

static void test_refused(void **state)
{
	struct snapshot_store in = { 0 };
	struct seriesfile_owner other = owner;
	uint64_t stats[IOLAT_STAT_COUNT] = { 0 };
	char *path = temp_path();
	struct stat sb;
	FILE *f;

	(void)state;
	fill(&in);
	assert_int_equal(seriesfile_write(path, &owner, &in, stats), 0);
	/* Other pins: another identity, or the same one made again. */
	other.identity++;
	expect_refused(path, &other, -ESTALE);
	other = owner;
	other.created_ns++;
	expect_refused(path, &other, -ESTALE);
	/* Cut off in the last series. */
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(truncate(path, sb.st_size - 100), 0);
	expect_refused(path, &owner, -EPROTO);
	/* Not a series file at all. */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("# not series\n", f);
	fclose(f);
	expect_refused(path, &owner, -EPROTO);
	unlink(path);
	expect_refused(path, &owner, -ENOENT);
	snapshot_store_free(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
