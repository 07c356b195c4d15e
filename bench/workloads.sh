#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# workloads.sh - what per-workload series cost `iolat serve` to scrape, and
# what they weigh, as the number of live workloads grows: N cgroups (systemd
# service names, so each is a workload of its own) each do a few direct
# reads on a loop device; then iolat is scraped K times in text and
# protobuf. Prints, per N: sample lines, body size, iolat's own render time
# (iolat_scrape_duration_seconds, median), curl's time, RSS and kernel keys.
# Usage: bash bench/workloads.sh [--iolat-old BINARY] [N...]   (default 50 200 500; root)
# Env: IOLAT, DIO (the binaries), SCRAPES (K, default 15), SERVE_ARGS (more
# serve flags, e.g. --maintenance.interval=100ms), SETTLE (seconds to wait
# after the cgroups' reads before scraping, default 1.2: past the hierarchy
# walk's once-a-second limit; on builds whose passes run on a schedule, give
# it more than --maintenance.interval so the workloads are named), TIGHT
# (after each N's row, that many text scrapes back to back: curl's and
# iolat's own time, median, p90, p99 and max, and on builds that report
# them the maintenance passes run meanwhile and the last one's duration),
# IDLE (then that many seconds with no scrape: the CPU time serve's threads
# used meanwhile, from /proc/PID/task/*/schedstat, and the passes run),
# NODE_EXPORTER (prometheus-node-exporter's binary, default the Debian
# package's if installed; empty: none): with its defaults beside iolat,
# scraped in text once after each iolat text scrape, so both are timed in
# the same run; the last columns are curl's time per 1 000 sample lines of
# each and iolat's over node-exporter's (issue 29: <= 0.1).
# --iolat-old BINARY (env IOLAT_OLD): that build serves beside IOLAT, over
# the same workloads, and each N has a row for each (build old, new),
# measured one after the other, so a change is set against its base in the
# same run.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
# shellcheck source=bench/lib_workloads.sh
source "$HERE/lib_workloads.sh"
IOLAT=${IOLAT:-$ROOT/build-bench/iolat}
DIO=${DIO:-$ROOT/build-bench/dio}
SCRAPES=${SCRAPES:-15}
SERVE_ARGS=${SERVE_ARGS:-}
SETTLE=${SETTLE:-1.2}
TIGHT=${TIGHT:-0}
IDLE=${IDLE:-0}
NODE_EXPORTER=${NODE_EXPORTER-/usr/bin/prometheus-node-exporter}
[ -x "$NODE_EXPORTER" ] || NODE_EXPORTER=
IOLAT_OLD=${IOLAT_OLD:-}
if [ "${1:-}" = --iolat-old ]; then
	[ $# -ge 2 ] || { echo "workloads.sh: --iolat-old needs a binary" >&2; exit 1; }
	IOLAT_OLD=$2
	shift 2
fi
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(50 200 500)
[ "$(id -u)" = 0 ] || { echo "workloads.sh: needs root" >&2; exit 1; }
{ [ -x "$IOLAT" ] && [ -x "$DIO" ]; } || { echo "build first: make OUT=build-bench all helpers" >&2; exit 1; }
[ -z "$IOLAT_OLD" ] || [ -x "$IOLAT_OLD" ] || { echo "workloads.sh: --iolat-old: no binary $IOLAT_OLD" >&2; exit 1; }
BINS=("$IOLAT") TAGS=(new)
[ -z "$IOLAT_OLD" ] || { BINS+=("$IOLAT_OLD"); TAGS+=(old); }

BASE=$(wl_cgroot)/iolat-bench-wl-$$
IMG=/dev/shm/iolat-bench-wl.$$.img
PORT0=$((40000 + RANDOM % 20000))
NPORT=$((PORT0 + 2))
PIDS=() PID='' PORT='' LOOP='' NPID=''
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	# node-exporter ends with 143 on SIGTERM: no status may stop the rest
	if [ -n "$NPID" ]; then kill "$NPID" 2>/dev/null; wait "$NPID" 2>/dev/null || true; fi
	wl_remove "$BASE"
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rm -f "$IMG"
}
trap cleanup EXIT
truncate -s 64M "$IMG"
LOOP=$(losetup --direct-io=on -f --show "$IMG")
mkdir "$BASE"

for b in "${!BINS[@]}"; do
	# shellcheck disable=SC2086 # SERVE_ARGS: flags, split on blanks
	"${BINS[$b]}" serve --web.listen-address=127.0.0.1:$((PORT0 + b)) --workloads.max=100000 \
		$SERVE_ARGS 2>/dev/null &
	PIDS+=($!)
	for _ in $(seq 50); do curl -sf "http://127.0.0.1:$((PORT0 + b))/-/healthy" >/dev/null && break; sleep 0.1; done
done
if [ -n "$NODE_EXPORTER" ]; then
	"$NODE_EXPORTER" --web.listen-address=127.0.0.1:$NPORT >/dev/null 2>&1 &
	NPID=$!
	for _ in $(seq 50); do curl -sf "http://127.0.0.1:$NPORT/metrics" >/dev/null && break; sleep 0.1; done
fi

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# tight: TIGHT scrapes back to back; prints their times' distribution.
tight() {
	local body=/tmp/iolat-wl-body.$$ t0 p0 p1
	p0=$(awk '$1 == "iolat_maintenance_passes_total" { print $2 }' "$body")
	t0=$(date +%s.%N)
	for ((k = 0; k < TIGHT; k++)); do
		curl -sf -o "$body" -w '%{time_total} ' "http://127.0.0.1:$PORT/metrics"
		awk '$1 == "iolat_scrape_duration_seconds" { print $2 }' "$body"
	done >/tmp/iolat-wl-tight.$$
	p1=$(awk '$1 == "iolat_maintenance_passes_total" { print $2 }' "$body")
	python3 - /tmp/iolat-wl-tight.$$ "$t0" "${p0:-}" "${p1:-}" \
		"$(awk '$1 == "iolat_maintenance_duration_seconds" { print $2 * 1000 }' "$body")" <<'PY'
import sys, time
rows = [l.split() for l in open(sys.argv[1])]
def q(v, f):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * f))]
secs = time.time() - float(sys.argv[2])
for i, name in ((0, "curl_ms"), (1, "render_ms")):
    v = [float(r[i]) * 1e3 for r in rows]
    print("  tight %d scrapes in %.1f s: %s median %.2f p90 %.2f p99 %.2f max %.2f" %
          (len(v), secs, name, q(v, 0.5), q(v, 0.9), q(v, 0.99), max(v)))
if sys.argv[3]:
    print("  maintenance passes meanwhile %d, last pass %s ms" %
          (float(sys.argv[4]) - float(sys.argv[3]), sys.argv[5]))
PY
	rm -f /tmp/iolat-wl-tight.$$
}
# idle: IDLE seconds without a scrape; serve's CPU time and passes meanwhile.
cpu_ns() { cat /proc/"$PID"/task/*/schedstat | awk '{ s += $1 } END { printf "%d", s }'; }
idle() {
	local body=/tmp/iolat-wl-body.$$ c0 c1 p0 p1
	curl -sf -o "$body" "http://127.0.0.1:$PORT/metrics"
	p0=$(awk '$1 == "iolat_maintenance_passes_total" { print $2 }' "$body")
	c0=$(cpu_ns)
	sleep "$IDLE"
	c1=$(cpu_ns)
	curl -sf -o "$body" "http://127.0.0.1:$PORT/metrics"
	p1=$(awk '$1 == "iolat_maintenance_passes_total" { print $2 }' "$body")
	printf '  idle %s s: CPU %.2f ms (%.3f %% of a CPU)' "$IDLE" \
		"$(echo "($c1 - $c0) / 1000000" | bc -l)" "$(echo "($c1 - $c0) / ($IDLE * 10000000)" | bc -l)"
	if [ -n "$p0" ]; then
		printf ', passes %s, last pass %s ms' $((p1 - p0)) \
			"$(awk '$1 == "iolat_maintenance_duration_seconds" { print $2 * 1000 }' "$body")"
	fi
	echo
}
# row N: SCRAPES scrapes of the serve on $PORT ($PID), one row of the table.
row() {
	local n=$1 tag=$2 lines kib keys rss ctm nlines ntm
	rt=() rp=() ct=() nt=()
	for ((k = 0; k < SCRAPES; k++)); do
		ct+=("$(curl -sf -o /tmp/iolat-wl-body.$$ -w '%{time_total}' "http://127.0.0.1:$PORT/metrics")")
		rt+=("$(awk '$1 == "iolat_scrape_duration_seconds" { print $2 }' /tmp/iolat-wl-body.$$)")
		[ -z "$NPID" ] || nt+=("$(curl -sf -o /tmp/iolat-wl-node.$$ -w '%{time_total}' "http://127.0.0.1:$NPORT/metrics")")
		curl -sf -o /dev/null -H 'Accept: application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited' "http://127.0.0.1:$PORT/metrics"
		curl -sf -o /tmp/iolat-wl-body.$$ "http://127.0.0.1:$PORT/metrics"
		rp+=("$(awk '$1 == "iolat_scrape_duration_seconds" { print $2 }' /tmp/iolat-wl-body.$$)")
	done
	lines=$(grep -vc '^#' /tmp/iolat-wl-body.$$)
	kib=$(($(stat -c %s /tmp/iolat-wl-body.$$) / 1024))
	keys=$(awk '$1 == "iolat_bpf_map_entries{map=\"hists_shared\"}" { print $2 }' /tmp/iolat-wl-body.$$)
	rss=$(awk '/^VmRSS/ { printf "%.1f", $2 / 1024 }' /proc/"$PID"/status)
	ctm=$(printf '%s\n' "${ct[@]}" | median | awk '{ print $1 * 1000 }')
	printf '%9s %5s %9s %10s %12.2f %12.2f %12.2f %9s %7s' "$n" "$tag" "$lines" "$kib" \
		"$(printf '%s\n' "${rt[@]}" | median | awk '{ print $1 * 1000 }')" \
		"$(printf '%s\n' "${rp[@]}" | median | awk '{ print $1 * 1000 }')" \
		"$ctm" "$rss" "$keys"
	if [ -n "$NPID" ]; then
		nlines=$(grep -vc '^#' /tmp/iolat-wl-node.$$)
		ntm=$(printf '%s\n' "${nt[@]}" | median | awk '{ print $1 * 1000 }')
		awk -v nl="$nlines" -v nt="$ntm" -v il="$lines" -v it="$ctm" 'BEGIN {
			a = it * 1e6 / il; b = nt * 1e6 / nl
			printf " %10d %12.2f %12.1f %12.1f %8.3f", nl, nt, a, b, a / b }'
	fi
	echo
	if [ "$TIGHT" -gt 0 ]; then tight; fi
	if [ "$IDLE" -gt 0 ]; then idle; fi
}
made=0
printf '%9s %5s %9s %10s %12s %12s %12s %9s %7s' workloads build lines body_KiB render_ms_txt render_ms_pb curl_ms_txt RSS_MiB keys
[ -z "$NPID" ] || printf ' %10s %12s %12s %12s %8s' node_lines node_curl_ms us_1k_iolat us_1k_node ratio
echo
for n in "${SIZES[@]}"; do
	for ((i = made + 1; i <= n; i++)); do
		wl_run "$BASE" "$i" "$DIO" read "$LOOP" 4 4096
	done
	made=$n
	sleep "$SETTLE"
	for b in "${!BINS[@]}"; do
		PORT=$((PORT0 + b)) PID=${PIDS[$b]}
		curl -sf "http://127.0.0.1:$PORT/metrics" >/dev/null
		row "$n" "${TAGS[$b]}"
	done
done
rm -f /tmp/iolat-wl-body.$$ /tmp/iolat-wl-node.$$
