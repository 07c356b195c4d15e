// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_decoders.c - key fields to label values: every decoder, chains,
 * compile errors, system lookups against fixture files and directories,
 * and caches that stay at their caps whatever arrives.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>
/* cmocka needs the four above first. */

#include <bpf/bpf.h>
#include <errno.h>
#include <ftw.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/disks.h"
#include "sys/ksyms.h"
#include "uprog/decoders.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static struct udec_conf dec(enum udec_kind kind)
{
	return (struct udec_conf){ .kind = kind, .line = 7, .col = 9 };
}

static struct ulabel_conf label(unsigned size, struct udec_conf *d, size_t n)
{
	return (struct ulabel_conf){
		.name = "l", .size = size, .dec = d, .ndec = n, .line = 6, .col = 5
	};
}

static int no_maps(void *arg, const char *name)
{
	(void)arg;
	(void)name;
	return -1;
}

/* Compiles l (which must succeed), decodes raw, checks the result. */
static void expect_env(struct decoder_env *env, const struct ulabel_conf *l, const void *raw,
		       int want_rc, const char *want)
{
	struct label_decoder *d;
	char err[256] = "", out[512];
	int rc;

	rc = label_decoder_new(l, no_maps, NULL, &d, err, sizeof(err));
	if (rc)
		fail_msg("label_decoder_new: %s", err);
	rc = label_decode(d, env, raw, out, sizeof(out));
	assert_int_equal(rc, want_rc);
	if (want_rc == DECODE_OK)
		assert_string_equal(out, want);
	label_decoder_free(d);
}

static void expect(const struct ulabel_conf *l, const void *raw, int want_rc, const char *want)
{
	struct decoder_env *env = decoder_env_new(NULL);

	assert_non_null(env);
	expect_env(env, l, raw, want_rc, want);
	decoder_env_free(env);
}

/* One decoder on a field of size bytes. */
static void expect1(enum udec_kind kind, unsigned size, const void *raw, const char *want)
{
	struct udec_conf d = dec(kind);
	struct ulabel_conf l = label(size, &d, 1);

	expect(&l, raw, DECODE_OK, want);
}

static void expect_error(const struct ulabel_conf *l, decoder_map_fd_fn fd_of, void *arg,
			 const char *want)
{
	struct label_decoder *d = (void *)1;
	char err[256] = "";

	assert_true(label_decoder_new(l, fd_of, arg, &d, err, sizeof(err)) < 0);
	assert_null(d);
	if (strncmp(err, want, strlen(want)))
		fail_msg("error \"%s\", want it to start with \"%s\"", err, want);
}

static void test_uint(void **state)
{
	uint8_t u8 = 200;
	uint16_t u16 = 65535;
	uint32_t u32 = 4000000000u;
	uint64_t u64 = 18446744073709551615ull;

	(void)state;
	expect1(UDEC_UINT, 1, &u8, "200");
	expect1(UDEC_UINT, 2, &u16, "65535");
	expect1(UDEC_UINT, 4, &u32, "4000000000");
	expect1(UDEC_UINT, 8, &u64, "18446744073709551615");
}

static void test_hex(void **state)
{
	uint32_t u32 = 0xdeadbeef;
	uint16_t u16 = 0x0a;
	const unsigned char odd[3] = { 0xab, 0x01, 0xff };
	const unsigned char sixteen[16] = { 0xfe, 0x80, [15] = 0x01 };

	(void)state;
	expect1(UDEC_HEX, 4, &u32, "0xdeadbeef");
	expect1(UDEC_HEX, 2, &u16, "0xa");
	/* Not a number's size: the bytes in order, as a hex dump. */
	expect1(UDEC_HEX, 3, odd, "ab01ff");
	expect1(UDEC_HEX, 16, sixteen, "fe800000000000000000000000000001");
}

static void test_string(void **state)
{
	struct udec_conf d = dec(UDEC_STRING);
	struct ulabel_conf l = label(4, &d, 1);
	struct decoder_env *env = decoder_env_new(NULL);
	struct label_decoder *ld;
	char err[128], small[3];

	(void)state;
	expect1(UDEC_STRING, 8, "sda\0junk", "sda");
	/* A field filled to the end has no NUL: all of it, nothing past it. */
	expect1(UDEC_STRING, 4, "abcdEFGH", "abcd");
	expect1(UDEC_STRING, 4, "\0bcd", "");
	/* Cut to the caller's buffer, still terminated. */
	assert_int_equal(label_decoder_new(&l, NULL, NULL, &ld, err, sizeof(err)), 0);
	assert_int_equal(label_decode(ld, env, "abcd", small, sizeof(small)), DECODE_OK);
	assert_string_equal(small, "ab");
	label_decoder_free(ld);
	decoder_env_free(env);
}

static void test_static_map_chain(void **state)
{
	char *from[] = { "1", "2" }, *to[] = { "read", "write" };
	struct udec_conf d[2] = { dec(UDEC_UINT), dec(UDEC_STATIC_MAP) };
	struct ulabel_conf l = label(1, d, 2);
	uint8_t v;

	(void)state;
	d[1].from = from;
	d[1].to = to;
	d[1].nmap = 2;
	v = 1;
	expect(&l, &v, DECODE_OK, "read");
	v = 2;
	expect(&l, &v, DECODE_OK, "write");
	v = 3;
	expect(&l, &v, DECODE_OK, "unknown");
	d[1].allow_unknown = true;
	expect(&l, &v, DECODE_OK, "3");
	/* First in a chain, static_map reads the field as a string. */
	expect(&(struct ulabel_conf){ .size = 2, .dec = &d[1], .ndec = 1 }, "2", DECODE_OK,
	       "write");
}

/* Whether the chain of these kinds (on an 8-byte field) is pure. */
static bool chain_pure(const enum udec_kind *kinds, size_t n)
{
	char *from[] = { "1" }, *to[] = { "read" };
	struct udec_conf d[4];
	struct ulabel_conf l = label(8, d, n);
	struct label_decoder *ld;
	char err[256] = "";
	bool pure;

	for (size_t i = 0; i < n; i++) {
		d[i] = dec(kinds[i]);
		d[i].from = from;
		d[i].to = to;
		d[i].nmap = 1;
	}
	if (label_decoder_new(&l, no_maps, NULL, &ld, err, sizeof(err)))
		fail_msg("label_decoder_new: %s", err);
	pure = label_decoder_pure(ld);
	label_decoder_free(ld);
	return pure;
}

/* Pure: the output from the key's bytes alone, the same at every scrape;
 * a chain is pure only if each step is. */
static void test_pure(void **state)
{
	static const enum udec_kind pure[] = { UDEC_UINT, UDEC_HEX, UDEC_STRING, UDEC_SYSCALL,
					       UDEC_ERRNO };
	static const enum udec_kind system[] = { UDEC_KSYM, UDEC_MAJORMINOR, UDEC_CGROUP };

	(void)state;
	for (size_t i = 0; i < N(pure); i++)
		assert_true(chain_pure(&pure[i], 1));
	for (size_t i = 0; i < N(system); i++)
		assert_false(chain_pure(&system[i], 1));
	assert_true(chain_pure((const enum udec_kind[]){ UDEC_UINT, UDEC_STATIC_MAP }, 2));
	assert_false(chain_pure((const enum udec_kind[]){ UDEC_CGROUP, UDEC_STATIC_MAP }, 2));
}

static void test_regexp_filter(void **state)
{
	struct udec_conf d[2] = { dec(UDEC_STRING), dec(UDEC_REGEXP) };
	struct ulabel_conf l = label(8, d, 2);

	(void)state;
	d[1].regexp = "^(sd|vd)[a-z]+$";
	expect(&l, "sda\0\0\0\0\0", DECODE_OK, "sda");
	expect(&l, "vdb\0\0\0\0\0", DECODE_OK, "vdb");
	expect(&l, "loop0\0\0\0", DECODE_DROP, NULL);
	expect(&l, "sda1\0\0\0\0", DECODE_DROP, NULL);
}

static void test_regexp_rewrite(void **state)
{
	struct udec_conf d[2] = { dec(UDEC_STRING), dec(UDEC_REGEXP) };
	struct ulabel_conf l = label(16, d, 2);

	(void)state;
	d[1].regexp = "^(nvme[0-9]+)n([0-9]+)";
	d[1].replace = "\\1/ns\\2 (\\0)";
	expect(&l, "nvme0n1p2\0\0\0\0\0\0\0", DECODE_OK, "nvme0/ns1 (nvme0n1)");
	expect(&l, "sda\0\0\0\0\0\0\0\0\0\0\0\0\0", DECODE_DROP, NULL);
}

static void test_errno(void **state)
{
	int32_t v;
	int64_t v64 = -13;
	int8_t v8 = -5;
	struct udec_conf d[2] = { dec(UDEC_STRING), dec(UDEC_ERRNO) };

	(void)state;
	v = -2;
	expect1(UDEC_ERRNO, 4, &v, "ENOENT");
	v = 2;
	expect1(UDEC_ERRNO, 4, &v, "ENOENT");
	v = 0;
	expect1(UDEC_ERRNO, 4, &v, "0");
	v = -100000;
	expect1(UDEC_ERRNO, 4, &v, "-100000");
	v = 100000;
	expect1(UDEC_ERRNO, 4, &v, "100000");
	expect1(UDEC_ERRNO, 8, &v64, "EACCES");
	expect1(UDEC_ERRNO, 1, &v8, "EIO");
	/* From a string, either sign, decimal or hex. */
	expect(&(struct ulabel_conf){ .size = 4, .dec = d, .ndec = 2 }, "-28\0", DECODE_OK,
	       "ENOSPC");
	expect(&(struct ulabel_conf){ .size = 4, .dec = d, .ndec = 2 }, "0x1c", DECODE_OK,
	       "ENOSPC");
}

static void test_syscall(void **state)
{
	uint32_t v32 = 0;
	uint64_t v64 = 1;
	int64_t neg = -1;

	(void)state;
	expect1(UDEC_SYSCALL, 4, &v32, "read");
	expect1(UDEC_SYSCALL, 8, &v64, "write");
	v32 = 99999;
	expect1(UDEC_SYSCALL, 4, &v32, "99999");
	expect1(UDEC_SYSCALL, 8, &neg, "-1");
}

/* A later numeric decoder parses its input: decimal or 0x-hex only. */
static void test_numeric_chains(void **state)
{
	struct udec_conf d[2] = { dec(UDEC_STRING), dec(UDEC_HEX) };
	struct ulabel_conf l = label(4, d, 2);

	(void)state;
	expect(&l, "255\0", DECODE_OK, "0xff");
	d[1] = dec(UDEC_UINT);
	expect(&l, "0x1f", DECODE_OK, "31");
	expect(&l, "010\0", DECODE_OK, "10"); /* never octal */
	expect(&l, "12a\0", -EINVAL, NULL);
	expect(&l, "\0\0\0\0", -EINVAL, NULL);
	expect(&l, "-1\0\0", -EINVAL, NULL);
	expect(&l, " 1\0\0", -EINVAL, NULL);
}

static void test_errors(void **state)
{
	struct udec_conf d[2] = { dec(UDEC_UINT), dec(UDEC_REGEXP) };
	struct ulabel_conf l = label(3, d, 1);

	(void)state;
	expect_error(&l, NULL, NULL,
		     "7:9: decoder uint takes a field of 1, 2, 4 or 8 bytes, not 3");
	d[0] = dec(UDEC_KSYM);
	l.size = 4;
	expect_error(&l, NULL, NULL, "7:9: decoder ksym takes a field of 8 bytes, not 4");
	/* Later decoders read strings: no size to check. */
	d[0] = dec(UDEC_STRING);
	l.ndec = 2;
	d[1].regexp = "(";
	d[1].line = 12;
	d[1].col = 3;
	expect_error(&l, NULL, NULL, "12:3: bad regexp \"(\": ");
	d[1].regexp = "(a)";
	d[1].replace = "\\1\\2";
	expect_error(&l, NULL, NULL, "12:3: replace uses \\2, the regexp has 1 group(s)");
	d[1] = dec(UDEC_KSTACK);
	d[1].stack_map = "stacks";
	expect_error(&l, no_maps, NULL, "7:9: kstack: no map named \"stacks\"");
	l.ndec = 0;
	expect_error(&l, NULL, NULL, "6:5: label \"l\" has no decoders");
}

/* ---- fixtures ----------------------------------------------------------- */

static char tmpdir[] = "/tmp/iolat-test-decoders.XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *fixture(const char *rel)
{
	static char path[2][4096];
	static int turn;
	char *p = path[turn++ & 1];

	snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, rel);
	return p;
}

static uint64_t ino_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

static void test_ksym(void **state)
{
	struct decoder_env_paths paths = { .kallsyms = fixture("kallsyms") };
	struct udec_conf d = dec(UDEC_KSYM);
	struct ulabel_conf l = label(8, &d, 1);
	struct decoder_env *env;
	struct decoder_cache_sizes sz;
	uint64_t a;

	(void)state;
	write_file(paths.kallsyms, "0000000000000000 A fixed_percpu_data\n"
				   "ffffffff81002000 T vfs_read\n"
				   "ffffffff81000000 T _stext\n"
				   "ffffffff81000000 T startup_64\n"
				   "ffffffff81001000 t helper\n"
				   "ffffffff82000000 T _etext\n"
				   "ffffffff82400000 D some_data\n"
				   "ffffffffc0001000 t mod_fn\t[mymod]\n");
	env = decoder_env_new(&paths);
	assert_non_null(env);
	a = 0xffffffff81002010;
	expect_env(env, &l, &a, DECODE_OK, "vfs_read"); /* nearest at or below */
	a = 0xffffffff81001000;
	expect_env(env, &l, &a, DECODE_OK, "helper");
	a = 0xffffffff81000004;
	expect_env(env, &l, &a, DECODE_OK, "_stext"); /* aliases: the first listed */
	a = 0xffffffffc0001234;
	expect_env(env, &l, &a, DECODE_OK, "mod_fn"); /* no "[mymod]" */
	a = 0;
	expect_env(env, &l, &a, DECODE_OK, "0x0");
	a = 0x1000;
	expect_env(env, &l, &a, DECODE_OK, "0x1000"); /* below the first */
	a = 0xffffffff82000010;
	expect_env(env, &l, &a, DECODE_OK, "0xffffffff82000010"); /* past the text */
	a = 0xffffffff82400010;
	expect_env(env, &l, &a, DECODE_OK, "0xffffffff82400010"); /* data */
	a = 0xffffffffc8000000;
	expect_env(env, &l, &a, DECODE_OK, "0xffffffffc8000000"); /* far past the last */
	decoder_env_cache_sizes(env, &sz);
	assert_int_equal(sz.ksyms, 7); /* the zero address is no symbol */
	decoder_env_free(env);
}

/* A reread (after a miss, a minute on) that sees only zero addresses, as
 * `iolat serve` does once it has dropped CAP_SYSLOG, keeps the names. */
static void test_ksym_reread_hidden(void **state)
{
	const char *path = fixture("kallsyms-reread");
	struct ksyms k;

	(void)state;
	write_file(path, "ffffffff81000000 T _stext\n"
			 "ffffffff81002000 T vfs_read\n");
	ksyms_init(&k, path);
	assert_string_equal(ksyms_lookup(&k, 0xffffffff81002010), "vfs_read");
	write_file(path, "0000000000000000 T _stext\n"
			 "0000000000000000 T vfs_read\n");
	k.loaded_ns = 0; /* loaded long ago: the next miss rereads */
	assert_null(ksyms_lookup(&k, 0x1000));
	assert_true(k.loaded_ns > 0); /* it did reread */
	assert_int_equal(ksyms_count(&k), 2);
	assert_string_equal(ksyms_lookup(&k, 0xffffffff81002010), "vfs_read");
	/* A reread that finds addresses replaces the table. */
	write_file(path, "ffffffff81000000 T _stext\n"
			 "ffffffff81003000 T vfs_write\n"
			 "ffffffff81004000 T vfs_fsync\n");
	k.loaded_ns = 0;
	assert_null(ksyms_lookup(&k, 0x1000));
	assert_int_equal(ksyms_count(&k), 3);
	assert_string_equal(ksyms_lookup(&k, 0xffffffff81003010), "vfs_write");
	ksyms_free(&k);
}

/* kptr_restrict: every address reads 0; the decoder still works, in hex. */
static void test_ksym_hidden(void **state)
{
	struct decoder_env_paths paths = { .kallsyms = fixture("kallsyms-hidden") };
	struct udec_conf d = dec(UDEC_KSYM);
	struct ulabel_conf l = label(8, &d, 1);
	struct decoder_env *env;
	uint64_t a = 0xffffffff81002010;

	(void)state;
	write_file(paths.kallsyms, "0000000000000000 T _stext\n"
				   "0000000000000000 T vfs_read\n");
	env = decoder_env_new(&paths);
	expect_env(env, &l, &a, DECODE_OK, "0xffffffff81002010");
	decoder_env_free(env);
	/* No kallsyms at all: the same. */
	paths.kallsyms = fixture("no-such-file");
	env = decoder_env_new(&paths);
	expect_env(env, &l, &a, DECODE_OK, "0xffffffff81002010");
	decoder_env_free(env);
}

static void make_disk(const char *numbers, const char *name)
{
	char dir[4096], text[256];

	snprintf(dir, sizeof(dir), "%s/block/%s", tmpdir, numbers);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(text, sizeof(text), "MAJOR=%.*s\nMINOR=%s\nDEVNAME=%s\nDEVTYPE=disk\n",
		 (int)strcspn(numbers, ":"), numbers, strchr(numbers, ':') + 1, name);
	strcat(dir, "/uevent");
	write_file(dir, text);
}

static struct decoder_env *fixture_env(void)
{
	struct decoder_env_paths paths = {
		.kallsyms = fixture("no-such-file"),
		.sys_dev_block = fixture("block"),
	};
	/* With a trailing slash, which must not change the paths. */
	char root[4096];
	struct decoder_env *env;

	snprintf(root, sizeof(root), "%s/cg/", tmpdir);
	paths.cgroup_root = root;
	env = decoder_env_new(&paths);
	assert_non_null(env);
	return env;
}

static void test_majorminor(void **state)
{
	struct decoder_env *env = fixture_env();
	struct udec_conf d = dec(UDEC_MAJORMINOR);
	struct ulabel_conf l = label(4, &d, 1);
	uint32_t dev;
	uint64_t dev64;

	(void)state;
	dev = disk_mkdev(8, 1);
	expect_env(env, &l, &dev, DECODE_OK, "sda1");
	dev = disk_mkdev(7, 0);
	expect_env(env, &l, &dev, DECODE_OK, "loop0");
	dev = disk_mkdev(259, 3);
	expect_env(env, &l, &dev, DECODE_OK, "259:3");
	dev64 = disk_mkdev(8, 1);
	l.size = 8;
	expect_env(env, &l, &dev64, DECODE_OK, "sda1");
	/* Cached: still the same name after a scrape. */
	decoder_env_scrape_done(env);
	expect_env(env, &l, &dev64, DECODE_OK, "sda1");
	decoder_env_free(env);
}

static void test_cgroup(void **state)
{
	struct decoder_env *env = fixture_env();
	struct udec_conf d = dec(UDEC_CGROUP);
	struct ulabel_conf l = label(8, &d, 1);
	uint64_t id;

	(void)state;
	id = ino_of(fixture("cg"));
	expect_env(env, &l, &id, DECODE_OK, "/");
	id = ino_of(fixture("cg/system.slice/nginx.service"));
	expect_env(env, &l, &id, DECODE_OK, "/system.slice/nginx.service");
	id = ino_of(fixture("cg/system.slice"));
	expect_env(env, &l, &id, DECODE_OK, "/system.slice");
	id = 0;
	expect_env(env, &l, &id, DECODE_OK, "0");
	id = 0xfffffffffff0ull;
	expect_env(env, &l, &id, DECODE_OK, "281474976710640");
	decoder_env_free(env);
}

/* Unknown values never grow memory: the caches stay at their caps. */
static void test_bounded(void **state)
{
	struct decoder_env *env = fixture_env();
	struct udec_conf dm = dec(UDEC_MAJORMINOR), dc = dec(UDEC_CGROUP);
	struct ulabel_conf lm = label(4, &dm, 1), lc = label(8, &dc, 1);
	struct label_decoder *m, *c;
	struct decoder_cache_sizes sz;
	char err[128], out[64];
	uint64_t known = ino_of(fixture("cg/system.slice"));

	(void)state;
	assert_int_equal(label_decoder_new(&lm, NULL, NULL, &m, err, sizeof(err)), 0);
	assert_int_equal(label_decoder_new(&lc, NULL, NULL, &c, err, sizeof(err)), 0);
	for (uint32_t i = 0; i < 100000; i++) {
		uint32_t dev = disk_mkdev(1000 + i / 1000, i % 1000);
		uint64_t id = 0x100000000000ull + i;

		assert_int_equal(label_decode(m, env, &dev, out, sizeof(out)), DECODE_OK);
		assert_int_equal(label_decode(c, env, &id, out, sizeof(out)), DECODE_OK);
		if (i % 10000 == 0)
			decoder_env_scrape_done(env);
	}
	decoder_env_cache_sizes(env, &sz);
	assert_true(sz.majorminor > 0 && sz.majorminor <= sz.majorminor_cap);
	assert_true(sz.cgroup <= sz.cgroup_cap);
	/* Known values still decode. */
	assert_int_equal(label_decode(c, env, &known, out, sizeof(out)), DECODE_OK);
	assert_string_equal(out, "/system.slice");
	label_decoder_free(m);
	label_decoder_free(c);
	decoder_env_free(env);
}

/* A hierarchy larger than the cap: the walk keeps the cap, and a slot for
 * the id it was looking for wherever the walk meets it. */
static void test_cgroup_cap(void **state)
{
	struct decoder_env_paths paths = { .cgroup_root = fixture("big") };
	struct udec_conf d = dec(UDEC_CGROUP);
	struct ulabel_conf l = label(8, &d, 1);
	struct decoder_env *env;
	struct decoder_cache_sizes sz;
	const int probe[] = { 0, 2150, 4299 };
	uint64_t id[N(probe)];
	char dir[4096], want[64];

	(void)state;
	assert_int_equal(mkdir(paths.cgroup_root, 0755), 0);
	for (int i = 0, p = 0; i < 4300; i++) {
		snprintf(dir, sizeof(dir), "%s/c%d", paths.cgroup_root, i);
		assert_int_equal(mkdir(dir, 0755), 0);
		if (i == probe[p])
			id[p++] = ino_of(dir);
	}
	/* Whichever end of the walk each one is met at. */
	for (size_t p = 0; p < N(probe); p++) {
		env = decoder_env_new(&paths);
		snprintf(want, sizeof(want), "/c%d", probe[p]);
		expect_env(env, &l, &id[p], DECODE_OK, want);
		decoder_env_cache_sizes(env, &sz);
		assert_int_equal(sz.cgroup, sz.cgroup_cap);
		decoder_env_free(env);
	}
}

/* ---- kstack: a real stack-trace map, filled by a real bpf_get_stackid --- */

struct stack_fixture {
	int map_fd, other_fd;
};

static int stack_maps(void *arg, const char *name)
{
	struct stack_fixture *f = arg;

	return !strcmp(name, "stacks") ? f->map_fd : !strcmp(name, "hash") ? f->other_fd : -1;
}

/* A raw tracepoint program that returns bpf_get_stackid(ctx, map, 0); run
 * with BPF_PROG_TEST_RUN, it records the kernel stack of that syscall. */
static int record_stack(int map_fd)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_LD | BPF_DW | BPF_IMM,
		  .dst_reg = BPF_REG_2,
		  .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = map_fd },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_stackid },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	uint64_t args[1] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = args, .ctx_size_in = sizeof(args));
	int fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "stackid", "GPL", prog, N(prog), NULL);
	int rc;

	if (fd < 0)
		return fd;
	rc = bpf_prog_test_run_opts(fd, &run);
	close(fd);
	return rc ? rc : (int)run.retval;
}

static void test_kstack(void **state)
{
	struct stack_fixture f;
	struct udec_conf d = dec(UDEC_KSTACK);
	struct ulabel_conf l = label(4, &d, 1);
	struct decoder_env *env;
	struct label_decoder *ld;
	char err[256], out[4096], small[24];
	const char *sys, *run;
	int32_t id, recorded;

	(void)state;
	if (geteuid())
		skip();
	f.map_fd = bpf_map_create(BPF_MAP_TYPE_STACK_TRACE, "stacks", 4, 127 * 8, 64, NULL);
	f.other_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "hash", 4, 8, 64, NULL);
	assert_true(f.map_fd >= 0 && f.other_fd >= 0);
	id = recorded = record_stack(f.map_fd);
	if (id < 0) {
		fprintf(stderr, "no BPF stack to decode (%s): skipped\n", strerror(-id));
		close(f.map_fd);
		close(f.other_fd);
		skip();
	}
	d.stack_map = "hash";
	expect_error(&l, stack_maps, &f,
		     "7:9: kstack: map \"hash\" is no BPF_MAP_TYPE_STACK_TRACE");
	d.stack_map = "stacks";
	assert_int_equal(label_decoder_new(&l, stack_maps, &f, &ld, err, sizeof(err)), 0);
	env = decoder_env_new(NULL);
	assert_int_equal(label_decode(ld, env, &id, out, sizeof(out)), DECODE_OK);
	/* Outermost first: the syscall's entry before the test run it made. */
	sys = strstr(out, "sys_bpf");
	run = strstr(out, "test_run");
	if (!sys || !run || sys > run)
		fail_msg("stack \"%s\" is not the syscall's, outermost first", out);
	assert_non_null(strchr(out, ';'));
	/* Truncated to the caller's buffer. */
	assert_int_equal(label_decode(ld, env, &id, small, sizeof(small)), DECODE_OK);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, out, sizeof(small) - 1);
	/* bpf_get_stackid's errors, and ids with no stack. */
	id = -EFAULT;
	assert_int_equal(label_decode(ld, env, &id, out, sizeof(out)), DECODE_OK);
	assert_string_equal(out, "[unknown]");
	/* An id with no stack: not the one just recorded, which lands on any
	 * of the 64 (the stack's hash), 63 among them. */
	id = recorded == 63 ? 62 : 63;
	assert_int_equal(label_decode(ld, env, &id, out, sizeof(out)), DECODE_OK);
	assert_string_equal(out, "[unknown]");
	label_decoder_free(ld);
	decoder_env_free(env);
	close(f.map_fd);
	close(f.other_fd);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(path);
}

static int setup(void **state)
{
	char path[4096];

	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(path, sizeof(path), "%s/block", tmpdir);
	mkdir(path, 0755);
	make_disk("8:1", "sda1");
	make_disk("7:0", "loop0");
	snprintf(path, sizeof(path), "%s/cg", tmpdir);
	mkdir(path, 0755);
	strcat(path, "/system.slice");
	mkdir(path, 0755);
	strcat(path, "/nginx.service");
	return mkdir(path, 0755);
}

static int teardown(void **state)
{
	(void)state;
	return nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uint),	       cmocka_unit_test(test_hex),
		cmocka_unit_test(test_string),	       cmocka_unit_test(test_static_map_chain),
		cmocka_unit_test(test_pure),	       cmocka_unit_test(test_regexp_filter),
		cmocka_unit_test(test_regexp_rewrite), cmocka_unit_test(test_errno),
		cmocka_unit_test(test_syscall),	       cmocka_unit_test(test_numeric_chains),
		cmocka_unit_test(test_errors),	       cmocka_unit_test(test_ksym),
		cmocka_unit_test(test_ksym_hidden),    cmocka_unit_test(test_ksym_reread_hidden),
		cmocka_unit_test(test_majorminor),     cmocka_unit_test(test_cgroup),
		cmocka_unit_test(test_bounded),	       cmocka_unit_test(test_cgroup_cap),
		cmocka_unit_test(test_kstack),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
