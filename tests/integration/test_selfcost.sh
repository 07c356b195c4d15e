# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# test_selfcost.sh - iolat's BPF programs measure their own cost (bpf/iolat.h,
# struct iolat_selfcost: every run counted, 1 in 64 per CPU timed between two
# clock reads), so that serve exports it without CAP_SYS_ADMIN; checked here
# against the kernel's BPF statistics (--bpf.stats) over the same real I/O.
#
# What is exact: the programs' own run count is the kernel's run_cnt, and
# each CPU timed the first of every 64 of its runs. What is compared: the
# time per run. The kernel's figure holds what the two reads inside the
# program cannot see: the kernel's own charge for timing a run (two
# sched_clock() reads around the call, ~75 ns here: an empty program at the
# same hook, bound_empty, measured beside it) and the program's entry, the
# run count and the lookup before the first read. Measured on kernel 6.18,
# 2 vCPUs shared with other jobs (BENCHMARKS.md, "BPF cost measured by iolat
# itself"): per round the self figure is 0.76-0.97 of the kernel's, and the
# median of 5 rounds 0.851-0.860 in four runs; against the kernel's less the
# empty program's, 0.89-1.22 per round and medians 1.012-1.068 (biased up:
# the empty program's charge includes a clock read's worth that the
# in-program figure holds too). So 10 % against the raw figure is not
# reachable: the test holds the median to 0.75-1.0 of it (never above: it
# times a part of what the kernel times), and to 0.9-1.15 of the kernel's
# less the empty program's (10 % below; above, the bias and the spread of a
# median of 5 on a busy machine).
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

BPFLOAD=$PWD/$OUT/bpfload
BOUND=$PWD/$OUT/bench/bound.bpf.o
ROUNDS=${ROUNDS:-5}
IOS=${IOS:-40000}
if ! [ -x "$BPFLOAD" ] || ! [ -f "$BOUND" ]; then fail "build the helpers first (make helpers)"; fi
ncpus=$(nproc --all)

make_loop 64 "$WORK/selfcost.img"
dev=$LOOP
udev_settle

# The floor: an empty tp_btf program on block_rq_complete, as bench/cost.sh's.
"$BPFLOAD" "$BOUND" bound_empty >"$WORK/floor.out" 2>&1 &
floor_pid=$!
on_exit "kill -TERM $floor_pid"
for _ in $(seq 1 100); do
	grep -q '^attached' "$WORK/floor.out" && break
	kill -0 "$floor_pid" 2>/dev/null || fail "bpfload exited: $(cat "$WORK/floor.out")"
	sleep 0.1
done
floor_id=$(pid_prog_ids "$floor_pid")
[ -n "$floor_id" ] || fail "no program id for the floor program"

port=$(free_port)
url=http://127.0.0.1:$port/metrics
before=$(date +%s)
start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port" --bpf.stats
after=$(date +%s)
curl -sf "$url" >"$WORK/m0" || fail "scrape failed"
prog=$(grep -o '^iolat_bpf_self_runs_total{program="rq_complete_[a-z]*"}' "$WORK/m0" |
	sed 's/.*program="\([^"]*\)".*/\1/')
[ -n "$prog" ] || fail "no iolat_bpf_self_runs_total of a completion program: $(grep self_runs "$WORK/m0")"

# process_start_time_seconds: the Prometheus name of iolat_start_time_seconds.
pst=$(metric "$WORK/m0" process_start_time_seconds)
assert_eq "process_start_time_seconds" "$(metric "$WORK/m0" iolat_start_time_seconds)" "$pst"
if [ "$pst" -lt "$before" ] || [ "$pst" -gt "$after" ]; then
	fail "process_start_time_seconds $pst not in [$before, $after]"
fi

dirs=()
for r in $(seq 1 "$ROUNDS"); do
	d=$WORK/round$r
	mkdir "$d"
	bpftool prog show id "$floor_id" -j >"$d/f1" || fail "bpftool prog show id $floor_id"
	curl -sf "$url" >"$d/m1" || fail "scrape failed"
	"$DIO" read "$dev" "$IOS" 4096 || fail "dio read"
	curl -sf "$url" >"$d/m2" || fail "scrape failed"
	bpftool prog show id "$floor_id" -j >"$d/f2" || fail "bpftool prog show id $floor_id"
	dirs+=("$d")
done
python3 tests/integration/selfcost_compare.py "$prog" "${dirs[@]}" >"$WORK/cmp" ||
	fail "comparison failed: $(cat "$WORK/cmp")"
cat "$WORK/cmp"

# Every round: the program counted each run the kernel counted, and ours.
# Both are read in one scrape, microseconds apart, while the host's other
# disks may complete I/O: at most 1 in 10 000 apart.
python3 - "$IOS" "$WORK/cmp" <<'PY' || fail "run counts differ (above)"
import json, sys
ios = int(sys.argv[1])
rounds = [json.loads(l) for l in open(sys.argv[2]) if '"median"' not in l]
bad = [r for r in rounds if r["self_runs"] < ios or abs(r["self_runs"] - r["kernel_runs"]) > max(2, r["kernel_runs"] // 10000)]
for r in bad:
    print("self runs %d, kernel runs %d, I/Os %d" % (r["self_runs"], r["kernel_runs"], ios))
sys.exit(1 if bad else 0)
PY

# Sampling: on each CPU the first of every 64 runs is timed, so in all
# between runs/64 and runs/64 + one per CPU; the estimate is 64 times the
# sampled time.
curl -sf "$url" >"$WORK/m3" || fail "scrape failed"
python3 - "$WORK/m3" "$prog" "$ncpus" <<'PY' || fail "sampled runs or estimate wrong (above)"
import sys
vals = {}
for line in open(sys.argv[1]):
    if not line.startswith("#"):
        k, _, v = line.rpartition(" ")
        vals[k] = float(v)
lab = '{program="%s"}' % sys.argv[2]
runs, sampled = vals["iolat_bpf_self_runs_total" + lab], vals["iolat_bpf_sampled_runs_total" + lab]
secs, est = vals["iolat_bpf_sampled_seconds_total" + lab], vals["iolat_bpf_estimated_seconds_total" + lab]
ok = runs / 64 <= sampled <= runs / 64 + int(sys.argv[3]) and abs(est - 64 * secs) <= 1e-6 * est
print("runs %d sampled %d sampled_seconds %g estimated %g" % (runs, sampled, secs, est))
sys.exit(0 if ok else 1)
PY

read -r ratio ratio_net < <(python3 -c '
import json, sys
m = [json.loads(l) for l in open(sys.argv[1]) if "\"median\"" in l][0]["median"]
print(m["self_over_kernel"], m["self_over_kernel_less_floor"])' "$WORK/cmp")
python3 -c "import sys; sys.exit(0 if 0.9 <= $ratio_net <= 1.15 else 1)" ||
	fail "self-measured time per run is $ratio_net of the kernel's less the empty program's (want 0.9-1.15)"
python3 -c "import sys; sys.exit(0 if 0.75 <= $ratio <= 1.0 else 1)" ||
	fail "self-measured time per run is $ratio of the kernel's (want 0.75-1.0)"
stop_serve "serve --bpf.stats"

# Without --bpf.stats the kernel keeps no times (unless someone else on the
# host turned them on): iolat's own figures are there all the same.
port=$(free_port)
url=http://127.0.0.1:$port/metrics
start_serve "$WORK/serve2.log" --web.listen-address="127.0.0.1:$port"
curl -sf "$url" >"$WORK/n1" || fail "scrape failed"
"$DIO" read "$dev" 6400 4096 || fail "dio read"
curl -sf "$url" >"$WORK/n2" || fail "scrape failed"
lab="{program=\"$prog\"}"
runs=$(($(metric "$WORK/n2" iolat_bpf_self_runs_total "$lab") - $(metric "$WORK/n1" iolat_bpf_self_runs_total "$lab")))
[ "$runs" -ge 6400 ] || fail "without --bpf.stats: $runs self-counted runs for 6400 I/Os"
sampled=$(($(metric "$WORK/n2" iolat_bpf_sampled_runs_total "$lab") - $(metric "$WORK/n1" iolat_bpf_sampled_runs_total "$lab")))
[ "$sampled" -ge 99 ] || fail "without --bpf.stats: $sampled sampled runs for $runs runs"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)" \
	"$(metric "$WORK/n2" iolat_bpf_sampled_seconds_total "$lab")" \
	"$(metric "$WORK/n1" iolat_bpf_sampled_seconds_total "$lab")" ||
	fail "without --bpf.stats: no sampled time"
stop_serve "serve"
echo "PASS: $prog measures its own cost: $(tail -1 "$WORK/cmp")"
