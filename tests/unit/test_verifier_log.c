// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_verifier_log.c - the verifier's verdict picked out of libbpf's
 * messages, as real 5.10 kernels wrote them, with its meaning. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* After setjmp.h, stdarg.h and stddef.h, which it needs. */
#include <cmocka.h>

#include "util/verifier_log.h"

/* Hands one message to verifier_log_note as libbpf's callback would. */
static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verifier_log_note(fmt, ap);
	va_end(ap);
}

/* The shape libbpf prints a failed load's log in. */
#define LOAD_LOG "libbpf: prog '%s': -- BEGIN PROG LOAD LOG --\n%s-- END PROG LOAD LOG --\n"

static void test_atomics_on_5_10(void **state)
{
	char out[400];

	(void)state;
	note(LOAD_LOG, "rq_complete_btf",
	     "BPF_STX uses reserved fields\n"
	     "processed 0 insns (limit 1000000) max_states_per_insn 0 total_states 0\n");
	verifier_log_reason(out, sizeof(out));
	assert_string_equal(out, "; verifier: BPF_STX uses reserved fields (the kernel lacks "
				 "atomic instructions that return a value (Linux 5.12))");
	/* Read once: the next failure starts clean. */
	assert_string_equal(verifier_log_reason(out, sizeof(out)), "");
}

static void test_last_verdict_not_state_or_source(void **state)
{
	char out[400];

	(void)state;
	note("libbpf: loading object '%s' from buffer\n", "iolat_bpf");
	note(LOAD_LOG, "bio_queue_btf",
	     "0: (79) r7 = *(u64 *)(r1 +0)\n"
	     "; if (!queue_is_bio_based(disk->queue))\n"
	     " R1_w=ptr_elevator_queue(id=0,off=0,imm=0) R10=fp0\n"
	     "14: (79) r2 = *(u64 *)(r1 +952)\n"
	     "access beyond struct elevator_queue at off 952 size 8\n"
	     "processed 12 insns (limit 1000000) max_states_per_insn 0\n");
	verifier_log_reason(out, sizeof(out));
	assert_non_null(strstr(out, "; verifier: access beyond struct elevator_queue at off 952"));
	assert_non_null(strstr(out, "wrong layout"));
}

static void test_unknown_verdict_kept_plain(void **state)
{
	char out[400];

	(void)state;
	note(LOAD_LOG, "p", "some new refusal\nprocessed 3 insns\n");
	assert_string_equal(verifier_log_reason(out, sizeof(out)), "; verifier: some new refusal");
	assert_null(verifier_log_meaning("some new refusal"));
	/* Messages that are not load logs leave nothing behind. */
	note("libbpf: failed to load object '%s'\n", "iolat_bpf");
	assert_string_equal(verifier_log_reason(out, sizeof(out)), "");
}

/* A load's own message: the log found between its markers, its last lines
 * joined with blanks squeezed (the user-program loader's words). */
static void test_tail(void **state)
{
	const char *msg = "libbpf: prog 'p': -- BEGIN PROG LOAD LOG --\n"
			  "0: (b7) r0 = 0\n\n1: (95) exit\n"
			  "R0 !read_ok    ;   comment\nprocessed 2 insns\n"
			  "-- END PROG LOAD LOG --\n";
	const char *log, *end;
	char out[256];

	(void)state;
	assert_null(verifier_log_find("libbpf: no log here\n", &end));
	log = verifier_log_find(msg, &end);
	assert_non_null(log);
	assert_true(!strncmp(log, "0: (b7)", 7));
	assert_true(!strncmp(end, "-- END", 6));
	verifier_log_tail(log, end, 3, out, sizeof(out));
	assert_string_equal(out, "1: (95) exit | R0 !read_ok ; comment | processed 2 insns");
	verifier_log_tail(log, end, 10, out, 12);
	assert_string_equal(out, "0: (b7) r0 ");
	/* No end marker: the log runs to the message's end. */
	log = verifier_log_find("-- BEGIN PROG LOAD LOG --\nonly line", &end);
	verifier_log_tail(log, end, 10, out, sizeof(out));
	assert_string_equal(out, "only line");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_atomics_on_5_10),
		cmocka_unit_test(test_last_verdict_not_state_or_source),
		cmocka_unit_test(test_unknown_verdict_kept_plain),
		cmocka_unit_test(test_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
