# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Known latency. A loop device over a FUSE file that sleeps DELAY per read:
# the delay is inside the device (D2C), so the median device time lands in
# the slot holding it and total time adds almost nothing. Then blk-throttle
# on the same reads: the delay happens to bios before a request exists, so
# neither view holds it although each read takes ~1/IOPS seconds.
source tests/integration/lib.sh

DELAY_US=5000 N=60
make_slow_loop $DELAY_US
dev=$LOOP
name=${dev#/dev/}
make_cgroup latency
cg=$CG

out=$WORK/fuse.json
start_iolat "$out" hist -D -O --json -c "$cg" -d "$name"
in_cgroup "$cg" "$DIO" read "$dev" $N 4096 || fail "dio read"
stop_iolat INT
assert_detached
assert_eq "reads" $N "$(jget "$out" "s('$name','read')['ios']")"
p50=$(jget "$out" "s('$name','read')['device']['p50_ns']")
tp50=$(jget "$out" "s('$name','read')['total']['p50_ns']")
echo "fuse: device p50 ${p50} ns, total p50 ${tp50} ns, injected ${DELAY_US} us"
# The median is at least the injected delay and within the slots just above it
# (FUSE and loop add tens of microseconds, not milliseconds).
python3 - "$p50" "$tp50" "$DELAY_US" <<'PY' || fail "device-time median not at the injected delay"
import sys
p50, tp50, delay = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]) * 1000
assert delay <= p50 <= delay * 1.25, (p50, delay)
assert p50 <= tp50 <= p50 + 1e6, (p50, tp50)   # queueing adds < 1 ms here
PY

# blk-throttle at 100 read IOPS on a fast disk.
make_loop 16
fast=$LOOP
fname=${fast#/dev/}
throttle_reads "$cg" "$fast" 100
out=$WORK/throttle.json
start_iolat "$out" hist -D -O --json -c "$cg" -d "$fname"
t0=$(date +%s.%N)
in_cgroup "$cg" "$DIO" read "$fast" $N 4096 || fail "dio read"
t1=$(date +%s.%N)
stop_iolat INT
assert_detached
assert_eq "throttled reads" $N "$(jget "$out" "s('$fname','read')['ios']")"
p50=$(jget "$out" "s('$fname','read')['device']['p50_ns']")
tp50=$(jget "$out" "s('$fname','read')['total']['p50_ns']")
echo "throttle: $t0 -> $t1 for $N reads, device p50 $p50 ns, total p50 $tp50 ns"
echo "total slots: $(jget "$out" "[(x['lo'], x['count']) for x in s('$fname','read')['total']['slots']]")"
python3 - "$t0" "$t1" "$p50" "$tp50" "$N" <<'PY' || fail "throttle delay not where expected"
import sys
t0, t1, p50, tp50, n = map(float, sys.argv[1:])
per_io = (t1 - t0) / n
assert per_io >= 0.005, per_io           # throttled: ~10 ms per read at 100 IOPS
assert tp50 < per_io * 1e9 / 5, (tp50, per_io)  # but not in the request's time
assert p50 <= tp50
PY

# Nor does the kernel keep a stamp from before the throttle's wait (issue 15):
# `check` says so, and names the submit-stamp field this kernel's BTF gives
# struct bio (bi_issue, or issue_time_ns since 6.18).
"$IOLAT" check --no-load >"$WORK/check" || fail "iolat check --no-load: $(cat "$WORK/check")"
grep -q "^Submit time (above the block layer): no kernel stamp predates blk-throttle here$" \
	"$WORK/check" || fail "check does not say that no stamp predates blk-throttle: $(cat "$WORK/check")"
field=$(bpftool btf dump file /sys/kernel/btf/vmlinux format raw |
	awk '/^\[[0-9]+\] STRUCT .bio. size=/ { on = 1; next } /^\[/ { on = 0 }
	     on && /^\t.(bi_issue|issue_time_ns). / { gsub("\047", "", $1); print $1 }')
[ -n "$field" ] || fail "struct bio has neither bi_issue nor issue_time_ns in BTF"
grep -q "^  bio stamp: bio\.$field, " "$WORK/check" ||
	fail "check does not name bio.$field: $(sed -n '/^Submit time/,$p' "$WORK/check")"
echo "check: no stamp predates blk-throttle; this kernel's is bio.$field"
