/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * disks.h - block devices by name and number, from sysfs.
 *
 * iolat keys by whole disk in the kernel's dev_t encoding (major << 20 |
 * minor, as MKDEV builds it); this module turns names into those numbers and
 * back, and says how a disk is driven.
 */
#ifndef IOLAT_DISKS_H
#define IOLAT_DISKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DISK_NAME_MAX 64

static inline uint32_t disk_mkdev(unsigned int major, unsigned int minor)
{
	return (major << 20) | minor;
}

static inline unsigned int disk_major(uint32_t dev)
{
	return dev >> 20;
}
static inline unsigned int disk_minor(uint32_t dev)
{
	return dev & 0xfffff;
}

/* dev as "major:minor", the name of a disk with no other. */
static inline void disk_number(uint32_t dev, char *buf, size_t len)
{
	snprintf(buf, len, "%u:%u", disk_major(dev), disk_minor(dev));
}

/*
 * Resolves a disk or partition name (with or without /dev/) to the whole
 * disk it belongs to. Fills dev and, if whole is not NULL, the disk's name.
 * Returns 0 or -ENOENT.
 */
int disks_resolve(const char *name, uint32_t *dev, char *whole, size_t wholelen);

/* Name of the disk with this number ("7:0" style when sysfs has none). */
void disks_name(uint32_t dev, char *buf, size_t len);

/*
 * The disk with number dev in dir (/sys/dev/block, or a copy of its layout
 * for tests): its name (uevent's DEVNAME; "M:m" if it has none) and, if
 * sectors is not NULL, its size in 512-byte sectors (0: no medium, or a loop
 * device with no file). 0, or -ENOENT when dir has no such number.
 */
int disks_lookup(const char *dir, uint32_t dev, char *name, size_t len, uint64_t *sectors);

/*
 * Where a disk sits in a stack of block devices (device-mapper, md): the
 * disks built on it (holders: dm-0) and those it is built on (slaves: the
 * whole disks under it, vdb vdc), space-separated, "" if none. Its own
 * partitions' holders count as its own: I/O a dm device sends to vdb1 is
 * I/O of disk vdb. A disk with holders is a lower layer: its I/O is also
 * counted by the disk above it.
 */
struct disk_stack {
	char holders[128];
	char slaves[128];
};

/* dev's stack, from /sys/dev/block; 0, or -ENOENT if there is no such disk. */
int disks_stack(uint32_t dev, struct disk_stack *out);

/*
 * The names an operator knows a disk by, beside the kernel's dm-3 or md127;
 * "" where sysfs has none. dm: its dm name (dm/name) and, for an LVM
 * volume (dm/uuid "LVM-..."), the volume group and logical volume it
 * stands for. md: the array's name (/dev/md/NAME, as udev links it, or the
 * kernel's own md_NAME). NVMe: the namespace id. Any disk: the serial
 * number (NVMe controller, virtio-blk, SCSI VPD page 0x80) and the
 * world-wide id (wwid, NVMe and SCSI).
 */
struct disk_ids {
	bool md; /* an md array (md/ in sysfs), named or not */
	char dm_name[128];
	char lvm_vg[128];
	char lvm_lv[128];
	char md_name[64];
	char nvme_nsid[16];
	char serial[64];
	char wwid[128];
};

/*
 * Splits a device-mapper name LVM made into its volume group and logical
 * volume: LVM writes VG-LV with each '-' inside either name doubled, so
 * "vg--a-lv--b" is VG "vg-a", LV "lv-b". A hidden layer's suffix ("-real",
 * "-cow", "-tpool") follows the LV after another single '-' and is left
 * out. 0, or -EINVAL when name has no single '-' (not LVM's).
 */
int disks_lvm_split(const char *name, char *vg, size_t vglen, char *lv, size_t lvlen);

/*
 * The names of the disk whose sysfs directory is sysdir (/sys/block/NAME),
 * its kernel name name; mddir holds the md arrays' links by name (/dev/md),
 * udevdir udev's records of devices (/run/udev/data), where a virtio
 * disk's serial is read (reading sysfs' would send the disk a request).
 * Whatever they do not have stays "". Reads only what the kernel keeps.
 */
void disks_ids_read(const char *sysdir, const char *name, const char *mddir, const char *udevdir,
		    struct disk_ids *out);

/*
 * The whole disk a device number belongs to (itself for a disk, its disk
 * for a partition), from /sys/dev/block. 0 or -ENOENT.
 */
int disks_whole(uint32_t dev, uint32_t *whole);

struct disk_info {
	char name[DISK_NAME_MAX];
	uint32_t dev;
	bool bio_based;	    /* no blk-mq: no request events */
	bool iostats;	    /* queue/iostats: kernel stamps start_time_ns */
	bool wbt;	    /* write-back throttling on: queue stats, io_start_time_ns */
	char scheduler[32]; /* active I/O scheduler, "none", or "" */
	uint64_t sectors;   /* size in 512-byte sectors; 0: no medium, no I/O */
	char model[64];	    /* device/model (SCSI, NVMe, ...), trimmed; "" if none */
	bool rotational;    /* queue/rotational: a spinning disk */
	struct disk_stack stack;
	struct disk_ids ids;
};

/* Lists the disks in /sys/block, their ids left empty (disks_ids_fill reads
 * them, for the commands that show them). Returns the count (<= max) or
 * -errno. */
int disks_list(struct disk_info *out, size_t max);

/* d->ids, read for the listed disk d (as disks_ids_read, from /sys/block,
 * /dev/md and /run/udev/data). */
void disks_ids_fill(struct disk_info *d);

/* Disks a listing holds at most: DISKS_LIST_MAX struct disk_info take
 * over 100 KiB, too much for a stack (disks_list_new). */
#define DISKS_LIST_MAX 256

/* Lists up to DISKS_LIST_MAX disks into a new array at *out, which the
 * caller frees (NULL on failure). Returns the count or -errno. */
int disks_list_new(struct disk_info **out);

/*
 * The names in /sys/block, space-separated, in directory order: one read of
 * the directory, to tell whether disks_list() would find other disks than
 * last time. 0, -ENOSPC if they do not fit in len, or -errno.
 */
int disks_names(char *out, size_t len);

/*
 * How many disks /sys/block has (*disks), and how many requests those with
 * a request queue (blk-mq) can hold at once (*inflight): the sum of each
 * one's queue/nr_requests times its hardware queues (the mq/ directories),
 * which bounds the requests alive on it. 0 or -errno.
 */
int disks_inflight(uint32_t *disks, uint64_t *inflight);

#endif
