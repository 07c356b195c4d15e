// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* mapiter.c - a whole map read through a BPF map-element iterator (mapiter.h). */
#include "uprog/mapiter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mapiter.skel.h"

struct mapiter {
	struct mapiter_bpf *skel;
	struct bpf_link *link;
	size_t rec, key_size; /* bytes per record (key + value), of the key */
	unsigned char *buf;   /* holds a record split across two reads */
	size_t cap;
};

int mapiter_open(struct mapiter **out, int map_fd, unsigned key_size, unsigned value_bytes)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info info = {};
	struct mapiter *it = calloc(1, sizeof(*it));
	int rc;

	if (!it)
		return -ENOMEM;
	it->key_size = key_size;
	it->rec = (size_t)key_size + value_bytes;
	it->cap = 64 * 1024 > it->rec * 2 ? 64 * 1024 : it->rec * 2;
	it->buf = malloc(it->cap);
	it->skel = mapiter_bpf__open();
	if (!it->buf || !it->skel) {
		rc = -ENOMEM;
		goto fail;
	}
	it->skel->rodata->key_size = key_size;
	it->skel->rodata->value_size = value_bytes;
	rc = mapiter_bpf__load(it->skel);
	if (rc)
		goto fail;
	info.map.map_fd = (__u32)map_fd;
	opts.link_info = &info;
	opts.link_info_len = sizeof(info);
	it->link = bpf_program__attach_iter(it->skel->progs.dump_elem, &opts);
	if (!it->link) {
		rc = -errno;
		goto fail;
	}
	*out = it;
	return 0;
fail:
	mapiter_close(it);
	return rc < 0 ? rc : -EINVAL;
}

void mapiter_close(struct mapiter *it)
{
	if (!it)
		return;
	bpf_link__destroy(it->link);
	mapiter_bpf__destroy(it->skel);
	free(it->buf);
	free(it);
}

/* Hands out the whole records in buf[0..len); returns what is left over. */
static size_t deliver(struct mapiter *it, size_t len, mapiter_fn fn, void *arg, int *rc)
{
	size_t off = 0;

	for (; !*rc && off + it->rec <= len; off += it->rec)
		*rc = fn(arg, it->buf + off, it->buf + off + it->key_size);
	return len - off;
}

int mapiter_read(struct mapiter *it, mapiter_fn fn, void *arg)
{
	int fd = bpf_iter_create(bpf_link__fd(it->link));
	size_t have = 0;
	int rc = 0;

	if (fd < 0)
		return -errno;
	while (!rc) {
		ssize_t n = read(fd, it->buf + have, it->cap - have);
		size_t left;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : 0;
			break;
		}
		have += (size_t)n;
		left = deliver(it, have, fn, arg, &rc);
		memmove(it->buf, it->buf + have - left, left);
		have = left;
	}
	close(fd);
	return rc;
}
