#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# selfcost.sh - iolat's own measure of its BPF programs' time per run
# (iolat_bpf_sampled_seconds_total / iolat_bpf_sampled_runs_total: 1 run in
# 64 timed inside the program) beside the kernel's BPF statistics
# (--bpf.stats) and what those charge an empty program at the same hook
# (bench/bound.bpf.c's bound_empty), over the same I/O, round by round.
# tests/integration/test_selfcost.sh checks the same comparison with bounds;
# this prints the figures for BENCHMARKS.md.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
ROUNDS=${ROUNDS:-5}
IOS=${IOS:-50000}
RUNTIME=${RUNTIME:-5}
WORKLOAD=dio
IOLAT=${IOLAT:-$ROOT/build/iolat}
BUILD=${BUILD:-$(dirname "$IOLAT")}
CMDLINE="bash bench/selfcost.sh${*:+ $*}"

usage() {
	cat <<EOF
Usage: bash bench/selfcost.sh [OPTIONS]

Runs 'iolat serve --bpf.stats' and an empty program on block_rq_complete
beside it, then ROUNDS rounds of I/O on a loop device over /dev/shm, and
prints per round and as medians: the completion program's time per run by
the kernel's statistics, by its own sampled clock reads, and the kernel's
charge for the empty program (the floor). Needs root.

Options:
  --rounds N     rounds (default 5; env ROUNDS)
  --ios N        4 KiB O_DIRECT reads per round, one at a time (default
                 50000; env IOS)
  --fio          per round, fio randread 4k io_uring QD32 for RUNTIME s instead
  --runtime S    seconds of fio per round (default 5; env RUNTIME)
  --iolat PATH   iolat binary (default build/iolat; env IOLAT); dio, bpfload
                 and bench/bound.bpf.o are taken from its directory (env BUILD)
  -h, --help     this help
EOF
}

die() {
	echo "selfcost.sh: $*" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
	--ios) [ $# -ge 2 ] || die "--ios needs a value"; IOS=$2; shift 2 ;;
	--runtime) [ $# -ge 2 ] || die "--runtime needs a value"; RUNTIME=$2; shift 2 ;;
	--fio) WORKLOAD=fio; shift ;;
	--iolat) [ $# -ge 2 ] || die "--iolat needs a value"; IOLAT=$2; BUILD=$(dirname "$2"); shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done
for n in "$ROUNDS" "$IOS" "$RUNTIME"; do
	[[ "$n" =~ ^[1-9][0-9]*$ ]] || die "'$n' is not a positive integer"
done
[ "$(id -u)" = 0 ] || die "needs root"
[ -x "$IOLAT" ] || die "$IOLAT is not an iolat binary"
for f in dio bpfload bench/bound.bpf.o; do
	[ -e "$BUILD/$f" ] || die "needs $BUILD/$f (make helpers)"
done
[ "$WORKLOAD" = dio ] || command -v fio >/dev/null || die "needs fio (apt-get install fio)"

IMG=/dev/shm/iolat-selfcost.$$.img
WORK=$(mktemp -d /tmp/iolat-selfcost.XXXXXX)
LOOP='' PIDS=()
cleanup() {
	if [ ${#PIDS[@]} -gt 0 ]; then
		kill -TERM "${PIDS[@]}" 2>/dev/null || true
		wait "${PIDS[@]}" 2>/dev/null || true
	fi
	[ -z "$LOOP" ] || losetup -d "$LOOP"
	rm -rf "$IMG" "$WORK"
}
trap cleanup EXIT

truncate -s 512M "$IMG"
LOOP=$(losetup --direct-io=on -f --show "$IMG")

"$BUILD/bpfload" "$BUILD/bench/bound.bpf.o" bound_empty >"$WORK/floor.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do grep -q '^attached' "$WORK/floor.log" && break; sleep 0.1; done
floor_id=$(awk '/^prog_id:/ { print $2 }' /proc/"${PIDS[0]}"/fdinfo/* 2>/dev/null | sort -u)
[ -n "$floor_id" ] || die "bpfload attached nothing: $(cat "$WORK/floor.log")"

port=$((40000 + RANDOM % 20000))
url=http://127.0.0.1:$port/metrics
"$IOLAT" serve --web.listen-address=127.0.0.1:$port --bpf.stats 2>"$WORK/serve.log" &
PIDS+=($!)
for _ in $(seq 1 100); do grep -q 'listening on' "$WORK/serve.log" && break; sleep 0.1; done
curl -sf "$url" >"$WORK/m0" || die "serve did not answer: $(cat "$WORK/serve.log")"
prog=$(grep -o '^iolat_bpf_self_runs_total{program="rq_complete_[a-z]*"}' "$WORK/m0" |
	sed 's/.*program="\([^"]*\)".*/\1/')
[ -n "$prog" ] || die "no completion program in serve's metrics"

echo "command:  $CMDLINE"
echo "date:     $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine:  $(nproc) CPUs, $(uname -sr)"
if [ "$WORKLOAD" = dio ]; then
	echo "workload: $IOS 4 KiB O_DIRECT reads per round, one at a time, $LOOP over /dev/shm"
else
	echo "workload: fio randread 4k io_uring direct QD32, $RUNTIME s per round, $LOOP over /dev/shm"
fi
dirs=()
for r in $(seq 1 "$ROUNDS"); do
	d=$WORK/round$r
	mkdir "$d"
	bpftool prog show id "$floor_id" -j >"$d/f1"
	curl -sf "$url" >"$d/m1"
	if [ "$WORKLOAD" = dio ]; then
		"$BUILD/dio" read "$LOOP" "$IOS" 4096
	else
		fio --name=selfcost --filename="$LOOP" --rw=randread --bs=4k --direct=1 \
			--ioengine=io_uring --iodepth=32 --runtime="$RUNTIME" --time_based \
			--output="$d/fio.log" >/dev/null
	fi
	curl -sf "$url" >"$d/m2"
	bpftool prog show id "$floor_id" -j >"$d/f2"
	dirs+=("$d")
done
echo "program:  $prog; ns per run (kernel: run_time_ns / run_cnt; self: sampled; floor: bound_empty's kernel figure)"
python3 "$ROOT/tests/integration/selfcost_compare.py" "$prog" "${dirs[@]}"
