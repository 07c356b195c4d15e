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

#include "uprog/mapiter.h"
#include "uprog/uprog_perf.h"
#include "util/verifier_log.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif

/* Verifier log lines kept for an error message. */
#define LOG_TAIL_LINES 10
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

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/*
 * What libbpf said during one load. Its print callback takes no context
 * argument, so this is file state, valid between capture_start and
 * capture_stop only.
 */
static struct {
	char prog[128];	 /* the program the last "prog 'NAME': ..." named */
	char tail[1024]; /* the last lines of its verifier log, " | "-joined */
	char last[512];	 /* the last warning, for failures without a log */
	libbpf_print_fn_t prev;
} capture;

/* The program named by "prog 'NAME'" in msg, if any. */
static void capture_prog_name(const char *msg)
{
	const char *s = strstr(msg, "prog '");
	const char *e;

	if (!s)
		return;
	s += strlen("prog '");
	e = strchr(s, '\'');
	if (e && (size_t)(e - s) < sizeof(capture.prog))
		snprintf(capture.prog, sizeof(capture.prog), "%.*s", (int)(e - s), s);
}

/* Appends [s, s + n) to capture.tail with runs of blanks squeezed to one
 * (the verifier pads its state comments into columns). */
static size_t tail_append(size_t used, const char *s, size_t n)
{
	for (size_t i = 0; i < n && used + 1 < sizeof(capture.tail); i++) {
		bool blank = s[i] == ' ' || s[i] == '\t';

		if (blank && used && capture.tail[used - 1] == ' ')
			continue;
		capture.tail[used++] = blank ? ' ' : s[i];
	}
	capture.tail[used] = '\0';
	return used;
}

/* The last LOG_TAIL_LINES non-empty lines of [log, end), " | "-joined. */
static void capture_log_tail(const char *log, const char *end)
{
	const char *start[LOG_TAIL_LINES];
	size_t len[LOG_TAIL_LINES], n = 0, used = 0;

	for (const char *l = log; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t ll = nl ? (size_t)(nl - l) : (size_t)(end - l);

		if (ll) {
			start[n % LOG_TAIL_LINES] = l;
			len[n % LOG_TAIL_LINES] = ll;
			n++;
		}
		l += ll + 1;
	}
	capture.tail[0] = '\0';
	for (size_t i = n > LOG_TAIL_LINES ? n - LOG_TAIL_LINES : 0; i < n; i++) {
		if (used)
			used = tail_append(used, " | ", 3);
		used = tail_append(used, start[i % LOG_TAIL_LINES], len[i % LOG_TAIL_LINES]);
	}
}

/* libbpf prints a failed program's verifier log as one message between markers. */
static int capture_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static const char begin[] = "-- BEGIN PROG LOAD LOG --\n";
	char *msg, *log, *end;

	if (level == LIBBPF_DEBUG || vasprintf(&msg, fmt, ap) < 0)
		return 0;
	capture_prog_name(msg);
	log = strstr(msg, begin);
	if (log) {
		log += strlen(begin);
		end = strstr(log, "-- END PROG LOAD LOG --");
		capture_log_tail(log, end ? end : log + strlen(log));
	} else {
		msg[strcspn(msg, "\n")] = '\0';
		if (*msg)
			snprintf(capture.last, sizeof(capture.last), "%s", msg);
	}
	free(msg);
	return 0;
}

static void capture_start(void)
{
	memset(capture.prog, 0, sizeof(capture.prog));
	capture.tail[0] = capture.last[0] = '\0';
	capture.prev = libbpf_set_print(capture_print);
}

static void capture_stop(void)
{
	libbpf_set_print(capture.prev);
}

/* Tells a missing file, a non-ELF and a non-BPF ELF apart before libbpf does. */
static int check_file(const char *path, char *err, size_t errlen)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	n = read(fd, &eh, sizeof(eh));
	if (n < 0) {
		fail(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if ((size_t)n < sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return fail(err, errlen, "%s: not a BPF object (not an ELF file)", path);
	/* 64-bit little- or big-endian: e_machine is in the file's byte order. */
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh.e_machine != EM_BPF && eh.e_machine != __builtin_bswap16(EM_BPF)))
		return fail(err, errlen,
			    "%s: not a BPF object (an ELF file for another machine; build it "
			    "with clang -target bpf)",
			    path);
	return 0;
}

static int load_error(struct uprog *p, int rc, char *err, size_t errlen)
{
	const char *meaning = capture.tail[0] ? verifier_log_meaning(capture.tail) : NULL;

	if (capture.tail[0])
		return fail(err, errlen, "%s: the verifier rejected program %s: %s%s%s%s", p->path,
			    capture.prog[0] ? capture.prog : "(unknown)", capture.tail,
			    meaning ? " (" : "", meaning ? meaning : "", meaning ? ")" : "");
	return fail(err, errlen, "%s: cannot load: %s%s%s", p->path, strerror(-rc),
		    capture.last[0] ? "; libbpf: " : "", capture.last);
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
			return fail(err, errlen,
				    "%s: perf event at line %d: no program %s in "
				    "the object",
				    p->path, perf[i].line, perf[i].program);
		if (bpf_program__type(prog) != BPF_PROG_TYPE_PERF_EVENT)
			return fail(err, errlen,
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

	if (check_perf_programs(p, perf, nperf, err, errlen))
		return -1;
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
			if (uprog_perf_attach(prog, pe, &p->perf, why, sizeof(why)))
				return fail(err, errlen, "%s: %s", p->path, why);
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
			    err, errlen,
			    "%s: cannot attach program %s (SEC \"%s\"): missing "
			    "CAP_DAC_READ_SEARCH: its id is in tracefs "
			    "(/sys/kernel/tracing/events), which only root may read (%s); "
			    "grant it, or use SEC(\"tp_btf/NAME\") or SEC(\"raw_tp/NAME\"), "
			    "which need no tracefs",
			    p->path, up->name, up->sec, strerror(errno));
		if (!up->link) {
			int e = errno;

			return fail(err, errlen,
				    "%s: cannot attach program %s (SEC \"%s\"): %s; programs "
				    "attach by their SEC name, and iolat supports %s",
				    p->path, up->name, up->sec, attach_reason(e), SUPPORTED_SECS);
		}
	}
	return 0;
}

/*
 * IOLAT_MAP_READ=batch or keys in the environment skips the faster ways
 * (tests and bench/userprogs.sh compare them); IOLAT_FORCE_NO_BATCH=1 is
 * keys.
 */
static enum read_state first_read_state(void)
{
	const char *how = getenv("IOLAT_MAP_READ");

	if (getenv("IOLAT_FORCE_NO_BATCH") || (how && !strcmp(how, "keys")))
		return READ_KEYS;
	if (how && !strcmp(how, "batch"))
		return READ_BATCH;
	return READ_UNKNOWN;
}

static int alloc_state(struct uprog *p)
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
		p->how[p->nmaps++] = first_read_state();
	}
	return 0;
}

static int open_load(struct uprog *p, char *err, size_t errlen)
{
	int rc;

	p->obj = bpf_object__open_file(p->path, NULL);
	if (!p->obj) {
		rc = -errno;
		p->obj = NULL;
		return fail(err, errlen, "%s: not a BPF object libbpf can open: %s%s%s", p->path,
			    strerror(-rc), capture.last[0] ? "; libbpf: " : "", capture.last);
	}
	rc = bpf_object__load(p->obj);
	if (rc)
		return load_error(p, rc, err, errlen);
	return 0;
}

int uprog_open(const char *object_path, const struct uperf_conf *perf, size_t nperf,
	       struct uprog **out, char *err, size_t errlen)
{
	struct uprog *p;
	int rc;

	*out = NULL;
	if (check_file(object_path, err, errlen))
		return -1;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->path = strdup(object_path))) {
		free(p);
		return fail(err, errlen, "%s: %s", object_path, strerror(ENOMEM));
	}
	capture_start();
	rc = open_load(p, err, errlen);
	capture_stop();
	if (!rc && alloc_state(p))
		rc = fail(err, errlen, "%s: %s", object_path, strerror(ENOMEM));
	if (!rc)
		rc = attach_all(p, perf, nperf, err, errlen);
	p->ncpus = libbpf_num_possible_cpus();
	if (!rc && p->ncpus <= 0)
		rc = fail(err, errlen, "cannot count the possible CPUs: %s", strerror(-p->ncpus));
	if (rc) {
		uprog_close(p);
		return -1;
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
		return fail(err, errlen, "map %s not found in %s (it has: %s)", name, p->path,
			    names[0] ? names : "no maps");
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
		return fail(err, errlen, "map %s: %s", m->name, strerror(ENOMEM));
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
				rc = fail(err, errlen, "map %s: batch lookup: %s", m->name,
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
		rc = fail(err, errlen, "map %s: %s", m->name, strerror(ENOMEM));
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
		rc = fail(err, errlen, "map %s: next key: %s", m->name, strerror(errno));
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
		return fail(err, errlen, "map %s: %s", w->m->name, strerror(ENOMEM));
	for (uint32_t i = 0; i < w->m->max_entries && !rc; i++) {
		if (bpf_map_lookup_elem(w->m->fd, &i, val))
			rc = fail(err, errlen, "map %s: index %u: %s", w->m->name, i,
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
	int rc;

	if (!p->iter[i] &&
	    mapiter_open(&p->iter[i], w->m->fd, w->m->key_size, (unsigned)w->vstride)) {
		*refused = true;
		return 0;
	}
	rc = mapiter_read(p->iter[i], iter_entry, w);
	return rc < 0 ? -1 : rc;
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
		return fail(err, errlen, "map %s: values are %u bytes, not one u64 (8)", m->name,
			    m->value_size);
	w.vstride = m->percpu ? (size_t)w.ncpus * 8 : 8;
	if (*how == READ_UNKNOWN || *how == READ_ITER) {
		rc = walk_iter(p, i, &w, &refused);
		if (!refused) {
			*how = READ_ITER;
			return rc < 0 ? fail(err, errlen, "map %s: iterator: %s", m->name,
					     strerror(errno))
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
