// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_wlabels.c - serve's bounded workload label sets (serve/wlabels.h)
 * over snapshots the test builds, a directory tree standing in for the io
 * cgroup hierarchy (a directory's inode number is its cgroup id, as in
 * cgroupfs), and fake kernel map writes that record what they are asked:
 * naming, the cap and its "other" fold, retiring gone cgroups' keys, and
 * expiring label sets.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
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

#include "serve/wlabels.h"
#include "serve/wlstate.h"

/* The hierarchy: paths relative to its root, parents first. */
enum cg {
	CG_ROOT,
	CG_MACHINE,
	CG_VM,
	CG_VM_LIBVIRT,
	CG_VCPU,
	CG_EMULATOR,
	CG_SYSTEM,
	CG_NGINX,
	CG_A,
	CG_A_SUB,
	CG_B,
	CG_C,
	CG_D,
	CG_E,
	CG_USER_SLICE,
	CG_D_AGAIN,
	CG_COUNT
};

static const char *const paths[CG_COUNT] = {
	[CG_ROOT] = "",
	[CG_MACHINE] = "machine.slice",
	[CG_VM] = "machine.slice/machine-qemu\\x2d3\\x2dweb01.scope",
	[CG_VM_LIBVIRT] = "machine.slice/machine-qemu\\x2d3\\x2dweb01.scope/libvirt",
	[CG_VCPU] = "machine.slice/machine-qemu\\x2d3\\x2dweb01.scope/libvirt/vcpu0",
	[CG_EMULATOR] = "machine.slice/machine-qemu\\x2d3\\x2dweb01.scope/libvirt/emulator",
	[CG_SYSTEM] = "system.slice",
	[CG_NGINX] = "system.slice/nginx.service",
	[CG_A] = "system.slice/a.service",
	[CG_A_SUB] = "system.slice/a.service/sub",
	[CG_B] = "system.slice/b.service",
	[CG_C] = "system.slice/c.service",
	[CG_D] = "system.slice/d.service",
	[CG_E] = "system.slice/e.service",
	[CG_USER_SLICE] = "user.slice",
	[CG_D_AGAIN] = "user.slice/d.service", /* another cgroup named service d */
};

/* No directory has this inode number: a cgroup gone before any walk (below
 * IOLAT_KEY_PROCESS, which marks process keys). */
#define CG_UNKNOWN 0xff000000000001ULL

struct call {
	struct iolat_key k; /* retire */
	uint64_t from;	    /* refold */
	uint64_t into;
};

#define MAX_CALLS 16

struct fixture {
	char root[64];
	uint64_t id[CG_COUNT];
	struct workload_cache *names;
	struct wlabels *w;
	struct snapshot snap;
	struct call retired[MAX_CALLS], refolded[MAX_CALLS];
	size_t nretired, nrefolded;
	int fail; /* what the fake ops return */
};

static int fake_retire(void *ctx, const struct iolat_key *k, uint64_t into)
{
	struct fixture *f = ctx;

	assert_true(f->nretired < MAX_CALLS);
	f->retired[f->nretired++] = (struct call){ .k = *k, .into = into };
	return f->fail;
}

static int fake_refold(void *ctx, uint64_t from, uint64_t into)
{
	struct fixture *f = ctx;

	assert_true(f->nrefolded < MAX_CALLS);
	f->refolded[f->nrefolded++] = (struct call){ .from = from, .into = into };
	return f->fail;
}

static void cg_path(const struct fixture *f, enum cg c, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", f->root, paths[c]);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const struct wlabels_opts o = { .max_sets = 16, .expire_s = 10 };
	struct wlabels_ops ops = { .ctx = f, .retire = fake_retire, .refold = fake_refold };
	char path[512];
	struct stat st;

	assert_non_null(f);
	snprintf(f->root, sizeof(f->root), "/tmp/iolat-test-wlabels-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	for (int c = 0; c < CG_COUNT; c++) {
		cg_path(f, c, path, sizeof(path));
		if (c != CG_ROOT)
			assert_int_equal(mkdir(path, 0755), 0);
		assert_int_equal(stat(path, &st), 0);
		f->id[c] = (uint64_t)st.st_ino;
	}
	/* Walks the tree now: every directory above is named from here on. */
	f->names = workload_cache_new_at(f->root);
	assert_non_null(f->names);
	f->w = wlabels_new(&ops, f->names, &o);
	assert_non_null(f->w);
	*state = f;
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	wlabels_free(f->w);
	workload_cache_free(f->names);
	snapshot_free(&f->snap);
	nftw(f->root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

/* A series of cgroup id with ios completions, on disk 8:0, op op. */
static void add(struct fixture *f, uint64_t cgroup, uint8_t op, uint64_t ios)
{
	struct iolat_key k = { .cgroup = cgroup, .dev = 8 << 20, .op = op };
	struct series *s = snapshot_push(&f->snap, &k);

	assert_non_null(s);
	s->val.ios = ios;
}

/* A maintenance pass over the snapshot built, as exporter_maintain runs it. */
static void pass(struct fixture *f, time_t now)
{
	assert_int_equal(wlabels_assign(f->w, &f->snap, now), 0);
	assert_int_equal(wlabels_prune(f->w, &f->snap, now), 0);
	f->snap.n = 0;
}

static const struct wl_label *label_of(struct fixture *f, enum cg c)
{
	return wlabels_of(f->w, f->id[c]);
}

static void assert_label(const struct wl_label *l, const char *kind, const char *name)
{
	assert_non_null(l);
	assert_string_equal(l->kind, kind);
	assert_string_equal(l->name, name);
}

static void assert_stats(struct fixture *f, size_t sets, size_t cgroups, uint64_t folded,
			 uint64_t retired, uint64_t expired)
{
	struct wlabels_stats st;

	wlabels_stats(f->w, &st);
	assert_int_equal(st.sets, sets);
	assert_int_equal(st.cgroups, cgroups);
	assert_int_equal(st.folded_cgroups, folded);
	assert_int_equal(st.retired_cgroups, retired);
	assert_int_equal(st.expired_sets, expired);
}

/*
 * Cgroups are named from their paths, several sharing one label set (a VM's
 * threads); I/O charged to no cgroup is "unattributed"; series already in
 * user space are no cgroups. A cgroup no walk found waits two seconds, in
 * case it is younger than the last walk, then counts as "other".
 */
static void test_naming(void **state)
{
	struct fixture *f = *state;
	const struct wl_label *unattributed, *other;

	add(f, f->id[CG_VCPU], 0, 1);
	add(f, f->id[CG_EMULATOR], 1, 1);
	add(f, f->id[CG_NGINX], 0, 2);
	add(f, f->id[CG_ROOT], 0, 1);
	add(f, 0, 0, 1);
	add(f, CG_UNKNOWN, 0, 1);
	add(f, COLLECTOR_CG_USER | 5, 0, 9);
	assert_int_equal(wlabels_assign(f->w, &f->snap, 1000), 0);
	assert_label(label_of(f, CG_VCPU), "vm", "web01");
	assert_ptr_equal(label_of(f, CG_EMULATOR), label_of(f, CG_VCPU));
	assert_label(label_of(f, CG_NGINX), "service", "nginx");
	assert_label(label_of(f, CG_ROOT), "cgroup", "/");
	unattributed = wlabels_of(f->w, 0);
	assert_label(unattributed, "none", "unattributed");
	assert_false(wlabels_is_other(f->w, unattributed));
	assert_null(wlabels_of(f->w, CG_UNKNOWN));
	assert_null(wlabels_of(f->w, COLLECTOR_CG_USER | 5));
	/* A cgroup of the tree that did no I/O is not followed. */
	assert_null(label_of(f, CG_A));
	assert_stats(f, 4, 6, 0, 0, 0);

	assert_int_equal(wlabels_assign(f->w, &f->snap, 1001), 0);
	assert_null(wlabels_of(f->w, CG_UNKNOWN));
	assert_int_equal(wlabels_assign(f->w, &f->snap, 1002), 0);
	other = wlabels_of(f->w, CG_UNKNOWN);
	assert_label(other, "other", "other");
	assert_true(wlabels_is_other(f->w, other));
	assert_ptr_equal(wlabels_of(f->w, WLABELS_ID_OTHER), other);
	assert_stats(f, 4, 6, 1, 0, 0);
	/* Naming writes nothing to the kernel's maps. */
	assert_int_equal(f->nretired + f->nrefolded, 0);
}

/*
 * Past max_sets label sets, new names fold into "other", each cgroup
 * counted once; a cgroup of a set that exists still joins it. A higher cap
 * gives later names sets of their own; the folded stay folded.
 */
static void test_cap(void **state)
{
	struct fixture *f = *state;
	const struct wlabels_opts more = { .max_sets = 3, .expire_s = 10 };
	const struct wlabels_opts two = { .max_sets = 2, .expire_s = 10 };

	wlabels_set_opts(f->w, &two);
	add(f, f->id[CG_A], 0, 1);
	add(f, f->id[CG_B], 0, 1);
	add(f, f->id[CG_C], 0, 1);
	add(f, f->id[CG_D], 0, 1);
	add(f, f->id[CG_A_SUB], 0, 1);
	add(f, f->id[CG_C], 1, 1); /* a second series of a folded cgroup */
	assert_int_equal(wlabels_assign(f->w, &f->snap, 1000), 0);
	assert_label(label_of(f, CG_A), "service", "a");
	assert_label(label_of(f, CG_B), "service", "b");
	assert_ptr_equal(label_of(f, CG_A_SUB), label_of(f, CG_A));
	assert_true(wlabels_is_other(f->w, label_of(f, CG_C)));
	assert_true(wlabels_is_other(f->w, label_of(f, CG_D)));
	assert_false(wlabels_is_other(f->w, label_of(f, CG_A)));
	assert_stats(f, 2, 5, 2, 0, 0);

	wlabels_set_opts(f->w, &more);
	add(f, f->id[CG_E], 0, 1);
	assert_int_equal(wlabels_assign(f->w, &f->snap, 1001), 0);
	assert_label(label_of(f, CG_E), "service", "e");
	assert_true(wlabels_is_other(f->w, label_of(f, CG_C)));
	assert_stats(f, 3, 6, 2, 0, 0);
}

static void assert_retired(const struct call *c, uint64_t cgroup, uint8_t op, uint64_t into)
{
	assert_int_equal(c->k.cgroup, cgroup);
	assert_int_equal(c->k.dev, 8 << 20);
	assert_int_equal(c->k.op, op);
	assert_int_equal(c->into, into);
}

/* Removes a cgroup's directory: the cgroup is gone. */
static void remove_cgroup(struct fixture *f, enum cg c)
{
	char path[512];

	cg_path(f, c, path, sizeof(path));
	assert_int_equal(rmdir(path), 0);
}

/*
 * A cgroup gone with no I/O since the previous pass has its keys retired
 * under its label set's id, which the render still labels; one gone that
 * did I/O in between waits for a pass without. A set with no cgroup left
 * expires expire_s after its last one left: its series are refolded into
 * the expired id and it leaves the output.
 */
static void test_retire_and_expire(void **state)
{
	struct fixture *f = *state;
	const struct wl_label *b, *c;
	uint64_t b_set, c_set;

	add(f, f->id[CG_A], 0, 5);
	add(f, f->id[CG_B], 0, 3);
	add(f, f->id[CG_B], 1, 4);
	add(f, f->id[CG_C], 0, 1);
	pass(f, 1000); /* all new: I/O since the (no) previous pass */
	assert_int_equal(f->nretired, 0);
	b = label_of(f, CG_B);
	c = label_of(f, CG_C);
	assert_label(b, "service", "b");
	assert_stats(f, 3, 3, 0, 0, 0);

	remove_cgroup(f, CG_B);
	remove_cgroup(f, CG_C);
	add(f, f->id[CG_A], 0, 5); /* alive and idle: kept */
	add(f, f->id[CG_B], 0, 3);
	add(f, f->id[CG_B], 1, 4);
	add(f, f->id[CG_C], 0, 2); /* gone, but did I/O since */
	pass(f, 1001);
	assert_int_equal(f->nretired, 2);
	b_set = f->retired[0].into;
	assert_true(b_set >= COLLECTOR_CG_USER);
	assert_retired(&f->retired[0], f->id[CG_B], 0, b_set);
	assert_retired(&f->retired[1], f->id[CG_B], 1, b_set);
	assert_ptr_equal(wlabels_of(f->w, b_set), b); /* its series keep the name */
	assert_null(label_of(f, CG_B));		      /* no longer followed */
	assert_ptr_equal(label_of(f, CG_C), c);
	assert_stats(f, 3, 2, 0, 1, 0);

	/* Then the collector returns b's series under the set's id. */
	add(f, f->id[CG_A], 0, 5);
	add(f, b_set, 0, 3);
	add(f, b_set, 1, 4);
	add(f, f->id[CG_C], 0, 2);
	pass(f, 1002);
	assert_int_equal(f->nretired, 3);
	c_set = f->retired[2].into;
	assert_retired(&f->retired[2], f->id[CG_C], 0, c_set);
	assert_true(c_set != b_set);
	assert_ptr_equal(wlabels_of(f->w, c_set), c);
	assert_stats(f, 3, 1, 0, 2, 0);
	assert_int_equal(f->nrefolded, 0);

	/* b's set empty since 1001: still there at 1010, gone at 1011. */
	add(f, f->id[CG_A], 0, 5);
	add(f, b_set, 0, 3);
	pass(f, 1010);
	assert_int_equal(f->nrefolded, 0);
	assert_ptr_equal(wlabels_of(f->w, b_set), b);
	add(f, f->id[CG_A], 0, 5);
	pass(f, 1011);
	assert_int_equal(f->nrefolded, 1);
	assert_int_equal(f->refolded[0].from, b_set);
	assert_int_equal(f->refolded[0].into, WLABELS_ID_EXPIRED);
	assert_null(wlabels_of(f->w, b_set));
	assert_null(wlabels_of(f->w, WLABELS_ID_EXPIRED));
	assert_stats(f, 2, 1, 0, 2, 1);
	add(f, f->id[CG_A], 0, 5);
	pass(f, 1012);
	assert_int_equal(f->nrefolded, 2);
	assert_int_equal(f->refolded[1].from, c_set);
	assert_stats(f, 1, 1, 0, 2, 2);
	/* a never left: alive cgroups keep their set however long. */
	add(f, f->id[CG_A], 0, 5);
	pass(f, 5000);
	assert_label(label_of(f, CG_A), "service", "a");
	assert_int_equal(f->nretired, 3);
	assert_int_equal(f->nrefolded, 2);
}

/* A name whose set expired comes back as a new set, under a new id. */
static void test_name_returns(void **state)
{
	struct fixture *f = *state;
	const struct wl_label *again;
	uint64_t first;

	add(f, f->id[CG_D], 0, 1);
	pass(f, 1000);
	remove_cgroup(f, CG_D);
	add(f, f->id[CG_D], 0, 1);
	pass(f, 1001);
	assert_int_equal(f->nretired, 1);
	first = f->retired[0].into;
	pass(f, 1011);
	assert_int_equal(f->nrefolded, 1);
	assert_int_equal(f->refolded[0].from, first);
	assert_stats(f, 0, 0, 0, 1, 1);

	add(f, f->id[CG_D_AGAIN], 0, 1);
	pass(f, 1012);
	again = label_of(f, CG_D_AGAIN);
	assert_label(again, "service", "d");
	assert_null(wlabels_of(f->w, first));
	assert_stats(f, 1, 1, 0, 1, 1);
	remove_cgroup(f, CG_D_AGAIN);
	add(f, f->id[CG_D_AGAIN], 0, 1);
	pass(f, 1013);
	assert_int_equal(f->nretired, 2);
	assert_true(f->retired[1].into != first);
	assert_ptr_equal(wlabels_of(f->w, f->retired[1].into), again);
}

/* The kernel map writes' errors come back from the pass. */
static void test_ops_fail(void **state)
{
	struct fixture *f = *state;

	add(f, f->id[CG_B], 0, 3);
	pass(f, 1000);
	remove_cgroup(f, CG_B);
	f->fail = -EIO;
	add(f, f->id[CG_B], 0, 3);
	assert_int_equal(wlabels_assign(f->w, &f->snap, 1001), 0);
	assert_int_equal(wlabels_prune(f->w, &f->snap, 1001), -EIO);
	assert_int_equal(f->nretired, 1);
	f->snap.n = 0;
	assert_int_equal(wlabels_prune(f->w, &f->snap, 1011), -EIO);
	assert_int_equal(f->nrefolded, 1);
}

/* A new wlabels in the fixture, as a restarted serve makes it. */
static void restart(struct fixture *f)
{
	const struct wlabels_opts o = { .max_sets = 2, .expire_s = 10 };
	struct wlabels_ops ops = { .ctx = f, .retire = fake_retire, .refold = fake_refold };

	wlabels_free(f->w);
	workload_cache_free(f->names);
	f->names = workload_cache_new_at(f->root);
	assert_non_null(f->names);
	f->w = wlabels_new(&ops, f->names, &o);
	assert_non_null(f->w);
	f->nretired = f->nrefolded = 0;
}

/* A series in user space: a retired set's, under its id. */
static void add_user(struct fixture *f, uint64_t id, uint64_t ios)
{
	add(f, id, 0, ios);
}

/*
 * A restart that adopts the collector goes on with the saved state: the
 * same sets under the same ids, retired sets labelled, "other" keeping its
 * members, the counters, and expiry counted from when the set emptied
 * before the restart, not from the restart. A user-space id of no saved
 * set (a crash between the two saves) is refolded and never reused.
 */
static void test_save_restore(void **state)
{
	struct fixture *f = *state;
	const struct wlabels_opts two = { .max_sets = 2, .expire_s = 10 };
	uint64_t b_set, orphan;
	struct wlstate st;
	const struct wl_label *l;

	wlabels_set_opts(f->w, &two);
	add(f, f->id[CG_A], 0, 1);
	add(f, f->id[CG_B], 0, 1);
	add(f, f->id[CG_C], 0, 1);
	add(f, f->id[CG_D], 0, 1);
	pass(f, 1000);
	remove_cgroup(f, CG_B);
	add(f, f->id[CG_A], 0, 1);
	add(f, f->id[CG_B], 0, 1);
	add(f, f->id[CG_C], 0, 1);
	add(f, f->id[CG_D], 0, 1);
	pass(f, 1001); /* B retired: its set empty since 1001 */
	assert_int_equal(f->nretired, 1);
	b_set = f->retired[0].into;
	assert_stats(f, 2, 3, 2, 1, 0);
	assert_int_equal(wlabels_save(f->w, &st), 0);
	assert_int_equal(st.nsets, 2);
	assert_int_equal(st.ncgroups, 3);

	restart(f);
	orphan = b_set + 7;
	add(f, f->id[CG_A], 0, 1);
	add(f, f->id[CG_C], 0, 1);
	add(f, f->id[CG_D], 0, 1);
	add_user(f, b_set, 1);
	add_user(f, orphan, 1);
	add_user(f, orphan, 1); /* two series of it: one refold */
	add_user(f, WLABELS_ID_OTHER, 1);
	assert_int_equal(wlabels_restore(f->w, &st, &f->snap), 0);
	wlstate_free(&st);
	assert_int_equal(f->nrefolded, 1);
	assert_int_equal(f->refolded[0].from, orphan);
	assert_int_equal(f->refolded[0].into, WLABELS_ID_EXPIRED);
	assert_stats(f, 2, 3, 2, 1, 0);
	assert_label(label_of(f, CG_A), "service", "a");
	assert_label(wlabels_of(f->w, b_set), "service", "b");
	assert_true(wlabels_is_other(f->w, label_of(f, CG_C)));
	assert_true(wlabels_is_other(f->w, label_of(f, CG_D)));
	assert_null(wlabels_of(f->w, orphan));
	/* Restored into: a second restore is refused. */
	assert_int_equal(wlabels_save(f->w, &st), 0);
	assert_int_equal(wlabels_restore(f->w, &st, NULL), -EBUSY);

	/* Known names keep their sets and the cap holds: A's child joins A,
	 * E goes to "other". */
	f->nrefolded = 0;
	add(f, f->id[CG_A_SUB], 0, 1);
	add(f, f->id[CG_E], 0, 1);
	pass(f, 1002);
	assert_ptr_equal(label_of(f, CG_A_SUB), label_of(f, CG_A));
	assert_true(wlabels_is_other(f->w, label_of(f, CG_E)));
	assert_stats(f, 2, 5, 3, 1, 0);
	/* b expires 10 s after 1001, its set emptied before the restart. */
	pass(f, 1010);
	assert_int_equal(f->nrefolded, 0);
	pass(f, 1011);
	assert_int_equal(f->nrefolded, 1);
	assert_int_equal(f->refolded[0].from, b_set);
	assert_int_equal(f->refolded[0].into, WLABELS_ID_EXPIRED);
	assert_null(wlabels_of(f->w, b_set));
	/* A new set's id is past every id in use before, the orphan's too. */
	remove_cgroup(f, CG_A_SUB);
	remove_cgroup(f, CG_A);
	pass(f, 1012);
	pass(f, 1030);
	add(f, f->id[CG_NGINX], 0, 1);
	pass(f, 1031);
	l = label_of(f, CG_NGINX);
	assert_label(l, "service", "nginx");
	for (uint64_t id = b_set; id <= orphan; id++)
		assert_ptr_not_equal(wlabels_of(f->w, id), l);
	wlstate_free(&st);
}

/* A saved state that does not hold together is refused whole. */
static void test_restore_bad(void **state)
{
	struct fixture *f = *state;
	struct wlstate st, bad;
	uint64_t a_set;

	add(f, f->id[CG_A], 0, 1);
	add(f, f->id[CG_B], 0, 1);
	pass(f, 1000);
	assert_int_equal(wlabels_save(f->w, &st), 0);
	a_set = st.sets[0].id;

	restart(f);
	bad = st;
	bad.cgroups[0].set = a_set + 100; /* a set that is not there */
	assert_int_equal(wlabels_restore(f->w, &bad, NULL), -EPROTO);
	assert_stats(f, 0, 0, 0, 0, 0);
	bad.cgroups[0].set = st.sets[0].id;
	bad.sets[1].label = bad.sets[0].label; /* one name twice */
	assert_int_equal(wlabels_restore(f->w, &bad, NULL), -EPROTO);
	assert_stats(f, 0, 0, 0, 0, 0);
	bad.sets[1].label.name[0] = 'x';
	memset(bad.sets[1].label.kind, 'k', sizeof(bad.sets[1].label.kind)); /* unterminated */
	assert_int_equal(wlabels_restore(f->w, &bad, NULL), -EPROTO);
	bad.sets[1].label.kind[0] = '\0';
	bad.next_id = 1; /* not a set id */
	assert_int_equal(wlabels_restore(f->w, &bad, NULL), -EPROTO);
	assert_stats(f, 0, 0, 0, 0, 0);
	assert_null(label_of(f, CG_A));
	/* Named afresh (an empty state): the series of retired sets the
	 * collector restored are refolded, their ids never given again. */
	memset(&bad, 0, sizeof(bad));
	bad.next_id = WLABELS_ID_FIRST_SET;
	add_user(f, WLABELS_ID_FIRST_SET + 3, 1);
	assert_int_equal(wlabels_restore(f->w, &bad, &f->snap), 0);
	assert_int_equal(f->nrefolded, 1);
	assert_int_equal(f->refolded[0].from, WLABELS_ID_FIRST_SET + 3);
	f->snap.n = 0;
	add(f, f->id[CG_A], 0, 1);
	pass(f, 1001);
	assert_label(label_of(f, CG_A), "service", "a");
	for (uint64_t id = WLABELS_ID_FIRST_SET; id <= WLABELS_ID_FIRST_SET + 3; id++)
		assert_null(wlabels_of(f->w, id));
	wlstate_free(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_naming, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retire_and_expire, setup, teardown),
		cmocka_unit_test_setup_teardown(test_name_returns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ops_fail, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_restore, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_bad, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
