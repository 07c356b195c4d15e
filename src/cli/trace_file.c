// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* trace_file.c - trace records in a file (trace_file.h). */
#include "cli/trace_file.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define MAGIC "IOLATTRC"
#define VERSION 6 /* 5: the cap (max_rate, capped); 6: syscalls' files */

struct header {
	char magic[8];
	uint64_t version, record_size, syscall_size, pc_link_size, t0_ns;
	uint64_t max_rate, capped;
};

int trace_file_create(FILE **out, const char *path, uint64_t t0_ns, uint64_t max_rate, char *err,
		      size_t len)
{
	struct header h = { .version = VERSION,
			    .record_size = sizeof(struct trace_record),
			    .syscall_size = sizeof(struct trace_syscall),
			    .pc_link_size = sizeof(struct trace_pc_link),
			    .t0_ns = t0_ns,
			    .max_rate = max_rate };
	FILE *f = fopen(path, "wxe"); /* never overwrite a recording */

	memcpy(h.magic, MAGIC, sizeof(h.magic));
	if (!f) {
		snprintf(err, len, "cannot create %s: %s", path, strerror(errno));
		return -errno;
	}
	if (fwrite(&h, sizeof(h), 1, f) != 1) {
		snprintf(err, len, "cannot write %s: %s", path, strerror(errno));
		fclose(f);
		return -EIO;
	}
	*out = f;
	return 0;
}

int trace_file_finish(FILE *f, uint64_t capped)
{
	if (!capped)
		return 0;
	if (fflush(f) || fseek(f, (long)offsetof(struct header, capped), SEEK_SET) ||
	    fwrite(&capped, sizeof(capped), 1, f) != 1 || fseek(f, 0, SEEK_END))
		return -EIO;
	return 0;
}

int trace_file_append(FILE *f, const void *data, uint32_t len)
{
	if (fwrite(&len, sizeof(len), 1, f) != 1 || fwrite(data, len, 1, f) != 1)
		return -EIO;
	return 0;
}

static int check_header(FILE *f, const char *path, struct trace_file_info *info, char *err,
			size_t len)
{
	struct header h;

	if (fread(&h, sizeof(h), 1, f) != 1 || memcmp(h.magic, MAGIC, sizeof(h.magic))) {
		snprintf(err, len, "%s is not an iolat trace file (from 'iolat trace --write')",
			 path);
		return -EINVAL;
	}
	if (h.version != VERSION || h.record_size != sizeof(struct trace_record) ||
	    h.syscall_size != sizeof(struct trace_syscall) ||
	    h.pc_link_size != sizeof(struct trace_pc_link)) {
		snprintf(err, len, "%s was written by another iolat version (format %llu)", path,
			 (unsigned long long)h.version);
		return -EINVAL;
	}
	*info = (struct trace_file_info){ h.t0_ns, h.max_rate, h.capped };
	return 0;
}

/* One entry through the sink: 1 at the end of the file, 0, or -errno. */
static int read_entry(FILE *f, const struct trace_file_sink *sink)
{
	union {
		struct trace_record r;
		struct trace_syscall s;
		struct trace_pc_link l;
	} u;
	uint32_t n;

	if (fread(&n, sizeof(n), 1, f) != 1)
		return feof(f) ? 1 : -EIO;
	if ((n != sizeof(u.r) && n != sizeof(u.s) && n != sizeof(u.l)) || fread(&u, n, 1, f) != 1)
		return -EINVAL;
	if (n == sizeof(u.r))
		return sink->record(sink->ctx, &u.r);
	if (n == sizeof(u.s))
		return sink->syscall(sink->ctx, &u.s);
	return sink->pc_link(sink->ctx, &u.l);
}

int trace_file_read(const char *path, struct trace_file_info *info,
		    const struct trace_file_sink *sink, char *err, size_t len)
{
	FILE *f = fopen(path, "re");
	int rc;

	if (!f) {
		snprintf(err, len, "cannot open %s: %s", path, strerror(errno));
		return -errno;
	}
	rc = check_header(f, path, info, err, len);
	if (!rc)
		rc = sink->begin(sink->ctx, info);
	while (!rc)
		rc = read_entry(f, sink);
	fclose(f);
	if (rc == 1)
		return 0;
	if (rc == -EINVAL && !err[0])
		snprintf(err, len, "%s is truncated or damaged", path);
	else if (rc < 0 && !err[0])
		snprintf(err, len, "reading %s: %s", path, strerror(-rc));
	return rc;
}
