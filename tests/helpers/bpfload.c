// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bpfload.c - loads some programs of a BPF object, attaches them and holds
 * them until SIGINT or SIGTERM, so a benchmark can time them like any tool
 * that holds its own programs (bench/cost.sh, the bound-* tools).
 *
 * Usage: bpfload OBJECT PROGRAM[,PROGRAM...]
 * Prints "attached PROGRAMS" on stdout once all of them are attached.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A bound of several programs (bench/bound.bpf.c's restamp set) has three. */
#define MAX_PROGS 8

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Whether name is one of the comma-separated names in list. */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return true;
	}
	return false;
}

/* How many names list has. */
static int names_in(const char *list)
{
	int n = 1;

	for (const char *p = list; (p = strchr(p, ',')); p++)
		n++;
	return n;
}

/* Loads obj with only the programs in list and attaches each into links;
 * returns how many, or -1 with a message printed. */
static int load_and_attach(struct bpf_object *obj, const char *path, const char *list,
			   struct bpf_link **links)
{
	struct bpf_program *prog;
	int wanted = 0, n = 0;

	bpf_object__for_each_program(prog, obj)
	{
		bool it = listed(list, bpf_program__name(prog));

		wanted += it;
		bpf_program__set_autoload(prog, it);
	}
	if (wanted != names_in(list) || wanted > MAX_PROGS) {
		fprintf(stderr, "bpfload: %s has not each of %s (at most %d programs)\n", path,
			list, MAX_PROGS);
		return -1;
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "bpfload: cannot load %s: %s\n", path, strerror(errno));
		return -1;
	}
	bpf_object__for_each_program(prog, obj)
	{
		if (!bpf_program__autoload(prog))
			continue;
		links[n] = bpf_program__attach(prog);
		if (!links[n]) {
			fprintf(stderr, "bpfload: cannot attach %s: %s\n", bpf_program__name(prog),
				strerror(errno));
			return -1;
		}
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	struct bpf_link *links[MAX_PROGS] = { 0 };
	struct bpf_object *obj;
	sigset_t block, old;
	int err = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: bpfload OBJECT PROGRAM[,PROGRAM...]\n");
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "bpfload: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (load_and_attach(obj, argv[1], argv[2], links) < 0)
		goto out;
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
	for (int i = 0; i < MAX_PROGS; i++)
		bpf_link__destroy(links[i]);
	bpf_object__close(obj);
	return err;
}
