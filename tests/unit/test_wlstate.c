// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_wlstate.c - serve's workload label state file (serve/wlstate.h):
 * the round trip, and the files a restart must refuse whole: cut short,
 * of another format, of other pins, damaged, absent.
 */
#define _GNU_SOURCE
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

#include "serve/wlstate.h"

struct fixture {
	char dir[64];
	char path[128];
	struct wlstate st;
};

static const struct wlstate_owner owner = { .created_ns = 1764160000123456789ULL };

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	static const struct wlstate_set sets[] = {
		{ .id = COLLECTOR_CG_USER | 16, .empty_since = 0, .label = { "vm", "web01" } },
		{ .id = COLLECTOR_CG_USER | 17,
		  .empty_since = 1764160100,
		  .label = { "pod", "ns/a" } },
	};
	static const struct wlstate_cgroup cgroups[] = {
		{ .id = 4242, .set = COLLECTOR_CG_USER | 16, .first_seen = 1764160001 },
		{ .id = 4243, .set = WLABELS_ID_OTHER, .first_seen = 1764160002 },
		{ .id = 4244, .set = 0, .first_seen = 1764160003 },
	};

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/iolat-test-wlstate-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/workloads", f->dir);
	f->st.next_id = COLLECTOR_CG_USER | 18;
	f->st.folded_cgroups = 7;
	f->st.retired_cgroups = 5;
	f->st.expired_sets = 3;
	f->st.nsets = 2;
	f->st.sets = malloc(sizeof(sets));
	f->st.ncgroups = 3;
	f->st.cgroups = malloc(sizeof(cgroups));
	assert_non_null(f->st.sets);
	assert_non_null(f->st.cgroups);
	memcpy(f->st.sets, sets, sizeof(sets));
	memcpy(f->st.cgroups, cgroups, sizeof(cgroups));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char tmp[160];

	wlstate_free(&f->st);
	unlink(f->path);
	snprintf(tmp, sizeof(tmp), "%s.tmp", f->path);
	unlink(tmp);
	rmdir(f->dir);
	free(f);
	return 0;
}

static long file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (long)st.st_size;
}

/* Overwrites n bytes at off with p. */
static void poke(const char *path, long off, const void *p, size_t n)
{
	FILE *fp = fopen(path, "r+");

	assert_non_null(fp);
	assert_int_equal(fseek(fp, off, SEEK_SET), 0);
	assert_int_equal(fwrite(p, n, 1, fp), 1);
	assert_int_equal(fclose(fp), 0);
}

/* Reading refuses the file with rc and leaves out empty. */
static void assert_refused(const char *path, const struct wlstate_owner *o, int rc)
{
	struct wlstate out;

	memset(&out, 0xa5, sizeof(out));
	assert_int_equal(wlstate_read(path, o, &out), rc);
	assert_null(out.sets);
	assert_null(out.cgroups);
	assert_int_equal(out.nsets, 0);
	assert_int_equal(out.ncgroups, 0);
}

static void test_round_trip(void **state)
{
	struct fixture *f = *state;
	struct wlstate out;
	char tmp[160];

	assert_int_equal(wlstate_write(f->path, &owner, &f->st), 0);
	snprintf(tmp, sizeof(tmp), "%s.tmp", f->path);
	assert_int_not_equal(access(tmp, F_OK), 0);
	assert_int_equal(wlstate_read(f->path, &owner, &out), 0);
	assert_int_equal(out.next_id, f->st.next_id);
	assert_int_equal(out.folded_cgroups, 7);
	assert_int_equal(out.retired_cgroups, 5);
	assert_int_equal(out.expired_sets, 3);
	assert_int_equal(out.nsets, 2);
	assert_int_equal(out.ncgroups, 3);
	assert_memory_equal(out.sets, f->st.sets, 2 * sizeof(*out.sets));
	assert_memory_equal(out.cgroups, f->st.cgroups, 3 * sizeof(*out.cgroups));
	assert_string_equal(out.sets[1].label.name, "ns/a");
	wlstate_free(&out);
	assert_null(out.sets);

	/* Empty is a state too: no set, no cgroup. */
	wlstate_free(&f->st);
	f->st.next_id = COLLECTOR_CG_USER | 16;
	assert_int_equal(wlstate_write(f->path, &owner, &f->st), 0);
	assert_int_equal(wlstate_read(f->path, &owner, &out), 0);
	assert_int_equal(out.nsets + out.ncgroups, 0);
	assert_int_equal(out.next_id, COLLECTOR_CG_USER | 16);
	wlstate_free(&out);
}

/* Every cut of the file, down to nothing, is refused. */
static void test_truncated(void **state)
{
	struct fixture *f = *state;
	long size;

	assert_int_equal(wlstate_write(f->path, &owner, &f->st), 0);
	size = file_size(f->path);
	for (long n = size - 1; n >= 0; n--) {
		assert_int_equal(truncate(f->path, n), 0);
		assert_refused(f->path, &owner, -EPROTO);
	}
}

/* The header's words: magic, format, and the two record sizes. */
static void test_wrong_format(void **state)
{
	struct fixture *f = *state;
	uint32_t other = 1,
		 magic = 0x736c6f69u; /* format 1: no Kubernetes names; a series file's magic */

	for (long off = 0; off < 16; off += 4) {
		uint32_t was;
		FILE *fp;

		assert_int_equal(wlstate_write(f->path, &owner, &f->st), 0);
		fp = fopen(f->path, "r");
		assert_non_null(fp);
		assert_int_equal(fseek(fp, off, SEEK_SET), 0);
		assert_int_equal(fread(&was, sizeof(was), 1, fp), 1);
		fclose(fp);
		if (off == 0)
			poke(f->path, off, &magic, sizeof(magic));
		else if (off == 4)
			poke(f->path, off, &other, sizeof(other));
		else {
			was += 8;
			poke(f->path, off, &was, sizeof(was));
		}
		assert_refused(f->path, &owner, -EPROTO);
	}
}

/* Another collector's (other pins' creation time) is stale, not damaged. */
static void test_wrong_owner(void **state)
{
	struct fixture *f = *state;
	const struct wlstate_owner later = { .created_ns = owner.created_ns + 1 };

	assert_int_equal(wlstate_write(f->path, &owner, &f->st), 0);
	assert_refused(f->path, &later, -ESTALE);
	assert_refused(f->path, &(struct wlstate_owner){ 0 }, -ESTALE);
}

/* A changed byte anywhere after the header's tag, or a count that asks
 * for more than the file holds, is caught; no file is -ENOENT. */
static void test_damaged(void **state)
{
	struct fixture *f = *state;
	uint64_t huge = 1ULL << 60;
	long size;

	assert_int_equal(wlstate_write(f->path, &owner, &f->st), 0);
	size = file_size(f->path);
	for (long off = 24; off < size; off += 7) {
		unsigned char b;
		FILE *fp;

		assert_int_equal(wlstate_write(f->path, &owner, &f->st), 0);
		fp = fopen(f->path, "r");
		assert_non_null(fp);
		assert_int_equal(fseek(fp, off, SEEK_SET), 0);
		assert_int_equal(fread(&b, 1, 1, fp), 1);
		fclose(fp);
		b ^= 0x10;
		poke(f->path, off, &b, 1);
		assert_refused(f->path, &owner, -EPROTO);
	}
	/* nsets, then ncgroups: the header's last two words. */
	assert_int_equal(wlstate_write(f->path, &owner, &f->st), 0);
	poke(f->path, 56, &huge, sizeof(huge));
	assert_refused(f->path, &owner, -EPROTO);
	assert_int_equal(wlstate_write(f->path, &owner, &f->st), 0);
	poke(f->path, 64, &huge, sizeof(huge));
	assert_refused(f->path, &owner, -EPROTO);
	/* Appended bytes too. */
	assert_int_equal(wlstate_write(f->path, &owner, &f->st), 0);
	assert_int_equal(truncate(f->path, size + 8), 0);
	assert_refused(f->path, &owner, -EPROTO);
	unlink(f->path);
	assert_refused(f->path, &owner, -ENOENT);
}

/* Writes path anew, as the collector does: a new file renamed over it. */
static void rewrite(const char *path)
{
	char tmp[160];
	FILE *fp;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fp = fopen(tmp, "w");
	assert_non_null(fp);
	fputs("x", fp);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(rename(tmp, path), 0);
}

/* Each rewrite of the collector's file is seen once; none, or a removal,
 * is no save. */
static void test_series_changed(void **state)
{
	struct fixture *f = *state;
	struct wlstate_files files;

	memset(&files, 0, sizeof(files));
	snprintf(files.series, sizeof(files.series), "%s/series", f->dir);
	assert_false(wlstate_series_changed(&files));
	rewrite(files.series);
	assert_true(wlstate_series_changed(&files));
	assert_false(wlstate_series_changed(&files));
	rewrite(files.series);
	/* Two rewrites may give the file its inode back: the time tells them
	 * apart (the collector's are seconds apart; the clock is coarse). */
	usleep(20000);
	rewrite(files.series);
	assert_true(wlstate_series_changed(&files));
	assert_false(wlstate_series_changed(&files));
	assert_int_equal(unlink(files.series), 0);
	assert_false(wlstate_series_changed(&files));
	rewrite(files.series);
	assert_true(wlstate_series_changed(&files));
	assert_int_equal(unlink(files.series), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_series_changed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
