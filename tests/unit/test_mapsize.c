// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_mapsize.c - the collector's map sizes from a host description
 * (core/mapsize.c): each rule, its floor and cap, the memory share, the
 * operator's sizes, the spelling of those, and when a filling map warns. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "core/mapmem.h"
#include "core/mapsize.h"

#define MIB (1ULL << 20)
#define GIB (1ULL << 30)
#define HIST_VALUE 5184 /* struct iolat_kval */

/* The collector's maps' key and value bytes, as iolat.bpf.c has them. */
static struct mapsize_want want(uint64_t budget, bool workload, uint32_t cap)
{
	struct mapsize_want w = { .hist_budget = budget,
				  .key_workload = workload,
				  .workloads = cap,
				  .key_size = { 40, 8, 8, 4 },
				  .value_size = { HIST_VALUE, 40, 24, 16 },
				  .restamp_value_size = 40 };

	return w;
}

static void test_this_kind_of_host(void **state)
{
	/* 2 CPUs, 11 disks holding 1408 requests, 24 GiB: the floors, the
	 * per-CPU budget for hist, the cap's need for serve. */
	struct mapsize_host h = { .cpus = 2, .disks = 11, .inflight = 1408, .mem_bytes = 24 * GIB };
	struct mapsize_want w = want(16 * MIB, false, 0);
	struct mapsize_plan p;

	(void)state;
	mapsize_plan(&h, &w, &p);
	assert_false(p.shared);
	assert_int_equal(p.entries[MAPSIZE_HISTS], 16 * MIB / (2 * HIST_VALUE)); /* 1618 */
	assert_int_equal(p.entries[MAPSIZE_RQ_STARTS], MAPSIZE_STARTS_MIN);
	assert_int_equal(p.entries[MAPSIZE_BIO_STARTS], MAPSIZE_STARTS_MIN);
	assert_int_equal(p.entries[MAPSIZE_COMMS], 1); /* not keyed by process: unused */
	assert_false(p.mem_bound);
	assert_int_equal(p.mem_limit, 24 * GIB / MAPSIZE_MEM_SHARE);
	assert_non_null(strstr(p.why[MAPSIZE_HISTS], "per-CPU values"));
	assert_non_null(strstr(p.why[MAPSIZE_RQ_STARTS], "1408 requests"));
	assert_non_null(strstr(p.why[MAPSIZE_COMMS], "unused"));
	/* The restamps table: 8 x 1408 = 11264 -> 16384. */
	assert_int_equal(p.restamp_slots, 16384);
	assert_non_null(strstr(p.restamp_why, "8 x 1408 requests"));

	/* serve: keyed by cgroup, 500 workloads: (500 + 1) x 2 disks x 3 ops
	 * = 3006, twice in 1024s: 6144, under the budget's 8192. */
	w = want(64 * MIB, true, 500);
	mapsize_plan(&h, &w, &p);
	assert_true(p.shared);
	assert_int_equal(p.entries[MAPSIZE_HISTS], 6144);
	assert_non_null(strstr(p.why[MAPSIZE_HISTS], "needs 3006"));
	/* With size classes the need passes the budget: the budget wins. */
	w.key_size_class = true;
	mapsize_plan(&h, &w, &p);
	assert_int_equal(p.entries[MAPSIZE_HISTS], MAPSIZE_HIST_MAX_KEYS);
	assert_non_null(strstr(p.why[MAPSIZE_HISTS], "more than fit"));
	/* One disk: a workload's keys are on it alone. */
	h.disks = 1;
	w = want(64 * MIB, true, 100);
	mapsize_plan(&h, &w, &p);
	assert_int_equal(p.entries[MAPSIZE_HISTS], 1024); /* 101 x 1 x 3 x 2 = 606 -> 1024 */
}

static void test_fleet_host(void **state)
{
	/* 192 CPUs, 24 disks of 1024 requests, 500 workloads: the start-time
	 * maps at their cap, every sized map within the 64 MiB goal. */
	struct mapsize_host h = {
		.cpus = 192, .disks = 24, .inflight = 24 * 1024, .mem_bytes = 512 * GIB
	};
	struct mapsize_want w = want(64 * MIB, true, 500);
	struct mapsize_plan p;
	uint64_t total = 0;

	(void)state;
	mapsize_plan(&h, &w, &p);
	/* 24576 + 192 x 128 = 49152 -> 65536 */
	assert_int_equal(p.entries[MAPSIZE_RQ_STARTS], 65536);
	assert_int_equal(p.entries[MAPSIZE_BIO_STARTS], 65536);
	assert_int_equal(p.entries[MAPSIZE_HISTS], 6144);
	/* 8 x 24576 -> 262144 (the cap): 10 MiB. */
	assert_int_equal(p.restamp_slots, MAPSIZE_RESTAMPS_MAX);
	assert_true(p.restamp_bytes >= 262144ULL * 40);
	total = p.restamp_bytes;
	for (int m = 0; m < MAPSIZE_COUNT; m++)
		total += p.bytes[m];
	assert_true(total <= 64 * MIB);
	assert_true(total > 32 * MIB); /* the histogram map alone is ~32 MiB */
	/* More queues than the cap allows: still the cap. */
	h.inflight = 10 * 1000 * 1000;
	mapsize_plan(&h, &w, &p);
	assert_int_equal(p.entries[MAPSIZE_RQ_STARTS], MAPSIZE_STARTS_MAX);
	/* hist on the same host: per-CPU values would leave 67 keys, under
	 * MAPSIZE_MIN_PERCPU_KEYS: shared, as many as the budget holds. */
	w = want(16 * MIB, false, 0);
	mapsize_plan(&h, &w, &p);
	assert_true(p.shared);
	assert_int_equal(p.entries[MAPSIZE_HISTS], 16 * MIB / HIST_VALUE);
}

static void test_small_memory(void **state)
{
	/* 512 MiB: the maps may take 16 MiB together; serve's histogram map
	 * gets what the others leave, overheads counted. */
	struct mapsize_host h = { .cpus = 4, .disks = 2, .inflight = 2048, .mem_bytes = 512 * MIB };
	struct mapsize_want w = want(64 * MIB, true, 500);
	struct mapsize_plan p;
	uint64_t total = 0;

	(void)state;
	mapsize_plan(&h, &w, &p);
	assert_true(p.mem_bound);
	total = p.restamp_bytes;
	for (int m = 0; m < MAPSIZE_COUNT; m++)
		total += p.bytes[m];
	assert_true(total <= 16 * MIB);
	assert_true(p.entries[MAPSIZE_HISTS] > 2500 && p.entries[MAPSIZE_HISTS] < 3100);
	assert_non_null(strstr(p.why[MAPSIZE_HISTS], "MemTotal"));
	/* 32 MiB of RAM and 64 disks of 1024: the start-time maps halve to
	 * their floor, the histogram map keeps its least. */
	h = (struct mapsize_host){
		.cpus = 4, .disks = 64, .inflight = 64 * 1024, .mem_bytes = 32 * MIB
	};
	mapsize_plan(&h, &w, &p);
	assert_int_equal(p.entries[MAPSIZE_RQ_STARTS], MAPSIZE_STARTS_MIN);
	assert_int_equal(p.entries[MAPSIZE_HISTS], MAPSIZE_HIST_MIN_KEYS);
	assert_non_null(strstr(p.why[MAPSIZE_RQ_STARTS], "halved"));
	/* The restamps table: 8 x 65536 -> 262144, halved to its floor
	 * (1 MiB share / 8 is less than the floor's 320 KiB). */
	assert_int_equal(p.restamp_slots, MAPSIZE_RESTAMPS_MIN);
	assert_non_null(strstr(p.restamp_why, "halved"));
	/* Unknown memory: no bound. */
	h.mem_bytes = 0;
	mapsize_plan(&h, &w, &p);
	assert_false(p.mem_bound);
	assert_int_equal(p.entries[MAPSIZE_RQ_STARTS], 65536);
	assert_int_equal(p.restamp_slots, MAPSIZE_RESTAMPS_MAX);
}

static void test_process_and_overrides(void **state)
{
	struct mapsize_host h = { .cpus = 64, .disks = 4, .inflight = 512, .mem_bytes = 64 * GIB };
	struct mapsize_want w = want(64 * MIB, true, 500);
	struct mapsize_plan p, again;

	(void)state;
	w.key_process = true;
	mapsize_plan(&h, &w, &p);
	/* 500 + 64 x 128 = 8692 -> 16384 */
	assert_int_equal(p.entries[MAPSIZE_COMMS], 16384);
	/* The same host, the same plan (serve --handover relies on it). */
	mapsize_plan(&h, &w, &again);
	assert_memory_equal(&p, &again, sizeof(p));
	/* The operator's sizes win, and say so. */
	w.set[MAPSIZE_RQ_STARTS] = 100;
	w.set[MAPSIZE_HISTS] = 7;
	mapsize_plan(&h, &w, &p);
	assert_int_equal(p.entries[MAPSIZE_RQ_STARTS], 100);
	assert_int_equal(p.entries[MAPSIZE_HISTS], 7);
	assert_true(p.set[MAPSIZE_RQ_STARTS] && p.set[MAPSIZE_HISTS] && !p.set[MAPSIZE_COMMS]);
	assert_true(p.shared);
	assert_non_null(strstr(p.why[MAPSIZE_RQ_STARTS], "set (--bpf.map-size"));
	assert_true(p.bytes[MAPSIZE_RQ_STARTS] < p.bytes[MAPSIZE_BIO_STARTS]);
}

static void test_parse(void **state)
{
	uint32_t set[MAPSIZE_COUNT] = { 0 };
	char err[160];

	(void)state;
	assert_int_equal(mapsize_parse("rq_starts=65536", set, err, sizeof(err)), 0);
	assert_int_equal(set[MAPSIZE_RQ_STARTS], 65536);
	assert_int_equal(
	    mapsize_parse("hists_shared=2,comms=9,bio_starts=16777216", set, err, sizeof(err)), 0);
	assert_int_equal(set[MAPSIZE_HISTS], 2);
	assert_int_equal(set[MAPSIZE_COMMS], 9);
	assert_int_equal(set[MAPSIZE_BIO_STARTS], 16777216);
	assert_int_equal(set[MAPSIZE_RQ_STARTS], 65536); /* kept */
	assert_int_equal(mapsize_parse("hists=3", set, err, sizeof(err)), 0);
	assert_int_equal(set[MAPSIZE_HISTS], 3);

	static const struct {
		const char *spec, *why;
	} bad[] = {
		{ "", "want MAP=ENTRIES" },
		{ "rq_starts", "want MAP=ENTRIES" },
		{ "=5", "want MAP=ENTRIES" },
		{ "rq_starts=5,", "want MAP=ENTRIES" },
		{ "stats=5", "unknown map 'stats'" },
		{ "rq_starts=0", "from 1 to 16777216" },
		{ "rq_starts=16777217", "from 1 to 16777216" },
		{ "rq_starts=-1", "from 1 to" },
		{ "rq_starts= 5", "from 1 to" },
		{ "rq_starts=5k", "from 1 to" },
		{ "rq_starts=", "from 1 to" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(mapsize_parse(bad[i].spec, set, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].why))
			fail_msg("'%s': '%s' lacks '%s'", bad[i].spec, err, bad[i].why);
	}
	assert_int_equal(mapsize_from_name("hists_shared"), MAPSIZE_HISTS);
	assert_int_equal(mapsize_from_name("wakeups"), -1);
	assert_string_equal(mapsize_name(MAPSIZE_BIO_STARTS), "bio_starts");
}

static void test_fill_warn(void **state)
{
	bool warned = false;

	(void)state;
	assert_false(mapsize_fill_warn(&warned, 89, 100));
	assert_true(mapsize_fill_warn(&warned, 90, 100)); /* the line: once */
	assert_false(mapsize_fill_warn(&warned, 100, 100));
	assert_false(mapsize_fill_warn(&warned, 85, 100)); /* hovering: quiet */
	assert_false(mapsize_fill_warn(&warned, 95, 100));
	assert_false(mapsize_fill_warn(&warned, 79, 100)); /* emptied: re-armed */
	assert_false(warned);
	assert_true(mapsize_fill_warn(&warned, 91, 100)); /* and again */
	assert_false(mapsize_fill_warn(&warned, 0, 0));	  /* no capacity, no warning */
	warned = false;
	assert_true(mapsize_fill_warn(&warned, 9, 10));
	/* Large counts do not overflow. */
	warned = false;
	assert_false(mapsize_fill_warn(&warned, 1ULL << 40, 2ULL << 40));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_this_kind_of_host),
		cmocka_unit_test(test_fleet_host),
		cmocka_unit_test(test_small_memory),
		cmocka_unit_test(test_process_and_overrides),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_fill_warn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
