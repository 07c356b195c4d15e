// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uprog_dump.c - drives src/uprog/uprog.c for tests/integration/test_uprog.sh:
 * opens a BPF object with uprog_open, prints its programs, then obeys one
 * command per stdin line:
 *   dump     every map whose value is one u64, as "MAP KEYHEX VALUE" lines
 *            (key bytes in memory order), then "end"
 *   map NAME "map NAME TYPE KEYSIZE VALUESIZE MAXENTRIES PERCPU", or
 *            "error: MESSAGE" from uprog_map
 *   quit     (or end of input) detach, unload, exit 0
 * A failed open prints the loader's message on stderr and exits 1.
 *
 * Usage: uprog_dump OBJECT
 */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uprog/uprog.h"

#define MAX_PROGS 64

struct dump_ctx {
	const char *map;
	unsigned key_size;
};

static int print_entry(void *arg, const void *key, uint64_t value)
{
	const struct dump_ctx *c = arg;
	const unsigned char *k = key;

	printf("%s ", c->map);
	for (unsigned i = 0; i < c->key_size; i++)
		printf("%02x", k[i]);
	printf(" %llu\n", (unsigned long long)value);
	return 0;
}

/* Maps are found by name through uprog_map, as `serve` will find them. */
static int dump(struct uprog *p, struct bpf_object *obj)
{
	struct bpf_map *map;
	char err[512];

	bpf_object__for_each_map(map, obj)
	{
		struct uprog_map m;
		struct dump_ctx c;

		if (bpf_map__is_internal(map) || bpf_map__value_size(map) != 8)
			continue;
		if (uprog_map(p, bpf_map__name(map), &m, err, sizeof(err)) ||
		    (c = (struct dump_ctx){ m.name, m.key_size },
		     uprog_map_read(p, &m, print_entry, &c, err, sizeof(err)))) {
			fprintf(stderr, "uprog_dump: %s\n", err);
			return 1;
		}
	}
	printf("end\n");
	return 0;
}

static void describe(struct uprog *p, const char *name)
{
	struct uprog_map m;
	char err[512];

	if (uprog_map(p, name, &m, err, sizeof(err)))
		printf("error: %s\n", err);
	else
		printf("map %s %u %u %u %u %d\n", m.name, m.type, m.key_size, m.value_size,
		       m.max_entries, m.percpu);
}

int main(int argc, char **argv)
{
	const char *names[MAX_PROGS], *secs[MAX_PROGS];
	struct bpf_object *obj;
	struct uprog *p;
	char err[2048], line[256];
	size_t n;
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: uprog_dump OBJECT\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The command's knobs, as serve reads them (serve_flags.c). */
	if (uprog_open(
		argv[1], NULL, 0,
		uprog_map_read_parse(getenv("IOLAT_MAP_READ"), getenv("IOLAT_FORCE_NO_BATCH")), &p,
		err, sizeof(err))) {
		fprintf(stderr, "uprog_dump: %s\n", err);
		return 1;
	}
	/* Which maps to dump: the test's view, not the loader's API, so the
	 * helper opens the file once more, without loading it. */
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "uprog_dump: cannot reopen %s\n", argv[1]);
		uprog_close(p);
		return 1;
	}
	n = uprog_programs(p, names, secs, MAX_PROGS);
	for (size_t i = 0; i < n; i++)
		printf("prog %s %s\n", names[i], secs[i]);
	printf("ready\n");
	while (!rc && fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, "quit"))
			break;
		if (!strcmp(line, "dump"))
			rc = dump(p, obj);
		else if (!strncmp(line, "map ", 4))
			describe(p, line + 4);
		else
			fprintf(stderr, "uprog_dump: unknown command '%s'\n", line);
	}
	bpf_object__close(obj);
	uprog_close(p);
	return rc;
}
