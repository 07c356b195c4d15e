// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* disklife.c - disks that come and go under `iolat serve` (disklife.h). */
#include "serve/disklife.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/disks.h"
#include "util/idmap.h"
#include "util/log.h"

/* A disk with series. */
struct disk {
	uint64_t ios;		  /* completions over its series at the previous pass */
	uint64_t ios_now;	  /* ... at this one, summed while pruning */
	time_t changed;		  /* when ios last changed, or the disk was first seen */
	bool seen;		  /* has series in this pass's snapshot */
	bool fresh;		  /* first seen in this pass */
	bool gone;		  /* found gone: its kernel keys are in user space */
	char name[DISK_NAME_MAX]; /* its sysfs name when last found; "" unknown */
};

struct disklife {
	char dir[PATH_MAX];
	struct disklife_ops ops;
	struct idmap disks; /* dev + 1 (0:0 is a number too) -> struct disk */
	uint64_t retired, expired;
};

/* idmap ids are non-zero. */
static uint64_t id_of(uint32_t dev)
{
	return (uint64_t)dev + 1;
}
static uint32_t dev_of(uint64_t id)
{
	return (uint32_t)(id - 1);
}

struct disklife *disklife_new(const char *sys_dev_block, const struct disklife_ops *ops)
{
	struct disklife *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	snprintf(d->dir, sizeof(d->dir), "%s", sys_dev_block);
	d->ops = *ops;
	return d;
}

void disklife_free(struct disklife *d)
{
	if (!d)
		return;
	idmap_free_all(&d->disks);
	free(d);
}

/* Every disk's id, gathered so the map can change while they are acted on. */
struct ids {
	uint64_t *id;
	size_t n;
};

static void gather(void *ctx, uint64_t id, void *val)
{
	struct ids *l = ctx;

	(void)val;
	l->id[l->n++] = id;
}

static int all_ids(const struct disklife *d, struct ids *out)
{
	out->n = 0;
	out->id = malloc((d->disks.n ? d->disks.n : 1) * sizeof(*out->id));
	if (!out->id)
		return -ENOMEM;
	idmap_each(&d->disks, gather, out);
	return 0;
}

/* A debug line about disk `id`: its number and its name if known. */
static void log_disk(const char *msg, uint64_t id, const struct disk *k)
{
	char number[24];

	disk_number(dev_of(id), number, sizeof(number));
	log_debug(msg, LOG_STR("disk", k && k->name[0] ? k->name : NULL), LOG_STR("dev", number));
}

/* Forgets every count of disk `id` and the disk itself. */
static int drop(struct disklife *d, uint64_t id, bool renamed)
{
	int rc = d->ops.drop(d->ops.ctx, dev_of(id));

	if (rc)
		return rc;
	if (log_enabled(LOG_DEBUG_L))
		log_disk(renamed ? "disk number taken by another disk; series dropped"
				 : "disk expired; series dropped",
			 id, idmap_get(&d->disks, id));
	free(idmap_del(&d->disks, id));
	d->expired++;
	if (renamed && d->ops.renamed)
		d->ops.renamed(d->ops.ctx, dev_of(id));
	return 0;
}

/* Whether sysfs has another disk, by name, under this disk's number. */
static bool taken(const struct disk *k, const char *name, int found)
{
	return found == 0 && k->name[0] && strcmp(name, k->name);
}

int disklife_check(struct disklife *d)
{
	char name[DISK_NAME_MAX];
	struct ids l;
	int rc = all_ids(d, &l);

	for (size_t i = 0; !rc && i < l.n; i++) {
		struct disk *k = idmap_get(&d->disks, l.id[i]);

		if (!k->gone)
			continue;
		if (taken(k, name, disks_lookup(d->dir, dev_of(l.id[i]), name, sizeof(name), NULL)))
			rc = drop(d, l.id[i], true);
	}
	free(l.id);
	return rc;
}

/* Adds up each disk's completions in snap; new disks start here. */
static int sum_disks(struct disklife *d, const struct snapshot *snap)
{
	for (size_t i = 0; i < snap->n; i++) {
		uint64_t id = id_of(snap->s[i].key.dev);
		struct disk *k = idmap_get(&d->disks, id);

		if (!k) {
			k = calloc(1, sizeof(*k));
			if (!k || idmap_put(&d->disks, id, k)) {
				free(k);
				return -ENOMEM;
			}
			k->fresh = true;
			if (disks_lookup(d->dir, snap->s[i].key.dev, k->name, sizeof(k->name),
					 NULL))
				k->name[0] = '\0';
			if (log_enabled(LOG_DEBUG_L))
				log_disk("disk appeared", id, k);
		}
		k->ios_now += snap->s[i].val.ios;
		k->seen = true;
	}
	return 0;
}

/* One disk, on the pass's snapshot; see disklife.h. */
static int prune_one(struct disklife *d, uint64_t id, time_t now, unsigned int expire_s)
{
	struct disk *k = idmap_get(&d->disks, id);
	char name[DISK_NAME_MAX];
	uint64_t sectors = 0;
	uint64_t ios = k->ios_now;
	int found, rc;

	if (!k->seen) { /* no series any more */
		free(idmap_del(&d->disks, id));
		return 0;
	}
	k->seen = false;
	k->ios_now = 0;
	if (ios != k->ios || k->fresh) {
		/* Doing I/O (again): there, whatever it was at the last look. */
		k->fresh = false;
		k->ios = ios;
		k->changed = now;
		k->gone = false;
		return 0;
	}
	/* Idle since the previous pass: still there? */
	found = disks_lookup(d->dir, dev_of(id), name, sizeof(name), &sectors);
	if (taken(k, name, found))
		return drop(d, id, true);
	if (found == 0 && sectors) {
		k->gone = false;
		snprintf(k->name, sizeof(k->name), "%s", name);
		return 0;
	}
	if (!k->gone) {
		rc = d->ops.retire(d->ops.ctx, dev_of(id));
		if (rc < 0)
			return rc;
		k->gone = true;
		d->retired++;
		if (log_enabled(LOG_DEBUG_L))
			log_disk("disk gone; kernel keys retired", id, k);
	}
	return now - k->changed >= (time_t)expire_s ? drop(d, id, false) : 0;
}

int disklife_prune(struct disklife *d, const struct snapshot *snap, time_t now,
		   unsigned int expire_s)
{
	struct ids l = { 0 };
	int rc = sum_disks(d, snap);

	if (!rc)
		rc = all_ids(d, &l);
	for (size_t i = 0; !rc && i < l.n; i++)
		rc = prune_one(d, l.id[i], now, expire_s);
	free(l.id);
	return rc;
}

static void count_gone(void *ctx, uint64_t id, void *val)
{
	(void)id;
	*(size_t *)ctx += ((struct disk *)val)->gone;
}

struct each_gone {
	disklife_gone_fn fn;
	void *ctx;
};

static void call_gone(void *ctx, uint64_t id, void *val)
{
	const struct each_gone *e = ctx;
	const struct disk *k = val;

	if (k->gone)
		e->fn(e->ctx, dev_of(id), k->name, k->changed);
}

void disklife_each_gone(const struct disklife *d, disklife_gone_fn fn, void *ctx)
{
	struct each_gone e = { fn, ctx };

	idmap_each(&d->disks, call_gone, &e);
}

void disklife_stats(const struct disklife *d, struct disklife_stats *out)
{
	memset(out, 0, sizeof(*out));
	out->disks = d->disks.n;
	idmap_each(&d->disks, count_gone, &out->gone);
	out->retired = d->retired;
	out->expired = d->expired;
}
