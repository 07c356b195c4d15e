// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * exporter_kstat.c - the kernel's completed-I/O counts beside iolat's, and
 * their difference since a baseline (exporter_kstat.h).
 */
#include "serve/exporter_kstat.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/kcompare.h"

/* One disk the last pass noted: its baseline, and this scrape's read. */
struct kstat_disk {
	char name[DISK_NAME_MAX];
	struct blockstat kernel_base;
	uint64_t iolat_base[BLOCKSTAT_GROUPS];
	bool based;	      /* the baseline is taken (by a pass) */
	struct blockstat now; /* exporter_kstat_sample's */
	bool now_read;
	/* Its stat and queue/iostats files, kept open from one scrape to the
	 * next (the first KSTAT_OPEN_MAX disks): valid while open is true;
	 * iostats_fd -1 where the disk has no such file. */
	bool open;
	int stat_fd, iostats_fd;
};

/*
 * Disks whose files stay open between scrapes, at most. A scrape reads
 * each with a pread from offset 0, which makes sysfs write the line anew,
 * instead of an open (a walk of /sys/block's symlinked path) and a close:
 * on a host of 22 disks those took ~40 % of serve's own families' time.
 * Past this many disks the rest are read by path as before, so iolat
 * holds at most twice this many descriptors for them.
 */
#define KSTAT_OPEN_MAX 64

struct exporter_kstat {
	char sys_block[256];
	struct kstat_disk *disks; /* ascending by number: devs[i] is disks[i]'s */
	uint32_t *devs;
	size_t n;
	/* The pass's scratch, too big for a stack: what it lists, and the
	 * next disks[] and devs[], swapped in when done. */
	struct kcompare_disk *listed;
	struct kstat_disk *next;
	uint32_t *next_devs;
	uint64_t (*counts)[BLOCKSTAT_GROUPS];
};

/*
 * At start, before the first pass can run: the disks there are known (their
 * zero series show from the first scrape), without a baseline, which the
 * first pass takes against the collector's series as its fold leaves them.
 */
static void note_disks(struct exporter_kstat *k)
{
	int n = kcompare_list(k->sys_block, 0, k->listed, DISKS_LIST_MAX);

	for (int i = 0; i < n; i++) {
		k->disks[i] = (struct kstat_disk){ .kernel_base = k->listed[i].kernel };
		snprintf(k->disks[i].name, sizeof(k->disks[i].name), "%s", k->listed[i].name);
		k->devs[i] = k->listed[i].dev;
	}
	k->n = n > 0 ? (size_t)n : 0;
}

struct exporter_kstat *exporter_kstat_new(const char *sys_block)
{
	struct exporter_kstat *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	snprintf(k->sys_block, sizeof(k->sys_block), "%s", sys_block);
	k->disks = calloc(DISKS_LIST_MAX, sizeof(*k->disks));
	k->devs = calloc(DISKS_LIST_MAX, sizeof(*k->devs));
	k->listed = calloc(DISKS_LIST_MAX, sizeof(*k->listed));
	k->next = calloc(DISKS_LIST_MAX, sizeof(*k->next));
	k->next_devs = calloc(DISKS_LIST_MAX, sizeof(*k->next_devs));
	k->counts = calloc(DISKS_LIST_MAX, sizeof(*k->counts));
	if (!k->disks || !k->devs || !k->listed || !k->next || !k->next_devs || !k->counts) {
		exporter_kstat_free(k);
		return NULL;
	}
	note_disks(k);
	return k;
}

static void disk_close(struct kstat_disk *d)
{
	if (!d->open)
		return;
	close(d->stat_fd);
	if (d->iostats_fd >= 0)
		close(d->iostats_fd);
	d->open = false;
}

void exporter_kstat_free(struct exporter_kstat *k)
{
	if (!k)
		return;
	for (size_t i = 0; k->disks && i < k->n; i++)
		disk_close(&k->disks[i]);
	free(k->disks);
	free(k->devs);
	free(k->listed);
	free(k->next);
	free(k->next_devs);
	free(k->counts);
	free(k);
}

const uint32_t *exporter_kstat_devs(const struct exporter_kstat *k, size_t *n)
{
	*n = k->n;
	return k->devs;
}

/* Whether disk i's baseline (old) still holds for it as listed now, with
 * iolat's counts now (see the header for what breaks one). */
static bool baseline_holds(const struct kstat_disk *old, const struct kcompare_disk *now,
			   const uint64_t iolat[BLOCKSTAT_GROUPS])
{
	const struct blockstat *base = &old->kernel_base;

	if (strcmp(old->name, now->name) || now->kernel.iostats != base->iostats)
		return false;
	for (int g = 0; g < BLOCKSTAT_GROUPS; g++)
		if (now->kernel.has[g] != base->has[g] || now->kernel.done[g] < base->done[g] ||
		    iolat[g] < old->iolat_base[g])
			return false;
	return true;
}

#define SWAP_PTR(a, b)                                                                             \
	do {                                                                                       \
		typeof(a) swap_tmp_ = (a);                                                         \
		(a) = (b);                                                                         \
		(b) = swap_tmp_;                                                                   \
	} while (0)

static int find_dev(const uint32_t *devs, size_t n, uint32_t dev)
{
	for (size_t lo = 0, hi = n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (devs[mid] == dev)
			return (int)mid;
		if (devs[mid] < dev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int exporter_kstat_pass(struct exporter_kstat *k, const struct snapshot *snap)
{
	int n = kcompare_list(k->sys_block, 0, k->listed, DISKS_LIST_MAX);

	if (n < 0)
		return n == -ENOMEM ? n : 0; /* no /sys/block: nothing to compare */
	for (int i = 0; i < n; i++)
		k->next_devs[i] = k->listed[i].dev;
	kcompare_counts(k->next_devs, (size_t)n, snap, k->counts);
	for (int i = 0; i < n; i++) {
		int was = find_dev(k->devs, k->n, k->listed[i].dev);
		struct kstat_disk d = {};

		if (was >= 0 && k->disks[was].based &&
		    baseline_holds(&k->disks[was], &k->listed[i], k->counts[i])) {
			d = k->disks[was];
		} else {
			snprintf(d.name, sizeof(d.name), "%s", k->listed[i].name);
			d.kernel_base = k->listed[i].kernel;
			memcpy(d.iolat_base, k->counts[i], sizeof(d.iolat_base));
			d.based = true;
		}
		/* Its open files go with it (a disk made anew under the name
		 * fails their reads, and they are opened again). */
		if (was >= 0 && k->disks[was].open && !strcmp(k->disks[was].name, d.name)) {
			d.open = true;
			d.stat_fd = k->disks[was].stat_fd;
			d.iostats_fd = k->disks[was].iostats_fd;
			k->disks[was].open = false;
		} else {
			d.open = false;
		}
		k->next[i] = d;
	}
	for (size_t i = 0; i < k->n; i++) /* disks no longer listed */
		disk_close(&k->disks[i]);
	SWAP_PTR(k->disks, k->next);
	SWAP_PTR(k->devs, k->next_devs);
	k->n = (size_t)n;
	return 0;
}

/* Opens d's stat and queue/iostats files; false if stat will not open. */
static bool disk_open(const struct exporter_kstat *k, struct kstat_disk *d)
{
	d->open = !blockstat_open(k->sys_block, d->name, &d->stat_fd, &d->iostats_fd);
	return d->open;
}

/* Disk i's counts now: whether they could be read. */
static bool sample_disk(struct exporter_kstat *k, size_t i)
{
	struct kstat_disk *d = &k->disks[i];

	if (i >= KSTAT_OPEN_MAX) {
		disk_close(d);
		return !blockstat_read(k->sys_block, d->name, &d->now);
	}
	if (d->open && !blockstat_read_open(d->stat_fd, d->iostats_fd, &d->now))
		return true;
	/* Not open yet, or its files are a removed disk's (ENODEV): by name
	 * once more. */
	disk_close(d);
	return disk_open(k, d) && !blockstat_read_open(d->stat_fd, d->iostats_fd, &d->now);
}

void exporter_kstat_sample(struct exporter_kstat *k)
{
	for (size_t i = 0; i < k->n; i++)
		k->disks[i].now_read = sample_disk(k, i);
}

/* Disk d's series in both families. 0 or -ENOMEM. */
static int add_disk(const struct kstat_disk *d, const uint64_t iolat[BLOCKSTAT_GROUPS],
		    struct metric_family *kernel, struct metric_family *unseen)
{
	const struct blockstat *now = &d->now, *base = &d->kernel_base;

	if (!d->now_read)
		return 0; /* gone since the pass: the next one forgets it */
	for (int g = 0; g < BLOCKSTAT_GROUPS; g++) {
		const char *v[] = { d->name, blockstat_group_name(g) };
		struct metric_series *s;

		if (!now->has[g])
			continue;
		s = metrics_series(kernel, v, NULL);
		if (!s)
			return -ENOMEM;
		s->value = (double)now->done[g];
		/* Counts the kernel did not keep, or a baseline that no longer
		 * holds (the next pass takes another): no difference to show. */
		if (!d->based || (g != BLOCKSTAT_FLUSH && (!now->iostats || !base->iostats)) ||
		    now->done[g] < base->done[g] || iolat[g] < d->iolat_base[g])
			continue;
		s = metrics_series(unseen, v, NULL);
		if (!s)
			return -ENOMEM;
		s->value =
		    (double)(now->done[g] - base->done[g]) - (double)(iolat[g] - d->iolat_base[g]);
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
	kcompare_counts(k->devs, k->n, snap, counts);
	for (size_t i = 0; !rc && i < k->n; i++)
		rc = add_disk(&k->disks[i], counts[i], kernel, unseen);
	free(counts);
	return rc;
}
