// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * join_gen.c - a guest trace and a host trace of N requests for
 * bench/join.sh: what `iolat trace --join` costs (time, memory) as traces
 * grow. The requests are a VM's mix: reads and writes at random 4 KiB
 * offsets of a 16 GiB image (so offsets repeat at large N), four in flight,
 * a host call per request with one bio, the host's clock 86 400 s ahead and
 * 20 ppm fast. Written with iolat's own trace-file code.
 *
 * HOT percent of the requests go to 16 offsets only (a guest's hot blocks:
 * its file system's metadata, a database's hot pages), read and written
 * over and over.
 *
 * Usage: join_gen N GUEST HOST [HOT]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "cli/trace_file.h"
#include "iolat.h"
#include "trace.h"

#define THETA 86400000000000ll
#define DRIFT 20e-6

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t host_of(uint64_t g)
{
	return g + (uint64_t)THETA + (uint64_t)(DRIFT * (double)g);
}

static int put(FILE *f, const void *p, uint32_t len)
{
	if (trace_file_append(f, p, len)) {
		perror("join_gen: write");
		exit(1);
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t n, hot = 0, seed = 88172645463325252ull, t = 1000000000ull;
	char err[256] = "";
	FILE *g, *h;

	if ((argc != 4 && argc != 5) || !(n = strtoull(argv[1], NULL, 10)) ||
	    (argc == 5 && (hot = strtoull(argv[4], NULL, 10)) > 100)) {
		fprintf(stderr, "usage: join_gen N GUEST HOST [HOT]\n");
		return 2;
	}
	if (trace_file_create(&g, argv[2], t, 0, err, sizeof(err)) ||
	    trace_file_create(&h, argv[3], t, 0, err, sizeof(err))) {
		fprintf(stderr, "join_gen: %s\n", err);
		return 1;
	}
	for (uint64_t i = 0; i < n; i++) {
		bool write = rnd(&seed) % 4 == 0;
		uint64_t off = (rnd(&seed) % (4ull << 20)) * 4096, d, c, enter, exit_ns;

		if (rnd(&seed) % 100 < hot)
			off = (off / 4096 % 16) * 4096;
		struct trace_record r = { .op = write,
					  .dev = 254u << 20,
					  .rq_sector = off / 512,
					  .rq_bytes = 4096,
					  .sector = off / 512,
					  .bytes = 4096,
					  .id = 2 * i + 1 };
		struct trace_syscall s = { .ret = 4096,
					   .pid = 7,
					   .tid = 8 + (uint32_t)(i % 4),
					   .nr = write ? SYS_pwrite64 : SYS_pread64,
					   .bios = 1,
					   .fd = 20,
					   .pos = (int64_t)off,
					   .file_ino = 97,
					   .file_dev = 6,
					   .file_rdev = (253u << 20) };
		struct trace_record b = { .op = write,
					  .dev = 259u << 20,
					  .sector = off / 512,
					  .bytes = 4096,
					  .id = 2 * i + 2,
					  .tid = s.tid,
					  .pid = 7,
					  .sys_nr = s.nr };

		t += 50000 + rnd(&seed) % 200000; /* four in flight, ~250 us apart */
		d = t + 20000 + rnd(&seed) % 100000;
		enter = host_of(d) + 30000 + rnd(&seed) % 60000;
		b.sys_enter_ns = s.enter_ns = enter;
		b.ts[TRACE_Q] = enter + 4000;
		b.ts[TRACE_G] = enter + 6000;
		b.ts[TRACE_D] = enter + 8000;
		b.ts[TRACE_C] = b.ts[TRACE_D] + 80000 + rnd(&seed) % 400000;
		exit_ns = s.exit_ns = b.ts[TRACE_C] + 9000;
		c = d + (exit_ns - host_of(d)) + 30000 + rnd(&seed) % 60000;
		r.ts[TRACE_Q] = t;
		r.ts[TRACE_G] = t + 2000;
		r.ts[TRACE_D] = d;
		r.ts[TRACE_C] = c;
		put(g, &r, sizeof(r));
		put(h, &b, sizeof(b));
		put(h, &s, sizeof(s));
	}
	if (fclose(g) || fclose(h)) {
		perror("join_gen: close");
		return 1;
	}
	return 0;
}
