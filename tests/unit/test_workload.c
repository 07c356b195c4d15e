// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_workload.c - cgroup paths to workload kinds and names; whether
 * cgroups are alive, one by one and many at once. */
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

#include "sys/workload.h"

static void expect(const char *path, const char *kind, const char *name)
{
	struct workload w;

	workload_classify(path, &w);
	assert_string_equal(w.kind, kind);
	assert_string_equal(w.name, name);
}

/* User rules: refused with a reason, before regcomp sees a pattern that
 * would take it gigabytes (the guard fuzzing called for). */
static void test_rule_check(void **state)
{
	struct workload_rule ok = { "^/tenants/([^/]+)", "tenant", "\\1" };
	struct workload_rule bad = { "(unclosed", "x", "" };
	struct workload_rule huge = { "((a?)*(b+)*){1500}", "x", "" };
	char err[256];

	(void)state;
	assert_int_equal(workload_rule_check(&ok, err, sizeof(err)), 0);
	assert_int_not_equal(workload_rule_check(&bad, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "bad regular expression"));
	assert_int_not_equal(workload_rule_check(&huge, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "too complex"));
}

static void test_libvirt(void **state)
{
	(void)state;
	/* systemd layout, as libvirt names a machine scope (\x2d is "-"). */
	expect("/machine.slice/machine-qemu\\x2d3\\x2dweb01.scope", "vm", "web01");
	expect("/machine.slice/machine-qemu\\x2d12\\x2ddb\\x2dprimary.scope/libvirt/emulator", "vm",
	       "db-primary");
	/* cgroupfs layout (no systemd). */
	expect("/machine/qemu-7-build.libvirt-qemu/emulator", "vm", "build");
}

static void test_kubernetes(void **state)
{
	(void)state;
	expect("/kubepods.slice/kubepods-burstable.slice/"
	       "kubepods-burstable-pod1a2b_3c4d.slice/cri-containerd-0123456789abcdef.scope",
	       "pod", "1a2b-3c4d");
	expect("/kubepods/besteffort/pod99-88/crio-abc", "pod", "99-88");
}

static void test_containers_services_scopes(void **state)
{
	(void)state;
	expect("/system.slice/docker-0123456789abcdef0123.scope", "container", "0123456789ab");
	expect("/docker/fedcba9876543210fedcba98", "container", "fedcba987654");
	expect("/system.slice/nginx.service", "service", "nginx");
	expect("/user.slice/user-1000.slice/session-3.scope", "scope", "session-3");
	expect("/system.slice/postgresql@15-main.service", "service", "postgresql@15-main");
}

static void test_plain(void **state)
{
	(void)state;
	expect("/iolat-test-a", "cgroup", "/iolat-test-a");
	expect("", "cgroup", "/");
	expect("/", "cgroup", "/");
	/* Near misses stay plain cgroups. */
	expect("/machine-qemu", "cgroup", "/machine-qemu");
	expect("/podcast", "cgroup", "/podcast");
}

static void test_lookup_unattributed(void **state)
{
	struct workload_cache *c = workload_cache_new();

	(void)state;
	assert_non_null(c);
	assert_string_equal(workload_lookup(c, 0)->name, "unattributed");
	/* An id no cgroup has: named by its number, not guessed. */
	assert_string_equal(workload_lookup(c, 0xfffffffffff0ULL)->name, "cgroup-281474976710640");
	workload_cache_free(c);
}

#define TREE_DIRS 14

/* A directory tree stands in for a cgroup hierarchy (ids: inode numbers):
 * p/ with eight children (answered by a listing), q/ with two and the
 * root with r/ (one lookup each). */
static const char *const tree[TREE_DIRS] = {
	"p",	"p/a1", "p/a2", "p/a3", "p/a4", "p/a5", "p/a6",
	"p/a7", "p/a8", "q",	"q/b1", "q/b2", "r",	"r/c1",
};

static uint64_t ino_of(const char *root, const char *rel)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

/* workload_alive_many says what workload_alive says of each, and that is
 * what the model says. */
static void expect_alive(struct workload_cache *c, const uint64_t *ids, const bool *want)
{
	bool got[TREE_DIRS];

	memset(got, 0xff, sizeof(got));
	workload_alive_many(c, ids, TREE_DIRS, got);
	for (int i = 0; i < TREE_DIRS; i++) {
		if (got[i] != want[i] || workload_alive(c, ids[i]) != want[i])
			fail_msg("%s: alive_many %d, alive %d, want %d", tree[i], got[i],
				 workload_alive(c, ids[i]), want[i]);
	}
}

static void rm(const char *root, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(rmdir(path), 0);
}

static void test_alive_many(void **state)
{
	char root[] = "/tmp/iolat-test-alive.XXXXXX", path[512];
	uint64_t ids[TREE_DIRS];
	bool want[TREE_DIRS];
	struct workload_cache *c;

	(void)state;
	assert_non_null(mkdtemp(root));
	for (int i = 0; i < TREE_DIRS; i++) {
		snprintf(path, sizeof(path), "%s/%s", root, tree[i]);
		assert_int_equal(mkdir(path, 0755), 0);
		ids[i] = ino_of(root, tree[i]);
		want[i] = true;
	}
	c = workload_cache_new_at(root);
	assert_non_null(c);
	expect_alive(c, ids, want);
	/* Gone from a listed parent, from a looked-up one; one re-made at the
	 * same path is another cgroup (another id): the old one is gone. */
	rm(root, "p/a2"), want[2] = false;
	rm(root, "p/a7"), want[7] = false;
	rm(root, "q/b2"), want[11] = false;
	rm(root, "p/a5"), want[5] = false;
	snprintf(path, sizeof(path), "%s/p/a5", root);
	assert_int_equal(mkdir(path, 0755), 0);
	expect_alive(c, ids, want);
	/* A whole parent gone, children first, as rmdir wants. */
	for (int i = 1; i <= 8; i++) {
		snprintf(path, sizeof(path), "p/a%d", i);
		if (want[i] || i == 5)
			rm(root, path);
		want[i] = false;
	}
	rm(root, "p"), want[0] = false;
	expect_alive(c, ids, want);
	rm(root, "q/b1");
	rm(root, "q");
	rm(root, "r/c1");
	rm(root, "r");
	assert_int_equal(rmdir(root), 0);
	workload_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libvirt),
		cmocka_unit_test(test_kubernetes),
		cmocka_unit_test(test_containers_services_scopes),
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_lookup_unattributed),
		cmocka_unit_test(test_rule_check),
		cmocka_unit_test(test_alive_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
