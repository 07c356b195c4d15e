# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Workload label sets across restarts without a gap (serve --handover): with
# a cap of 3 sets, cgroups svc1-svc3 have their own series and svc4-svc5
# count under workload="other"; svc1 is removed and retired. Restarted by
# SIGTERM and then by kill -9 (after the collector's periodic save, which
# the label sets follow), every run must show the same workload series with
# the same labels and counters no lower: svc1's retired series keep their
# name, "other" keeps its members (their new I/O counts there, no series of
# their own), a new cgroup still meets the cap, and svc1's set expires when
# it would have without the restarts, not workloads.expire after the last.
# A damaged saved state costs one warning and a fresh start, nothing more.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

NAME=test-hwl-$$
PINS=/sys/fs/bpf/iolat/$NAME
STATE=/run/iolat/$NAME
EXPIRE=30
if ! mountpoint -q /sys/fs/bpf; then on_exit "umount /sys/fs/bpf"; fi
on_exit "rm -rf $PINS $STATE"
on_exit "$IOLAT serve --unpin=$NAME"

make_loop 64
dev=$LOOP
disk=${dev#/dev/}
workload_base hwl
base=$BASE
port=$(free_port)
url=http://127.0.0.1:$port/metrics
# Only this disk (testing only): the cap and expiry are host-wide.
export IOLAT_TEST_DISK=$disk
serve_args=("${WL_FULL[@]}" --web.listen-address="127.0.0.1:$port" "--handover=$NAME" --maintenance.interval=100ms --workloads.max=3
	"--workloads.expire=${EXPIRE}s")

# Each scrape after a pass: what a pass decided since the last step shows.
scrape() { after_pass "$url"; curl -sf "$url" >"$1" || fail "scrape failed"; }
value() { metric "$1" "$2" "${3:-}"; }
# reads FILE KIND WORKLOAD: the disk's read completions of one label set.
reads() {
	local v
	v=$(value "$1" iolat_workload_completions_total "{device=\"$disk\",op=\"read\",kind=\"$2\",workload=\"$3\"}")
	echo "${v:-0}"
}
reads_of() { reads "$1" service "$2"; }
other_reads() { reads "$1" other other; }
dio() { in_cgroup "$base/$1.service" "$DIO" read "$dev" "$2" 4096 || fail "dio in $1"; }

# same_series OLD NEW: NEW has exactly OLD's workload series of the disk
# (every iolat_workload_* counter, histogram and label set), none of them
# lower; and the label-set counters did not go backwards.
same_series() {
	python3 - "$1" "$2" "$disk" <<'PY' || fail "workload series changed between $1 and $2"
import re, sys
disk = sys.argv[3]
def samples(path):
    out = {}
    for line in open(path):
        if line.startswith("#"):
            continue
        name, _, value = line.rstrip("\n").rpartition(" ")
        base = re.sub(r"\{.*", "", name)
        if base.startswith("iolat_workload_") and f'device="{disk}"' in name:
            out[name] = float(value)
        elif base in ("iolat_workload_label_sets", "iolat_workload_folded_cgroups_total",
                      "iolat_workload_retired_cgroups_total", "iolat_workload_expired_total"):
            out[name] = float(value)
    return out
old, new = samples(sys.argv[1]), samples(sys.argv[2])
bad = 0
for k in sorted(set(old) - set(new)):
    print(f"gone: {k}", file=sys.stderr); bad += 1
for k in sorted(set(new) - set(old)):
    print(f"new: {k}", file=sys.stderr); bad += 1
for k in sorted(set(old) & set(new)):
    if new[k] < old[k] or (k.startswith("iolat_workload_label_sets") and new[k] != old[k]):
        print(f"{k}: {old[k]} -> {new[k]}", file=sys.stderr); bad += 1
if not any("workload=" in k for k in old):
    print("no workload series at all", file=sys.stderr); bad += 1
sys.exit(1 if bad else 0)
PY
}

restarted() {
	grep -q "msg=\"adopted the pinned collector\" dir=$PINS " "$1" || fail "not adopted: $(cat "$1")"
	grep -q "msg=\"workload label sets of the last run restored\" sets=3 " "$1" ||
		fail "label sets not restored: $(cat "$1")"
	! grep -q "level=warn" "$1" || fail "$(grep level=warn "$1")"
}

start_serve "$WORK/serve.0.log" "${serve_args[@]}"
scrape "$WORK/m.boot" # whatever read the new disk first (udev) is named now
for i in 1 2 3 4 5; do mkdir "$base/svc$i.service"; done
# Three sets, in an order that is certain: svc1 and svc2 (and maybe udev's
# cgroup) take them, then svc3 if one is left, then svc4 and svc5 fold.
dio svc1 3
dio svc2 3
sleep 1.1 # a cgroup younger than the last walk of the hierarchy waits one
scrape "$WORK/m.a"
dio svc3 3
sleep 1.1
scrape "$WORK/m.a"
dio svc4 3
dio svc5 3
sleep 1.1
scrape "$WORK/m.a"
scrape "$WORK/m.a"
assert_eq "label sets" 3 "$(value "$WORK/m.a" iolat_workload_label_sets)"
assert_eq "svc1 reads" 3 "$(reads_of "$WORK/m.a" svc1)"
assert_eq "svc2 reads" 3 "$(reads_of "$WORK/m.a" svc2)"
for i in 4 5; do
	! grep -q "workload=\"svc$i\"" "$WORK/m.a" || fail "svc$i has a series past the cap"
done
other0=$(other_reads "$WORK/m.a")
[ "$other0" -ge 6 ] || fail "other counts $other0 reads, svc4 and svc5 did 6"

# svc1 goes: its keys retire under its set, whose expiry starts now.
rmdir "$base/svc1.service"
scrape "$WORK/m.b"
t_retired=$(date +%s)
retired=$(value "$WORK/m.b" iolat_workload_retired_cgroups_total)
[ "$retired" -ge 1 ] || fail "svc1 not retired"
assert_eq "svc1 retired reads" 3 "$(reads_of "$WORK/m.b" svc1)"
echo "ok: 3 label sets, svc4 and svc5 under other ($other0 reads), svc1 retired"

# 1. SIGTERM and start: everything as it was.
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "exit status $? after SIGTERM"
[ -s "$STATE/workloads" ] || fail "no $STATE/workloads after a stop"
start_serve "$WORK/serve.1.log" "${serve_args[@]}"
restarted "$WORK/serve.1.log"
scrape "$WORK/m.c"
same_series "$WORK/m.b" "$WORK/m.c"
assert_eq "svc1's retired reads after a restart" 3 "$(reads_of "$WORK/m.c" svc1)"
# Members keep their places: svc2 its series, svc4 "other"; a new cgroup
# meets the cap that the restored sets fill.
mkdir "$base/svc6.service"
dio svc2 2
dio svc4 2
dio svc6 2
sleep 1.1
scrape "$WORK/m.d"
scrape "$WORK/m.d"
assert_eq "svc2 reads after a restart" 5 "$(reads_of "$WORK/m.d" svc2)"
assert_eq "other reads after a restart (svc4 and the new svc6)" $((other0 + 4)) "$(other_reads "$WORK/m.d")"
for i in 4 5 6; do
	! grep -q "workload=\"svc$i\"" "$WORK/m.d" || fail "svc$i has a series of its own after a restart"
done
assert_eq "label sets after a restart" 3 "$(value "$WORK/m.d" iolat_workload_label_sets)"
echo "ok: SIGTERM restart: same series and labels, other keeps its members, the cap holds"

# 2. kill -9 after a save: the collector saves at a fold at most every 5 s,
# the label sets at the next maintenance pass; this scrape's pass is one.
# What changed since the last stop must be in it: svc7 came, folded into
# "other" and went (its retired series count there; the counters of
# folded and retired cgroups went up).
mkdir "$base/svc7.service"
dio svc7 1
sleep 1.1
scrape "$WORK/m.e"
rmdir "$base/svc7.service"
scrape "$WORK/m.e"
assert_eq "other reads with svc7" $((other0 + 5)) "$(other_reads "$WORK/m.e")"
assert_eq "retired cgroups with svc7" $((retired + 1)) \
	"$(value "$WORK/m.e" iolat_workload_retired_cgroups_total)"
sleep 6
scrape "$WORK/m.e"
kill -KILL "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
t_start2=$(date +%s)
start_serve "$WORK/serve.2.log" "${serve_args[@]}"
restarted "$WORK/serve.2.log"
scrape "$WORK/m.f"
same_series "$WORK/m.e" "$WORK/m.f"
dio svc5 1
sleep 1.1
scrape "$WORK/m.f"
scrape "$WORK/m.f"
assert_eq "other reads after kill -9 (svc5)" $((other0 + 6)) "$(other_reads "$WORK/m.f")"
assert_eq "svc1's retired reads after kill -9" 3 "$(reads_of "$WORK/m.f" svc1)"
echo "ok: kill -9 restart: same series and labels"

# 3. svc1's set expires EXPIRE s after it emptied, restarts or not (counted
# from the restart, it would stay until $EXPIRE s after the last one).
while (($(date +%s) < t_retired + EXPIRE + 2)); do sleep 0.5; done
scrape "$WORK/m.g"
scrape "$WORK/m.g"
((t_start2 + EXPIRE > $(date +%s) + 2)) || fail "the test ran too slowly to tell the clocks apart"
! grep -q 'workload="svc1"' "$WORK/m.g" || fail "svc1's set did not expire on time"
assert_eq "expired sets" "$(($(value "$WORK/m.f" iolat_workload_expired_total) + 1))" \
	"$(value "$WORK/m.g" iolat_workload_expired_total)"
echo "ok: svc1's set expired ${EXPIRE}s after it emptied, across two restarts"

# 4. A damaged saved state: one warning, workloads named afresh.
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "exit status $? after SIGTERM"
truncate -s 40 "$STATE/workloads"
start_serve "$WORK/serve.3.log" "${serve_args[@]}"
grep -q "msg=\"adopted the pinned collector\" dir=$PINS " "$WORK/serve.3.log" || fail "not adopted"
assert_eq "warnings for a damaged state" 1 "$(grep -c level=warn "$WORK/serve.3.log")"
grep -q 'level=warn msg="the workload label sets the last run saved were not read" reason="the file is damaged' \
	"$WORK/serve.3.log" || fail "$(grep level=warn "$WORK/serve.3.log")"
scrape "$WORK/m.h"
scrape "$WORK/m.h"
# Named afresh: the live cgroups fill the cap again, nothing retired yet.
assert_eq "label sets after a damaged state" 3 "$(value "$WORK/m.h" iolat_workload_label_sets)"
assert_eq "retired cgroups after a damaged state" 0 \
	"$(value "$WORK/m.h" iolat_workload_retired_cgroups_total)"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "exit status $? after SIGTERM"
"$IOLAT" serve --unpin=$NAME >/dev/null || fail "serve --unpin failed"
[ ! -e "$STATE" ] || fail "--unpin left $(ls "$STATE")"
echo "ok: a damaged saved state: one warning and a fresh start"
