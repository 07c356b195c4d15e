# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Host-side per-VM service time (issue 31): two libvirt-named cgroups
# (kind "vm") each make a known number of positional file I/O system calls
# as qemu's I/O threads do for a guest, one on a loop device over slowfs
# (every read held DELAY_US: a slow host disk), the other on a plain loop
# device. Checked, exactly:
#   1. under serve's defaults no syscall family is exported and none of
#      their programs is attached;
#   2. with syscall_time, syscall_bytes, syscall_errors, each VM's calls
#      are its histogram's _count per op, its bytes the calls' sizes, its
#      one failed call an error, none lost; every one of the slow VM's calls is in the
#      buckets above the delay and every one of the calm VM's below it: the
#      delay shows for that VM only, beside its block latency;
#   3. `top -S -j` shows the same calls and bytes per VM, and the slow VM's
#      median at the delay, the calm one's p99 below it; CSV has the columns
#      with -S only;
#   4. a map too small for the keys (IOLAT_TEST_SYSCALL_KEYS=1, top -S -P
#      -c: per process, in this test's cgroups only) counts the first
#      process's calls and says exactly how many of the others' it lost;
#   5. a reload that would turn the families on is refused with one line
#      that says to restart, and nothing more is attached.
# No guest here: a static dio makes the calls (a dynamic one's loader adds
# its own pread64s), as qemu's threads would with aio=threads.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
command -v curl >/dev/null || skip "curl is not installed"
[ -d /sys/kernel/tracing/events/syscalls/sys_enter_pread64 ] ||
	skip "no syscalls:sys_enter_pread64 tracepoint (CONFIG_FTRACE_SYSCALLS, or tracefs not mounted)"
gcc -O2 -static tests/helpers/dio.c -o "$WORK/dio" || skip "cannot build a static dio"
SDIO=$WORK/dio

DELAY_US=20000
SLOW_READS=50 # of 4 KiB, pread64: a second at the delay
CALM_READS=300 # of 8 KiB, preadv
CALM_WRITES=100 # of 4 KiB, pwritev
make_slow_loop $DELAY_US
SLOW=$LOOP
make_loop 16
CALM=$LOOP
# Named as libvirt and systemd name a VM's scope (tests/vm/guest.sh's
# vm_cgroup), under a directory of this test's own: others make VMs too.
workload_base vmsys
SLOW_CG="$BASE/machine-qemu\x2d1\x2dslow$$.scope"
CALM_CG="$BASE/machine-qemu\x2d2\x2dcalm$$.scope"
mkdir "$SLOW_CG" "$CALM_CG" || fail "cannot make the VMs' cgroups"

# run_vms: the two VMs' calls, the calm one's failed read last (8 KiB
# alignment broken: O_DIRECT refuses a 100-byte read with EINVAL).
run_vms() {
	in_cgroup "$SLOW_CG" "$SDIO" read "$SLOW" $SLOW_READS 4096 || fail "slow VM's reads"
	in_cgroup "$CALM_CG" "$SDIO" readv "$CALM" $CALM_READS 8192 || fail "calm VM's reads"
	in_cgroup "$CALM_CG" "$SDIO" writev "$CALM" $CALM_WRITES 4096 || fail "calm VM's writes"
	in_cgroup "$CALM_CG" "$SDIO" read "$CALM" 1 100 2>/dev/null && fail "a 100-byte O_DIRECT read succeeded"
	true
}

# start_top NAME ARGS...: `iolat top ARGS` in the background (TOP_PID),
# output in $WORK/NAME.json, once it is attached.
start_top() {
	local name=$1
	shift
	"$IOLAT" top "$@" >"$WORK/$name.json" 2>"$WORK/$name.err" &
	TOP_PID=$!
	for _ in $(seq 1 100); do
		grep -q "Tracing" "$WORK/$name.err" && return 0
		kill -0 $TOP_PID 2>/dev/null || fail "top exited: $(cat "$WORK/$name.err")"
		sleep 0.1
	done
	fail "top did not start"
}

# prog_names PID: the names of the BPF programs process PID holds, one a line.
prog_names() {
	local id
	for id in $(pid_prog_ids "$1"); do
		bpftool prog show id "$id" 2>/dev/null | sed -nE 's/^[0-9]+: [a-z_]+ +name ([^ ]+) .*/\1/p'
	done | sort
}
syscall_progs() { grep -cE '^(enter|exit)_p(read|write)(64|v|v2)$' || true; }

# 1. Defaults: a serve whose config names no syscall family (with the
# same workload bound at the delay as the next one, so that a reload to
# the next one's settings differs in the families alone).
delay_le=$(python3 -c "print($DELAY_US / 1e6)")
buckets="buckets: {workload_latency_seconds: [0.001, $delay_le, 0.25]}"
cat >"$WORK/plain.yml" <<YML
workloads:
  labels: [op]
  metrics: [device_time, bytes]
$buckets
YML
plain_port=$(free_port)
start_serve "$WORK/plain.log" --config.file="$WORK/plain.yml" \
	--web.listen-address="127.0.0.1:$plain_port" --maintenance.interval=100ms
PLAIN_PID=$SERVE_PID
prog_names "$PLAIN_PID" >"$WORK/plain.progs"
assert_eq "syscall programs under the defaults" 0 "$(syscall_progs <"$WORK/plain.progs")"

# 2. A serve with the syscall families, and a workload bound at the delay so
# that the buckets split exactly there.
cat >"$WORK/sys.yml" <<YML
workloads:
  labels: [op]
  metrics: [device_time, bytes, syscall_time, syscall_bytes, syscall_errors]
$buckets
YML
port=$(free_port)
url=http://127.0.0.1:$port/metrics
start_serve "$WORK/serve.log" --config.file="$WORK/sys.yml" \
	--web.listen-address="127.0.0.1:$port" --maintenance.interval=100ms
prog_names "$SERVE_PID" >"$WORK/sys.progs"
assert_eq "syscall programs with the families" 12 "$(syscall_progs <"$WORK/sys.progs")"
assert_eq "the collector's programs, the same in both" \
	"$(grep -vcE '^(enter|exit)_' "$WORK/plain.progs")" "$(grep -vcE '^(enter|exit)_' "$WORK/sys.progs")"
echo "ok: 12 programs on the six calls' tracepoints with the families, none without"

# 3. top beside serve: one interval around the VMs' calls.
start_top top -S -j --once 8
t0=$(date +%s.%N)
run_vms
t1=$(date +%s.%N)
wait $TOP_PID || fail "top -S: $(cat "$WORK/top.err")"
python3 -c "import sys; sys.exit(not $t1 - $t0 < 7)" || fail "the VMs' calls outlasted top's interval"
sleep 1.1 # a cgroup younger than the last walk of the hierarchy waits one
after_pass "$url"
curl -sf "$url" >"$WORK/m" || fail "scrape failed"
curl -sf "http://127.0.0.1:$plain_port/metrics" >"$WORK/plain.m" || fail "scrape failed"

value() { metric "$WORK/m" "$1" "$2"; }
sel() { echo "{op=\"$1\",kind=\"vm\",workload=\"$2\"}"; }
le() { echo "{op=\"$1\",kind=\"vm\",workload=\"$2\",le=\"$3\"}"; }
grep -q '^iolat_workload_syscall' "$WORK/plain.m" && fail "syscall families under the defaults"
assert_eq "calls lost to a full map" 0 "$(metric "$WORK/m" iolat_workload_syscall_lost_total)"
grep -q '^iolat_workload_device_latency_seconds_count{op="read",kind="vm",workload="slow'$$'"}' "$WORK/plain.m" ||
	fail "the plain serve did not see the slow VM's block I/O"
for fam in syscall_latency_seconds syscall_bytes_total syscall_errors_total; do
	grep -q "^# TYPE iolat_workload_$fam " "$WORK/m" || fail "iolat_workload_$fam not exported"
done
s=slow$$ c=calm$$
assert_eq "slow VM: reads (histogram count)" $SLOW_READS "$(value iolat_workload_syscall_latency_seconds_count "$(sel read $s)")"
assert_eq "slow VM: read bytes" $((SLOW_READS * 4096)) "$(value iolat_workload_syscall_bytes_total "$(sel read $s)")"
assert_eq "slow VM: errors" 0 "$(value iolat_workload_syscall_errors_total "$(sel read $s)")"
assert_eq "slow VM: no writes" "" "$(value iolat_workload_syscall_latency_seconds_count "$(sel write $s)")"
assert_eq "calm VM: reads, the failed one too" $((CALM_READS + 1)) "$(value iolat_workload_syscall_latency_seconds_count "$(sel read $c)")"
assert_eq "calm VM: read bytes" $((CALM_READS * 8192)) "$(value iolat_workload_syscall_bytes_total "$(sel read $c)")"
assert_eq "calm VM: the failed read" 1 "$(value iolat_workload_syscall_errors_total "$(sel read $c)")"
assert_eq "calm VM: writes" $CALM_WRITES "$(value iolat_workload_syscall_latency_seconds_count "$(sel write $c)")"
assert_eq "calm VM: write bytes" $((CALM_WRITES * 4096)) "$(value iolat_workload_syscall_bytes_total "$(sel write $c)")"
echo "ok: each VM's calls, bytes and errors, exact, per op"
# The delay: every slow call above it, every calm call at or below it.
assert_eq "slow VM: reads at or below ${delay_le} s" 0 "$(value iolat_workload_syscall_latency_seconds_bucket "$(le read $s "$delay_le")")"
assert_eq "calm VM: reads at or below ${delay_le} s" $((CALM_READS + 1)) "$(value iolat_workload_syscall_latency_seconds_bucket "$(le read $c "$delay_le")")"
assert_eq "calm VM: writes at or below ${delay_le} s" $CALM_WRITES "$(value iolat_workload_syscall_latency_seconds_bucket "$(le write $c "$delay_le")")"
# Beside it, the same VM's block latency: the loop device's reads waited too.
assert_eq "slow VM: block reads at or below ${delay_le} s" 0 "$(value iolat_workload_device_latency_seconds_bucket "$(le read $s "$delay_le")")"
sum=$(value iolat_workload_syscall_latency_seconds_sum "$(sel read $s)")
python3 -c "import sys; sys.exit(not $sum > $SLOW_READS * $delay_le)" || fail "slow VM's time $sum s"
echo "ok: the delay shows in the slow VM's calls only ($sum s over $SLOW_READS reads)"

# top: the same calls per VM; the slow median at the delay, within the
# latency table's resolution (a 2^(1/16) step: top interpolates in a slot).
python3 - "$WORK/top.json" "$s" "$c" "$DELAY_US" $SLOW_READS $((CALM_READS + CALM_WRITES + 1)) \
	$((SLOW_READS * 4096)) $((CALM_READS * 8192 + CALM_WRITES * 4096)) <<'PY' || fail "top -S: $(cat "$WORK/top.json")"
import json, sys
doc = json.load(open(sys.argv[1]))
slow, calm, delay_ms = sys.argv[2], sys.argv[3], int(sys.argv[4]) / 1000
want = {slow: (int(sys.argv[5]), int(sys.argv[7]), 0), calm: (int(sys.argv[6]), int(sys.argv[8]), 1)}
rows = {w["name"]: w for w in doc["workloads"] if w["kind"] == "vm" and w["name"] in want}
step = 2 ** (1 / 16)
ok = True
for name, (calls, nbytes, errors) in want.items():
    r = rows.get(name)
    got = r and (r["syscalls"], r["syscall_bytes"], r["syscall_errors"])
    print(f"top: {name}: {got} (want {(calls, nbytes, errors)}), "
          f"sys p50 {r and r['sys_p50_ms']} ms, p99 {r and r['sys_p99_ms']} ms")
    ok &= got == (calls, nbytes, errors)
ok &= rows[slow]["sys_p50_ms"] >= delay_ms / step and rows[calm]["sys_p99_ms"] < delay_ms / step
sys.exit(not ok)
PY
"$IOLAT" top --csv --once 0.2 2>/dev/null | head -1 | grep -q sys_ && fail "sys_ columns without -S"
"$IOLAT" top -S --csv --once 0.2 2>/dev/null | head -1 | grep -q ',sys_iops,sys_p50_ms,sys_p99_ms$' ||
	fail "no sys_ columns in top -S --csv"
expect_error 2 "sort column 'sys_p99_ms' is shown only with --syscalls" top -s sys_p99_ms --once 1
echo "ok: top -S: each VM's calls and bytes, the delay in the slow one's median only"

# 4. One key for three processes: the first one's calls counted, the
# others' lost, each one of them.
IOLAT_TEST_SYSCALL_KEYS=1 start_top lost -S -P -c "$BASE" -j --once 8
run_vms
wait $TOP_PID || fail "top -S -P: $(cat "$WORK/lost.err")"
assert_eq "calls lost to a one-key map" $((CALM_READS + CALM_WRITES + 1)) \
	"$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["syscalls_lost"])' "$WORK/lost.json")"
assert_eq "calls counted in it: the first process's" $SLOW_READS \
	"$(python3 -c 'import json, sys; print(sum(w.get("syscalls", 0) for w in json.load(open(sys.argv[1]))["workloads"]))' "$WORK/lost.json")"
echo "ok: a full map: the first key's calls counted, the rest counted as lost"

# 5. Turning the families on at a reload: refused, one line, nothing attached.
cp "$WORK/sys.yml" "$WORK/plain.yml"
kill -HUP "$PLAIN_PID"
wait_for_line "$WORK/plain.log" 'reload failed' || fail "reload not refused: $(tail -3 "$WORK/plain.log")"
grep 'reload failed' "$WORK/plain.log" | grep -q 'turning the system call families .* on takes a restart of iolat serve' ||
	fail "reload message: $(grep 'reload failed' "$WORK/plain.log")"
assert_eq "syscall programs after the refused reload" 0 "$(prog_names "$PLAIN_PID" | syscall_progs)"
curl -sf "http://127.0.0.1:$plain_port/metrics" | grep -q '^iolat_workload_syscall' &&
	fail "syscall families after the refused reload"
echo "ok: a reload that would attach them is refused: restart"
stop_serve "serve with the syscall families"
SERVE_PID=$PLAIN_PID
OUR_PROGS=$(pid_prog_ids "$PLAIN_PID")
stop_serve "serve without them"
