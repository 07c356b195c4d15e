#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# as_pod.py - runs a program the way a container runtime starts a non-root
# Kubernetes container whose securityContext drops ALL capabilities, adds
# CAPS, runs as UID:GID and forbids privilege escalation (runc, as
# containerd's CRI plugin configures it): the bounding set cut to CAPS;
# then, keeping capabilities across the uid change, no supplementary
# groups, gid and uid set; permitted and effective sets CAPS, inheritable
# and ambient empty (Kubernetes sets no ambient capabilities:
# kubernetes/kubernetes#56374); no_new_privs; execve. After that execve a
# non-root process keeps only what the program file's capabilities grant
# (within the bounding set), which is why the container image's iolat
# carries cap_bpf,cap_perfmon=p (Containerfile).
#
# Usage: as_pod.py CAPS UID GID PROGRAM [ARGS...]
#   CAPS: capability names, comma-separated (bpf,perfmon), or none.
import ctypes
import os
import sys

# Linux's capability numbers, 0 to 40 (linux/capability.h).
NAMES = ("chown dac_override dac_read_search fowner fsetid kill setgid setuid setpcap "
         "linux_immutable net_bind_service net_broadcast net_admin net_raw ipc_lock ipc_owner "
         "sys_module sys_rawio sys_chroot sys_ptrace sys_pacct sys_admin sys_boot sys_nice "
         "sys_resource sys_time sys_tty_config mknod lease audit_write audit_control setfcap "
         "mac_override mac_admin syslog wake_alarm block_suspend audit_read perfmon bpf "
         "checkpoint_restore").split()
PR_SET_KEEPCAPS, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 8, 24, 38
LINUX_CAPABILITY_VERSION_3 = 0x20080522

if len(sys.argv) < 5:
    sys.exit("usage: as_pod.py CAPS UID GID PROGRAM [ARGS...]")
caps = {NAMES.index(n.strip().lower().removeprefix("cap_"))
        for n in sys.argv[1].split(",") if n.strip() and n.strip() != "none"}
uid, gid = int(sys.argv[2]), int(sys.argv[3])
libc = ctypes.CDLL(None, use_errno=True)


def check(rc, what):
    if rc != 0:
        sys.exit("as_pod.py: %s: %s" % (what, os.strerror(ctypes.get_errno())))


class Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


last = int(open("/proc/sys/kernel/cap_last_cap").read())
for c in range(last + 1):
    if c not in caps:
        check(libc.prctl(PR_CAPBSET_DROP, c, 0, 0, 0), "dropping capability %d from the bounding set" % c)
check(libc.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0), "PR_SET_KEEPCAPS")
os.setgroups([])
os.setresgid(gid, gid, gid)
os.setresuid(uid, uid, uid)
mask = sum(1 << c for c in caps)
data = (Data * 2)()
for i in range(2):
    data[i].effective = data[i].permitted = (mask >> (32 * i)) & 0xFFFFFFFF
check(libc.capset(ctypes.byref(Header(LINUX_CAPABILITY_VERSION_3, 0)), data), "capset")
check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")
os.execv(sys.argv[4], sys.argv[4:])
