// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_config_file.c - contrib/iolat.yml, installed as /etc/iolat/iolat.yml,
 * says iolat's built-in defaults: loaded over them it changes no setting, and
 * its commented-out bucket lists, uncommented, are the default lists. Run from
 * the top of the tree (make unit does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "core/buckets.h"
#include "serve/serve_config.h"

#define FILE_PATH "contrib/iolat.yml"

static void test_file_is_the_defaults(void **state)
{
	struct serve_config want, got;
	char err[512] = "";

	(void)state;
	config_defaults(&want);
	config_defaults(&got);
	if (config_load(FILE_PATH, &got, err, sizeof(err)))
		fail_msg("%s", err);
	assert_memory_equal(&want, &got, sizeof(want));
}

/* The file with its "#buckets:" block uncommented, in a temporary file. */
static void uncomment_buckets(char *path, size_t len)
{
	FILE *in = fopen(FILE_PATH, "r"), *out;
	char line[1024];
	int fd, found = 0;

	snprintf(path, len, "/tmp/iolat-test-config.XXXXXX");
	fd = mkstemp(path);
	assert_true(in && fd >= 0);
	out = fdopen(fd, "w");
	assert_non_null(out);
	while (fgets(line, sizeof(line), in)) {
		if (!strncmp(line, "#buckets:", 9) || !strncmp(line, "#  latency_seconds:", 19) ||
		    !strncmp(line, "#  size_bytes:", 14)) {
			fputs(line + 1, out);
			found++;
		} else {
			fputs(line, out);
		}
	}
	fclose(in);
	fclose(out);
	assert_int_equal(found, 3);
}

static void test_commented_buckets_are_the_defaults(void **state)
{
	struct serve_config c;
	char path[64], err[512] = "";
	int rc;

	(void)state;
	uncomment_buckets(path, sizeof(path));
	config_defaults(&c);
	rc = config_load(path, &c, err, sizeof(err));
	unlink(path);
	if (rc)
		fail_msg("%s", err);
	assert_int_equal(c.nlat_le, buckets_default_le_count);
	assert_memory_equal(c.lat_le, buckets_default_le_ns, c.nlat_le * sizeof(uint64_t));
	assert_int_equal(c.nsize_le, buckets_default_size_le_count);
	assert_memory_equal(c.size_le, buckets_default_size_le, c.nsize_le * sizeof(uint64_t));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_is_the_defaults),
		cmocka_unit_test(test_commented_buckets_are_the_defaults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
