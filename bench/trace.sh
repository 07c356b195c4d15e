#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# trace.sh - `iolat trace -s 1` against libbpf-tools biosnoop on the loop
# device's full rate: fio 4 KiB random reads, io_uring QD32, direct, on a
# loop device over /dev/shm, while each tracer writes every record to a file
# in /dev/shm (the terminal would be the bottleneck otherwise). The biosnoop
# is bench/biosnoop.bt, a bpftrace script on the block tracepoints:
# libbpf-tools' biosnoop and bpftrace's biosnoop.bt need kprobes or fentry,
# which these machines lack. Per run: fio's I/Os, the records each tool
# wrote, and the records it says it lost (iolat: its own count; bpftrace:
# its "Lost N events" lines). Tools interleave, rounds repeat; run as root.
# Usage: bash bench/trace.sh [ROUNDS [SECONDS]]   (default 3 rounds of 5 s)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
IOLAT=${IOLAT:-$ROOT/build-bench/iolat}
ROUNDS=${1:-3}
SECS=${2:-5}
[ "$(id -u)" = 0 ] || { echo "trace.sh: needs root" >&2; exit 1; }
[ -x "$IOLAT" ] || { echo "build first: make OUT=build-bench" >&2; exit 1; }
command -v fio >/dev/null || { echo "trace.sh: needs fio" >&2; exit 1; }

WORK=$(mktemp -d /dev/shm/iolat-bench-trace.XXXXXX)
LOOP=
cleanup() {
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rm -rf "$WORK"
}
trap cleanup EXIT
truncate -s 1G "$WORK/disk.img"
LOOP=$(losetup --direct-io=on -f --show "$WORK/disk.img")
DISK=${LOOP#/dev/}
MAJMIN=$(cat "/sys/block/$DISK/dev")
DEVT=$(((${MAJMIN%:*} << 20) | ${MAJMIN#*:}))

# run TOOL ROUND: one fio run under TOOL; prints "tool ios records lost".
run() {
	local tool=$1 out=$WORK/$1.$2 pid ios records lost
	rm -f "$out.rec"
	case $tool in
	iolat) "$IOLAT" trace -s 1 -d "$DISK" -w "$out.rec" 2>"$out.err" & ;;
	biosnoop) bpftrace "$HERE/biosnoop.bt" "$DEVT" >"$out.rec" 2>"$out.err" & ;;
	none) sleep 3600 & ;; # no tracer: the device's own rate (stopped with TERM)
	esac
	pid=$!
	sleep 2 # attached
	fio --name=t --filename="$LOOP" --rw=randread --bs=4k --ioengine=io_uring --iodepth=32 \
		--direct=1 --time_based --runtime="$SECS" --output-format=json >"$out.fio"
	sleep 1
	# SIGINT ends the tracers (they print their counts); background jobs of a
	# script ignore it, so the stand-in for "none" gets TERM.
	kill -"$([ "$tool" = none ] && echo TERM || echo INT)" "$pid" 2>/dev/null ||
		{ echo "$tool died: $(tail -3 "$out.err")" >&2; exit 1; }
	wait "$pid" || true
	ios=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]["read"]; print(j["total_ios"])' "$out.fio")
	if [ "$tool" = none ]; then
		records=0 lost=0
	elif [ "$tool" = iolat ]; then
		records=$(sed -n 's/^iolat: \([0-9]*\) records emitted, \([0-9]*\) lost.*/\1/p' "$out.err")
		lost=$(sed -n 's/^iolat: \([0-9]*\) records emitted, \([0-9]*\) lost.*/\2/p' "$out.err")
	else
		records=$(grep -c '^[0-9]' "$out.rec" || true)
		lost=$(cat "$out.rec" "$out.err" | awk '/^Lost [0-9]+ events/ { s += $2 } END { print s + 0 }')
	fi
	echo "$tool $ios $records $lost"
}

echo "loop device $LOOP over /dev/shm; fio randread 4k io_uring QD32 direct ${SECS}s; $ROUNDS rounds"
printf '%-9s %6s %10s %10s %10s %12s %9s\n' tool round fio_ios records lost records/s lost%
for ((r = 1; r <= ROUNDS; r++)); do
	for tool in $( ((r % 2)) && echo "none iolat biosnoop" || echo "biosnoop iolat none"); do
		read -r t ios rec lost < <(run "$tool" "$r")
		awk -v t="$t" -v r="$r" -v i="$ios" -v n="$rec" -v l="$lost" -v s="$SECS" 'BEGIN {
			printf "%-9s %6s %10s %10s %10s %12.0f %8.2f%%\n", t, r, i, n, l, n / s,
				n + l ? 100 * l / (n + l) : 0 }' 
	done
done
