#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# freshness.sh - how fresh is a scrape on a build whose scrape only reads
# (passes on the daemon's schedule, --maintenance.interval)?
#
# 1. Block counts: serve with a 1 m interval (so no pass runs), ROUNDS
#    times: N direct reads on a loop device of our own, then one scrape at
#    once; prints the change of iolat_block_completions_total and
#    _bytes_total for that disk against what was read, and the passes run.
# 2. Workload names: serve with INTERVAL (default 1s); a new cgroup (a
#    systemd service name) does one read, then the daemon is scraped every
#    20 ms until its workload series shows: prints the disk's count right
#    after the read (+1: counted before it is named) and how long the name
#    took, per round, against the interval plus the last pass's duration.
# Usage: IOLAT=build/iolat [DIO=...] [ROUNDS=5] [N=100] [INTERVAL=1s]
#        bash bench/freshness.sh   (root)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
IOLAT=${IOLAT:-$ROOT/build/iolat}
DIO=${DIO:-$(dirname "$IOLAT")/dio}
ROUNDS=${ROUNDS:-5}
N=${N:-100}
INTERVAL=${INTERVAL:-1s}
[ "$(id -u)" = 0 ] || { echo "freshness.sh: needs root" >&2; exit 1; }

if mountpoint -q /sys/fs/cgroup/blkio; then CGROOT=/sys/fs/cgroup/blkio; else CGROOT=/sys/fs/cgroup; fi
BASE=$CGROOT/iolat-fresh-$$
IMG=/dev/shm/iolat-fresh.$$.img
BODY=/dev/shm/iolat-fresh.$$.body
PID='' LOOP=''
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	[ -d "$BASE" ] && find "$BASE" -depth -type d -exec rmdir {} + 2>/dev/null
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rm -f "$IMG" "$BODY"
}
trap cleanup EXIT
truncate -s 64M "$IMG"
LOOP=$(losetup --direct-io=on -f --show "$IMG")
DISK=${LOOP#/dev/}
mkdir "$BASE"

PORT=0
start() {
	PORT=$((40000 + RANDOM % 20000))
	"$IOLAT" serve --web.listen-address=127.0.0.1:$PORT "$@" 2>/dev/null &
	PID=$!
	for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/-/healthy" >/dev/null && break; sleep 0.1; done
}
stop() {
	kill "$PID"
	wait "$PID" 2>/dev/null || true
	PID=''
}
scrape() { curl -sf -o "$BODY" "http://127.0.0.1:$PORT/metrics"; }
val() { awk -v m="$1" '$1 == m { v = $2 } END { print v + 0 }' "$BODY"; }

echo "== block counts, --maintenance.interval=1m: $N direct 4 KiB reads of $DISK, then one scrape"
start --maintenance.interval=1m
C="iolat_block_completions_total{device=\"$DISK\",op=\"read\"}"
B="iolat_block_bytes_total{device=\"$DISK\",op=\"read\"}"
for r in $(seq "$ROUNDS"); do
	scrape
	c0=$(val "$C") b0=$(val "$B")
	"$DIO" read "$LOOP" "$N" 4096
	scrape
	printf 'round %s: completions +%s (read %s), bytes +%s (read %s), passes so far %s\n' "$r" \
		$(($(val "$C") - c0)) "$N" $(($(val "$B") - b0)) $((N * 4096)) \
		"$(val iolat_maintenance_passes_total)"
done
stop

echo "== workload names, --maintenance.interval=$INTERVAL: one read in a new cgroup, scraped at once, then every 20 ms"
start --maintenance.interval="$INTERVAL"
for r in $(seq "$ROUNDS"); do
	mkdir "$BASE/fresh$r.service"
	scrape
	c0=$(val "$C")
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$1" read "$2" 1 4096' \
		"$BASE/fresh$r.service" "$DIO" "$LOOP"
	t0=$(date +%s.%N)
	scrape
	at_once=$(($(val "$C") - c0))
	for _ in $(seq 1500); do
		scrape
		grep -q "workload=\"fresh$r\"" "$BODY" && break
		sleep 0.02
	done
	t1=$(date +%s.%N)
	printf 'round %s: on the disk at once: +%s; named after %.0f ms (interval %s, last pass %.2f ms)\n' \
		"$r" "$at_once" \
		"$(echo "($t1 - $t0) * 1000" | bc)" "$INTERVAL" \
		"$(awk '$1 == "iolat_maintenance_duration_seconds" { print $2 * 1000 }' "$BODY")"
done
stop
