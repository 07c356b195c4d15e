// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * exporter_kstat.c - the kernel's completed-I/O counts beside iolat's, and
 * their difference since a baseline (exporter_kstat.h).
 */
#include "serve/exporter_kstat.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/names.h"
#include "sys/blockstat.h"
#include "sys/disks.h"

/* One disk the last pass noted, and its baseline. */
struct kstat_disk {
	char name[DISK_NAME_MAX];
	uint32_t dev;
	struct blockstat kernel_base;
	uint64_t iolat_base[BLOCKSTAT_GROUPS];
	struct blockstat now; /* this scrape's read (exporter_kstat_sample) */
	bool now_read;
};

struct exporter_kstat {
	char sys_block[256];
	struct kstat_disk *disks; /* ascending by dev */
	uint32_t *devs;		  /* the same disks' numbers, for exporter_kstat_devs */
	size_t n;
};

/* The kernel's group an iolat op counts in; -1 for none (see the header). */
static int group_of_op(int op)
{
	switch (op) {
	case IOLAT_OP_READ:
		return BLOCKSTAT_READ;
	case IOLAT_OP_WRITE:
	case IOLAT_OP_WRITE_ZEROES: /* op_is_write: the kernel's write group */
		return BLOCKSTAT_WRITE;
	case IOLAT_OP_DISCARD:
		return BLOCKSTAT_DISCARD;
	case IOLAT_OP_FLUSH:
		return BLOCKSTAT_FLUSH;
	default:
		return -1;
	}
}

struct exporter_kstat *exporter_kstat_new(const char *sys_block)
{
	struct exporter_kstat *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	snprintf(k->sys_block, sizeof(k->sys_block), "%s", sys_block);
	k->disks = calloc(DISKS_LIST_MAX, sizeof(*k->disks));
	k->devs = calloc(DISKS_LIST_MAX, sizeof(*k->devs));
	if (!k->disks || !k->devs) {
		exporter_kstat_free(k);
		return NULL;
	}
	return k;
}

void exporter_kstat_free(struct exporter_kstat *k)
{
	if (!k)
		return;
	free(k->disks);
	free(k->devs);
	free(k);
}

const uint32_t *exporter_kstat_devs(const struct exporter_kstat *k, size_t *n)
{
	*n = k->n;
	return k->devs;
}

static int cmp_dev(const void *pa, const void *pb)
{
	const struct kstat_disk *a = pa, *b = pb;

	return a->dev < b->dev ? -1 : a->dev > b->dev;
}

static int find_dev(const struct kstat_disk *d, size_t n, uint32_t dev)
{
	const struct kstat_disk want = { .dev = dev }, *hit;

	hit = bsearch(&want, d, n, sizeof(*d), cmp_dev);
	return hit ? (int)(hit - d) : -1;
}

/* iolat's completions per disk of d[] and kernel group, summed over snap's
 * series (cgroups, flags, size classes): counts[i][g]. */
static void iolat_counts(const struct kstat_disk *d, size_t n, const struct snapshot *snap,
			 uint64_t (*counts)[BLOCKSTAT_GROUPS])
{
	memset(counts, 0, n * sizeof(*counts));
	for (size_t i = 0; snap && i < snap->n; i++) {
		const struct series *s = &snap->s[i];
		int g = group_of_op(s->key.op), at;

		if (g < 0)
			continue;
		at = find_dev(d, n, s->key.dev);
		if (at >= 0)
			counts[at][g] += s->val.ios;
	}
}

/* Whether old's baseline still holds for the disk as it is now (see the
 * header for what breaks one). */
static bool baseline_holds(const struct kstat_disk *old, const struct kstat_disk *now,
			   const struct blockstat *kernel, const uint64_t iolat[BLOCKSTAT_GROUPS])
{
	if (strcmp(old->name, now->name) || kernel->iostats != old->kernel_base.iostats)
		return false;
	for (int g = 0; g < BLOCKSTAT_GROUPS; g++)
		if (kernel->has[g] != old->kernel_base.has[g] ||
		    kernel->done[g] < old->kernel_base.done[g] || iolat[g] < old->iolat_base[g])
			return false;
	return true;
}

/* The disks in sys_block with a medium, with their kernel counts, into
 * d[] (at most DISKS_LIST_MAX), ascending by number. The count or -errno. */
static int list_disks(const char *sys_block, struct kstat_disk *d)
{
	DIR *dir = opendir(sys_block);
	struct dirent *de;
	size_t n = 0;

	if (!dir)
		return -errno;
	while ((de = readdir(dir)) && n < DISKS_LIST_MAX) {
		uint64_t sectors;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(d[n].name) ||
		    blockstat_disk(sys_block, de->d_name, &d[n].dev, &sectors) || !sectors ||
		    blockstat_read(sys_block, de->d_name, &d[n].kernel_base))
			continue; /* no medium, or gone while listed */
		snprintf(d[n].name, sizeof(d[n].name), "%s", de->d_name);
		n++;
	}
	closedir(dir);
	qsort(d, n, sizeof(*d), cmp_dev);
	return (int)n;
}

int exporter_kstat_pass(struct exporter_kstat *k, const struct snapshot *snap)
{
	struct kstat_disk *now = calloc(DISKS_LIST_MAX, sizeof(*now));
	uint64_t(*counts)[BLOCKSTAT_GROUPS] = calloc(DISKS_LIST_MAX, sizeof(*counts));
	int n = -ENOMEM;

	if (now && counts)
		n = list_disks(k->sys_block, now);
	if (n >= 0)
		iolat_counts(now, (size_t)n, snap, counts);
	for (int i = 0; i < n; i++) {
		int was = find_dev(k->disks, k->n, now[i].dev);

		if (was >= 0 &&
		    baseline_holds(&k->disks[was], &now[i], &now[i].kernel_base, counts[i]))
			now[i] = k->disks[was];
		else
			memcpy(now[i].iolat_base, counts[i], sizeof(counts[i]));
		k->devs[i] = now[i].dev;
	}
	if (n >= 0) {
		memcpy(k->disks, now, (size_t)n * sizeof(*now));
		k->n = (size_t)n;
	}
	free(now);
	free(counts);
	return n < 0 && n != -ENOENT ? n : 0;
}

void exporter_kstat_sample(struct exporter_kstat *k)
{
	for (size_t i = 0; i < k->n; i++)
		k->disks[i].now_read = !blockstat_read(k->sys_block, k->disks[i].name,
							&k->disks[i].now);
}

/* Disk d's series in both families. 0 or -ENOMEM. */
static int add_disk(const struct kstat_disk *d, const uint64_t iolat[BLOCKSTAT_GROUPS],
		    struct metric_family *kernel, struct metric_family *unseen)
{
	const struct blockstat now = d->now;

	if (!d->now_read)
		return 0; /* gone since the pass: the next one forgets it */
	for (int g = 0; g < BLOCKSTAT_GROUPS; g++) {
		const char *v[] = { d->name, blockstat_group_name(g) };
		struct metric_series *s;

		if (!now.has[g])
			continue;
		s = metrics_series(kernel, v, NULL);
		if (!s)
			return -ENOMEM;
		s->value = (double)now.done[g];
		/* Counts the kernel did not keep, or a baseline that no longer
		 * holds (the next pass takes another): no difference to show. */
		if ((g != BLOCKSTAT_FLUSH && (!now.iostats || !d->kernel_base.iostats)) ||
		    now.done[g] < d->kernel_base.done[g] || iolat[g] < d->iolat_base[g])
			continue;
		s = metrics_series(unseen, v, NULL);
		if (!s)
			return -ENOMEM;
		s->value = ((double)(now.done[g] - d->kernel_base.done[g]) -
			    (double)(iolat[g] - d->iolat_base[g]));
	}
	return 0;
}

int exporter_kstat_metrics(const struct exporter_kstat *k, const struct snapshot *snap,
			   struct metric_set *set)
{
	static const char *const labels[] = { "device", "op", NULL };
	struct metric_family *kernel = metrics_family(
	    set, "iolat_block_kernel_completed_total",
	    "The kernel's own count of completed I/O (/sys/block/DEVICE/stat, since the disk was "
	    "made; a disk's partitions included), per op: read, write (with write zeroes), "
	    "discard, flush. Compare with iolat_block_completions_total.",
	    METRIC_COUNTER, labels);
	struct metric_family *unseen = metrics_family(
	    set, "iolat_block_unseen_completions",
	    "Completions the kernel counted and iolat did not, since iolat's baseline for the "
	    "disk (its first maintenance pass with the disk in it): kernel minus iolat. "
	    "Below 0 for a scrape while I/O completes; see docs/runbooks.md.",
	    METRIC_GAUGE, labels);
	uint64_t(*counts)[BLOCKSTAT_GROUPS];
	int rc = 0;

	if (!kernel || !unseen)
		return -ENOMEM;
	if (!k->n)
		return 0;
	counts = calloc(k->n, sizeof(*counts));
	if (!counts)
		return -ENOMEM;
	iolat_counts(k->disks, k->n, snap, counts);
	for (size_t i = 0; !rc && i < k->n; i++)
		rc = add_disk(&k->disks[i], counts[i], kernel, unseen);
	free(counts);
	return rc;
}
