#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# together.sh - completion programs of several builds, timed in the same I/O.
#
# bench/cost.sh runs one tool at a time, so a change's effect competes with
# the machine's drift between runs. Here every build's collector (and any
# bench/bound.bpf.c program) is attached at once to block_rq_complete; each
# program's own run_time_ns / run_cnt over the same fio run (4 KiB randread,
# io_uring, QD32, direct, on a loop device over /dev/shm) is its cost per
# completion. Programs attached together share the caches, so each costs a
# little more than alone: compare them with each other, not with cost.sh.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
RUNS=${RUNS:-3}
RUNTIME=${RUNTIME:-5}
MODE=hist
ROTATE=0
FIRST=''
BUILD=${BUILD:-$ROOT/build-bench}
CMDLINE="bash bench/together.sh${*:+ $*}"

usage() {
	cat <<EOF
Usage: bash bench/together.sh [OPTIONS] IOLAT|bound-NAME...

Attaches every given iolat build (its collector, as 'iolat hist -D -O', or
'iolat serve' with --serve) and every bound-NAME program of
bench/bound.bpf.c at once, runs fio RUNS times and prints each one's BPF run
time per completion, per run. Needs root.

Bounds (bench/bound.bpf.c says what each does): bound-empty, bound-clock,
bound-slot (one series), bound-disk (per disk and op, hashed), bound-dense
(the same, a per-CPU array by queue id), bound-kval (bound-disk with iolat's
key and value), bound-views (that with account()'s work by bit length),
bound-views-dense (bound-views by a dense index by queue id, iolat's rows),
bound-cgroup (bound-views by cgroup too, shared values: serve's shape).

Options:
  --runs N       fio runs (default 3; env RUNS)
  --runtime S    seconds per run (default 5; env RUNTIME)
  --serve        run each iolat as 'serve' (per workload, shared values)
  --rotate       attach anew for each run, a different tool first each time
                 (the first program at the hook pays the request's cache
                 misses for all: use this to compare builds, with RUNS a
                 multiple of the number of tools)
  --first NAME   attach NAME (a bound-NAME or an iolat build) first in every
                 run, not timed: it takes the first program's cache misses,
                 so the timed tools meet the request as warm as each other
  -h, --help     this help

Environment: BUILD (default build-bench: where bpfload and
bench/bound.bpf.o are, from 'make OUT=build-bench helpers').

Examples:
  bash bench/together.sh build-bench/iolat /tmp/old/build-bench/iolat bound-disk
  bash bench/together.sh --rotate --runs 6 build-bench/iolat bound-slot bound-disk \
      bound-dense bound-kval bound-views bound-views-dense
  bash bench/together.sh --serve --rotate --runs 4 build-bench/iolat bound-slot bound-disk \
      bound-cgroup
  IOLAT_TEST_NO_RESTAMP=1 bash bench/together.sh --rotate --runs 6 build-bench/iolat \
      OLD/build-bench/iolat bound-slot bound-dense bound-views-dense
                 (the stamp path: the completion program alone, as on
                 kernels without the plug clock)
EOF
}

die() {
	echo "together.sh: $*" >&2
	exit 1
}

TOOLS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) [ $# -ge 2 ] || die "--runs needs a value"; RUNS=$2; shift 2 ;;
	--runtime) [ $# -ge 2 ] || die "--runtime needs a value"; RUNTIME=$2; shift 2 ;;
	--serve) MODE=serve; shift ;;
	--rotate) ROTATE=1; shift ;;
	--first) [ $# -ge 2 ] || die "--first needs a value"; FIRST=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) usage >&2; die "unknown option '$1'" ;;
	*) TOOLS+=("$1"); shift ;;
	esac
done
[ ${#TOOLS[@]} -gt 0 ] || { usage >&2; die "name at least one iolat build or bound-NAME"; }
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer, not '$RUNS'"
[[ "$RUNTIME" =~ ^[1-9][0-9]*$ ]] || die "--runtime must be a positive integer, not '$RUNTIME'"
[ "$(id -u)" = 0 ] || die "needs root"
command -v fio >/dev/null || die "needs fio (apt-get install fio)"

IMG=/dev/shm/iolat-together.$$.img
WORK=$(mktemp -d /tmp/iolat-together.XXXXXX)
LOOP='' PIDS=()
STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
detach_all() {
	if [ ${#PIDS[@]} -gt 0 ]; then
		kill -INT "${PIDS[@]}" 2>/dev/null || true
		wait "${PIDS[@]}" 2>/dev/null || true
	fi
	PIDS=()
}

cleanup() {
	detach_all
	[ -z "$LOOP" ] || losetup -d "$LOOP"
	rm -f "$IMG"
	rm -rf "$WORK"
	sysctl -qw kernel.bpf_stats_enabled="$STATS_OLD"
}
trap cleanup EXIT

dd if=/dev/zero of="$IMG" bs=1M count=512 status=none
LOOP=$(losetup --direct-io=on -f --show "$IMG")
sysctl -qw kernel.bpf_stats_enabled=1

# The id of the completion program process $1 holds, once attached.
complete_prog_of() {
	local i id
	for ((i = 0; i < 100; i++)); do
		while read -r id; do
			if bpftool prog show id "$id" -j 2>/dev/null | python3 -c '
import json, sys
n = json.load(sys.stdin).get("name", "")
sys.exit(not (n.startswith("rq_complete") or n.startswith("bound_")))'; then
				echo "$id"
				return
			fi
		done < <(awk '/^prog_id:/ { print $2 }' /proc/"$1"/fdinfo/* 2>/dev/null | sort -un)
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
}

# Starts tool $1 in the background; its pid and completion program id are
# appended to PIDS and IDS[$2].
attach_tool() {
	local t=$1 i=$2 log id
	log=$WORK/$i.log
	case "$t" in
	bound-*)
		"$BUILD/bpfload" "$BUILD/bench/bound.bpf.o" "$(echo "bound_${t#bound-}" | tr - _)" >"$log" 2>&1 &
		;;
	*)
		if [ "$MODE" = serve ]; then
			"$t" serve --web.listen-address=127.0.0.1:$((40000 + RANDOM % 20000)) >"$log" 2>&1 &
		else
			"$t" hist -D -O >"$log" 2>&1 &
		fi
		;;
	esac
	PIDS+=($!)
	id=$(complete_prog_of "$!")
	[ -n "$id" ] || { cat "$log" >&2; die "$t attached no completion program"; }
	[ "$i" = first ] || IDS[i]=$id
}

# Attaches every tool, the first at position $1 of the list: programs at one
# tracepoint run in the order they were attached, and the first pays for
# bringing the request and its queue and disk into the cache, so --rotate
# moves that charge around the tools from run to run.
attach_all() {
	local n=${#TOOLS[@]} k i
	IDS=()
	[ -z "$FIRST" ] || attach_tool "$FIRST" first
	for ((k = 0; k < n; k++)); do
		i=$(((k + $1) % n))
		attach_tool "${TOOLS[i]}" "$i"
	done
	sleep 1
}

for t in "${TOOLS[@]}" ${FIRST:+"$FIRST"}; do
	case "$t" in
	bound-*) ;;
	*) [ -x "$t" ] || die "$t is not an iolat binary" ;;
	esac
done

snapshot() {
	local i
	for ((i = 0; i < ${#TOOLS[@]}; i++)); do
		bpftool prog show id "${IDS[i]}" -j | python3 -c '
import json, sys
p = json.load(sys.stdin)
print(p.get("run_time_ns", 0), p.get("run_cnt", 0))'
	done
}

echo "command:  $CMDLINE"
echo "date:     $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine:  $(nproc) CPUs, $(uname -sr)"
echo "workload: fio randread 4k io_uring direct QD32, ${RUNTIME} s/run, $LOOP over /dev/shm; iolat as $MODE"
echo "order:    ${FIRST:+$FIRST first (untimed), then }$([ "$ROTATE" = 1 ] && echo "attached anew each run, the first tool rotating" || echo "attached once, in the order given")"
[ "$ROTATE" = 1 ] || attach_all 0
: >"$WORK/all"
for ((r = 1; r <= RUNS; r++)); do
	[ "$ROTATE" = 0 ] || attach_all $(((r - 1) % ${#TOOLS[@]}))
	snapshot >"$WORK/before"
	fio --name=together --filename="$LOOP" --ioengine=io_uring --rw=randread --bs=4k --direct=1 \
		--iodepth=32 --time_based --runtime="$RUNTIME" >/dev/null
	snapshot >"$WORK/after"
	[ "$ROTATE" = 0 ] || detach_all
	echo
	echo "run $r$([ "$ROTATE" = 1 ] && echo ", ${TOOLS[(r - 1) % ${#TOOLS[@]}]} first")"
	# With bound-slot in the run, each one's ratio to it too: issue 29's
	# targets are set against that bound.
	paste -d' ' "$WORK/before" "$WORK/after" | awk -v names="${TOOLS[*]}" -v all="$WORK/all" '
		BEGIN { split(names, n, " ") }
		{ cnt[NR] = $4 - $2; ns[NR] = cnt[NR] > 0 ? ($3 - $1) / cnt[NR] : 0 }
		n[NR] == "bound-slot" && cnt[NR] > 0 { slot = ns[NR] }
		END {
			for (i = 1; i <= NR; i++) {
				if (cnt[i] <= 0) { printf "  %-40s no runs\n", n[i]; continue }
				printf "  %-40s %7.1f ns/run  (%d runs)", n[i], ns[i], cnt[i]
				if (slot) printf "  %5.2fx bound-slot", ns[i] / slot
				printf "\n"
				printf "%d %s %f %f\n", i, n[i], ns[i], slot ? ns[i] / slot : 0 >> all
			}
		}'
done

# Medians over the runs, each tool's ns per run and ratio to bound-slot.
echo
echo "median of $RUNS runs"
python3 - "$WORK/all" <<'PY'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    i, name, ns, ratio = line.split()
    by.setdefault((int(i), name), []).append((float(ns), float(ratio)))
for (i, name), v in sorted(by.items()):
    ns = statistics.median(x for x, _ in v)
    r = statistics.median(y for _, y in v)
    print(f"  {name:<40} {ns:7.1f} ns/run" + (f"  {r:5.2f}x bound-slot" if r else ""))
PY
