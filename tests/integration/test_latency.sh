# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Known latency. A loop device over a FUSE file that sleeps DELAY per read:
# the delay is inside the device (D2C), so the median device time lands in
# the slot holding it and total time adds almost nothing. Then blk-throttle
# on the same reads: the delay happens to bios before a request exists, so
# neither view holds it although each read takes ~1/IOPS seconds.
# Then serve's classic buckets on the slow disk: bounds exported as written
# (le="0.00003"), each bucket exact for reads of at least the delay, also
# across a handover to a collector whose slots are laid at other bounds; a
# bound iolat cannot count at exactly refused at start and at a reload.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

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

serve_buckets() { # the slow disk, read by serve (below)
	# le_of FILE: "LE COUNT" for each bucket of the slow disk's reads.
	le_of() {
		sed -nE "s/^iolat_block_device_latency_seconds_bucket\{device=\"$name\",op=\"read\",le=\"([^\"]+)\"\} ([0-9]+)$/\1 \2/p" "$1" | tr '\n' ' '
	}
	local port url pins=test-latency-$$ n=20 want
	port=$(free_port)
	url=http://127.0.0.1:$port/metrics
	on_exit "rm -rf /sys/fs/bpf/iolat/$pins /run/iolat/$pins"
	export IOLAT_TEST_DISK=$name IOLAT_TEST_HANDOVER_GRACE_S=3

	# Bounds as written, the reads of at least DELAY_US in none below it.
	printf 'workloads: {enabled: false}\nbuckets:\n  latency_seconds: [0.00003, 0.0049, 0.005, 1, 2.5]\n' >"$WORK/b.yml"
	start_serve "$WORK/b.log" --config.file="$WORK/b.yml" --web.listen-address=127.0.0.1:"$port"
	"$DIO" read "$dev" $n 4096 || fail "dio read"
	curl -sf "$url" >"$WORK/b.m" || fail "scrape"
	want="0.00003 0 0.0049 0 0.005 0 1 $n 2.5 $n +Inf $n "
	assert_eq "buckets as written, exact for $n reads of >= ${DELAY_US} us" "$want" "$(le_of "$WORK/b.m")"

	# A reload to a bound the running slots lack is refused, the running
	# bounds kept; one to bounds it has is taken.
	printf 'workloads: {enabled: false}\nbuckets:\n  latency_seconds: [0.00004, 1]\n' >"$WORK/b.yml"
	kill -HUP "$SERVE_PID"
	for _ in $(seq 100); do grep -q "reload failed" "$WORK/b.log" && break; sleep 0.05; done
	grep -q 'level=error msg="reload failed, keeping the running configuration" .*err="latency bucket bound 0.00004 is not one the running collector counts at (its slots are laid at start): restart iolat serve to add it, or use one near it that it has, 0.000039576 or 0.000041328"' "$WORK/b.log" ||
		fail "no refusal of 0.00004 logged: $(grep -i reload "$WORK/b.log")"
	curl -sf "$url" >"$WORK/b.m" || fail "scrape"
	assert_eq "buckets after a refused reload" "$want" "$(le_of "$WORK/b.m")"
	printf 'workloads: {enabled: false}\nbuckets:\n  latency_seconds: [0.00003, 0.005]\n' >"$WORK/b.yml"
	kill -HUP "$SERVE_PID"
	for _ in $(seq 100); do grep -q "configuration reloaded" "$WORK/b.log" && break; sleep 0.05; done
	curl -sf "$url" >"$WORK/b.m" || fail "scrape"
	assert_eq "buckets after a reload to bounds it has" "0.00003 0 0.005 0 +Inf $n " "$(le_of "$WORK/b.m")"
	stop_serve "serve with bounds of its own"

	# Unrepresentable at start: one line naming the exact ones, exit 2.
	printf 'buckets:\n  latency_seconds: [0.0000000015]\n' >"$WORK/bad.yml"
	expect_error 2 "bad.yml:2:21: latency_seconds 0.0000000015 is not a whole nanosecond, which iolat counts in; the nearest it can count at exactly: 0.000000001 or 0.000000002" \
		serve --config.file="$WORK/bad.yml" --web.listen-address=127.0.0.1:"$port"

	# A handover between collectors whose slots differ: the reads the
	# first (default bounds) counted land in the second's buckets by their
	# bounds, not by slot number (the second has 17 more bounds, 30 to
	# 46 us: by number, 5 ms reads would land 17 slots lower, under 2.5 ms).
	printf 'workloads: {enabled: false}\n' >"$WORK/b.yml"
	start_serve "$WORK/h0.log" --config.file="$WORK/b.yml" --web.listen-address=127.0.0.1:"$port" --handover=$pins
	"$DIO" read "$dev" $n 4096 || fail "dio read"
	curl -sf "$url" >"$WORK/h0.m" || fail "scrape"
	assert_eq "reads over 5 ms, default buckets" "0 $n" \
		"$(le_of "$WORK/h0.m" | awk '{ for (i = 1; i < NF; i += 2) { if ($i == "0.005") a = $(i + 1); if ($i == "1") b = $(i + 1) } print a, b }')"
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID" || fail "serve with --handover did not exit 0"
	printf 'workloads: {enabled: false}\nbuckets:\n  latency_seconds: [%s0.0025, 0.005, 1]\n' \
		"$(seq -f '0.0000%02g, ' 30 46 | tr -d '\n')" >"$WORK/b.yml"
	start_serve "$WORK/h1.log" --config.file="$WORK/b.yml" --web.listen-address=127.0.0.1:"$port" --handover=$pins
	grep -q "taking over the pinned collector" "$WORK/h1.log" || fail "no takeover: $(cat "$WORK/h1.log")"
	for _ in $(seq 150); do grep -q "handover done" "$WORK/h1.log" && break; sleep 0.1; done
	grep -q "handover done" "$WORK/h1.log" || fail "the handover did not end: $(cat "$WORK/h1.log")"
	curl -sf "$url" >"$WORK/h1.m" || fail "scrape"
	assert_eq "reads handed over, in the buckets of their bounds" "0.00003 0 0.0025 0 0.005 0 1 $n +Inf $n " \
		"$(le_of "$WORK/h1.m" | awk '{ for (i = 1; i < NF; i += 2) if ($i !~ /^0\.0000[34]/ || $i == "0.00003") printf "%s %s ", $i, $(i + 1) }')"
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID" || fail "serve after a handover did not exit 0"
	"$IOLAT" serve --unpin=$pins >/dev/null || fail "serve --unpin failed"
	assert_detached
	unset IOLAT_TEST_DISK IOLAT_TEST_HANDOVER_GRACE_S
	echo "serve: le as written, exact buckets, refusals at start and reload, slots mapped at a handover"
}
serve_buckets

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
