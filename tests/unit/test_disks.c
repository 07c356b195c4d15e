// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_disks.c - disks that come and go, against a sysfs-like fixture
 * directory: disks_lookup, the disk-name cache (a gone number keeps its
 * name, a number another disk took gets the new one), the snapshot merges
 * that let a returning disk count on, and disklife's retire / expire /
 * rename decisions with fake collector ops; the names a disk is known by
 * (LVM's escaped dm names split, dm, md, NVMe, virtio and SCSI ids read from
 * a sysfs-like disk directory).
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
#include <unistd.h>

#include "core/snapshot.h"
#include "serve/disklife.h"
#include "sys/disk_cache.h"
#include "sys/disks.h"

static char tmpdir[] = "/tmp/iolat-test-disks.XXXXXX";
static char blockdir[4096];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(path);
}

/* A disk in the fixture: blockdir/M:m/{uevent,size}. */
static void add_disk(uint32_t dev, const char *name, unsigned long long sectors)
{
	char dir[4200], path[4300], text[256];

	snprintf(dir, sizeof(dir), "%s/%u:%u", blockdir, disk_major(dev), disk_minor(dev));
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/uevent", dir);
	snprintf(text, sizeof(text), "MAJOR=%u\nMINOR=%u\nDEVNAME=%s\nDEVTYPE=disk\n",
		 disk_major(dev), disk_minor(dev), name);
	write_file(path, text);
	snprintf(path, sizeof(path), "%s/size", dir);
	snprintf(text, sizeof(text), "%llu\n", sectors);
	write_file(path, text);
}

static void remove_disk(uint32_t dev)
{
	char dir[4200];

	snprintf(dir, sizeof(dir), "%s/%u:%u", blockdir, disk_major(dev), disk_minor(dev));
	assert_int_equal(nftw(dir, remove_entry, 4, FTW_DEPTH | FTW_PHYS), 0);
}

static void test_lookup(void **state)
{
	uint32_t dev = disk_mkdev(7, 40);
	char name[DISK_NAME_MAX];
	uint64_t sectors = 99;

	(void)state;
	add_disk(dev, "loop40", 2048);
	assert_int_equal(disks_lookup(blockdir, dev, name, sizeof(name), &sectors), 0);
	assert_string_equal(name, "loop40");
	assert_int_equal(sectors, 2048);
	add_disk(dev, "loop40", 0); /* detached */
	assert_int_equal(disks_lookup(blockdir, dev, name, sizeof(name), &sectors), 0);
	assert_int_equal(sectors, 0);
	remove_disk(dev);
	assert_int_equal(disks_lookup(blockdir, dev, name, sizeof(name), NULL), -ENOENT);
}

static void scrapes(struct disk_cache *c, int n)
{
	for (int i = 0; i < n; i++)
		disk_cache_scrape_done(c);
}

static void test_cache(void **state)
{
	uint32_t a = disk_mkdev(7, 41), b = disk_mkdev(259, 0), none = disk_mkdev(7, 42);
	struct disk_cache c;

	(void)state;
	add_disk(a, "loop41", 100);
	add_disk(b, "nvme0n1", 100);
	disk_cache_init(&c, blockdir);
	assert_string_equal(disk_cache_name(&c, a), "loop41");
	assert_string_equal(disk_cache_name(&c, b), "nvme0n1");
	assert_string_equal(disk_cache_name(&c, none), "7:42");
	/* a is removed: it keeps its name through refreshes while asked for. */
	remove_disk(a);
	for (int i = 0; i < 5; i++) {
		scrapes(&c, 8);
		assert_string_equal(disk_cache_name(&c, a), "loop41");
		assert_string_equal(disk_cache_name(&c, b), "nvme0n1");
	}
	/* Another disk takes b's number: the next refresh names it. */
	remove_disk(b);
	add_disk(b, "nvme1n1", 100);
	assert_string_equal(disk_cache_name(&c, b), "nvme0n1");
	scrapes(&c, 8);
	assert_string_equal(disk_cache_name(&c, b), "nvme1n1");
	/* ... or at once when told. */
	remove_disk(b);
	add_disk(b, "nvme2n1", 100);
	disk_cache_forget(&c, b);
	assert_string_equal(disk_cache_name(&c, b), "nvme2n1");
	/* A number that gains a disk is named at the next refresh. */
	add_disk(none, "loop42", 100);
	scrapes(&c, 8);
	assert_string_equal(disk_cache_name(&c, none), "loop42");
	/* Names nothing asks for go within two refreshes: a went already. */
	assert_int_equal(disk_cache_count(&c), 2);
	scrapes(&c, 16);
	assert_int_equal(disk_cache_count(&c), 0);
	/* And a number sysfs does not have, asked afresh, is "M:m". */
	assert_string_equal(disk_cache_name(&c, a), "7:41");
	disk_cache_free(&c);
	remove_disk(b);
	remove_disk(none);
}

static struct iolat_key key(uint32_t dev, uint64_t cgroup, uint8_t op)
{
	return (struct iolat_key){ .cgroup = cgroup, .dev = dev, .op = op };
}

/* Pushes a series with ios = bytes = v and one slot count. */
static void push(struct snapshot *s, struct iolat_key k, uint64_t v)
{
	struct series *x = snapshot_push(s, &k);

	assert_non_null(x);
	x->val.ios = x->val.bytes = v;
	x->val.lat[IOLAT_VIEW_DEVICE].slots[3] = v;
}

static const struct series *find(const struct snapshot *s, struct iolat_key k)
{
	return snapshot_find(s, &k);
}

static void test_merge(void **state)
{
	struct snapshot live = { 0 }, gone = { 0 };
	struct iolat_val into = { 0 };

	(void)state;
	push(&live, key(1, 0, 0), 1);
	push(&live, key(2, 0, 0), 2);
	push(&gone, key(2, 0, 0), 5);
	push(&gone, key(3, 9, 1), 7);
	assert_int_equal(snapshot_merge(&live, &gone), 0);
	assert_int_equal(live.n, 3);
	assert_int_equal(find(&live, key(1, 0, 0))->val.ios, 1);
	assert_int_equal(find(&live, key(2, 0, 0))->val.ios, 7);
	assert_int_equal(find(&live, key(2, 0, 0))->val.lat[0].slots[3], 7);
	assert_int_equal(find(&live, key(3, 9, 1))->val.bytes, 7);
	assert_int_equal(gone.n, 2); /* src untouched */

	/* Many keys, so the index's probe runs collide: every key once. */
	snapshot_free(&live);
	snapshot_free(&gone);
	for (uint32_t i = 0; i < 3000; i++)
		push(&live, key(i % 7, i, (uint8_t)(i % 3)), 1);
	for (uint32_t i = 1500; i < 4500; i++)
		push(&gone, key(i % 7, i, (uint8_t)(i % 3)), 2);
	assert_int_equal(snapshot_merge(&live, &gone), 0);
	assert_int_equal(live.n, 4500);
	for (uint32_t i = 0; i < 4500; i++)
		assert_int_equal(find(&live, key(i % 7, i, (uint8_t)(i % 3)))->val.ios, i < 1500 ? 1
											: i < 3000
											    ? 3
											    : 2);

	/* take: the series leaves, its values add up in `into`. */
	assert_true(snapshot_take(
	    &gone, &(struct iolat_key){ .cgroup = 1600, .dev = 1600 % 7, .op = 1600 % 3 }, &into));
	assert_int_equal(into.ios, 2);
	assert_int_equal(gone.n, 2999);
	assert_false(snapshot_take(
	    &gone, &(struct iolat_key){ .cgroup = 1600, .dev = 1600 % 7, .op = 1600 % 3 }, &into));
	/* drop_dev: every series of one disk. */
	assert_int_equal(snapshot_drop_dev(&live, 3), 4500 / 7 + (4500 % 7 > 3));
	for (size_t i = 0; i < live.n; i++)
		assert_int_not_equal(live.s[i].key.dev, 3);
	assert_int_equal(snapshot_drop_dev(&live, 3), 0);
	snapshot_free(&live);
	snapshot_free(&gone);
}

/* Fake collector ops: what disklife asked for. */
struct calls {
	uint32_t retired[16], dropped[16], renamed[16];
	int nretired, ndropped, nrenamed;
};

static int fake_retire(void *ctx, uint32_t dev)
{
	struct calls *c = ctx;

	c->retired[c->nretired++] = dev;
	return 2;
}

static int fake_drop(void *ctx, uint32_t dev)
{
	struct calls *c = ctx;

	c->dropped[c->ndropped++] = dev;
	return 0;
}

static void fake_renamed(void *ctx, uint32_t dev)
{
	struct calls *c = ctx;

	c->renamed[c->nrenamed++] = dev;
}

/* A snapshot of one disk: two series adding up to ios. */
static void one_disk(struct snapshot *s, uint32_t dev, uint64_t ios)
{
	s->n = 0;
	push(s, key(dev, 0, 0), ios - 1);
	push(s, key(dev, 0, 1), 1);
}

struct gone_seen {
	uint32_t dev;
	char name[DISK_NAME_MAX];
	time_t changed;
	int n;
};

static void note_gone(void *ctx, uint32_t dev, const char *name, time_t changed)
{
	struct gone_seen *g = ctx;

	g->dev = dev;
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->changed = changed;
	g->n++;
}

static void expect_stats(struct disklife *d, size_t disks, size_t gone, uint64_t retired,
			 uint64_t expired)
{
	struct disklife_stats st;

	disklife_stats(d, &st);
	assert_int_equal(st.disks, disks);
	assert_int_equal(st.gone, gone);
	assert_int_equal(st.retired, retired);
	assert_int_equal(st.expired, expired);
}

static void test_disklife(void **state)
{
	struct calls c = { 0 };
	struct disklife_ops ops = {
		.ctx = &c, .retire = fake_retire, .drop = fake_drop, .renamed = fake_renamed
	};
	struct disklife *d = disklife_new(blockdir, &ops);
	uint32_t dev = disk_mkdev(7, 43);
	struct snapshot s = { 0 };

	(void)state;
	assert_non_null(d);
	add_disk(dev, "loop43", 2048);
	/* Busy, then idle and present: nothing to do. */
	one_disk(&s, dev, 10);
	assert_int_equal(disklife_prune(d, &s, 100, 5), 0);
	assert_int_equal(disklife_prune(d, &s, 101, 5), 0);
	expect_stats(d, 1, 0, 0, 0);
	/* Detached (size 0): retired once, at the first idle scrape. */
	add_disk(dev, "loop43", 0);
	assert_int_equal(disklife_check(d), 0);
	assert_int_equal(disklife_prune(d, &s, 102, 5), 0);
	assert_int_equal(disklife_prune(d, &s, 103, 5), 0);
	assert_int_equal(c.nretired, 1);
	assert_int_equal(c.retired[0], dev);
	expect_stats(d, 1, 1, 1, 0);
	{
		struct gone_seen g = { 0 };

		disklife_each_gone(d, note_gone, &g);
		assert_int_equal(g.n, 1);
		assert_int_equal(g.dev, dev);
		assert_string_equal(g.name, "loop43");
		assert_int_equal(g.changed, 100); /* its last change */
	}
	/* Re-attached under its name before expiring: its series counts on. */
	add_disk(dev, "loop43", 2048);
	assert_int_equal(disklife_check(d), 0);
	one_disk(&s, dev, 15);
	assert_int_equal(disklife_prune(d, &s, 104, 5), 0);
	expect_stats(d, 1, 0, 1, 0);
	assert_int_equal(c.ndropped, 0);
	/* Gone from sysfs: retired again; expires 5 s after its last change. */
	remove_disk(dev);
	assert_int_equal(disklife_prune(d, &s, 105, 5), 0);
	assert_int_equal(c.nretired, 2);
	assert_int_equal(disklife_prune(d, &s, 108, 5), 0);
	assert_int_equal(c.ndropped, 0);
	expect_stats(d, 1, 1, 2, 0);
	assert_int_equal(disklife_prune(d, &s, 109, 5), 0);
	assert_int_equal(c.ndropped, 1);
	assert_int_equal(c.dropped[0], dev);
	expect_stats(d, 0, 0, 2, 1);
	/* Its series are gone from the next snapshot; nothing more happens. */
	s.n = 0;
	assert_int_equal(disklife_prune(d, &s, 110, 5), 0);
	expect_stats(d, 0, 0, 2, 1);

	/* Another disk takes a gone disk's number: dropped before the read. */
	add_disk(dev, "loop43", 2048);
	one_disk(&s, dev, 3);
	assert_int_equal(disklife_prune(d, &s, 200, 60), 0);
	remove_disk(dev);
	assert_int_equal(disklife_prune(d, &s, 201, 60), 0);
	expect_stats(d, 1, 1, 3, 1);
	add_disk(dev, "zram0", 2048);
	assert_int_equal(disklife_check(d), 0);
	assert_int_equal(c.ndropped, 2);
	assert_int_equal(c.nrenamed, 1);
	assert_int_equal(c.renamed[0], dev);
	expect_stats(d, 0, 0, 3, 2);
	/* Idle and renamed without ever being seen gone: dropped too. */
	one_disk(&s, dev, 4);
	assert_int_equal(disklife_prune(d, &s, 300, 60), 0);
	remove_disk(dev);
	add_disk(dev, "zram1", 2048);
	assert_int_equal(disklife_prune(d, &s, 301, 60), 0);
	assert_int_equal(c.ndropped, 3);
	assert_int_equal(c.nrenamed, 2);
	remove_disk(dev);
	snapshot_free(&s);
	disklife_free(d);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(blockdir, sizeof(blockdir), "%s/block", tmpdir);
	return mkdir(blockdir, 0755);
}

static void test_lvm_split(void **state)
{
	static const struct {
		const char *dm, *vg, *lv;
	} ok[] = {
		{ "vg0-root", "vg0", "root" },	     { "vg--a-lv--b", "vg-a", "lv-b" },
		{ "vg---lv", "vg-", "lv" },	   /* VG "vg-": its '-' doubled */
		{ "vg-lv----x", "vg", "lv--x" },   /* two '-' in the LV */
		{ "vg0-snap-cow", "vg0", "snap" }, /* a hidden layer: its suffix left out */
		{ "vg0-lv--1-real", "vg0", "lv-1" }, { "a-b", "a", "b" },
	};
	static const char *const bad[] = { "novg", "vg--only", "-lv", "vg-", "vg--" };
	char vg[16], lv[16];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(disks_lvm_split(ok[i].dm, vg, sizeof(vg), lv, sizeof(lv)), 0);
		assert_string_equal(vg, ok[i].vg);
		assert_string_equal(lv, ok[i].lv);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(disks_lvm_split(bad[i], vg, sizeof(vg), lv, sizeof(lv)), -EINVAL);
	/* Names longer than the buffers are cut, not overrun. */
	assert_int_equal(disks_lvm_split("averyveryverylongvg-lv", vg, 8, lv, sizeof(lv)), 0);
	assert_string_equal(vg, "averyve");
	assert_string_equal(lv, "lv");
}

/* tmpdir/sys/DISK/FILE holding text (n bytes of it; all of it when n is 0). */
static void fixture_file(const char *disk, const char *file, const char *text, size_t n)
{
	char path[4300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/sys/%s/%s", tmpdir, disk, file);
	/* Its directories first, each one below tmpdir. */
	for (char *p = path + strlen(tmpdir) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite(text, 1, n ? n : strlen(text), f);
	fclose(f);
}

static void read_ids(const char *disk, struct disk_ids *ids)
{
	char dir[4200], md[4200], udev[4200];

	snprintf(dir, sizeof(dir), "%s/sys/%s", tmpdir, disk);
	snprintf(md, sizeof(md), "%s/dev-md", tmpdir);
	snprintf(udev, sizeof(udev), "%s/udev", tmpdir);
	disks_ids_read(dir, disk, md, udev, ids);
}

static void test_ids(void **state)
{
	/* VPD page 0x80 as SCSI hands it over: code, length, padded serial. */
	static const char vpd[] = "\0\x80\0\x0a  QM0001  ";
	char md[4200], link[4300];
	struct disk_ids ids;

	(void)state;
	fixture_file("dm-3", "dm/name", "vg--a-lv--b\n", 0);
	fixture_file("dm-3", "dm/uuid", "LVM-0123456789abcdefABCDEF\n", 0);
	read_ids("dm-3", &ids);
	assert_string_equal(ids.dm_name, "vg--a-lv--b");
	assert_string_equal(ids.lvm_vg, "vg-a");
	assert_string_equal(ids.lvm_lv, "lv-b");
	assert_false(ids.md);
	assert_string_equal(ids.serial, "");
	/* dm-crypt's name has '-' too, but it is no LVM volume. */
	fixture_file("dm-4", "dm/name", "luks-home\n", 0);
	fixture_file("dm-4", "dm/uuid", "CRYPT-LUKS2-0123-luks-home\n", 0);
	read_ids("dm-4", &ids);
	assert_string_equal(ids.dm_name, "luks-home");
	assert_string_equal(ids.lvm_vg, "");
	assert_string_equal(ids.lvm_lv, "");
	/* md: named by udev's link, else by the kernel's md_NAME. */
	snprintf(md, sizeof(md), "%s/dev-md", tmpdir);
	assert_int_equal(mkdir(md, 0755), 0);
	snprintf(link, sizeof(link), "%s/data", md);
	assert_int_equal(symlink("../md127", link), 0);
	fixture_file("md127", "md/array_state", "clean\n", 0);
	read_ids("md127", &ids);
	assert_true(ids.md);
	assert_string_equal(ids.md_name, "data");
	fixture_file("md126", "md/array_state", "clean\n", 0);
	read_ids("md126", &ids);
	assert_true(ids.md);
	assert_string_equal(ids.md_name, "");
	fixture_file("md_home", "md/array_state", "clean\n", 0);
	read_ids("md_home", &ids);
	assert_string_equal(ids.md_name, "home");
	/* NVMe: the serial is the controller's (device/), padded. */
	fixture_file("nvme0n1", "nsid", "1\n", 0);
	fixture_file("nvme0n1", "wwid", "eui.0025388b71b1e0a2  \n", 0);
	fixture_file("nvme0n1", "device/serial", "S4EWNX0R123456      \n", 0);
	read_ids("nvme0n1", &ids);
	assert_string_equal(ids.nvme_nsid, "1");
	assert_string_equal(ids.serial, "S4EWNX0R123456");
	assert_string_equal(ids.wwid, "eui.0025388b71b1e0a2");
	assert_string_equal(ids.dm_name, "");
	/* virtio-blk: the serial udev read when the disk came, never sysfs'
	 * (each read of it is a request to the disk); none without udev's
	 * record. SCSI: VPD 0x80 and device/wwid. */
	fixture_file("vdb", "serial", "from-the-device\n", 0);
	fixture_file("vdb", "dev", "254:16\n", 0);
	read_ids("vdb", &ids);
	assert_string_equal(ids.serial, "");
	fixture_file("../udev", "b254:16", "S:disk/by-id/virtio-vm7-disk1\nE:ID_SERIAL=vm7-disk1\n",
		     0);
	read_ids("vdb", &ids);
	assert_string_equal(ids.serial, "vm7-disk1");
	assert_string_equal(ids.nvme_nsid, "");
	fixture_file("sdb", "device/vpd_pg80", vpd, sizeof(vpd) - 1);
	fixture_file("sdb", "device/wwid", "naa.600508b1001c5e0e\n", 0);
	read_ids("sdb", &ids);
	assert_string_equal(ids.serial, "QM0001");
	assert_string_equal(ids.wwid, "naa.600508b1001c5e0e");
}

static int teardown(void **state)
{
	(void)state;
	return nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),	  cmocka_unit_test(test_cache),
		cmocka_unit_test(test_merge),	  cmocka_unit_test(test_disklife),
		cmocka_unit_test(test_lvm_split), cmocka_unit_test(test_ids),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
