// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_trace_join.c - `trace --join` on two trace files made here, with a
 * known clock offset and drift between guest and host and known spans: it
 * must find the offset within its own stated bound, the drift, each
 * request's call (a call qemu merged from two requests, an offset read
 * twice, a call at an impossible time), and count what it cannot match.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "cli/trace_file.h"
#include "cli/trace_join.h"
#include "iolat.h"
#include "trace.h"
#include <linux/types.h>

#define N 200		      /* plain requests, one call each */
#define G0 1000000000ull      /* the guest's first queue time */
#define THETA 5000000000000ll /* host - guest at G0 */
#define DRIFT 20e-6	      /* the host's clock runs 20 ppm faster */
#define STEP 10000000ull      /* between requests: a 2 s trace */
#define IMAGE_INO 4242
#define IMAGE_DEV ((7u << 20) | 3)

struct files {
	bool aio; /* qemu's aio=native: bios queued in io_submit, no offset call */
	char dir[64], guest[96], host[96];
	FILE *g, *h;
	uint64_t next_id;
	uint64_t device_ns[N + 8]; /* each request's true host-device span */
};

static int64_t host_of(uint64_t guest_ns)
{
	return (int64_t)guest_ns + THETA + (int64_t)(DRIFT * (double)(guest_ns - G0));
}

static void guest_rq(struct files *f, uint8_t op, uint64_t offset, uint32_t bytes, uint64_t q,
		     uint64_t d, uint64_t c)
{
	struct trace_record r = { .op = op,
				  .dev = (253u << 20),
				  .rq_sector = offset / 512,
				  .rq_bytes = bytes,
				  .sector = offset / 512,
				  .bytes = bytes };

	r.ts[TRACE_Q] = q;
	r.ts[TRACE_G] = q + 1000;
	r.ts[TRACE_D] = d;
	r.ts[TRACE_C] = c;
	r.id = ++f->next_id;
	assert_int_equal(trace_file_append(f->g, &r, sizeof(r)), 0);
}

/* A host call on the image (or on another file) and the one bio queued
 * in it; returns its exit time. With aio, the bio is queued in an
 * io_submit that names no offset, and its completion is what qemu sees. */
static uint64_t host_call(struct files *f, bool write, uint64_t ino, int64_t pos, uint64_t len,
			  uint64_t enter, uint64_t device_ns)
{
	struct trace_syscall s = { .enter_ns = enter,
				   .ret = (int64_t)len,
				   .pid = 77,
				   .tid = 78,
				   .nr = write ? SYS_pwritev : SYS_preadv,
				   .bios = 1,
				   .fd = 9,
				   .pos = pos,
				   .file_ino = ino,
				   .file_dev = 5,
				   .file_rdev = IMAGE_DEV };
	struct trace_record r = { .op = write,
				  .dev = IMAGE_DEV,
				  .tid = 78,
				  .pid = 77,
				  .sys_enter_ns = enter,
				  .sys_nr = s.nr,
				  .bytes = (uint32_t)len };

	r.ts[TRACE_Q] = enter + 5000;
	r.ts[TRACE_G] = enter + 8000;
	r.ts[TRACE_D] = enter + 11000;
	r.ts[TRACE_C] = r.ts[TRACE_D] + device_ns;
	r.id = ++f->next_id;
	r.sector = (uint64_t)pos / 512;
	s.exit_ns = r.ts[TRACE_C] + 10000;
	if (f->aio) {
		if (ino != IMAGE_INO)
			r.dev = IMAGE_DEV + 1; /* another disk */
		r.sys_nr = SYS_io_submit;
		s = (struct trace_syscall){ .enter_ns = enter,
					    .exit_ns = enter + 3000,
					    .ret = 1,
					    .tid = 78,
					    .nr = SYS_io_submit,
					    .bios = 1,
					    .fd = -1,
					    .pos = -1 };
		assert_int_equal(trace_file_append(f->h, &r, sizeof(r)), 0);
		assert_int_equal(trace_file_append(f->h, &s, sizeof(s)), 0);
		return r.ts[TRACE_C];
	}
	assert_int_equal(trace_file_append(f->h, &r, sizeof(r)), 0);
	assert_int_equal(trace_file_append(f->h, &s, sizeof(s)), 0);
	return s.exit_ns;
}

/* Request i: queued at q, its call entering virtio_in after D (guest
 * time), completing in the guest virtio_out after the call's exit. */
static void request(struct files *f, int i, uint8_t op, uint64_t offset, uint32_t bytes, uint64_t q)
{
	uint64_t d = q + 50000 + (uint64_t)(i % 7) * 10000;
	uint64_t in = 40000 + (uint64_t)(i % 5) * 15000, out = 30000 + (uint64_t)(i % 3) * 20000;
	uint64_t dev = 100000 + (uint64_t)(i % 11) * 20000;
	uint64_t exit = host_call(f, op == IOLAT_OP_WRITE, IMAGE_INO, (int64_t)offset, bytes,
				  (uint64_t)host_of(d + in), dev);

	f->device_ns[i] = dev;
	guest_rq(f, op, offset, bytes, q, d, d + (uint64_t)((int64_t)exit - host_of(d)) + out);
}

/* A new directory with the guest's and the host's trace files, open. */
static void open_files(struct files *f)
{
	snprintf(f->dir, sizeof(f->dir), "/tmp/iolat-join.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->guest, sizeof(f->guest), "%s/guest", f->dir);
	snprintf(f->host, sizeof(f->host), "%s/host", f->dir);
	assert_int_equal(trace_file_create(&f->g, f->guest, G0, 0, NULL, 0), 0);
	assert_int_equal(trace_file_create(&f->h, f->host, 1, 0, NULL, 0), 0);
}

static void make_files(struct files *f)
{
	uint64_t q = G0, d, exit;

	open_files(f);
	for (int i = 0; i < N; i++, q += STEP) {
		if (i % 3 == 2)
			request(f, i, IOLAT_OP_WRITE, (1u << 20) + (uint64_t)i * 8192, 8192, q);
		else
			request(f, i, IOLAT_OP_READ, (uint64_t)i * 4096, 4096, q);
		/* Noise: another file's calls at the same offsets and times. */
		host_call(f, false, IMAGE_INO + 1, (int64_t)i * 4096, 4096,
			  (uint64_t)host_of(q + 60000), 50000);
	}
	/* N, N+1: two adjacent reads qemu served with one call. */
	d = q + 50000;
	exit = host_call(f, false, IMAGE_INO, 64 << 20, 8192, (uint64_t)host_of(d + 60000), 300000);
	f->device_ns[N] = f->device_ns[N + 1] = 300000;
	guest_rq(f, IOLAT_OP_READ, 64 << 20, 4096, q, d,
		 d + (uint64_t)((int64_t)exit - host_of(d)) + 40000);
	guest_rq(f, IOLAT_OP_READ, (64 << 20) + 4096, 4096, q + 2000, d + 3000,
		 d + (uint64_t)((int64_t)exit - host_of(d)) + 45000);
	/* N+2: offset 0 again, later: its own call, not request 0's. */
	q += 2000000;
	request(f, N + 2, IOLAT_OP_READ, 0, 4096, q);
	/* N+3: a read no call covers (its call was not traced). */
	q += 1000000;
	guest_rq(f, IOLAT_OP_READ, 99 << 20, 4096, q, q + 50000, q + 400000);
	/* ... and a call at its offset that ended before the guest issued it. */
	host_call(f, false, IMAGE_INO, 99 << 20, 4096, (uint64_t)host_of(q) - 900000, 100000);
	/* N+4: a flush, no data. */
	q += 1000000;
	guest_rq(f, IOLAT_OP_FLUSH, 0, 0, q, q + 50000, q + 300000);
	assert_int_equal(fclose(f->g), 0);
	assert_int_equal(fclose(f->h), 0);
}

static void remove_files(struct files *f)
{
	unlink(f->guest);
	unlink(f->host);
	rmdir(f->dir);
}

static const struct join_chain *chain_at(const struct join_result *r, uint64_t offset, uint64_t q)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->chains[i].offset == offset && r->chains[i].q == q)
			return &r->chains[i];
	return NULL;
}

static void check_join(bool aio)
{
	struct files *f = calloc(1, sizeof(*f));
	struct join_result r;
	const struct join_chain *c;
	char err[256] = "";
	int64_t truth;

	f->aio = aio;
	make_files(f);
	assert_int_equal(trace_join(f->guest, f->host, &r, err, sizeof(err)), 0);
	assert_int_equal(r.n, N + 4); /* the flush is counted, not kept */
	assert_int_equal(r.matched, N + 3);
	assert_int_equal(r.misses[JOIN_MISS_NO_DATA], 1);
	assert_int_equal(r.misses[JOIN_MISS_NO_CLOCK], 1);
	assert_int_equal(r.misses[JOIN_MISS_NO_CALL], 0);
	assert_int_equal(r.image_ino, aio ? 0 : IMAGE_INO);
	assert_int_equal(r.image_rdev, IMAGE_DEV);

	/* The clock: the true offset at t0 within the stated bound, which is
	 * no wider than the tightest virtio spans allow (40 + 30 us, halved),
	 * and the drift to within 1 ppm. */
	truth = host_of(r.clock.t0_ns) - (int64_t)r.clock.t0_ns;
	assert_true(llabs(r.clock.offset_ns - truth) <= r.clock.bound_ns);
	assert_true(r.clock.bound_ns <= 40000);
	assert_true(fabs(r.clock.drift - DRIFT) < 1e-6);
	assert_int_equal(r.clock.pairs, N + 3);

	/* Each chain: its spans add up to the guest's Q2C, the host's parts
	 * are the host's own times exactly, the virtio ones within the bound. */
	for (size_t i = 0; i < r.n; i++) {
		int64_t sum = 0;

		c = &r.chains[i];
		if (!c->matched)
			continue;
		for (int s = 0; s < JOIN_SPANS; s++)
			sum += c->span_ns[s];
		assert_int_equal(sum, (int64_t)(c->c - c->q));
		/* Matched to a bio: its Q is the "call's" entry, its C the exit. */
		assert_int_equal(c->sys_nr == JOIN_NO_CALL, aio);
		assert_int_equal(c->span_ns[JOIN_HOST_FS], aio ? 0 : 5000);
		assert_int_equal(c->span_ns[JOIN_HOST_BLOCK], 6000);
		assert_int_equal(c->span_ns[JOIN_HOST_RETURN], aio ? 0 : 10000);
		assert_true(c->span_ns[JOIN_VIRTIO_IN] >= 40000 - 2 * r.clock.bound_ns);
		assert_true(c->span_ns[JOIN_VIRTIO_OUT] >= 30000 - 2 * r.clock.bound_ns);
	}
	for (int i = 0; i < N; i++) {
		c = chain_at(&r, i % 3 == 2 ? (1u << 20) + (uint64_t)i * 8192 : (uint64_t)i * 4096,
			     G0 + (uint64_t)i * STEP);
		assert_non_null(c);
		assert_true(c->matched);
		assert_int_equal(c->span_ns[JOIN_HOST_DEVICE], (int64_t)f->device_ns[i]);
		assert_int_equal(c->op == IOLAT_OP_WRITE, i % 3 == 2);
	}
	/* The merged call serves both its requests. */
	c = chain_at(&r, 64 << 20, G0 + (uint64_t)N * STEP);
	assert_non_null(c);
	assert_true(c->matched && c->sys_bytes == 8192);
	c = chain_at(&r, (64 << 20) + 4096, G0 + (uint64_t)N * STEP + 2000);
	assert_non_null(c);
	assert_true(c->matched && c->sys_bytes == 8192 && c->sys_offset == 64 << 20);
	/* Offset 0 read again: its own, later call. */
	c = chain_at(&r, 0, G0 + (uint64_t)N * STEP + 2000000);
	assert_non_null(c);
	assert_true(c->matched && c->enter > (uint64_t)host_of(G0 + (uint64_t)N * STEP));
	trace_join_free(&r);
	remove_files(f);
	free(f);
}

/* qemu's aio=threads: a pread or pwrite call per request. */
static void test_join_calls(void **state)
{
	(void)state;
	check_join(false);
}

/* aio=native: io_submit, the bios matched at their sectors. */
static void test_join_bios(void **state)
{
	(void)state;
	check_join(true);
}

/*
 * A hot block: half the requests read offset 0, a new one every 30 us
 * while each takes 200 us or more, so each fits several of the others'
 * calls. Every request is matched; the clock comes from the requests whose
 * call alone fits, and the true clock is within its bound.
 */
static void test_join_hot(void **state)
{
	struct files *f = calloc(1, sizeof(*f));
	struct join_result r;
	char err[256] = "";
	uint64_t q = G0;
	int64_t truth;

	(void)state;
	open_files(f);
	for (int i = 0; i < N; i++) {
		request(f, i, IOLAT_OP_READ, (uint64_t)(i + 1) * 4096, 4096, q);
		q += STEP / 2;
		for (int j = 0; j < 4; j++, q += 30000)
			request(f, (i * 4 + j * 3) % N, IOLAT_OP_READ, 0, 4096, q);
		q += STEP / 2;
	}
	assert_int_equal(fclose(f->g), 0);
	assert_int_equal(fclose(f->h), 0);
	assert_int_equal(trace_join(f->guest, f->host, &r, err, sizeof(err)), 0);
	assert_int_equal(r.n, 5 * N);
	assert_int_equal(r.matched, 5 * N);
	assert_false(r.clock.from_all);
	/* The hot reads fit each other's calls: they set no clock. */
	assert_true(r.clock.pairs >= N && r.clock.pairs < r.matched);
	truth = host_of(r.clock.t0_ns) - (int64_t)r.clock.t0_ns;
	assert_true(llabs(r.clock.offset_ns - truth) <= r.clock.bound_ns);
	assert_true(fabs(r.clock.drift - DRIFT) < 1e-6);
	trace_join_free(&r);
	remove_files(f);
	free(f);
}

static void test_not_a_trace(void **state)
{
	struct join_result r;
	char err[256] = "";

	(void)state;
	assert_int_not_equal(trace_join("/dev/null", "/dev/null", &r, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "not an iolat trace file"));
	assert_int_not_equal(trace_join("/nonexistent", "/dev/null", &r, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "cannot open /nonexistent"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_join_calls),
		cmocka_unit_test(test_join_bios),
		cmocka_unit_test(test_join_hot),
		cmocka_unit_test(test_not_a_trace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
