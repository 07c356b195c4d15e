#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# pagecache.sh - what `iolat trace --syscalls` (syscall and page-cache
# linkage) costs, against `iolat trace` without it and against no tracer,
# side by side in one run, modes interleaved, rounds repeated. Kernel BPF
# statistics on (run_time_ns per program, summed over iolat's programs).
# Three workloads per mode and round:
#   syscalls  dd bs=1 from /dev/zero to /dev/null: listed syscalls (read,
#             write) that do no block I/O: BPF ns and wall ns per syscall
#   buffered  dd of 4 KiB buffered writes to a file on ext4 on a loop device
#             over /dev/shm, then sync: BPF ns per write syscall (the
#             dirtying and syscall programs) and per block I/O (the block
#             programs, the page walk included), wall ns per write
#   direct    fio 4 KiB random direct reads, io_uring QD32, on the same
#             loop device: BPF ns per I/O, IOPS
# Usage: bash bench/pagecache.sh [ROUNDS [SAMPLE]]   (default 3 rounds, -s 100)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
IOLAT=${IOLAT:-$ROOT/build-bench/iolat}
ROUNDS=${1:-3}
SAMPLE=${2:-100}
[ "$(id -u)" = 0 ] || { echo "pagecache.sh: needs root" >&2; exit 1; }
[ -x "$IOLAT" ] || { echo "build first: make OUT=build-bench" >&2; exit 1; }
for c in fio bpftool mkfs.ext4 python3; do
	command -v $c >/dev/null || { echo "pagecache.sh: needs $c" >&2; exit 1; }
done

WORK=$(mktemp -d /dev/shm/iolat-bench-pc.XXXXXX)
LOOP=''
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	mountpoint -q "$WORK/mnt" && umount "$WORK/mnt"
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	sysctl -q kernel.bpf_stats_enabled="$STATS_WAS"
	rm -rf "$WORK"
}
trap cleanup EXIT
sysctl -q kernel.bpf_stats_enabled=1
truncate -s 2G "$WORK/disk.img"
LOOP=$(losetup --direct-io=on -f --show "$WORK/disk.img")
DISK=${LOOP#/dev/}
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP"
mkdir "$WORK/mnt"
mount -o noinit_itable "$LOOP" "$WORK/mnt"
# fio reads the device's last GiB, past the file system's used blocks.
FIO_OFFSET=1G

# bpf_ns PID: the summed run_time_ns of the programs PID holds, and per
# name ("total name=ns ...").
bpf_ns() {
	local ids
	ids=$(grep -hs '^prog_id:' "/proc/$1/fdinfo/"* | awk '{ print $2 }' | sort -u | paste -sd,)
	[ -n "$ids" ] || { echo 0; return; }
	bpftool -j prog show | python3 -c '
import json, sys
ids = {int(i) for i in sys.argv[1].split(",")}
progs = [p for p in json.load(sys.stdin) if p["id"] in ids]
print(sum(p.get("run_time_ns", 0) for p in progs),
      " ".join("%s=%d" % (p["name"], p.get("run_time_ns", 0)) for p in progs))' "$ids"
}

# group NAMES_NS PATTERN: the ns of the programs whose name matches PATTERN.
group() { tr ' ' '\n' <<<"$1" | awk -F= -v p="$2" '$1 ~ p { s += $2 } END { print s + 0 }'; }

# run MODE ROUND: prints one line per workload: "mode workload units bpf_ns wall_ns extra".
run() {
	local mode=$1 pid='' before after b a n t0 t1 ios bnames anames
	case $mode in
	none) ;;
	trace) "$IOLAT" trace -s "$SAMPLE" -d "$DISK" -w "$WORK/rec.$2.$RANDOM" 2>"$WORK/err" & pid=$! ;;
	syscalls) "$IOLAT" trace --syscalls -s "$SAMPLE" -d "$DISK" -w "$WORK/rec.$2.$RANDOM" 2>"$WORK/err" & pid=$! ;;
	esac
	if [ -n "$pid" ]; then
		for _ in $(seq 1 100); do
			grep -q Tracing "$WORK/err" 2>/dev/null && break
			sleep 0.1
		done
	fi
	snap() { if [ -n "$pid" ]; then bpf_ns "$pid"; else echo 0; fi; }

	# syscalls: 2 x 1 000 000 listed syscalls without block I/O.
	n=1000000
	before=$(snap)
	t0=$(date +%s%N)
	dd if=/dev/zero of=/dev/null bs=1 count=$n status=none
	t1=$(date +%s%N)
	after=$(snap)
	echo "$mode syscalls $((2 * n)) $((${after%% *} - ${before%% *})) $((t1 - t0)) -"

	# buffered: 16 384 writes of 4 KiB (64 MiB), then sync.
	n=16384
	rm -f "$WORK/mnt/f"
	sync
	before=$(snap)
	ios=$(awk -v d="$DISK" '$3 == d { print $8 }' /proc/diskstats)
	t0=$(date +%s%N)
	dd if=/dev/zero of="$WORK/mnt/f" bs=4k count=$n status=none
	t1=$(date +%s%N)
	sync
	after=$(snap)
	ios=$(($(awk -v d="$DISK" '$3 == d { print $8 }' /proc/diskstats) - ios))
	if [ -n "$pid" ]; then
		read -r b bnames <<<"$before"
		read -r a anames <<<"$after"
		# per write: syscall and dirtying programs; per I/O: the block ones
		local sys_b sys_a
		sys_b=$(group "$bnames" '^trace_(se|sx|wd|wdp|ff)_')
		sys_a=$(group "$anames" '^trace_(se|sx|wd|wdp|ff)_')
		echo "$mode buffered $n $((sys_a - sys_b)) $((t1 - t0)) $ios:$((a - b - (sys_a - sys_b)))"
	else
		echo "$mode buffered $n 0 $((t1 - t0)) $ios:0"
	fi

	# direct: fio randread QD32 for 5 s.
	before=$(snap)
	fio --name=d --filename="$LOOP" --offset=$FIO_OFFSET --rw=randread --bs=4k \
		--ioengine=io_uring --iodepth=32 --direct=1 --time_based --runtime=5 \
		--output-format=json >"$WORK/fio.json"
	after=$(snap)
	ios=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["read"]["total_ios"])' "$WORK/fio.json")
	echo "$mode direct $ios $((${after%% *} - ${before%% *})) 5000000000 -"
	if [ -n "$pid" ]; then
		kill -INT "$pid"
		wait "$pid" || true
	fi
	rm -f "$WORK"/rec.*
}

echo "loop device $LOOP over /dev/shm (ext4 on it); -s $SAMPLE; $ROUNDS rounds; $(uname -r)"
for ((r = 1; r <= ROUNDS; r++)); do
	for mode in $( ((r % 2)) && echo "none trace syscalls" || echo "syscalls trace none"); do
		run "$mode" "$r"
	done
done | tee "$WORK/raw" | python3 "$HERE/pagecache_report.py"
