// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cmdutil.c - shared plumbing of the tracing commands (cmdutil.h). */
#include "cli/cmdutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "sys/cgroups.h"
#include "sys/disks.h"
#include "util/errors.h"
#include "sys/privileges.h"
#include "core/probe.h"
#include "util/parse.h"

volatile sig_atomic_t cmd_stop;

static void on_stop(int sig)
{
	(void)sig;
	cmd_stop = 1;
}

int cmd_interval_count(int argc, char **argv, int optind, const char *cmd, double *interval,
		       uint64_t *count)
{
	char hint[64];

	snprintf(hint, sizeof(hint), "see 'iolat %s --help'", cmd);
	if (optind < argc && parse_seconds(argv[optind++], interval)) {
		errorf("give INTERVAL as a positive number of seconds, e.g. 1 or 0.5",
		       "bad interval '%s'", argv[optind - 1]);
		return -EINVAL;
	}
	if (optind < argc && parse_uint(argv[optind++], 1, UINT32_MAX, count)) {
		errorf("give COUNT as a whole number of intervals, 1 or more", "bad count '%s'",
		       argv[optind - 1]);
		return -EINVAL;
	}
	if (optind < argc) {
		errorf(hint, "unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int cmd_prepare_bpf(struct probe_result *pr)
{
	struct sigaction sa = { .sa_handler = on_stop };
	const char *hint;
	char err[512];

	if (require_bpf_privileges(err, sizeof(err), &hint)) {
		errorf(hint, "%s", err);
		return 1;
	}
	if (probe_kernel(pr)) {
		errorf("iolat needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		       "this kernel has no BTF (%s is missing)", pr->btf_path);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return 0;
}

int cmd_open_collector(struct collector **c, const struct collector_opts *o)
{
	struct probe_result pr;
	char err[256] = "";
	int rc = cmd_prepare_bpf(&pr);

	if (rc)
		return rc;
	if (collector_open(c, o, &pr, err, sizeof(err))) {
		errorf("'iolat check' shows what this kernel offers", "%s", err);
		return 1;
	}
	return 0;
}

int cmd_resolve_filters(const char *disk, const char *cgroup, uint32_t *dev,
			uint64_t *cgroup_id, int *cgroup_level)
{
	struct cgroup_ref cg;
	int rc;

	if (disk && disks_resolve(disk, dev, NULL, 0)) {
		errorf("'lsblk' lists the disks; give a name like vda or vda1",
		       "no such disk or partition '%s'", disk);
		return -ENOENT;
	}
	if (cgroup) {
		rc = cgroups_resolve(cgroup, &cg);
		if (rc == -EXDEV) {
			char hint[PATH_MAX + 64];

			snprintf(hint, sizeof(hint), "give a cgroup under %s", cgroups_io_root());
			errorf(hint, "cgroup '%s' is in a hierarchy without the io (blkio) "
			       "controller, so no I/O is charged to it", cgroup);
			return rc;
		}
		if (rc) {
			errorf("give a directory under a cgroup mount, e.g. "
			       "/sys/fs/cgroup/system.slice, or a path relative to the io "
			       "controller's hierarchy",
			       "no such cgroup '%s'", cgroup);
			return rc;
		}
		*cgroup_id = cg.id;
		*cgroup_level = cg.level;
	}
	return 0;
}
