// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* uprog.c - a user's compiled BPF object: load, attach, find its maps
 * (uprog.h); uprog_read.c reads them. */
#define _GNU_SOURCE
#include "uprog/uprog_internal.h"

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

#define SUPPORTED_SECS                                                                             \
	"tracepoint/CATEGORY/NAME, raw_tracepoint/NAME (raw_tp/NAME), tp_btf/NAME, and "           \
	"perf_event with the config's perf_events"

int uprog_fail(int rc, char *err, size_t errlen, const char *fmt, ...)
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
		return uprog_fail(-errno, err, errlen, "%s: %s", path, strerror(errno));
	n = read(fd, &eh, sizeof(eh));
	if (n < 0) {
		int rc = uprog_fail(-errno, err, errlen, "%s: %s", path, strerror(errno));

		close(fd);
		return rc;
	}
	close(fd);
	if ((size_t)n < sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return uprog_fail(-ENOEXEC, err, errlen, "%s: not a BPF object (not an ELF file)",
				  path);
	/* 64-bit little- or big-endian: e_machine is in the file's byte order. */
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh.e_machine != EM_BPF && eh.e_machine != __builtin_bswap16(EM_BPF)))
		return uprog_fail(-ENOEXEC, err, errlen,
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
		return uprog_fail(rc, err, errlen, "%s: the verifier rejected program %s: %s%s%s%s",
				  p->path, cap->prog[0] ? cap->prog : "(unknown)", cap->tail,
				  meaning ? " (" : "", meaning ? meaning : "", meaning ? ")" : "");
	return uprog_fail(rc, err, errlen, "%s: cannot load: %s%s%s", p->path, strerror(-rc),
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
			return uprog_fail(-ENOENT, err, errlen,
					  "%s: perf event at line %d: no program %s in "
					  "the object",
					  p->path, perf[i].line, perf[i].program);
		if (bpf_program__type(prog) != BPF_PROG_TYPE_PERF_EVENT)
			return uprog_fail(-EINVAL, err, errlen,
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
				return uprog_fail(rc, err, errlen, "%s: %s", p->path, why);
			continue;
		}
		up = &p->prog[p->nprogs++];
		up->name = bpf_program__name(prog);
		up->sec = bpf_program__section_name(prog);
		up->link = bpf_program__attach(prog);
		if (!up->link && (errno == EACCES || errno == EPERM) &&
		    !strncmp(up->sec, "tracepoint/", strlen("tracepoint/")))
			/* libbpf reads the tracepoint's id from tracefs, root's only. */
			return uprog_fail(
			    -errno, err, errlen,
			    "%s: cannot attach program %s (SEC \"%s\"): missing "
			    "CAP_DAC_READ_SEARCH: its id is in tracefs "
			    "(/sys/kernel/tracing/events), which only root may read (%s); "
			    "grant it, or use SEC(\"tp_btf/NAME\") or SEC(\"raw_tp/NAME\"), "
			    "which need no tracefs",
			    p->path, up->name, up->sec, strerror(errno));
		if (!up->link) {
			int e = errno;

			return uprog_fail(-e, err, errlen,
					  "%s: cannot attach program %s (SEC \"%s\"): %s; programs "
					  "attach by their SEC name, and iolat supports %s",
					  p->path, up->name, up->sec, attach_reason(e),
					  SUPPORTED_SECS);
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
		return uprog_fail(rc, err, errlen, "%s: not a BPF object libbpf can open: %s%s%s",
				  p->path, strerror(-rc), cap->last[0] ? "; libbpf: " : "",
				  cap->last);
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
		return uprog_fail(-ENOMEM, err, errlen, "%s: %s", object_path, strerror(ENOMEM));
	}
	libbpf_log_capture_begin(&cap);
	rc = open_load(p, &cap, err, errlen);
	libbpf_log_capture_end();
	if (!rc && alloc_state(p, map_read))
		rc = uprog_fail(-ENOMEM, err, errlen, "%s: %s", object_path, strerror(ENOMEM));
	if (!rc)
		rc = attach_all(p, perf, nperf, err, errlen);
	p->ncpus = libbpf_num_possible_cpus();
	if (!rc && p->ncpus <= 0)
		rc = uprog_fail(p->ncpus < 0 ? p->ncpus : -EINVAL, err, errlen,
				"cannot count the possible CPUs: %s", strerror(-p->ncpus));
	if (rc) {
		uprog_close(p);
		return rc;
	}
	*out = p;
	return 0;
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
		mapbatch_free(&p->batch[i]);
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
		return uprog_fail(-ENOENT, err, errlen, "map %s not found in %s (it has: %s)", name,
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
