#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# run.sh - runs every tests/integration/test_*.sh as root and prints a summary.
# Exit status 77 from a test means skipped (what it needs is not here). A
# test that fails fails: there is no second run. A test still running after
# TEST_TIMEOUT seconds (default 900) is stopped and fails.
set -u
cd "$(dirname "$0")/../.." || exit 1
[ "$(id -u)" -eq 0 ] || { echo "integration tests need root" >&2; exit 1; }
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
# Logs of this run only: others may run the suite on the same machine.
logs=$(mktemp -d /tmp/iolat-integration.XXXXXX)
passed=0 failed=0 skipped=0
selected=()
for t in tests/integration/test_*.sh; do
	[ -n "${ONLY:-}" ] && ! [[ "$t" =~ $ONLY ]] && continue
	selected+=("$t")
done
# The guest tests' kernels and tools are downloaded, and the systemd
# guest's image built, while the tests before them run (tests/vm/prefetch.sh;
# PREFETCH=0 turns it off), each only if a selected test uses it. It has a
# session of its own, so that its apt-get, dpkg and mmdebstrap go with it
# when it is stopped.
prefetch=
uses() { [ ${#selected[@]} -gt 0 ] && grep -lqE "$1" "${selected[@]}"; }
if [ "${PREFETCH:-1}" != 0 ]; then
	want_kernels=0 want_image=0
	uses 'tests/vm/guest\.sh' && want_kernels=1
	uses 'tests/vm/systemd_guest\.sh' && want_image=1
	if [ $want_kernels = 1 ] || [ $want_image = 1 ]; then
		PREFETCH_KERNELS=$want_kernels PREFETCH_SYSTEMD_GUEST=$want_image \
			setsid bash tests/vm/prefetch.sh >"$logs/prefetch.log" 2>&1 &
		prefetch=$!
	fi
fi
for t in "${selected[@]}"; do
	log=$logs/$(basename "$t").log
	start=$(date +%s)
	# timeout signals the whole process group, so a hung iolat goes too.
	timeout -k 10 "${TEST_TIMEOUT:-900}" bash "$t" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	case $rc in
	0) passed=$((passed + 1)); echo "PASS $t (${secs}s)" ;;
	77) skipped=$((skipped + 1)); echo "SKIP $t: $(grep -m1 SKIP "$log")" ;;
	124 | 137) failed=$((failed + 1)); echo "FAIL $t: still running after ${secs}s"; sed 's/^/    /' "$log" | tail -30 ;;
	*) failed=$((failed + 1)); echo "FAIL $t (${secs}s)"; sed 's/^/    /' "$log" | tail -30 ;;
	esac
	grep -h "^WARNING" "$log" | sed "s|^|    $t: |"
done
# Still fetching (its tests were not selected, or failed first): stopped.
[ -n "$prefetch" ] && kill -TERM -- "-$prefetch" 2>/dev/null
echo "integration: $passed passed, $failed failed, $skipped skipped (logs in $logs)"
[ "$failed" -eq 0 ]
