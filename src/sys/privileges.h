/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * privileges.h - the capabilities iolat's commands need, checked before
 * anything is loaded so that a missing one gives one message naming it and
 * what to do; and, for the daemon, giving up the rest once it runs.
 * docs/serve.md ("Privileges") lists each need and its capability.
 */
#ifndef IOLAT_PRIVILEGES_H
#define IOLAT_PRIVILEGES_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the calling thread has capability cap in its effective set. */
bool privileges_have(int cap);

/*
 * 0 if the process may load and attach iolat's tracing programs and read
 * their maps: CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN holds both; kernels
 * before 5.8 know only it). Otherwise -EPERM, with the missing capability
 * named in err and what to do in *hint (for errorf). Permitted capabilities
 * that are not effective (file capabilities without the effective bit) are
 * raised first.
 */
int require_bpf_privileges(char *err, size_t len, const char **hint);

/*
 * --bpf.stats: the kernel's BPF run-time statistics on for as long as iolat
 * runs. Turning them on (BPF_ENABLE_STATS) takes CAP_SYS_ADMIN; if they are
 * on already (sysctl kernel.bpf_stats_enabled=1) there is nothing to hold.
 * 0 with *fd the descriptor that holds them on (or -1 when none is needed);
 * else -errno (-EPERM: CAP_SYS_ADMIN is missing), with why in err and what
 * to do in *hint (for errorf).
 */
int privileges_bpf_stats(int *fd, char *err, size_t len, const char **hint);

/*
 * Keeps only what serving needs, CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN
 * where it stands for them), and CAP_SYS_PTRACE if it is ambient (granted
 * for naming VMs, sys/holders.h), empties the bounding set where CAP_SETPCAP
 * allows, and sets no_new_privs. Started with nothing more than those two,
 * there is nothing to drop and it succeeds. 0 or -errno.
 */
int privileges_drop(void);

#endif
