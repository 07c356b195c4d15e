/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * trace_join.h - `iolat trace --join GUEST.trace HOST.trace`: each request
 * a VM's guest kernel sent to its virtio disk, matched to the host system
 * call (qemu's pread/pwrite/preadv/pwritev on the VM's raw image or LV)
 * that served it and to the host block I/O queued inside that call, so
 * that one chain shows every layer's span from the guest's queue to the
 * host's device.
 *
 * Guest and host clocks differ (each kernel's CLOCK_MONOTONIC), so the two
 * are aligned from the matched pairs themselves: a request is issued in the
 * guest (D) before qemu's call begins, and completes in the guest (C)
 * after it returns. Each pair bounds host - guest to an interval; the
 * offset is the point most intervals agree on, the drift a line fitted
 * through that point in windows of the trace, and the error bound half
 * the width of what every matched pair allows (trace_join_clock).
 */
#ifndef IOLAT_TRACE_JOIN_H
#define IOLAT_TRACE_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The spans of one chain, in order; they add up to the guest's Q2C. */
enum join_span {
	JOIN_GUEST_QUEUE, /* guest Q -> D: the guest's block layer */
	JOIN_VIRTIO_IN,	  /* guest D -> the host call's entry: virtio, qemu */
	JOIN_HOST_FS,	  /* the call's entry -> its first host bio's Q */
	JOIN_HOST_BLOCK,  /* host Q -> D of the bottom device's request */
	JOIN_HOST_DEVICE, /* host D -> C at the bottom device */
	JOIN_HOST_RETURN, /* host C -> the call's exit (upper layers' ends) */
	JOIN_VIRTIO_OUT,  /* the call's exit -> guest C: qemu, virtio, irq */
	JOIN_SPANS,
};

/* sys_nr of a chain matched to a host bio on the image, not to a call:
 * qemu's aio=native (io_submit) and aio=io_uring submit a request in a call
 * that names no offset here, so a request on a block-device image is
 * matched to the bio at its own sector. */
#define JOIN_NO_CALL UINT32_MAX

/* One guest request and the host work that served it. */
struct join_chain {
	/* The guest's request (the bios of one request, their first Q). */
	uint32_t guest_dev;
	uint8_t op;	  /* enum iolat_op */
	uint64_t offset;  /* bytes on the guest disk */
	uint32_t bytes;	  /* the request's size */
	uint32_t bios;	  /* guest bios in it */
	uint64_t q, d, c; /* guest clock, ns */
	/* The host call that served it (0s: none matched). */
	bool matched;
	uint32_t sys_nr, tid, host_bios, host_dev; /* host_dev: its bottom disk */
	int64_t sys_offset;
	uint64_t sys_bytes, enter, exit; /* host clock, ns */
	int64_t span_ns[JOIN_SPANS];
};

/* Why a guest request has no chain. */
enum join_miss {
	JOIN_MISS_NO_DATA,  /* a flush or other request without data: nothing
			     * in the host trace has its offset */
	JOIN_MISS_NO_CALL,  /* no host call covers its offset and length */
	JOIN_MISS_NO_CLOCK, /* calls cover it, none at a time the clock allows */
	JOIN_MISSES,
};

/* How guest time maps to host time: host = guest + offset_ns +
 * drift * (guest - t0_ns), within +-bound_ns. */
struct join_clock {
	int64_t offset_ns;
	double drift; /* host ns per guest ns, minus 1 */
	uint64_t t0_ns;
	int64_t bound_ns;
	size_t pairs;  /* the matched pairs it comes from: those whose call was
			* the only one that fits at the agreed clock */
	bool from_all; /* no such pair: from every matched pair, and the bound
			* not a guarantee (two requests at one offset may each
			* have been given the other's call) */
};

struct join_result {
	struct join_chain *chains; /* every guest request with data, by C */
	size_t n, matched;
	size_t misses[JOIN_MISSES];
	size_t host_calls; /* host calls on a file at an offset */
	struct join_clock clock;
	/* The host file the most chains matched on (the VM's image). */
	uint32_t image_dev, image_rdev;
	uint64_t image_ino;
};

/* Reads both files and joins them. 0, or -errno with a message in err. */
int trace_join(const char *guest_path, const char *host_path, struct join_result *out, char *err,
	       size_t len);

void trace_join_free(struct join_result *r);

/* Each span's name, as the text header and JSON keys show it. */
const char *trace_join_span_name(enum join_span s);

#endif
