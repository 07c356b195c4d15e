// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cmdutil.c - shared plumbing of the tracing commands (cmdutil.h). */
#include "cli/cmdutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/libbpf_log.h"
#include "core/probe.h"
#include "sys/cgroups.h"
#include "sys/disks.h"
#include "sys/privileges.h"
#include "util/errors.h"
#include "util/monotonic.h"
#include "util/parse.h"

/* Process-wide: a signal handler has no other way to tell the command. */
volatile sig_atomic_t cmd_stop;

static void on_stop(int sig)
{
	(void)sig;
	cmd_stop = 1;
}

int cmd_interval_count(const struct opts *o, double *interval, uint64_t *count)
{
	int i = o->next;

	if (i < o->argc && parse_seconds(o->argv[i++], interval)) {
		errorf("give INTERVAL as a positive number of seconds, e.g. 1 or 0.5",
		       "bad interval '%s'", o->argv[i - 1]);
		return -EINVAL;
	}
	if (i < o->argc && parse_uint(o->argv[i++], 1, UINT32_MAX, count)) {
		errorf("give COUNT as a whole number of intervals, 1 or more", "bad count '%s'",
		       o->argv[i - 1]);
		return -EINVAL;
	}
	return opts_no_operand(o, i);
}

int cmd_trace_flag(int key, const char *value, struct cmd_trace_flags *f)
{
	switch (key) {
	case 'd':
		f->disk = value;
		return 1;
	case 'c':
		f->cgroup = value;
		return 1;
	case 'v':
		libbpf_log_verbose(true);
		return 1;
	case CMD_OPT_ATTACH:
		return cmd_attach_arg(value, &f->attach) ? -EINVAL : 1;
	}
	return 0;
}

void cmd_trace_flags_usage(FILE *f, int width)
{
	static const char *const lines[][2] = {
		{ "  -d, --disk=DISK", "only this disk (a partition means its disk)" },
		{ "  -c, --cgroup=PATH", "only I/O charged to this cgroup or its children" },
		{ "      --attach=MODE", "auto (default), tp_btf or raw_tp" },
		{ "  -v, --verbose", "show libbpf's messages" },
	};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		fprintf(f, "%-*s%s\n", width, lines[i][0], lines[i][1]);
}

int cmd_attach_arg(const char *arg, enum attach_mode *out)
{
	char err[128];
	int rc = attach_mode_parse(arg, out, err, sizeof(err));

	if (rc)
		errorf(ATTACH_MODE_HINT, "%s", err);
	return rc;
}

enum attach_mode cmd_attach_mode(enum attach_mode asked)
{
	return attach_forced(asked, getenv("IOLAT_FORCE_ATTACH"));
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
	if (probe_kernel_at(pr, getenv("IOLAT_BTF"))) {
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
	struct collector_opts forced = *o;
	char err[256] = "";
	int rc = cmd_prepare_bpf(&pr);

	if (rc)
		return rc;
	forced.attach = cmd_attach_mode(o->attach);
	if (collector_test_knobs(&forced, getenv, err, sizeof(err)) ||
	    collector_open(c, &forced, &pr, err, sizeof(err))) {
		errorf("'iolat check' shows what this kernel offers", "%s", err);
		return 1;
	}
	return 0;
}

/* From now to end_ns in whole milliseconds, rounded up so a wait does not
 * end just before it, and capped at what epoll takes. */
static int ms_until(uint64_t now_ns, uint64_t end_ns)
{
	uint64_t ms = (end_ns - now_ns + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;

	return ms < INT_MAX ? (int)ms : INT_MAX;
}

int cmd_wait_until(struct collector *c, uint64_t end_ns, void (*on_attach)(int what))
{
	sigset_t stops, unblocked;
	uint64_t now;
	int rc = 0, what;

	/*
	 * The stop signals are let in only while it sleeps: one that comes
	 * between the check of cmd_stop and the sleep stays pending and ends
	 * the sleep at once, instead of waiting for the interval to end.
	 */
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigprocmask(SIG_BLOCK, &stops, &unblocked);
	while (!rc && !cmd_stop && (now = monotonic_ns()) < end_ns) {
		rc = collector_wait(c, ms_until(now, end_ns), &unblocked);
		what = collector_maintain(c);
		if (on_attach)
			on_attach(what);
	}
	sigprocmask(SIG_SETMASK, &unblocked, NULL);
	return rc;
}

int cmd_resolve_filters(const char *disk, const char *cgroup, uint32_t *dev, uint64_t *cgroup_id,
			int *cgroup_level)
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
			char root[PATH_MAX], hint[PATH_MAX + 64];

			cgroups_io_root(root, sizeof(root));
			snprintf(hint, sizeof(hint), "give a cgroup under %s", root);
			errorf(hint,
			       "cgroup '%s' is in a hierarchy without the io (blkio) "
			       "controller, so no I/O is charged to it",
			       cgroup);
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

bool cmd_stdout_escapes(void)
{
	const char *term = getenv("TERM");

	return isatty(STDOUT_FILENO) && term && term[0] && strcmp(term, "dumb") != 0;
}

int cmd_stdout_columns(void)
{
	struct winsize ws;
	const char *env = getenv("COLUMNS");
	uint64_t cols;

	if (!isatty(STDOUT_FILENO))
		return 0;
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col > 0)
		return ws.ws_col;
	if (env && !parse_uint(env, 1, INT_MAX, &cols))
		return (int)cols;
	return 80;
}

void cmd_say_tracing(const char *what, bool open_ended)
{
	fprintf(stderr, "Tracing %s...%s\n", what, open_ended ? " Hit Ctrl-C to end." : "");
	fflush(stderr);
}
