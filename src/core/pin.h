/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * pin.h - a collector's programs and maps kept in bpffs across restarts.
 *
 * One directory per instance (PIN_ROOT/NAME) holds the collector's maps,
 * one link per attached program and a control map that says who made them:
 * the map layout's version, an identity (a hash of the BPF object, its
 * constants and its map sizes), the iolat version and when the maps were
 * made. A later iolat whose identity is the same adopts them as they are:
 * the programs never stop, and the maps keep counting. Names in bpffs may
 * not hold a dot (kernel/bpf/inode.c keeps them for later use), so the
 * object's ".bss" and the like are pinned with an underscore.
 */
#ifndef IOLAT_PIN_H
#define IOLAT_PIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PIN_ROOT "/sys/fs/bpf/iolat"
/* The instance serve --handover and --unpin name when given no NAME. */
#define PIN_DEFAULT_INSTANCE "serve"
/* What user space keeps beside the pins (seriesfile.h), in a tmpfs that,
 * like bpffs, does not outlive a reboot: PIN_STATE_ROOT/NAME/. */
#define PIN_STATE_ROOT "/run/iolat"
#define PIN_CONTROL "control"
/* The window map's pin (struct iolat_window, bpf/iolat.h; the object's
 * ".data.window"). Its until_ns is also the collector's lease: see
 * pin_lease_read. */
#define PIN_WINDOW "_data_window"
#define PIN_MAGIC 0x696f6c74u /* "iolt" */

/*
 * The control map's one value. Extend only: new fields go at the end, and
 * a reader takes what the map holds of what it knows (pin_control_read).
 */
struct pin_control {
	uint32_t magic;	     /* PIN_MAGIC */
	uint32_t layout;     /* IOLAT_LAYOUT_VERSION of the maps (bpf/iolat.h) */
	uint64_t identity;   /* pin_identity of what made them */
	uint64_t created_ns; /* CLOCK_REALTIME when the maps were made */
	uint64_t adopted_ns; /* CLOCK_REALTIME when an instance last took them */
	uint32_t owner;	     /* pid of the instance that last took them */
	uint32_t adoptions;  /* how many times they were adopted */
	char version[48];    /* the iolat version that made them */
};

/* The directory of instance `name` (letters, digits, '-', '_'), in out.
 * 0, or -EINVAL for a name that is not one. */
int pin_dir_of(const char *name, char *out, size_t len);

/* The state directory of instance `name`, in out; made (with
 * PIN_STATE_ROOT) if make. 0 or -errno. */
int pin_state_dir(const char *name, bool make, char *out, size_t len);

/* Makes dir (and PIN_ROOT), checking /sys/fs/bpf is a BPF file system.
 * 0 or -errno, with a reason in err. */
int pin_dir_make(const char *dir, char *err, size_t errlen);

/* dir/name with dots made underscores (bpffs takes no dots), in out. */
void pin_path(const char *dir, const char *name, char *out, size_t len);

/* A hash (FNV-1a, 64 bits) of n bytes, continuing from h (0 to start). */
uint64_t pin_hash(uint64_t h, const void *p, size_t n);

/* Reads dir's control value. 0, -ENOENT if there is none, -EPROTO if it
 * is not iolat's, or another -errno. */
int pin_control_read(const char *dir, struct pin_control *out);

/* Writes dir's control value, creating and pinning the map if need be.
 * 0 or -errno. */
int pin_control_write(const char *dir, const struct pin_control *c);

/* Removes instance name's state directory and what is in it. 0 or -errno. */
int pin_state_remove(const char *name);

/* Removes all an instance keeps: its pins (pin_remove), then its state.
 * 0 (also when there was nothing) or -errno. */
int pin_instance_remove(const char *name);

/* Removes everything pinned in dir, and dir. Programs whose links only the
 * pins held are detached; maps nothing else holds are freed. 0 (also when
 * there was nothing) or the first -errno. */
int pin_remove(const char *dir);

/*
 * The lease of dir's collector, in *until_ns: the kernel time
 * (CLOCK_MONOTONIC, as bpf_ktime_get_ns) after which its programs count no
 * I/O that begins, because the run that holds it renews it no more (it
 * stopped or died) and no successor took it over. 0: no lease (a collector
 * of an iolat before leases, or one being handed over from). 0 or -errno.
 */
int pin_lease_read(const char *dir, uint64_t *until_ns);

/* An instance found under PIN_ROOT (pin_list). */
struct pin_instance {
	char name[64];
	bool has_control;
	struct pin_control control;
	int links;	   /* pinned links: attached programs */
	int maps;	   /* pinned maps, the control map included */
	bool has_lease;	   /* pin_lease_read worked */
	uint64_t lease_ns; /* its lease (pin_lease_read); 0: none */
};

/* Instances under PIN_ROOT, at most max; how many there are (may exceed
 * max), or -errno. None, or no PIN_ROOT: 0. */
int pin_list(struct pin_instance *out, int max);

#endif /* IOLAT_PIN_H */
