/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * holders.h - the virtual machines that hold disks open: qemu processes
 * found in /proc, named by their -name option, and the whole disks their
 * descriptors point at, so that a dm-12 can be read as "vm7's disk".
 *
 * Reading another process's descriptors (/proc/PID/fd) takes the same uid
 * and no more capabilities than the reader's, or CAP_SYS_PTRACE: qemu run
 * by libvirt is another user's, so a reader without CAP_SYS_PTRACE sees
 * nothing of it. Such processes are counted (holders_stats.denied), not
 * reported as errors.
 */
#ifndef IOLAT_HOLDERS_H
#define IOLAT_HOLDERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Pairs one scan reports at most: a host's VMs times their disks. */
#define HOLDERS_MAX 1024

struct holder {
	uint32_t dev; /* the whole disk (disks.h encoding), a partition's disk */
	int pid;      /* the process that holds it (the first one found) */
	char vm[128]; /* the VM's name (-name), "" when qemu was given none */
};

struct holders_stats {
	unsigned int qemus;  /* qemu processes found */
	unsigned int denied; /* of those, how many kept their descriptors hidden */
};

/* Whether a process is a qemu, by the name it was started under (argv[0]'s
 * last part): "qemu..." (qemu-system-x86_64, qemu-kvm) or "kvm" (Debian's
 * and Proxmox's wrapper). Not by comm: -name process=NAME renames it. */
bool holders_is_qemu(const char *argv0);

/*
 * The guest's name in a qemu command line (args: its NUL-separated
 * arguments, len bytes, as /proc/PID/cmdline has them): the value of
 * -name or --name, "NAME" or "guest=NAME" among its comma-separated
 * options (",," is a comma in the name), the last -name if several.
 * 0, or -ENOENT when there is none.
 */
int holders_vm_name(const char *args, size_t len, char *out, size_t outlen);

/*
 * Scans procdir (/proc) for qemu processes and the block devices they hold
 * open, into out (at most max pairs of disk and VM, each once). Processes
 * that end during the scan are skipped. The count, or -errno when procdir
 * cannot be read.
 */
int holders_scan(const char *procdir, struct holder *out, size_t max, struct holders_stats *st);

#endif /* IOLAT_HOLDERS_H */
