#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# stamps.sh - whether iolat's latency views are the times the block
# tracepoints give the same I/Os, on this host's kernel (issue 29's truth
# bound, where 6.9+ kernels cache the clock in the task's plug).
#
# Per workload and round, on a loop device over a file in /dev/shm:
# `iolat hist --json -d LOOP` and `iolat trace --json --max-rate 0 -d LOOP`
# attached together over a bounded number of I/Os, then
# tests/integration/stamp_truth.py sets hist's device and total p50/p90/p99
# against the exact percentiles of the times trace took at the tracepoints
# (block_rq_issue -> block_rq_complete; block_getrq -> block_rq_complete).
# The trace must lose no record (stamp_truth needs the same count as hist):
# a large ring buffer, and a run that lost some is reported as void.
# Workloads: plain synchronous 4 KiB direct reads one at a time (dio read);
# fio io_uring 4 KiB randread QD32 submitted 16 at a time (one plug per
# submission); 1 MiB direct reads (dd) split into 128 KiB requests behind
# mq-deadline, whose pieces wait for dispatch.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
ROUNDS=${ROUNDS:-3}
IOS=${IOS:-20000}
SPLIT_READS=${SPLIT_READS:-512}
SIZE_MIB=${SIZE_MIB:-1024}
IOLAT=${IOLAT:-$ROOT/build/iolat}
DIO=${DIO:-$ROOT/build/dio}
CMDLINE="bash bench/stamps.sh${*:+ $*}"

usage() {
	cat <<EOF
Usage: bash bench/stamps.sh [OPTIONS]

For each workload, ROUNDS times: iolat hist and iolat trace (uncapped)
attached together on a loop device over /dev/shm for a bounded number of
I/Os; hist's device and total p50/p90/p99 against the tracepoint times of
the same I/Os (tests/integration/stamp_truth.py: within max(2 us, 2 %)
plus the slot's width). Prints a table per workload and the worst
deviation. Needs root.

Workloads:
  sync    dio read: direct 4 KiB reads, one at a time
  uring   fio io_uring 4 KiB randread, QD32, iodepth_batch_submit=16
  split   dd: 1 MiB direct reads, split into 128 KiB requests
          (max_sectors_kb 128), behind mq-deadline

Options:
  --rounds N       rounds of every workload (default 3; env ROUNDS)
  --ios N          4 KiB reads per run of sync and uring (default 20000; env IOS)
  --split-reads N  1 MiB reads per run of split (default 512, 8 requests
                   each; env SPLIT_READS); at most --size
  --size MIB       size of the /dev/shm backing file (default 1024; env SIZE_MIB)
  --iolat PATH     iolat binary (default build/iolat; env IOLAT)
  -h, --help       this help

Environment: DIO (default build/dio: 'make helpers').

Examples:
  flock /tmp/iolat-bench.lock bash bench/stamps.sh
  bash bench/stamps.sh --rounds 1 --iolat /tmp/old/build/iolat
EOF
}

die() {
	echo "stamps.sh: $*" >&2
	exit 1
}

is_uint() { [[ "$1" =~ ^[1-9][0-9]*$ ]]; }

while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
	--rounds=*) ROUNDS=${1#*=}; shift ;;
	--ios) [ $# -ge 2 ] || die "--ios needs a value"; IOS=$2; shift 2 ;;
	--ios=*) IOS=${1#*=}; shift ;;
	--split-reads) [ $# -ge 2 ] || die "--split-reads needs a value"; SPLIT_READS=$2; shift 2 ;;
	--split-reads=*) SPLIT_READS=${1#*=}; shift ;;
	--size) [ $# -ge 2 ] || die "--size needs a value"; SIZE_MIB=$2; shift 2 ;;
	--size=*) SIZE_MIB=${1#*=}; shift ;;
	--iolat) [ $# -ge 2 ] || die "--iolat needs a value"; IOLAT=$2; shift 2 ;;
	--iolat=*) IOLAT=${1#*=}; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done

is_uint "$ROUNDS" || die "--rounds must be a positive integer, not '$ROUNDS'"
is_uint "$IOS" || die "--ios must be a positive integer, not '$IOS'"
is_uint "$SPLIT_READS" || die "--split-reads must be a positive integer, not '$SPLIT_READS'"
is_uint "$SIZE_MIB" || die "--size must be a positive integer (MiB), not '$SIZE_MIB'"
[ "$SPLIT_READS" -le "$SIZE_MIB" ] ||
	die "--split-reads ($SPLIT_READS MiB) must fit in --size ($SIZE_MIB MiB)"
[ "$(id -u)" -eq 0 ] || die "needs root (BPF, losetup)"
for c in fio losetup python3 dd; do
	command -v "$c" >/dev/null || die "'$c' not found (apt-get install it)"
done
[ -x "$IOLAT" ] || die "$IOLAT not found or not executable (make, or --iolat PATH)"
[ -x "$DIO" ] || die "$DIO not found (make helpers, or DIO=PATH)"

WORK=$(mktemp -d /tmp/iolat-stamps.XXXXXX)
IMG=/dev/shm/iolat-stamps.$$.img
LOOP="" DISK="" HIST_PID="" TRACE_PID="" WORKLOAD_PID=""

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	set +e
	for p in $HIST_PID $TRACE_PID $WORKLOAD_PID; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
	rm -f "$IMG"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_banner PID LOG: until LOG says the tool is tracing (30 s at most).
wait_banner() {
	local i
	for ((i = 0; i < 300; i++)); do
		grep -q Tracing "$2" 2>/dev/null && return 0
		kill -0 "$1" 2>/dev/null || { cat "$2" >&2; die "iolat exited while starting"; }
		sleep 0.1
	done
	cat "$2" >&2
	die "iolat printed no 'Tracing' in 30 s"
}

# The queue settings a workload wants: the split one mq-deadline and small
# requests, the others the loop device's own (none, its largest).
queue_for() {
	local q=/sys/block/$DISK/queue
	if [ "$1" = split ]; then
		echo mq-deadline >"$q/scheduler" || die "cannot set mq-deadline on $DISK"
		echo 128 >"$q/max_sectors_kb" || die "cannot set $DISK's max_sectors_kb"
	else
		echo none >"$q/scheduler"
		cat "$q/max_hw_sectors_kb" >"$q/max_sectors_kb"
	fi
}

# The workload, in the background so cleanup can end it by its pid.
run_workload() {
	case "$1" in
	sync) "$DIO" read "$LOOP" "$IOS" 4096 >/dev/null & ;;
	uring)
		fio --name=iolat-stamps --filename="$LOOP" --ioengine=io_uring --rw=randread --bs=4k \
			--direct=1 --iodepth=32 --iodepth_batch_submit=16 --number_ios="$IOS" \
			--size="${SIZE_MIB}M" --output="$2.fio" >/dev/null &
		;;
	split) dd if="$LOOP" of=/dev/null bs=1M count="$SPLIT_READS" iflag=direct status=none & ;;
	esac
	WORKLOAD_PID=$!
	wait "$WORKLOAD_PID" || die "workload $1 failed"
	WORKLOAD_PID=""
}

# run_one WORKLOAD ROUND: hist and trace over one run of WORKLOAD; appends
# stamp_truth's JSON (with the workload, round and records lost) to results.
run_one() {
	local base=$WORK/$1-$2 lost
	queue_for "$1"
	"$IOLAT" hist --json -d "$DISK" >"$base.hist" 2>"$base.hist.err" &
	HIST_PID=$!
	# hist attaches first: programs at one tracepoint run in the order they
	# were attached, so its clock reads come before trace's; trace's
	# heavier completion program between them would add ~3 us to hist.
	wait_banner "$HIST_PID" "$base.hist.err"
	"$IOLAT" trace --json --max-rate 0 --ringbuf-kib 65536 -d "$DISK" >"$base.trace" \
		2>"$base.trace.err" &
	TRACE_PID=$!
	wait_banner "$TRACE_PID" "$base.trace.err"
	run_workload "$1" "$base"
	sleep 0.5 # the last records through the ring buffer
	kill -INT "$HIST_PID" "$TRACE_PID"
	wait "$HIST_PID" || { cat "$base.hist.err" >&2; die "hist failed"; }
	wait "$TRACE_PID" || { cat "$base.trace.err" >&2; die "trace failed"; }
	HIST_PID="" TRACE_PID=""
	lost=$(sed -n 's/.* \([0-9]*\) lost .*/\1/p' "$base.trace.err")
	[ -n "$lost" ] || { cat "$base.trace.err" >&2; die "trace did not say how many records it lost"; }
	# Exit 1 is a verdict (a view off, or the counts differ), kept in the JSON.
	python3 "$ROOT/tests/integration/stamp_truth.py" --json "$base.hist" "$base.trace" \
		>"$base.truth" 2>"$base.truth.err" || [ $? = 1 ] ||
		{ cat "$base.truth.err" >&2; die "stamp_truth.py failed on $1, round $2"; }
	tail -1 "$base.truth" | python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
o.update(workload=sys.argv[1], round=int(sys.argv[2]), lost=int(sys.argv[3]))
print(json.dumps(o))' "$1" "$2" "$lost" >>"$WORK/results.jsonl"
}

# --- setup ---
dd if=/dev/zero of="$IMG" bs=1M count="$SIZE_MIB" status=none ||
	die "cannot write $SIZE_MIB MiB to $IMG"
LOOP=$(losetup --direct-io=on -f --show "$IMG") || die "losetup --direct-io=on failed on $IMG"
DISK=$(basename "$LOOP")

echo "command:  $CMDLINE"
echo "date:     $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine:  $(nproc) CPUs, $(uname -sr)"
echo "iolat:    $("$IOLAT" --version 2>&1 | head -1) ($IOLAT)"
echo "device:   $LOOP (--direct-io=on) over $SIZE_MIB MiB in /dev/shm"
echo "runs:     $ROUNDS rounds; sync and uring $IOS reads each, split $SPLIT_READS x 1 MiB"
echo "bound:    max(2 us, 2 %) of the tracepoint percentile + iolat's slot width"

: >"$WORK/results.jsonl"
for ((r = 1; r <= ROUNDS; r++)); do
	for w in sync uring split; do
		run_one "$w" "$r"
	done
done
queue_for sync

echo
python3 "$HERE/stamps_report.py" "$WORK/results.jsonl"
echo
echo "raw results in $WORK"
