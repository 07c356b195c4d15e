#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# syscalls.sh - what the system-call service time (serve's syscall_* families,
# top -S: bpf/sysio.bpf.c) costs each positional file I/O call.
#
# COUNT 1-byte pread64 calls of a file in the page cache (bench/pread_loop.c:
# nothing but the call itself, ~hundreds of ns, so the programs' share is as
# large as it gets), timed in three states per round, their order rotated
# every round: "none" (no iolat), "top" (iolat top: the collector only, whose
# block programs these calls never reach) and "top -S" (the twelve system-call
# programs attached as well). Then one run of "top -S" with the kernel's BPF
# statistics on: the run time of the entry and exit programs per call, which
# the timed states cannot split from the noise. Runs under
# flock /tmp/iolat-bench.lock, so no other benchmark overlaps it.
#
# Usage: bash bench/syscalls.sh   (ROUNDS=5 COUNT=200000 IOLAT=build/iolat)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
ROUNDS=${ROUNDS:-5}
COUNT=${COUNT:-200000}
IOLAT=${IOLAT:-$ROOT/build/iolat}
[ "$(id -u)" -eq 0 ] || { echo "syscalls.sh: needs root" >&2; exit 1; }
[ -x "$IOLAT" ] || { echo "syscalls.sh: no $IOLAT (make first)" >&2; exit 1; }
if [ -z "${IOLAT_BENCH_LOCKED:-}" ]; then
	IOLAT_BENCH_LOCKED=1 exec flock /tmp/iolat-bench.lock bash "$0" "$@"
fi

WORK=$(mktemp -d /tmp/iolat-bench-syscalls.XXXXXX)
TOP_PID=
cleanup() {
	[ -n "$TOP_PID" ] && kill "$TOP_PID" 2>/dev/null && wait "$TOP_PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
cc -O2 -Wall -Wextra -Werror "$HERE/pread_loop.c" -o "$WORK/pread_loop"
head -c 4096 /dev/urandom >"$WORK/file"

# start_top ARGS...: iolat top in the background, once it is attached.
start_top() {
	"$IOLAT" top -j "$@" 3600 >/dev/null 2>"$WORK/top.err" &
	TOP_PID=$!
	for _ in $(seq 1 100); do
		grep -q Tracing "$WORK/top.err" && return 0
		sleep 0.1
	done
	echo "syscalls.sh: iolat top did not start: $(cat "$WORK/top.err")" >&2
	exit 1
}
stop_top() { kill "$TOP_PID"; wait "$TOP_PID" || true; TOP_PID=; }

# run STATE: ns per call in that state.
run() {
	case $1 in
	top) start_top ;;
	top-S) start_top -S ;;
	esac
	"$WORK/pread_loop" "$WORK/file" "$COUNT"
	[ "$1" = none ] || stop_top
}

states=(none top top-S)
declare -A ns
for r in $(seq 1 "$ROUNDS"); do
	for i in 0 1 2; do
		s=${states[$(((i + r) % 3))]}
		ns[$s]="${ns[$s]:-} $(run "$s")"
	done
done

# The BPF statistics run: the system-call programs' run time per call.
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
start_top -S
ids=$(grep -rhs '^prog_id:' "/proc/$TOP_PID/fdinfo/" | awk '{ print $2 }' | sort -u)
snap() { for id in $ids; do bpftool prog show id "$id" -j; echo; done; }
before=$(snap)
"$WORK/pread_loop" "$WORK/file" "$COUNT" >/dev/null
after=$(snap)
stop_top
sysctl -qw kernel.bpf_stats_enabled="$old_stats"

python3 - "$COUNT" "${ns[none]}" "${ns[top]}" "${ns[top-S]}" "$before" "$after" <<'PY'
import json, statistics, sys
count = int(sys.argv[1])
runs = {s: [float(x) for x in sys.argv[i].split()] for i, s in ((2, "none"), (3, "top"), (4, "top -S"))}
def progs(text):
    out = {}
    for line in text.splitlines():
        if line.strip():
            p = json.loads(line)
            if p.get("name", "").startswith(("enter_p", "exit_p")):
                out[p["name"]] = (p.get("run_time_ns", 0), p.get("run_cnt", 0))
    return out
b, a = progs(sys.argv[5]), progs(sys.argv[6])
print(f"{count} 1-byte pread64 calls of a cached file, ns per call (median of {len(runs['none'])} rounds, all rounds):")
base = statistics.median(runs["none"])
for s, v in runs.items():
    m = statistics.median(v)
    print(f"  {s:8s} {m:8.1f}  ({m - base:+.1f} vs none)   [{' '.join(f'{x:.1f}' for x in v)}]")
t = sum(a[n][0] - b.get(n, (0, 0))[0] for n in a)
c = {n: a[n][1] - b.get(n, (0, 0))[1] for n in a}
calls = c.get("enter_pread64", 0)
print(f"BPF statistics (one run of top -S): enter_pread64 ran {calls}, exit_pread64 {c.get('exit_pread64', 0)} times;")
print(f"  the system-call programs' run time: {t / max(calls, 1):.1f} ns per call (entry + exit)")
PY
