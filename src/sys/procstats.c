// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* procstats.c - this process's resources (procstats.h). */
#define _GNU_SOURCE
#include "sys/procstats.h"

#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Open descriptors: entries of /proc/self/fd, less the one reading it. */
static int count_fds(uint64_t *out)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	uint64_t n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	*out = n ? n - 1 : 0;
	return 0;
}

/* utime and stime, fields 14 and 15 of /proc/self/stat, after the command
 * name (which may hold spaces and parentheses: parse from its last ')'). */
static int cpu_seconds(double *out)
{
	char line[1024], *p;
	unsigned long long ut, st;
	FILE *f = fopen("/proc/self/stat", "re");
	int rc = -EIO;

	if (!f)
		return -errno;
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')) &&
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2) {
		*out = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
		rc = 0;
	}
	fclose(f);
	return rc;
}

/* VmSize and VmRSS, from /proc/self/statm: the same page counts as
 * /proc/self/status's lines (total_vm; anon + file + shmem pages), in one
 * short line instead of fifty to scan at every scrape. */
static int memory(struct procstats *out)
{
	unsigned long long size, resident;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	FILE *f = fopen("/proc/self/statm", "re");
	int rc = -EIO;

	if (!f)
		return -errno;
	if (fscanf(f, "%llu %llu", &size, &resident) == 2) {
		out->virtual_bytes = size * page;
		out->resident_bytes = resident * page;
		rc = 0;
	}
	fclose(f);
	return rc;
}

int procstats_read(struct procstats *out)
{
	struct mallinfo2 mi = mallinfo2();
	struct rlimit rl;
	int rc;

	memset(out, 0, sizeof(*out));
	out->heap_bytes = mi.uordblks + mi.hblkhd;
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		out->max_fds = rl.rlim_cur;
	rc = cpu_seconds(&out->cpu_seconds);
	if (!rc)
		rc = memory(out);
	if (!rc)
		rc = count_fds(&out->open_fds);
	return rc;
}
