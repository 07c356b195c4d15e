// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* privileges.c - capabilities needed, checked and given up (privileges.h). */
#include "sys/privileges.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

bool privileges_have(int cap)
{
	cap_flag_value_t v = CAP_CLEAR;
	cap_t c = cap_get_proc();

	if (!c)
		return false;
	if (cap_get_flag(c, (cap_value_t)cap, CAP_EFFECTIVE, &v))
		v = CAP_CLEAR;
	cap_free(c);
	return v == CAP_SET;
}

/* Whether the running kernel knows capability cap (CAP_BPF: 5.8+). */
static bool kernel_knows(int cap)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int last = -1;

	if (f) {
		if (fscanf(f, "%d", &last) != 1)
			last = -1;
		fclose(f);
	}
	return last < 0 ? CAP_IS_SUPPORTED(cap) : cap <= last;
}

/*
 * Makes every permitted capability effective. A binary given file
 * capabilities without the effective bit (`setcap cap_bpf,cap_perfmon=p`,
 * as the container image's iolat is: Containerfile) starts with them
 * permitted only. With the effective bit, execve would instead fail with
 * EPERM wherever the bounding set lacks one (a container not granted it),
 * before iolat could say which. No-op for root and for ambient capabilities
 * (systemd's AmbientCapabilities=), which are effective already.
 */
static void raise_permitted(void)
{
	cap_t c = cap_get_proc();
	bool change = false;

	if (!c)
		return;
	for (int i = 0; i <= CAP_LAST_CAP; i++) {
		cap_flag_value_t p = CAP_CLEAR, e = CAP_CLEAR;
		cap_value_t v = i;

		if (cap_get_flag(c, v, CAP_PERMITTED, &p) || cap_get_flag(c, v, CAP_EFFECTIVE, &e))
			continue;
		if (p == CAP_SET && e != CAP_SET && !cap_set_flag(c, CAP_EFFECTIVE, 1, &v, CAP_SET))
			change = true;
	}
	if (change)
		(void)cap_set_proc(c); /* on failure the checks below name what is missing */
	cap_free(c);
}

int require_bpf_privileges(char *err, size_t len, const char **hint)
{
	bool bpf, perfmon;

	raise_permitted();
	bpf = privileges_have(CAP_BPF);
	perfmon = privileges_have(CAP_PERFMON);

	/* bpf_capable() and perfmon_capable() accept CAP_SYS_ADMIN for either. */
	if (privileges_have(CAP_SYS_ADMIN) || (bpf && perfmon))
		return 0;
	if (!kernel_knows(CAP_BPF)) {
		*hint = "run it as root, or grant CAP_SYS_ADMIN";
		snprintf(err, len,
			 "missing CAP_SYS_ADMIN: this kernel has no CAP_BPF or "
			 "CAP_PERFMON (they came in Linux 5.8), so loading BPF programs takes "
			 "CAP_SYS_ADMIN");
		return -EPERM;
	}
	*hint = bpf || perfmon ? "run it as root, or grant the missing one as well"
			       : "run it as root, or grant both, e.g. AmbientCapabilities=CAP_BPF "
				 "CAP_PERFMON in a systemd unit";
	snprintf(err, len,
		 "missing %s: loading BPF tracing programs and reading their maps "
		 "takes CAP_BPF and CAP_PERFMON",
		 bpf	   ? "CAP_PERFMON"
		 : perfmon ? "CAP_BPF"
			   : "CAP_BPF and CAP_PERFMON");
	return -EPERM;
}

/* kernel.bpf_stats_enabled: 1 if on, 0 if off, -1 if unknown. */
static int stats_sysctl(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "re");
	int on = -1;

	if (f) {
		if (fscanf(f, "%d", &on) != 1)
			on = -1;
		fclose(f);
	}
	return on;
}

int privileges_bpf_stats(int *fd, char *err, size_t len, const char **hint)
{
	int rc;

	*fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (*fd >= 0)
		return 0;
	rc = -errno;
	if (rc == -EPERM && stats_sysctl() == 1)
		return 0; /* on for everyone already: nothing to hold */
	if (rc == -EPERM) {
		*hint = "grant CAP_SYS_ADMIN, or have root run 'sysctl "
			"kernel.bpf_stats_enabled=1' first, or leave --bpf.stats (bpf_stats) off";
		snprintf(err, len,
			 "missing CAP_SYS_ADMIN: --bpf.stats turns on the kernel's BPF "
			 "run-time statistics, which only CAP_SYS_ADMIN may do");
		return rc;
	}
	*hint = "this kernel may be too old (BPF_ENABLE_STATS came in 5.8); leave --bpf.stats off";
	snprintf(err, len, "cannot turn on BPF run-time statistics: %s", strerror(-rc));
	return rc;
}

int privileges_drop(void)
{
	cap_value_t keep[4] = { CAP_BPF, CAP_PERFMON };
	bool setpcap = privileges_have(CAP_SETPCAP);
	int nkeep = 2, rc;
	cap_t caps;

	/* Where CAP_BPF or CAP_PERFMON is not what grants BPF (a kernel before
	 * 5.8, or only CAP_SYS_ADMIN given), CAP_SYS_ADMIN stays too. */
	if (!privileges_have(CAP_BPF) || !privileges_have(CAP_PERFMON))
		keep[nkeep++] = CAP_SYS_ADMIN;
	/* Naming the VMs that hold disks open reads qemu's /proc/PID/fd, which
	 * takes CAP_SYS_PTRACE: kept only when granted on purpose, as an
	 * ambient capability (systemd's AmbientCapabilities=), not because
	 * root started iolat with all of them. */
	if (privileges_have(CAP_SYS_PTRACE) && cap_get_ambient(CAP_SYS_PTRACE) == 1)
		keep[nkeep++] = CAP_SYS_PTRACE;
	/* The bounding set first: dropping from it needs CAP_SETPCAP, which
	 * goes next. Without CAP_SETPCAP it stays; no_new_privs keeps an exec
	 * from gaining anything from it. */
	for (int c = 0; setpcap && c <= CAP_LAST_CAP; c++) {
		bool kept = false;

		for (int k = 0; k < nkeep; k++)
			kept |= keep[k] == c;
		if (!kept && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) && errno != EINVAL)
			return -errno;
	}
	caps = cap_get_proc();
	if (!caps)
		return -errno;
	/* Of those to keep, only the ones held can stay: clear the rest. */
	rc = cap_clear_flag(caps, CAP_INHERITABLE);
	for (int c = 0; !rc && c <= CAP_LAST_CAP; c++) {
		bool kept = false;

		for (int k = 0; k < nkeep; k++)
			kept |= keep[k] == c;
		if (!kept) {
			cap_value_t v = c;

			rc = cap_set_flag(caps, CAP_PERMITTED, 1, &v, CAP_CLEAR) ||
			     cap_set_flag(caps, CAP_EFFECTIVE, 1, &v, CAP_CLEAR);
		}
	}
	if (!rc)
		rc = cap_set_proc(caps);
	cap_free(caps);
	if (rc)
		return -errno;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ? -errno : 0;
}
