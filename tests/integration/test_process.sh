# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Per-process attribution (off by default): `iolat top -P` and
# `iolat serve --workloads.by=process` name each submitting process
# COMM[PID], from block_io_start in the submitter's context, with exact
# counts; the name stays after the process has exited.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

make_loop 64
dev=$LOOP
disk=${dev#/dev/}

# top -P: two processes with known counts, named by their own pids. The
# I/O starts once top says it is tracing, not after a guessed sleep.
"$IOLAT" top -P --once --json -d "$disk" 3 >"$WORK/top.json" 2>"$WORK/top.err" &
top_pid=$!
wait_for_line "$WORK/top.err" Tracing 10 || fail "top -P did not start: $(cat "$WORK/top.err")"
"$DIO" read "$dev" 300 4096 &
echo $! >"$WORK/pid1"
"$DIO" write "$dev" 200 8192 &
echo $! >"$WORK/pid2"
wait "$(cat "$WORK/pid1")" "$(cat "$WORK/pid2")"
wait $top_pid || fail "top -P: $(cat "$WORK/top.err")"
python3 - "$WORK/top.json" "$(cat "$WORK/pid1")" "$(cat "$WORK/pid2")" <<'PY' || fail "top -P does not match"
import json, sys
top = json.loads(open(sys.argv[1]).read().splitlines()[-1])
rows = {w["name"]: w for w in top["workloads"]}
r, w = "dio[%s]" % sys.argv[2], "dio[%s]" % sys.argv[3]
print(sorted(rows))
assert rows[r]["kind"] == "process", rows[r]
assert rows[r]["reads"] == 300 and rows[r]["writes"] == 0, rows[r]
assert rows[w]["writes"] == 200 and rows[w]["write_bytes"] == 200 * 8192, rows[w]
PY
echo "ok: top -P: dio[pid] rows with exact counts"

# serve --workloads.by=process: the same after the processes exited.
port=$(free_port)
start_serve "$WORK/serve.log" "${WL_FULL[@]}" --web.listen-address="127.0.0.1:$port" --workloads.by=process \
	--maintenance.interval=100ms
"$DIO" read "$dev" 123 4096 &
pid=$!
wait $pid
after_pass "http://127.0.0.1:$port/metrics" # names the process
curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/m" || fail "scrape"
assert_eq "per-process reads" 123 \
	"$(metric "$WORK/m" iolat_workload_completions_total "{device=\"$disk\",op=\"read\",kind=\"process\",workload=\"dio[$pid]\"}")"
echo "ok: serve --workloads.by=process: dio[$pid] 123 reads, named after it exited"

rc=0
"$IOLAT" serve --workloads.by=pod 2>"$WORK/err" || rc=$?
assert_eq "bad --workloads.by exit" 2 "$rc"
grep -q "unknown --workloads.by 'pod'" "$WORK/err" || fail "$(cat "$WORK/err")"
echo "ok: bad input"
