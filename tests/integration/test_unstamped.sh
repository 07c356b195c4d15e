# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A disk whose requests the kernel does not stamp: with iostats off and no
# scheduler, start_time_ns is left unwritten (stale from the request's last
# use, not zero). iolat must not time from it: the first such completion is
# counted as unseen and brings in the request-map fallback, which times the
# rest from its own block_io_start/block_rq_issue stamps. Once it is
# attached, requests of disks the kernel does stamp leave nothing in its map.
source tests/integration/lib.sh

N=120
make_loop 32
dev=$LOOP
name=${dev#/dev/}
echo 0 >"/sys/block/$name/queue/iostats"
on_exit "echo 1 > /sys/block/$name/queue/iostats"
[ "$(grep -o '\[none\]' "/sys/block/$name/queue/scheduler")" = "[none]" ] ||
	skip "$name has a scheduler: the kernel stamps its requests anyway"
make_cgroup unstamped
cg=$CG

start_iolat "$WORK/out" hist -D -O --json -c "$cg" -d "$name"
in_cgroup "$cg" "$DIO" read "$dev" 1 4096 || fail "dio warm-up"
wait_for_stderr "$WORK/out" "attached the request-map fallback" ||
	fail "no fallback attached for an unstamped disk"
in_cgroup "$cg" "$DIO" read "$dev" $N 4096 || fail "dio read"
stop_iolat INT
assert_detached
assert_eq "reads" $((N + 1)) "$(jget "$WORK/out" "s('$name','read')['ios']")"
assert_eq "total timed" $N "$(jget "$WORK/out" "s('$name','read')['total']['count']")"
assert_eq "total unseen" 1 "$(jget "$WORK/out" "s('$name','read')['total']['unseen']")"
dcount=$(jget "$WORK/out" "s('$name','read')['device']['count']")
dunseen=$(jget "$WORK/out" "s('$name','read')['device']['unseen']")
assert_eq "device timed + unseen" $((N + 1)) $((dcount + dunseen))
# Plausible times: a loop read in /dev/shm takes microseconds, not the
# minutes a stale start_time_ns would give.
python3 - "$(jget "$WORK/out" "s('$name','read')['total']['max_ns']")" <<'PY' ||
import sys
assert float(sys.argv[1]) < 1e9, sys.argv[1]
PY
	fail "total time from a stale timestamp"
assert_eq "device <= total" True "$(jget "$WORK/out" \
	"s('$name','read')['device']['sum_ns'] <= s('$name','read')['total']['sum_ns'] or s('$name','read')['device']['count'] != $N")"
echo "ok: unstamped disk timed through the fallback"

# The fallback attached, a stamped disk's requests must not stay in the
# request map: since 6.10 the kernel marks a start stamped only after
# block_io_start, so the creation program keeps one that the issue program
# must drop (before, every such request left an entry until the LRU evicted
# it; keys are request addresses, reused, so the 500 left 64 on 6.18).
# Other users' I/O on this machine may hold a few entries at any time.
M=500
make_loop 32
stamped=${LOOP#/dev/}
start_iolat "$WORK/out2" hist -D -O --json -c "$cg"
in_cgroup "$cg" "$DIO" read "$dev" 1 4096 || fail "dio warm-up"
wait_for_stderr "$WORK/out2" "attached the request-map fallback" ||
	fail "no fallback attached for an unstamped disk"
in_cgroup "$cg" "$DIO" read "$LOOP" $M 4096 || fail "dio read (stamped disk)"
left=$(pid_map_entries "$IOLAT_PID" rq_starts)
stop_iolat INT
assert_detached
assert_eq "reads (stamped disk)" $M "$(jget "$WORK/out2" "s('$stamped','read')['ios']")"
[ "${left:-x}" -lt 16 ] 2>/dev/null || fail "request map: $left entries left after $M requests of a stamped disk"
echo "ok: a stamped disk's $M requests left $left entries in the request map"
