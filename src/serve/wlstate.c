// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* wlstate.c - serve's workload label state saved for a restart (wlstate.h). */
#include "serve/wlstate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/pin.h"
#include "util/atomicfile.h"

#define WLSTATE_MAGIC 0x776c6f69u /* "iolw" */
/* Bump on any change to the header or the records: a file of another
 * format is not read (the next run names its workloads afresh). */
#define WLSTATE_FORMAT 2 /* 2: label sets with Kubernetes names */

/* The file: this header, nsets struct wlstate_set, ncgroups struct
 * wlstate_cgroup, then pin_hash of all that before it. */
struct header {
	uint32_t magic;
	uint32_t format;
	uint32_t set_size;    /* sizeof(struct wlstate_set) */
	uint32_t cgroup_size; /* sizeof(struct wlstate_cgroup) */
	uint64_t created_ns;
	uint64_t next_id;
	uint64_t folded_cgroups, retired_cgroups, expired_sets;
	uint64_t nsets, ncgroups;
};

void wlstate_free(struct wlstate *s)
{
	free(s->sets);
	free(s->cgroups);
	memset(s, 0, sizeof(*s));
}

static struct header header_of(const struct wlstate_owner *o, const struct wlstate *s)
{
	struct header h = {
		.magic = WLSTATE_MAGIC,
		.format = WLSTATE_FORMAT,
		.set_size = sizeof(struct wlstate_set),
		.cgroup_size = sizeof(struct wlstate_cgroup),
		.created_ns = o->created_ns,
	};

	if (s) {
		h.next_id = s->next_id;
		h.folded_cgroups = s->folded_cgroups;
		h.retired_cgroups = s->retired_cgroups;
		h.expired_sets = s->expired_sets;
		h.nsets = s->nsets;
		h.ncgroups = s->ncgroups;
	}
	return h;
}

int wlstate_write(const char *path, const struct wlstate_owner *o, const struct wlstate *s)
{
	struct header h = header_of(o, s);
	size_t sb = s->nsets * sizeof(*s->sets), cb = s->ncgroups * sizeof(*s->cgroups);
	uint64_t sum = pin_hash(0, &h, sizeof(h));
	struct atomicfile_part parts[] = {
		{ &h, sizeof(h) },
		{ s->sets, sb },
		{ s->cgroups, cb },
		{ &sum, sizeof(sum) },
	};
	char why[128]; /* the caller words the failure from -errno and path */

	sum = pin_hash(sum, s->sets, sb);
	sum = pin_hash(sum, s->cgroups, cb);
	return atomicfile_write(path, parts, sizeof(parts) / sizeof(parts[0]), why, sizeof(why));
}

/* Reads n bytes into a new buffer at *out (NULL for none). 0 or -errno. */
static int read_block(FILE *f, size_t n, void **out)
{
	*out = NULL;
	if (!n)
		return 0;
	*out = malloc(n);
	if (!*out)
		return -ENOMEM;
	return fread(*out, n, 1, f) == 1 ? 0 : -EPROTO;
}

/* The header's counts, checked against the file's size before anything
 * is allocated from them: a damaged count cannot ask for much memory. */
static int check_size(FILE *f, const struct header *h)
{
	struct stat st;
	uint64_t want;

	if (fstat(fileno(f), &st))
		return -errno;
	if (h->nsets > (uint64_t)st.st_size / sizeof(struct wlstate_set) ||
	    h->ncgroups > (uint64_t)st.st_size / sizeof(struct wlstate_cgroup))
		return -EPROTO;
	want = sizeof(*h) + h->nsets * sizeof(struct wlstate_set) +
	       h->ncgroups * sizeof(struct wlstate_cgroup) + sizeof(uint64_t);
	return (uint64_t)st.st_size == want ? 0 : -EPROTO;
}

int wlstate_read(const char *path, const struct wlstate_owner *o, struct wlstate *out)
{
	struct header want = header_of(o, NULL), h;
	uint64_t sum, stored;
	FILE *f;
	int rc;

	memset(out, 0, sizeof(*out));
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fread(&h, sizeof(h), 1, f) != 1 || h.magic != want.magic || h.format != want.format ||
	    h.set_size != want.set_size || h.cgroup_size != want.cgroup_size)
		rc = -EPROTO;
	else if (h.created_ns != want.created_ns)
		rc = -ESTALE;
	else
		rc = check_size(f, &h);
	if (!rc) {
		out->nsets = h.nsets;
		out->ncgroups = h.ncgroups;
		rc = read_block(f, h.nsets * sizeof(*out->sets), (void **)&out->sets);
	}
	if (!rc)
		rc = read_block(f, h.ncgroups * sizeof(*out->cgroups), (void **)&out->cgroups);
	if (!rc && fread(&stored, sizeof(stored), 1, f) != 1)
		rc = -EPROTO;
	if (!rc) {
		sum = pin_hash(0, &h, sizeof(h));
		sum = pin_hash(sum, out->sets, out->nsets * sizeof(*out->sets));
		sum = pin_hash(sum, out->cgroups, out->ncgroups * sizeof(*out->cgroups));
		if (sum != stored)
			rc = -EPROTO;
	}
	fclose(f);
	if (rc) {
		wlstate_free(out);
		return rc;
	}
	out->next_id = h.next_id;
	out->folded_cgroups = h.folded_cgroups;
	out->retired_cgroups = h.retired_cgroups;
	out->expired_sets = h.expired_sets;
	return 0;
}

/* The series file's identity now: a rewrite (a new file renamed over the
 * old) changes its inode, its modification time, or both. */
static void series_stamp(const char *path, uint64_t *ino, uint64_t *mtime_ns)
{
	struct stat st;

	if (stat(path, &st)) {
		*ino = 0;
		*mtime_ns = 0;
		return;
	}
	*ino = st.st_ino;
	*mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec;
}

int wlstate_files_init(struct wlstate_files *f, const char *name, const struct wlstate_owner *o)
{
	char dir[256];
	int rc = pin_state_dir(name, true, dir, sizeof(dir));

	memset(f, 0, sizeof(*f));
	if (rc)
		return rc;
	/* "series": the collector's file (collector.c, series_path). */
	if ((size_t)snprintf(f->path, sizeof(f->path), "%s/%s", dir, WLSTATE_FILE) >=
		sizeof(f->path) ||
	    (size_t)snprintf(f->series, sizeof(f->series), "%s/series", dir) >= sizeof(f->series))
		return -ENAMETOOLONG;
	f->owner = *o;
	series_stamp(f->series, &f->seen_ino, &f->seen_mtime_ns);
	return 0;
}

bool wlstate_series_changed(struct wlstate_files *f)
{
	uint64_t ino, mtime_ns;

	series_stamp(f->series, &ino, &mtime_ns);
	if (ino == f->seen_ino && mtime_ns == f->seen_mtime_ns)
		return false;
	f->seen_ino = ino;
	f->seen_mtime_ns = mtime_ns;
	return ino != 0; /* gone is no save */
}
