#!/usr/bin/env bash
# run.sh - runs every tests/integration/test_*.sh as root and prints a summary.
# Exit status 77 from a test means skipped (what it needs is not here).
set -u
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "integration tests need root" >&2; exit 1; }
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
passed=0 failed=0 skipped=0
for t in tests/integration/test_*.sh; do
	[ -n "${ONLY:-}" ] && ! [[ "$t" =~ $ONLY ]] && continue
	start=$(date +%s)
	bash "$t" >"/tmp/iolat-$(basename "$t").log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	case $rc in
	0) passed=$((passed + 1)); echo "PASS $t (${secs}s)" ;;
	77) skipped=$((skipped + 1)); echo "SKIP $t: $(grep -m1 SKIP "/tmp/iolat-$(basename "$t").log")" ;;
	*) failed=$((failed + 1)); echo "FAIL $t (${secs}s)"; sed 's/^/    /' "/tmp/iolat-$(basename "$t").log" | tail -30 ;;
	esac
done
echo "integration: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
