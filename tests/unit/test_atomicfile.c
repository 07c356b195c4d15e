// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_atomicfile.c - a file replaced whole (util/atomicfile.h): the parts
 * land in order; a directory that does not exist, one that refuses new
 * files and a temp file that cannot be made each give -errno with a
 * message, leave the old file as it was and no temp file behind.
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

#include "util/atomicfile.h"
#include "util/readfile.h"

struct fixture {
	char dir[64];
	char path[128];
	char tmp[160];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_atomicfile.XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/state", f->dir);
	snprintf(f->tmp, sizeof(f->tmp), "%s.tmp", f->path);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	chmod(f->dir, 0700);
	unlink(f->path);
	rmdir(f->tmp);
	unlink(f->tmp);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* The file's contents, which must exist. */
static char *contents(const char *path)
{
	char *text = NULL;

	assert_int_equal(readfile_all(path, 4096, &text, NULL), 0);
	return text;
}

static int write_text(const char *path, const char *a, const char *b, char *err, size_t len)
{
	const struct atomicfile_part parts[] = {
		{ a, strlen(a) },
		{ NULL, 0 },
		{ b, strlen(b) },
	};

	return atomicfile_write(path, parts, 3, err, len);
}

static void test_writes_and_replaces(void **state)
{
	struct fixture *f = *state;
	char err[256] = "";
	char *text;

	assert_int_equal(write_text(f->path, "first ", "file", err, sizeof(err)), 0);
	text = contents(f->path);
	assert_string_equal(text, "first file");
	free(text);
	assert_int_equal(write_text(f->path, "second", "", err, sizeof(err)), 0);
	text = contents(f->path);
	assert_string_equal(text, "second");
	free(text);
	assert_int_equal(access(f->tmp, F_OK), -1);
	assert_string_equal(err, "");
}

static void test_no_directory(void **state)
{
	struct fixture *f = *state;
	char path[192], err[256] = "";

	snprintf(path, sizeof(path), "%s/none/state", f->dir);
	assert_int_equal(write_text(path, "a", "b", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot create"));
	assert_non_null(strstr(err, "/none/state.tmp"));
	assert_non_null(strstr(err, strerror(ENOENT)));
}

/* A directory that refuses new files: mode 0555, or for root (whom modes
 * do not stop) sysfs, which takes no new files from anyone. */
static void test_read_only_directory(void **state)
{
	struct fixture *f = *state;
	char err[256] = "";
	const char *path = f->path;
	char *text;
	int rc;

	assert_int_equal(write_text(f->path, "old", "", err, sizeof(err)), 0);
	assert_int_equal(chmod(f->dir, 0555), 0);
	if (!access(f->dir, W_OK))
		path = "/sys/iolat-test-atomicfile";
	rc = write_text(path, "new", "", err, sizeof(err));
	assert_true(rc == -EACCES || rc == -EPERM || rc == -EROFS);
	assert_non_null(strstr(err, "cannot create"));
	assert_non_null(strstr(err, strerror(-rc)));
	text = contents(f->path);
	assert_string_equal(text, "old");
	free(text);
}

/* The temp file's name is taken by a directory: the old file stays. */
static void test_old_file_stays(void **state)
{
	struct fixture *f = *state;
	char err[256] = "";
	char *text;

	assert_int_equal(write_text(f->path, "old", "", err, sizeof(err)), 0);
	assert_int_equal(mkdir(f->tmp, 0700), 0);
	assert_int_equal(write_text(f->path, "new", "", err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, f->tmp));
	text = contents(f->path);
	assert_string_equal(text, "old");
	free(text);
}

static void test_name_too_long(void **state)
{
	char path[5000], err[256] = "";

	(void)state;
	memset(path, 'a', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(write_text(path, "x", "", err, sizeof(err)), -ENAMETOOLONG);
	assert_non_null(strstr(err, strerror(ENAMETOOLONG)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_writes_and_replaces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_only_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_file_stays, setup, teardown),
		cmocka_unit_test_setup_teardown(test_name_too_long, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
