// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_workload.c - cgroup paths to workload kinds and names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libvirt),
		cmocka_unit_test(test_kubernetes),
		cmocka_unit_test(test_containers_services_scopes),
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_lookup_unattributed),
		cmocka_unit_test(test_rule_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
