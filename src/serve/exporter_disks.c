// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* exporter_disks.c - the exporter's disks that come and go (exporter_disks.h). */
#define _GNU_SOURCE
#include "serve/exporter_disks.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/disklife.h"
#include "serve/serve_config.h"
#include "sys/disks.h"
#include "sys/holders.h"

struct exporter_disks {
	struct collector *c;
	struct decoder_env *env;
	struct disklife *life;
	/* The list of disks the info series come from: too big for the
	 * stack, and kept from one maintenance pass to the next, so that a
	 * pass re-reads sysfs for it (~40 files a disk) only when /sys/block
	 * names other disks than last time, or it is DISK_INFO_MAX_AGE_S old.
	 * A scrape only reads it. */
	struct disk_info *listed;
	int nlisted; /* < 0: not listed yet, or the listing failed */
	char listed_names[4096];
	time_t listed_at;
	/* The VMs holding disks open, as the last scan found them: scanned
	 * by the maintenance pass (a scan reads every process's argv[0]), at
	 * most every HOLDERS_REFRESH_S, and only read by a scrape. */
	struct disk_holder *held;
	int nheld;
	time_t held_at; /* 0: never scanned */
};

/* A holder as the info series show it: the disk by name. */
struct disk_holder {
	char device[DISK_NAME_MAX];
	char vm[sizeof(((struct holder *)0)->vm)];
};

/* The longest a VM's start or end goes unseen by the holder series. */
#define HOLDERS_REFRESH_S 10

/* The longest a disk's model, rotational flag, names and stack are kept without
 * a re-read while its name stays in /sys/block. */
#define DISK_INFO_MAX_AGE_S 60

static int retire(void *ctx, uint32_t dev)
{
	return collector_retire_disk(((struct exporter_disks *)ctx)->c, dev);
}

static int drop(void *ctx, uint32_t dev)
{
	return collector_drop_disk(((struct exporter_disks *)ctx)->c, dev);
}

static void renamed(void *ctx, uint32_t dev)
{
	struct exporter_disks *d = ctx;

	if (d->env)
		decoder_env_forget_disk(d->env, dev);
}

/*
 * Re-reads the disk list when /sys/block names other disks than last time
 * or it is DISK_INFO_MAX_AGE_S old (see struct exporter_disks): at start and
 * on the maintenance pass, never in a scrape, which only reads the list.
 */
static void refresh_list(struct exporter_disks *d, time_t now)
{
	char names[sizeof(d->listed_names)];
	/* Names that do not fit (-ENOSPC) or cannot be read: always re-read. */
	bool named = disks_names(names, sizeof(names)) == 0;
	struct disk_info *fresh;
	int n;

	if (named && d->nlisted >= 0 && !strcmp(names, d->listed_names) &&
	    now - d->listed_at < DISK_INFO_MAX_AGE_S)
		return;
	n = disks_list_new(&fresh);
	if (n < 0)
		return; /* the last list stays: better old names than none */
	for (int i = 0; i < n; i++)
		disks_ids_fill(&fresh[i]);
	free(d->listed);
	d->listed = fresh;
	d->nlisted = n;
	d->listed_at = now;
	snprintf(d->listed_names, sizeof(d->listed_names), "%s", named ? names : "");
}

struct exporter_disks *exporter_disks_new(struct collector *c, struct decoder_env *env)
{
	struct exporter_disks *d = calloc(1, sizeof(*d));
	struct disklife_ops ops = { .ctx = d, .retire = retire, .drop = drop, .renamed = renamed };

	if (!d)
		return NULL;
	d->c = c;
	d->env = env;
	d->nlisted = -1;
	d->life = disklife_new("/sys/dev/block", &ops);
	d->held = calloc(HOLDERS_MAX, sizeof(*d->held));
	if (!d->life || !d->held) {
		exporter_disks_free(d);
		return NULL;
	}
	refresh_list(d, time(NULL)); /* the first scrapes have the disks' names */
	return d;
}

void exporter_disks_free(struct exporter_disks *d)
{
	if (!d)
		return;
	disklife_free(d->life);
	free(d->listed);
	free(d->held);
	free(d);
}

int exporter_disks_check(struct exporter_disks *d)
{
	return disklife_check(d->life);
}

void exporter_disks_stats(const struct exporter_disks *d, struct disklife_stats *out)
{
	disklife_stats(d->life, out);
}

struct gone_ctx {
	struct metric_family *f;
	int failed;
};

static void add_gone(void *ctx, uint32_t dev, const char *name, time_t changed)
{
	struct gone_ctx *g = ctx;
	char number[24];
	const char *v[1] = { name };
	struct metric_series *s;

	if (!name[0]) {
		disk_number(dev, number, sizeof(number));
		v[0] = number;
	}
	s = metrics_series(g->f, v, NULL);
	if (s)
		s->value = (double)changed;
	else
		g->failed = 1;
}

/* The families of a disk's info: what it is, which volume, where it sits. */
struct info_families {
	struct metric_family *device, *volume, *stack;
};

/* Labels of iolat_block_device_info and iolat_block_volume_info, in the
 * order add_one_disk fills them (at most METRIC_MAX_LABELS each: so two). */
static const char *const device_labels[] = { "device", "model",	    "rotational", "serial",
					     "wwid",   "nvme_nsid", NULL };
static const char *const volume_labels[] = { "device", "dm_name", "lvm_vg",
					     "lvm_lv", "md_name", NULL };

static int set_one(struct metric_family *f, const char *const *values)
{
	struct metric_series *s = metrics_series(f, values, NULL);

	if (!s)
		return -ENOMEM;
	s->value = 1;
	return 0;
}

/* Disk d's series: what it is, the volume it is if dm or md, and one per
 * disk built on it. 0 or -ENOMEM. */
static int add_one_disk(const struct info_families *f, const struct disk_info *d)
{
	char up[sizeof(d->stack.holders)], *save = NULL, *w;
	const struct disk_ids *id = &d->ids;
	const char *dv[] = { d->name,
			     d->model[0] ? d->model : "unknown",
			     d->rotational ? "1" : "0",
			     id->serial,
			     id->wwid,
			     id->nvme_nsid };
	const char *vv[] = { d->name, id->dm_name, id->lvm_vg, id->lvm_lv, id->md_name };
	int rc = set_one(f->device, dv);

	if (!rc && (id->dm_name[0] || id->md))
		rc = set_one(f->volume, vv);
	snprintf(up, sizeof(up), "%s", d->stack.holders);
	for (w = strtok_r(up, " ", &save); !rc && w; w = strtok_r(NULL, " ", &save)) {
		const char *v[] = { d->name, w };

		rc = set_one(f->stack, v);
	}
	return rc;
}

/*
 * Maintenance: the VMs holding disks open, scanned again when the last
 * scan is HOLDERS_REFRESH_S old. A failed scan (no /proc) leaves none.
 */
static void refresh_holders(struct exporter_disks *d, time_t now)
{
	struct holder *found;
	struct holders_stats st;
	int n;

	if (d->held_at && now - d->held_at < HOLDERS_REFRESH_S && now >= d->held_at)
		return;
	d->held_at = now;
	found = calloc(HOLDERS_MAX, sizeof(*found));
	n = found ? holders_scan("/proc", found, HOLDERS_MAX, &st) : -ENOMEM;
	d->nheld = n > 0 ? n : 0;
	for (int i = 0; i < d->nheld; i++) {
		disks_name(found[i].dev, d->held[i].device, sizeof(d->held[i].device));
		snprintf(d->held[i].vm, sizeof(d->held[i].vm), "%s", found[i].vm);
	}
	free(found);
}

/* iolat_block_device_holder_info: which VM holds which disk open. */
static int add_holders(struct exporter_disks *d, struct metric_set *set)
{
	static const char *const labels[] = { "device", "vm", NULL };
	struct metric_family *f = metrics_family(
	    set, "iolat_block_device_holder_info",
	    "1 for each disk and the VM (qemu's -name) that holds it open, its partitions' and "
	    "paths' included; seen when serve may read qemu's descriptors (CAP_SYS_PTRACE).",
	    METRIC_GAUGE, labels);

	if (!f)
		return -ENOMEM;
	for (int i = 0; i < d->nheld; i++) {
		const char *v[] = { d->held[i].device, d->held[i].vm };
		struct metric_series *s = metrics_series(f, v, NULL);

		if (!s)
			return -ENOMEM;
		s->value = 1;
	}
	return 0;
}

/*
 * Per disk: what it is (iolat_block_device_info, to group disks by model in
 * a fleet and find them by serial), the volume it stands for if it is one
 * (iolat_block_volume_info: dm name, LVM VG and LV, md array), one series
 * per stacked pair, where it sits (iolat_block_stack_info: disk `device`
 * has `upper` built on it, dm or md, so upper's I/O includes device's), and
 * which VM holds it open (iolat_block_device_holder_info). All join the
 * block series on device.
 */
static int add_disk_info(struct exporter_disks *d, struct metric_set *set)
{
	static const char *const stack_l[] = { "device", "upper", NULL };
	struct info_families f = {
		.stack = metrics_family(
		    set, "iolat_block_stack_info",
		    "Stacked block devices (LVM/dm, dm-crypt, md): 1 for each disk `device` and a "
		    "disk `upper` built on it; each is timed on its own, and upper's I/O includes "
		    "device's.",
		    METRIC_GAUGE, stack_l),
		.device = metrics_family(
		    set, "iolat_block_device_info",
		    "1 for each disk: its model (sysfs device/model; \"unknown\" when the disk has "
		    "none, as loop, zram, dm, md and virtio disks), whether it is rotational, its "
		    "serial number, wwid and NVMe namespace id (\"\" where sysfs has none).",
		    METRIC_GAUGE, device_labels),
		.volume = metrics_family(
		    set, "iolat_block_volume_info",
		    "1 for each dm or md disk: its dm name, the LVM volume group and logical "
		    "volume "
		    "it is (dm uuid LVM-...), or its md array's name; \"\" where it has none.",
		    METRIC_GAUGE, volume_labels),
	};
	int n, rc = 0;

	if (!f.stack || !f.device || !f.volume)
		return -ENOMEM;
	n = d->nlisted;
	for (int i = 0; !rc && i < n; i++)
		rc = add_one_disk(&f, &d->listed[i]);
	return rc ? rc : add_holders(d, set);
}

int exporter_disks_metrics(struct exporter_disks *d, struct metric_set *set)
{
	static const char *const dev_l[] = { "device", NULL };
	struct gone_ctx g = { 0 };
	struct disklife_stats st;

	disklife_stats(d->life, &st);
	g.f = metrics_family(
	    set, "iolat_disks_gone_since_seconds",
	    "Gone disks (detached, removed, no medium) whose series are still exported: Unix "
	    "time their series last changed; they leave the output disks.expire after it.",
	    METRIC_GAUGE, dev_l);
	if (!g.f)
		return -ENOMEM;
	disklife_each_gone(d->life, add_gone, &g);
	if (g.failed ||
	    metrics_set_value(
		metrics_family(set, "iolat_disks_retired_total",
			       "Times a gone disk's kernel map keys moved to user space (counts "
			       "kept).",
			       METRIC_COUNTER, NULL),
		NULL, (double)st.retired) ||
	    metrics_set_value(
		metrics_family(set, "iolat_disks_expired_total",
			       "Gone disks whose series left the output (after disks.expire, or at "
			       "once when another disk took their number).",
			       METRIC_COUNTER, NULL),
		NULL, (double)st.expired))
		return -ENOMEM;
	return add_disk_info(d, set);
}

int exporter_disks_prune(struct exporter_disks *d, const struct snapshot *snap, time_t now,
			 unsigned int expire_s)
{
	refresh_list(d, now);
	refresh_holders(d, now);
	return disklife_prune(d->life, snap, now, expire_s ? expire_s : CONFIG_DEFAULT_EXPIRE_S);
}
