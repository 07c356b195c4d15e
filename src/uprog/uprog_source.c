// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* uprog_source.c - a user's loaded object as a map source (uprog_source.h). */
#include "uprog/uprog_source.h"

#include <string.h>

static int source_map(void *ctx, const char *name, struct umap *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	return uprog_map(ctx, name, &out->m, err, errlen);
}

/* uprog_map_read hands out bare u64s: each becomes a uvalue. */
struct walk {
	usource_fn fn;
	void *arg;
};

static int on_entry(void *arg, const void *key, uint64_t value)
{
	struct walk *w = arg;
	struct uvalue v = { .u64 = value };

	return w->fn(w->arg, key, &v);
}

static int source_read(void *ctx, const struct umap *m, usource_fn fn, void *arg, char *err,
		       size_t errlen)
{
	struct walk w = { fn, arg };

	return uprog_map_read(ctx, &m->m, on_entry, &w, err, errlen);
}

void uprog_source(struct uprog *p, struct usource *out)
{
	*out = (struct usource){ .ctx = p, .map = source_map, .read = source_read };
}
