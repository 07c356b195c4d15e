// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bpfload.c - loads one program of a BPF object, attaches it and holds it
 * until SIGINT or SIGTERM, so a benchmark can time it like any tool that
 * holds its own programs (bench/cost.sh, the bound-* tools).
 *
 * Usage: bpfload OBJECT PROGRAM
 * Prints "attached PROGRAM" on stdout once it is attached.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog, *want = NULL;
	struct bpf_link *link = NULL;
	sigset_t block, old;
	int err = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: bpfload OBJECT PROGRAM\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "bpfload: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(prog, obj)
	{
		bool it = strcmp(bpf_program__name(prog), argv[2]) == 0;

		if (it)
			want = prog;
		bpf_program__set_autoload(prog, it);
	}
	if (!want) {
		fprintf(stderr, "bpfload: %s has no program %s\n", argv[1], argv[2]);
		goto out;
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "bpfload: cannot load %s: %s\n", argv[1], strerror(errno));
		goto out;
	}
	link = bpf_program__attach(want);
	if (!link) {
		fprintf(stderr, "bpfload: cannot attach %s: %s\n", argv[2], strerror(errno));
		goto out;
	}
	/* Blocked until sigsuspend, so a signal cannot slip in between the
	 * test of stop and the wait. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("attached %s\n", argv[2]);
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	err = 0;
out:
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return err;
}
