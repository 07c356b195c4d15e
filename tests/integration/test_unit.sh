# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The systemd unit's sandbox against what `iolat serve` really does:
# tests/install/check_unit.sh (systemd-analyze verify and security; every
# system call and socket family of a serve run as the unit runs it, users'
# programs, scrapes and a reload included, inside SystemCallFilter= and
# RestrictAddressFamilies=). Root: it loads BPF programs.
source tests/integration/lib.sh

command -v strace >/dev/null || skip "strace is not installed"
command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"
bash tests/install/check_unit.sh "$OUT"
rc=$?
[ $rc -eq 77 ] && skip "check_unit.sh could not run"
[ $rc -eq 0 ] || fail "check_unit.sh"
