// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dio.c - issues an exact number of O_DIRECT reads or writes, so the block
 * layer sees exactly that many requests of exactly that size (direct I/O is
 * not read ahead, and these are never merged).
 *
 * Usage: dio read|write|readv|writev DEVICE COUNT SIZE [--eio-ok]
 *        dio aread DEVICE COUNT SIZE DEPTH BATCH
 * read, write: one I/O at a time (synchronous), by pread64 and pwrite64;
 * I/O i goes to offset (i * SIZE) modulo the device size. readv, writev:
 * the same by preadv and pwritev, each I/O's buffer in two halves (two
 * iovecs), as qemu's I/O threads make their requests.
 * --eio-ok: an I/O that fails with an I/O error (EIO, or ENODATA: the
 * kernel's errno for a medium error) does not stop the run; at the end
 * "eio N" (how many failed) is printed on stdout.
 * aread: asynchronous reads through Linux AIO, DEPTH kept in flight and
 * submitted BATCH at a time by one io_submit, which runs inside one block
 * plug for more than two I/Os (fs/aio.c, AIO_PLUG_THRESHOLD): the requests
 * of a batch are created and issued in one plug, as fio's batched
 * submission makes them. I/O i goes to offset (2 * i * SIZE) modulo the
 * device size: a gap between neighbours, so that the plug and the I/O
 * scheduler merge none of them. Raw system calls, not libaio, so that the
 * helper links statically for the test guests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define USAGE                                                                                      \
	"usage: dio read|write|readv|writev DEVICE COUNT SIZE [--eio-ok]\n"                        \
	"       dio aread DEVICE COUNT SIZE DEPTH BATCH\n"

static long long number(const char *what, const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end || !*s || errno || v <= 0) {
		fprintf(stderr, "dio: %s '%s' is not a positive number\n%s", what, s, USAGE);
		exit(2);
	}
	return v;
}

/* The device opened for direct I/O, with its size; exits if it cannot be. */
static int open_device(const char *path, int flags, long long size, unsigned long long *devsize)
{
	int fd;

	errno = 0;
	fd = open(path, flags | O_DIRECT);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, devsize) || *devsize < (unsigned long long)size) {
		fprintf(stderr, "dio: %s: %s\n", path, strerror(errno ? errno : EINVAL));
		exit(1);
	}
	return fd;
}

static void *buffer(long long size)
{
	void *buf;

	if (posix_memalign(&buf, 4096, (size_t)size)) {
		fprintf(stderr, "dio: cannot allocate a %lld-byte buffer\n", size);
		exit(1);
	}
	memset(buf, 0xa5, (size_t)size);
	return buf;
}

/* The offset of I/O i when I/Os are STRIDE bytes apart, wrapped to the device. */
static off_t offset_of(long long i, unsigned long long stride, unsigned long long devsize)
{
	return (off_t)(((unsigned long long)i * stride) % (devsize / stride * stride));
}

/* One synchronous I/O of size bytes at off: one buffer, or its two halves. */
static ssize_t one_io(int fd, bool writing, bool vectored, char *buf, long long size, off_t off)
{
	struct iovec iov[2] = { { buf, (size_t)size / 2 },
				{ buf + size / 2, (size_t)(size - size / 2) } };

	if (vectored)
		return writing ? pwritev(fd, iov, 2, off) : preadv(fd, iov, 2, off);
	return writing ? pwrite(fd, buf, (size_t)size, off) : pread(fd, buf, (size_t)size, off);
}

static int sync_io(int argc, char **argv)
{
	unsigned long long devsize = 0;
	long long count, size, eio = 0;
	bool writing = !strncmp(argv[1], "write", 5), eio_ok = argc == 6;
	bool vectored = argv[1][strlen(argv[1]) - 1] == 'v';
	int fd;
	char *buf;

	if (argc == 6 && strcmp(argv[5], "--eio-ok")) {
		fprintf(stderr, "dio: unknown option '%s'\n%s", argv[5], USAGE);
		return 2;
	}
	count = number("COUNT", argv[3]);
	size = number("SIZE", argv[4]);
	fd = open_device(argv[2], writing ? O_WRONLY : O_RDONLY, size, &devsize);
	buf = buffer(size);
	for (long long i = 0; i < count; i++) {
		off_t off = offset_of(i, (unsigned long long)size, devsize);
		ssize_t n = one_io(fd, writing, vectored, buf, size, off);

		if (n < 0 && (errno == EIO || errno == ENODATA) && eio_ok) {
			eio++;
			continue;
		}
		if (n != size) {
			fprintf(stderr, "dio: I/O %lld at %lld: %s\n", i, (long long)off,
				n < 0 ? strerror(errno) : "short");
			return 1;
		}
	}
	free(buf);
	if (eio_ok)
		printf("eio %lld\n", eio);
	return close(fd) ? 1 : 0;
}

/* What one asynchronous read run needs between its submissions. */
struct aread {
	aio_context_t ctx;
	int fd;
	long long size, count, next, depth, batch;
	unsigned long long devsize;
	char *bufs;		 /* depth buffers of size bytes, one per slot */
	struct iocb *iocbs;	 /* depth control blocks, one per slot */
	struct iocb **batch_cbs; /* the batch one io_submit takes */
	struct io_event *events; /* depth completions, as io_getevents returns them */
	long long *free_slots;	 /* a stack of the slots not in flight */
	long long nfree;
};

/*
 * Submits up to the run's batch of reads in one io_submit, from the free
 * slots, numbering them on from ar->next. Returns how many it submitted, or
 * -1 (message printed) if the kernel refused or took only part of them: a
 * partial submission would change the batches the test asked for.
 */
static long long submit_batch(struct aread *ar)
{
	long long n = 0;
	long rc;

	while (n < ar->batch && ar->nfree && ar->next < ar->count) {
		long long slot = ar->free_slots[--ar->nfree];
		struct iocb *cb = &ar->iocbs[slot];

		memset(cb, 0, sizeof(*cb));
		cb->aio_fildes = (uint32_t)ar->fd;
		cb->aio_lio_opcode = IOCB_CMD_PREAD;
		cb->aio_buf = (uint64_t)(uintptr_t)(ar->bufs + slot * ar->size);
		cb->aio_nbytes = (uint64_t)ar->size;
		cb->aio_offset = offset_of(ar->next, 2 * (unsigned long long)ar->size, ar->devsize);
		cb->aio_data = (uint64_t)slot;
		ar->batch_cbs[n++] = cb;
		ar->next++;
	}
	if (!n)
		return 0;
	rc = syscall(SYS_io_submit, ar->ctx, (long)n, ar->batch_cbs);
	if (rc != n) {
		fprintf(stderr, "dio: io_submit of %lld reads: %s\n", n,
			rc < 0 ? strerror(errno) : "only part taken");
		return -1;
	}
	return n;
}

/* Reaps at least min completions; returns how many, or -1 (message printed). */
static long long reap(struct aread *ar, long long min)
{
	struct io_event *events = ar->events;
	long rc;

	do
		rc = syscall(SYS_io_getevents, ar->ctx, (long)min, (long)ar->depth, events, NULL);
	while (rc < 0 && errno == EINTR);
	if (rc < 0) {
		fprintf(stderr, "dio: io_getevents: %s\n", strerror(errno));
		return -1;
	}
	for (long i = 0; i < rc; i++) {
		long long slot = (long long)events[i].data;

		if (events[i].res != ar->size) {
			fprintf(stderr, "dio: read at %lld: %s\n",
				(long long)ar->iocbs[slot].aio_offset,
				events[i].res < 0 ? strerror((int)-events[i].res) : "short");
			return -1;
		}
		ar->free_slots[ar->nfree++] = slot;
	}
	return rc;
}

/*
 * Keeps DEPTH reads in flight, BATCH per io_submit: the first DEPTH go out
 * in batches, then each time BATCH have completed (fewer at the end) they
 * go out again as one batch, until COUNT have completed.
 */
static int aread(int argc, char **argv)
{
	struct aread ar = { 0 };
	long long done = 0, inflight = 0, n;

	if (argc != 7) {
		fprintf(stderr, "dio: aread takes DEVICE COUNT SIZE DEPTH BATCH\n%s", USAGE);
		return 2;
	}
	ar.count = number("COUNT", argv[3]);
	ar.size = number("SIZE", argv[4]);
	ar.depth = number("DEPTH", argv[5]);
	ar.batch = number("BATCH", argv[6]);
	if (ar.batch > ar.depth || ar.depth > 4096) {
		fprintf(stderr,
			"dio: BATCH (%lld) must be at most DEPTH (%lld), DEPTH at most 4096\n",
			ar.batch, ar.depth);
		return 2;
	}
	ar.fd = open_device(argv[2], O_RDONLY, 2 * ar.size, &ar.devsize);
	ar.bufs = buffer(ar.depth * ar.size);
	ar.iocbs = calloc((size_t)ar.depth, sizeof(*ar.iocbs));
	ar.free_slots = calloc((size_t)ar.depth, sizeof(*ar.free_slots));
	ar.batch_cbs = calloc((size_t)ar.batch, sizeof(*ar.batch_cbs));
	ar.events = calloc((size_t)ar.depth, sizeof(*ar.events));
	if (!ar.iocbs || !ar.free_slots || !ar.batch_cbs || !ar.events ||
	    syscall(SYS_io_setup, (long)ar.depth, &ar.ctx)) {
		fprintf(stderr, "dio: io_setup(%lld): %s\n", ar.depth, strerror(errno));
		return 1;
	}
	for (long long slot = ar.depth - 1; slot >= 0; slot--)
		ar.free_slots[ar.nfree++] = slot;
	while (done < ar.count) {
		while (ar.nfree && ar.next < ar.count) {
			if ((n = submit_batch(&ar)) < 0)
				return 1;
			inflight += n;
		}
		n = reap(&ar, inflight < ar.batch ? inflight : ar.batch);
		if (n < 0)
			return 1;
		inflight -= n;
		done += n;
	}
	syscall(SYS_io_destroy, ar.ctx);
	free(ar.events);
	free(ar.batch_cbs);
	free(ar.free_slots);
	free(ar.iocbs);
	free(ar.bufs);
	return close(ar.fd) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "aread"))
		return aread(argc, argv);
	if ((argc != 5 && argc != 6) || (strcmp(argv[1], "read") && strcmp(argv[1], "write") &&
					 strcmp(argv[1], "readv") && strcmp(argv[1], "writev"))) {
		fprintf(stderr, USAGE);
		return 2;
	}
	return sync_io(argc, argv);
}
