// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_holders.c - how a qemu process is told from others and where its VM
 * name is in its command line (-name NAME, -name guest=NAME,..., commas
 * written ",,"), as /proc/PID/cmdline has it: NUL-separated arguments.
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
#include <string.h>

#include "sys/holders.h"

/* A command line from its arguments joined by '|' (NUL in /proc). */
static size_t cmdline(const char *joined, char *out, size_t len)
{
	size_t n = strlen(joined) + 1;

	assert_true(n <= len);
	memcpy(out, joined, n);
	for (size_t i = 0; i < n; i++)
		if (out[i] == '|')
			out[i] = '\0';
	return n;
}

static void test_vm_name(void **state)
{
	static const struct {
		const char *args, *name;
	} ok[] = {
		/* libvirt */
		{ "/usr/bin/qemu-system-x86_64|-name|guest=vm7,debug-threads=on|-S", "vm7" },
		/* by hand, Proxmox */
		{ "qemu-system-x86_64|-m|512|-name|web01", "web01" },
		{ "/usr/bin/kvm|-id|100|-name|db-1,debug-threads=on", "db-1" },
		{ "qemu|--name|guest=x", "x" },
		{ "qemu|-name|debug-threads=on,guest=late", "late" },
		{ "qemu|-name|guest=a,,b,process=q", "a,b" }, /* ",," is a comma */
		{ "qemu|-name|first|-name|second", "second" },
		{ "qemu|-name|guest=", "" },
	};
	static const char *const none[] = {
		"qemu-system-x86_64|-m|512", "qemu|-name", /* a -name with nothing after it */
		"qemu|-name|process=only",   "qemu|-namex|vm", "qemu|name|vm",
	};
	char args[256], name[32];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		size_t n = cmdline(ok[i].args, args, sizeof(args));

		assert_int_equal(holders_vm_name(args, n, name, sizeof(name)), 0);
		assert_string_equal(name, ok[i].name);
	}
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		size_t n = cmdline(none[i], args, sizeof(args));

		assert_int_equal(holders_vm_name(args, n, name, sizeof(name)), -ENOENT);
	}
	/* A command line cut short (read up to a cap) ends inside -name's
	 * value: no NUL after it, so it is not trusted. */
	memcpy(args, "qemu\0-name\0guest=trunc", 22);
	assert_int_equal(holders_vm_name(args, 22, name, sizeof(name)), -ENOENT);
	/* A name longer than the buffer is cut, not overrun. */
	cmdline("qemu|-name|guest=averyveryverylongname", args, sizeof(args));
	assert_int_equal(holders_vm_name(args, 39, name, 8), 0);
	assert_string_equal(name, "averyve");
}

static void test_is_qemu(void **state)
{
	(void)state;
	assert_true(holders_is_qemu("/usr/bin/qemu-system-x86_64"));
	assert_true(holders_is_qemu("qemu-system-aarch64"));
	assert_true(holders_is_qemu("/usr/libexec/qemu-kvm"));
	assert_true(holders_is_qemu("/usr/bin/kvm"));
	assert_true(holders_is_qemu("kvm"));
	assert_false(holders_is_qemu("/usr/bin/python3"));
	assert_false(holders_is_qemu("/opt/qemu/bin/sleep"));
	assert_false(holders_is_qemu("kvm-helper"));
	assert_false(holders_is_qemu(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vm_name),
		cmocka_unit_test(test_is_qemu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
