// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ksyms.c - the kernel symbol table from kallsyms (ksyms.h). */
#include "sys/ksyms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/monotonic.h"

/* Modules load rarely and kallsyms is big: a miss rereads it once a minute. */
#define KSYM_RELOAD_EVERY_NS (60 * 1000000000ULL)
/* No kernel function is this long: an address further past the nearest
 * symbol is in none (a gap between modules, past the last one). */
#define KSYM_MAX_FUNC_SIZE (1ULL << 20)

struct ksym {
	uint64_t addr;
	size_t name; /* offset into ksyms.names (the array moves as it grows) */
	bool text;   /* in code: t, T, w, W */
};

void ksyms_init(struct ksyms *k, const char *path)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->path, sizeof(k->path), "%s", path);
}

/* Drops the table, keeps the path. */
static void ksyms_clear(struct ksyms *k)
{
	free(k->sym);
	free(k->names);
	k->sym = NULL;
	k->names = NULL;
	k->n = k->cap = k->nameslen = k->namescap = 0;
	k->loaded = false;
	k->loaded_ns = 0;
}

void ksyms_free(struct ksyms *k)
{
	ksyms_clear(k);
}

size_t ksyms_count(const struct ksyms *k)
{
	return k->n;
}

static int ksyms_add(struct ksyms *k, uint64_t addr, char type, const char *name)
{
	size_t len = strlen(name) + 1;

	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 4096;
		struct ksym *s = realloc(k->sym, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		k->sym = s;
		k->cap = cap;
	}
	if (k->nameslen + len > k->namescap) {
		size_t cap = k->namescap ? k->namescap * 2 : 65536;
		char *s = realloc(k->names, cap);

		if (!s)
			return -ENOMEM;
		k->names = s;
		k->namescap = cap;
	}
	memcpy(k->names + k->nameslen, name, len);
	k->sym[k->n++] = (struct ksym){ .addr = addr,
					.name = k->nameslen,
					.text = strchr("tTwW", type) != NULL };
	k->nameslen += len;
	return 0;
}

/* By address; among aliases of one address the first listed sorts last,
 * so the search (last at or below) finds it, and text after data. */
static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->text != y->text)
		return x->text ? 1 : -1;
	return x->name < y->name ? 1 : x->name > y->name ? -1 : 0;
}

/*
 * Reads kallsyms ("ffffffff81000000 T _stext", modules add "\t[mod]").
 * Zero addresses are skipped: a reader without CAP_SYSLOG (kptr_restrict)
 * sees only zeros, and then every address decodes to hex. A reread that
 * finds no address keeps the table it has: `iolat serve` drops CAP_SYSLOG
 * once it runs, and a later reread would otherwise lose every name.
 */
static void ksyms_load(struct ksyms *k)
{
	char line[1024], name[512], type;
	struct ksyms fresh;
	uint64_t addr;
	FILE *f;

	ksyms_init(&fresh, k->path);
	fresh.loaded = true;
	fresh.loaded_ns = monotonic_ns();
	f = fopen(k->path, "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%" SCNx64 " %c %511s", &addr, &type, name) == 3 && addr &&
			    ksyms_add(&fresh, addr, type, name))
				break;
		fclose(f);
	}
	if (!fresh.n && k->n) {
		ksyms_clear(&fresh);
		k->loaded_ns = monotonic_ns();
		return;
	}
	if (fresh.n) /* qsort's array must not be NULL, even when empty */
		qsort(fresh.sym, fresh.n, sizeof(*fresh.sym), ksym_cmp);
	ksyms_clear(k);
	*k = fresh;
}

/* The nearest symbol at or below addr, if addr can be in it. */
static const char *ksyms_find(const struct ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->n;
	const struct ksym *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->sym[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &k->sym[lo - 1];
	if (!s->text || addr - s->addr >= KSYM_MAX_FUNC_SIZE ||
	    !strcmp(k->names + s->name, "_etext"))
		return NULL;
	return k->names + s->name;
}

const char *ksyms_lookup(struct ksyms *k, uint64_t addr)
{
	const char *name;

	if (!k->loaded)
		ksyms_load(k);
	name = ksyms_find(k, addr);
	if (!name && addr && monotonic_ns() - k->loaded_ns >= KSYM_RELOAD_EVERY_NS) {
		ksyms_load(k);
		name = ksyms_find(k, addr);
	}
	return name;
}
