// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* uprog.c - a user's compiled BPF object: load, attach, read maps (uprog.h). */
#define _GNU_SOURCE
#include "uprog/uprog.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/libbpf_log.h"
#include "uprog/mapiter.h"
#include "uprog/uprog_perf.h"
#include "util/verifier_log.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif

/* Entries asked for per BPF_MAP_LOOKUP_BATCH call, at most: the whole map
 * up to this (one call; a hash bucket never overflows the buffer, ENOSPC),
 * bounding the buffers at a few MiB for big maps. */
#define BATCH_CHUNK 65536
/* A map's batch buffers stay between reads up to this size (a chunk fewer
 * entries if need be): reallocated at every scrape, and given back by the
 * scrape's malloc_trim, they cost a page fault a page each time. */
#define BATCH_BYTES (1u << 20)

#define SUPPORTED_SECS                                                                             \
	"tracepoint/CATEGORY/NAME, raw_tracepoint/NAME (raw_tp/NAME), tp_btf/NAME, and "           \
	"perf_event with the config's perf_events"

/* How a map is read, decided at its first read and kept: through an
 * iterator (mapiter.c) where the kernel can, else in batches, else key by
 * key. */
enum read_state { READ_UNKNOWN, READ_ITER, READ_BATCH, READ_KEYS };

/* One map's buffers for BPF_MAP_LOOKUP_BATCH, made at its first batch read. */
struct batch_buf {
	unsigned char *keys, *vals, *tokens; /* chunk keys, chunk values, in and out */
	uint32_t chunk;
};

struct uprog_prog {
	struct bpf_link *link;
	const char *name, *sec;
};

struct uprog {
	struct bpf_object *obj;
	char *path;
	struct uprog_prog *prog;
	size_t nprogs;
	struct perf_links perf; /* perf-event programs, one link per CPU */
	/* Per map, by the order bpf_object__for_each_map gives. */
	int *map_fd;
	enum read_state *how;
	struct mapiter **iter;
	struct batch_buf *batch;
	size_t nmaps;
	int ncpus;
};

/* Words a failure into err; returns rc, its -errno. */
static int fail(int rc, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* Tells a missing file, a non-ELF and a non-BPF ELF apart before libbpf does. */
static int check_file(const char *path, char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return fail(-errno, err, errlen, "%s: %s", path, strerror(errno));
	n = read(fd, &eh, sizeof(eh));
	if (n < 0) {
		int rc = fail(-errno, err, errlen, "%s: %s", path, strerror(errno));

		close(fd);
		return rc;
	}
	close(fd);
	if ((size_t)n < sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return fail(-ENOEXEC, err, errlen, "%s: not a BPF object (not an ELF file)", path);
	/* 64-bit little- or big-endian: e_machine is in the file's byte order. */
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh.e_machine != EM_BPF && eh.e_machine != __builtin_bswap16(EM_BPF)))
		return fail(-ENOEXEC, err, errlen,
			    "%s: not a BPF object (an ELF file for another machine; build it "
			    "with clang -target bpf)",
			    path);
	return 0;
}

static int load_error(struct uprog *p, int rc, const struct libbpf_capture *cap, char *err,
		      size_t errlen)
{
	const char *meaning = cap->tail[0] ? verifier_log_meaning(cap->tail) : NULL;

	if (cap->tail[0])
		return fail(rc, err, errlen, "%s: the verifier rejected program %s: %s%s%s%s",
			    p->path, cap->prog[0] ? cap->prog : "(unknown)", cap->tail,
			    meaning ? " (" : "", meaning ? meaning : "", meaning ? ")" : "");
	return fail(rc, err, errlen, "%s: cannot load: %s%s%s", p->path, strerror(-rc),
		    cap->last[0] ? "; libbpf: " : "", cap->last);
}

static const char *attach_reason(int e)
{
	if (e == EOPNOTSUPP)
		return "libbpf cannot auto-attach this kind of program";
	if (e == ENOENT)
		return "no such tracepoint or function in this kernel";
	return strerror(e);
}

/* The perf event of the config that drives prog, or NULL. */
static const struct uperf_conf *perf_event_of(struct bpf_program *prog,
					      const struct uperf_conf *perf, size_t nperf)
{
	for (size_t i = 0; i < nperf; i++)
		if (!strcmp(perf[i].program, bpf_program__name(prog)))
			return &perf[i];
	return NULL;
}

/* Every perf event names a perf_event program of the object. */
static int check_perf_programs(struct uprog *p, const struct uperf_conf *perf, size_t nperf,
			       char *err, size_t errlen)
{
	for (size_t i = 0; i < nperf; i++) {
		struct bpf_program *prog =
		    bpf_object__find_program_by_name(p->obj, perf[i].program);

		if (!prog)
			return fail(-ENOENT, err, errlen,
				    "%s: perf event at line %d: no program %s in "
				    "the object",
				    p->path, perf[i].line, perf[i].program);
		if (bpf_program__type(prog) != BPF_PROG_TYPE_PERF_EVENT)
			return fail(-EINVAL, err, errlen,
				    "%s: perf event at line %d: program %s is not "
				    "a SEC(\"perf_event\") program",
				    p->path, perf[i].line, perf[i].program);
	}
	return 0;
}

static int attach_all(struct uprog *p, const struct uperf_conf *perf, size_t nperf, char *err,
		      size_t errlen)
{
	struct bpf_program *prog;
	int rc = check_perf_programs(p, perf, nperf, err, errlen);

	if (rc)
		return rc;
	bpf_object__for_each_program(prog, p->obj)
	{
		const struct uperf_conf *pe = perf_event_of(prog, perf, nperf);
		struct uprog_prog *up;
		char why[384];

		if (!bpf_program__autoload(prog))
			continue;
		if (pe) {
			p->prog[p->nprogs].name = bpf_program__name(prog);
			p->prog[p->nprogs++].sec = bpf_program__section_name(prog);
			rc = uprog_perf_attach(prog, pe, &p->perf, why, sizeof(why));
			if (rc)
				return fail(rc, err, errlen, "%s: %s", p->path, why);
			continue;
		}
		up = &p->prog[p->nprogs++];
		up->name = bpf_program__name(prog);
		up->sec = bpf_program__section_name(prog);
		up->link = bpf_program__attach(prog);
		if (!up->link && (errno == EACCES || errno == EPERM) &&
		    !strncmp(up->sec, "tracepoint/", strlen("tracepoint/")))
			/* libbpf reads the tracepoint's id from tracefs, root's only. */
			return fail(
			    -errno, err, errlen,
			    "%s: cannot attach program %s (SEC \"%s\"): missing "
			    "CAP_DAC_READ_SEARCH: its id is in tracefs "
			    "(/sys/kernel/tracing/events), which only root may read (%s); "
			    "grant it, or use SEC(\"tp_btf/NAME\") or SEC(\"raw_tp/NAME\"), "
			    "which need no tracefs",
			    p->path, up->name, up->sec, strerror(errno));
		if (!up->link) {
			int e = errno;

			return fail(-e, err, errlen,
				    "%s: cannot attach program %s (SEC \"%s\"): %s; programs "
				    "attach by their SEC name, and iolat supports %s",
				    p->path, up->name, up->sec, attach_reason(e), SUPPORTED_SECS);
		}
	}
	return 0;
}

enum uprog_map_read uprog_map_read_parse(const char *map_read, const char *force_no_batch)
{
	if (force_no_batch || (map_read && !strcmp(map_read, "keys")))
		return UPROG_READ_KEYS;
	if (map_read && !strcmp(map_read, "batch"))
		return UPROG_READ_BATCH;
	return UPROG_READ_AUTO;
}

/* The first way to try on a map, as the caller asked. */
static enum read_state first_read_state(enum uprog_map_read asked)
{
	if (asked == UPROG_READ_KEYS)
		return READ_KEYS;
	if (asked == UPROG_READ_BATCH)
		return READ_BATCH;
	return READ_UNKNOWN;
}

static int alloc_state(struct uprog *p, enum uprog_map_read map_read)
{
	struct bpf_program *prog;
	struct bpf_map *map;
	size_t n = 0;

	bpf_object__for_each_program(prog, p->obj) n++;
	p->prog = calloc(n ? n : 1, sizeof(*p->prog));
	n = 0;
	bpf_object__for_each_map(map, p->obj) n++;
	p->map_fd = calloc(n ? n : 1, sizeof(*p->map_fd));
	p->how = calloc(n ? n : 1, sizeof(*p->how));
	p->iter = calloc(n ? n : 1, sizeof(*p->iter));
	p->batch = calloc(n ? n : 1, sizeof(*p->batch));
	if (!p->prog || !p->map_fd || !p->how || !p->iter || !p->batch)
		return -ENOMEM;
	bpf_object__for_each_map(map, p->obj)
	{
		p->map_fd[p->nmaps] = bpf_map__fd(map);
		p->how[p->nmaps++] = first_read_state(map_read);
	}
	return 0;
}

static int open_load(struct uprog *p, const struct libbpf_capture *cap, char *err, size_t errlen)
{
	int rc;

	p->obj = bpf_object__open_file(p->path, NULL);
	if (!p->obj) {
		rc = errno ? -errno : -EINVAL;
		p->obj = NULL;
		return fail(rc, err, errlen, "%s: not a BPF object libbpf can open: %s%s%s",
			    p->path, strerror(-rc), cap->last[0] ? "; libbpf: " : "", cap->last);
	}
	rc = bpf_object__load(p->obj);
	if (rc)
		return load_error(p, rc, cap, err, errlen);
	return 0;
}

int uprog_open(const char *object_path, const struct uperf_conf *perf, size_t nperf,
	       enum uprog_map_read map_read, struct uprog **out, char *err, size_t errlen)
{
	struct libbpf_capture cap;
	struct uprog *p;
	int rc;

	*out = NULL;
	rc = check_file(object_path, err, errlen);
	if (rc)
		return rc;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->path = strdup(object_path))) {
		free(p);
		return fail(-ENOMEM, err, errlen, "%s: %s", object_path, strerror(ENOMEM));
	}
	libbpf_log_capture_begin(&cap);
	rc = open_load(p, &cap, err, errlen);
	libbpf_log_capture_end();
	if (!rc && alloc_state(p, map_read))
		rc = fail(-ENOMEM, err, errlen, "%s: %s", object_path, strerror(ENOMEM));
	if (!rc)
		rc = attach_all(p, perf, nperf, err, errlen);
	p->ncpus = libbpf_num_possible_cpus();
	if (!rc && p->ncpus <= 0)
		rc = fail(p->ncpus < 0 ? p->ncpus : -EINVAL, err, errlen,
			  "cannot count the possible CPUs: %s", strerror(-p->ncpus));
	if (rc) {
		uprog_close(p);
		return rc;
	}
	*out = p;
	return 0;
}

static void batch_free(struct batch_buf *b)
{
	free(b->keys);
	free(b->vals);
	free(b->tokens);
	memset(b, 0, sizeof(*b));
}

void uprog_close(struct uprog *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nprogs; i++)
		bpf_link__destroy(p->prog[i].link);
	perf_links_destroy(&p->perf);
	bpf_object__close(p->obj);
	free(p->prog);
	for (size_t i = 0; i < p->nmaps; i++) {
		mapiter_close(p->iter[i]);
		batch_free(&p->batch[i]);
	}
	free(p->batch);
	free(p->map_fd);
	free(p->how);
	free(p->iter);
	free(p->path);
	free(p);
}

static bool is_percpu(enum bpf_map_type t)
{
	return t == BPF_MAP_TYPE_PERCPU_HASH || t == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       t == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

/* "a, b, c": the object's own maps (not .rodata, .bss and the like). */
static void map_names(struct uprog *p, char *buf, size_t len)
{
	struct bpf_map *map;
	size_t used = 0;

	buf[0] = '\0';
	bpf_object__for_each_map(map, p->obj)
	{
		int w;

		if (bpf_map__is_internal(map))
			continue;
		w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", bpf_map__name(map));
		if (w < 0 || (size_t)w >= len - used)
			return;
		used += (size_t)w;
	}
}

int uprog_map(struct uprog *p, const char *name, struct uprog_map *m, char *err, size_t errlen)
{
	struct bpf_map *map = bpf_object__find_map_by_name(p->obj, name);
	char names[512];

	if (!map || bpf_map__is_internal(map)) {
		map_names(p, names, sizeof(names));
		return fail(-ENOENT, err, errlen, "map %s not found in %s (it has: %s)", name,
			    p->path, names[0] ? names : "no maps");
	}
	m->fd = bpf_map__fd(map);
	m->type = bpf_map__type(map);
	m->key_size = bpf_map__key_size(map);
	m->value_size = bpf_map__value_size(map);
	m->max_entries = bpf_map__max_entries(map);
	m->percpu = is_percpu(bpf_map__type(map));
	m->name = bpf_map__name(map);
	return 0;
}

size_t uprog_programs(struct uprog *p, const char **names, const char **secs, size_t max)
{
	size_t i;

	for (i = 0; i < p->nprogs && i < max; i++) {
		names[i] = p->prog[i].name;
		secs[i] = p->prog[i].sec;
	}
	return i;
}

/* One walk over a map: buffers sized for it, and where values go. */
struct walk {
	const struct uprog_map *m;
	size_t vstride; /* bytes per entry's value: per-CPU ones round to 8 */
	unsigned ncpus;
	uprog_entry_fn fn;
	void *arg;
};

static uint64_t value_of(const struct walk *w, const unsigned char *v)
{
	uint64_t sum = 0, x;

	if (!w->m->percpu) {
		memcpy(&x, v, sizeof(x));
		return x;
	}
	/* The kernel hands out per-CPU values 8-byte aligned, one per possible CPU. */
	for (unsigned c = 0; c < w->ncpus; c++) {
		memcpy(&x, v + (size_t)c * 8, sizeof(x));
		sum += x;
	}
	return sum;
}

/* The map's index in p, or -1 for a map not of this object. */
static int index_of(const struct uprog *p, int fd)
{
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->map_fd[i] == fd)
			return (int)i;
	return -1;
}

/* Makes b's buffers for w's map, if it has none yet. 0 or -ENOMEM. */
static int batch_alloc(struct batch_buf *b, const struct walk *w)
{
	const struct uprog_map *m = w->m;
	size_t per = (size_t)m->key_size + w->vstride, fit = BATCH_BYTES / per;
	size_t tok = m->key_size > 8 ? m->key_size : 8;

	if (b->keys)
		return 0;
	b->chunk = m->max_entries < BATCH_CHUNK ? m->max_entries : BATCH_CHUNK;
	if (b->chunk > fit)
		b->chunk = fit ? (uint32_t)fit : 1;
	b->keys = malloc((size_t)b->chunk * m->key_size);
	b->vals = malloc((size_t)b->chunk * w->vstride);
	b->tokens = calloc(2, tok);
	if (b->keys && b->vals && b->tokens)
		return 0;
	batch_free(b);
	return -ENOMEM;
}

/*
 * BPF_MAP_LOOKUP_BATCH in chunks, through b's buffers. Returns 0, fn's
 * return or -1 with err set; *refused when the kernel refused the first
 * call (no entries seen yet), and the caller falls back.
 */
static int walk_batch(struct walk *w, struct batch_buf *b, bool *refused, char *err, size_t errlen)
{
	const struct uprog_map *m = w->m;
	size_t tok = m->key_size > 8 ? m->key_size : 8;
	unsigned char *in, *out;
	bool first = true;
	int rc = 0;

	if (!m->max_entries)
		return 0;
	if (batch_alloc(b, w))
		return fail(-ENOMEM, err, errlen, "map %s: %s", m->name, strerror(ENOMEM));
	in = b->tokens;
	out = in + tok;
	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		uint32_t count = b->chunk;
		int e = bpf_map_lookup_batch(m->fd, first ? NULL : in, out, b->keys, b->vals,
					     &count, &opts)
			    ? errno
			    : 0;

		if (e && e != ENOENT) {
			if (first)
				*refused = true;
			else
				rc = fail(-e, err, errlen, "map %s: batch lookup: %s", m->name,
					  strerror(e));
			break;
		}
		for (uint32_t i = 0; i < count && !rc; i++)
			rc = w->fn(w->arg, b->keys + (size_t)i * m->key_size,
				   value_of(w, b->vals + (size_t)i * w->vstride));
		if (rc || e == ENOENT)
			break;
		memcpy(in, out, tok);
		first = false;
	}
	return rc;
}

/* get_next_key + lookup: any map with keys, on any kernel. */
static int walk_keys(struct walk *w, char *err, size_t errlen)
{
	const struct uprog_map *m = w->m;
	unsigned char *key = malloc(m->key_size), *next = malloc(m->key_size);
	unsigned char *val = malloc(w->vstride);
	void *prev = NULL;
	int rc = 0;

	if (!key || !next || !val)
		rc = fail(-ENOMEM, err, errlen, "map %s: %s", m->name, strerror(ENOMEM));
	errno = 0;
	while (!rc && !bpf_map_get_next_key(m->fd, prev, next)) {
		memcpy(key, next, m->key_size);
		prev = key;
		/* Deleted since get_next_key returned it: not an error, skip it. */
		if (bpf_map_lookup_elem(m->fd, key, val))
			continue;
		rc = w->fn(w->arg, key, value_of(w, val));
	}
	if (!rc && errno != ENOENT)
		rc = fail(-errno, err, errlen, "map %s: next key: %s", m->name, strerror(errno));
	free(key);
	free(next);
	free(val);
	return rc;
}

/* Arrays: every index below max_entries exists, so no get_next_key. */
static int walk_index(struct walk *w, char *err, size_t errlen)
{
	unsigned char *val = malloc(w->vstride);
	int rc = 0;

	if (!val)
		return fail(-ENOMEM, err, errlen, "map %s: %s", w->m->name, strerror(ENOMEM));
	for (uint32_t i = 0; i < w->m->max_entries && !rc; i++) {
		if (bpf_map_lookup_elem(w->m->fd, &i, val))
			rc = fail(-errno, err, errlen, "map %s: index %u: %s", w->m->name, i,
				  strerror(errno));
		else
			rc = w->fn(w->arg, &i, value_of(w, val));
	}
	free(val);
	return rc;
}

static int iter_entry(void *arg, const void *key, const void *value)
{
	struct walk *w = arg;

	return w->fn(w->arg, key, value_of(w, value));
}

/* Through an iterator: loaded at the map's first read, kept. */
static int walk_iter(struct uprog *p, int i, struct walk *w, bool *refused)
{
	if (!p->iter[i] &&
	    mapiter_open(&p->iter[i], w->m->fd, w->m->key_size, (unsigned)w->vstride)) {
		*refused = true;
		return 0;
	}
	return mapiter_read(p->iter[i], iter_entry, w);
}

int uprog_map_read(struct uprog *p, const struct uprog_map *m, uprog_entry_fn fn, void *arg,
		   char *err, size_t errlen)
{
	struct walk w = { .m = m, .ncpus = (unsigned)p->ncpus, .fn = fn, .arg = arg };
	enum read_state other = READ_KEYS; /* a map not among p's: key by key */
	int i = index_of(p, m->fd);
	enum read_state *how = i < 0 ? &other : &p->how[i];
	bool refused = false;
	int rc;

	if (m->value_size != 8)
		return fail(-EINVAL, err, errlen, "map %s: values are %u bytes, not one u64 (8)",
			    m->name, m->value_size);
	w.vstride = m->percpu ? (size_t)w.ncpus * 8 : 8;
	if (*how == READ_UNKNOWN || *how == READ_ITER) {
		rc = walk_iter(p, i, &w, &refused);
		if (!refused) {
			*how = READ_ITER;
			return rc < 0 ? fail(rc, err, errlen, "map %s: iterator: %s", m->name,
					     strerror(-rc))
				      : rc;
		}
		*how = READ_BATCH; /* no iterators here: batches, if they work */
	}
	if (*how == READ_BATCH) {
		/* Only p's own maps get here (others are read key by key). */
		refused = false;
		rc = walk_batch(&w, &p->batch[i], &refused, err, errlen);
		if (refused)
			batch_free(&p->batch[i]); /* not needed again */
		if (!refused)
			return rc;
		/* Refused on its first call: this kernel or map type has no batch ops. */
		*how = READ_KEYS;
	}
	if (m->type == BPF_MAP_TYPE_ARRAY || m->type == BPF_MAP_TYPE_PERCPU_ARRAY)
		return walk_index(&w, err, errlen);
	return walk_keys(&w, err, errlen);
}
