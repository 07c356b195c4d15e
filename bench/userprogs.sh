#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# userprogs.sh - what a scrape of users' BPF maps costs `iolat serve`.
#
# tests/data/many.bpf.o has a counter map and an exp2 histogram map; a
# config (tests/data/many.yaml) makes them metrics (one uint label each).
# Each run starts iolat serve with that config, fills the maps from user
# space (bpftool batch), scrapes K times and reads each scrape's
# collect+build+render time from the next scrape's
# iolat_scrape_duration_seconds. Runs: built-in metrics only (no user
# config) for the baseline, then 10 000 counter series, then 1 000
# histogram series (10 buckets each), each read the three ways iolat can:
# through a BPF map-element iterator (the default), with
# BPF_MAP_LOOKUP_BATCH (IOLAT_MAP_READ=batch) and key by key
# (IOLAT_MAP_READ=keys); the order rotates per round.
#
# The floor (issue 29): in the counter runs, between each two scrapes,
# build/mapwalk walks the same map (many_counts, the one serve holds) with
# BPF_MAP_LOOKUP_BATCH as a bare reader would, buffers sized once; the
# report sets each run's median scrape against the median walk of the same
# run (target: 10 000 series <= 1.3x the walk).
#
# --iolat-old BINARY: every run is made with that build too, right after
# the same run of IOLAT, and the table has a row for each (old/, new/), so
# a change is measured against its base in the same conditions.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
ROUNDS=${ROUNDS:-3}
SCRAPES=${SCRAPES:-20}
IOLAT=${IOLAT:-$ROOT/build-bench/iolat}
MANY=${MANY:-$ROOT/build-bench/test-data/many.bpf.o}
MAPWALK=${MAPWALK:-$(dirname "$IOLAT")/mapwalk}
WALKS=${WALKS:-5}
IOLAT_OLD=${IOLAT_OLD:-}
CMDLINE="bash bench/userprogs.sh${*:+ $*}"

usage() {
	cat <<EOF
Usage: bash bench/userprogs.sh [--rounds N] [--scrapes K] [--iolat-old BINARY]

Scrape time of iolat serve with users' maps: built-in metrics only, then
10 000 counters and 1 000 histograms from tests/data/many.bpf.o, each read
through a map iterator, in batches, and key by key. Needs root, and
'make OUT=build-bench all helpers' (env IOLAT, MANY, MAPWALK override the
paths; WALKS: floor walks between two scrapes, default 5).

  --rounds N    rounds of all runs, order rotating (default 3; env ROUNDS)
  --scrapes K   scrapes per run (default 20; env SCRAPES)
  --iolat-old BINARY   each run with this build too, right after IOLAT's
                (rows old/ and new/; env IOLAT_OLD)

env RUNS picks runs, e.g. RUNS="builtin counters-iter" (builtin is the base
the user maps' share is taken from).
EOF
}

die() {
	echo "userprogs.sh: $*" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
	--scrapes) [ $# -ge 2 ] || die "--scrapes needs a value"; SCRAPES=$2; shift 2 ;;
	--iolat-old) [ $# -ge 2 ] || die "--iolat-old needs a binary"; IOLAT_OLD=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
done
[ "$(id -u)" = 0 ] || die "needs root (iolat loads BPF programs)"
{ [ -x "$IOLAT" ] && [ -f "$MANY" ] && [ -x "$MAPWALK" ]; } || die "build first: make OUT=build-bench all helpers"
[ -z "$IOLAT_OLD" ] || [ -x "$IOLAT_OLD" ] || die "--iolat-old: no binary $IOLAT_OLD"
command -v bpftool >/dev/null || die "bpftool missing"

WORK=$(mktemp -d /dev/shm/iolat-bench.XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

mkdir "$WORK/cfg"
cp "$MANY" "$ROOT/tests/data/many.yaml" "$WORK/cfg/"
python3 "$ROOT/tests/integration/many_fill.py" 10000 0 >"$WORK/counters.batch"
python3 "$ROOT/tests/integration/many_fill.py" 0 1000 >"$WORK/hists.batch"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# fill BATCH: bpftool's map lookup by name opens every map id and fails on
# one still being freed (the previous run's): retried.
fill() {
	for _ in 1 2 3 4 5; do
		bpftool batch file "$1" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	die "bpftool batch file $1 failed"
}

# floor NAME: WALKS bare batch walks of the counter map serve $PID holds;
# appends "NAME-floor seconds entries" (their median). The map must hold
# the 10 000 counters the run filled, or the floor is of another map.
floor() {
	local out _w _n _e entries _m ns _rest
	out=$("$MAPWALK" -n "$WALKS" "pid:$PID:many_counts") || die "mapwalk failed"
	read -r _w _n _e entries _m ns _rest <<<"$out"
	[ "$entries" = 10000 ] || die "mapwalk saw $entries entries in many_counts, not 10000"
	echo "$1-floor $(awk -v ns="$ns" 'BEGIN { printf "%.9f", ns / 1e9 }') $entries" >>"$WORK/results"
}

# run NAME BINARY TAG: one serve instance of BINARY; appends "TAG/NAME
# seconds lines" per scrape (and TAG/NAME-floor lines).
run() {
	local name=$1 bin=$2 tag=$3 p args=() env=() lines
	p=$(port)
	case $name in
	builtin) ;;
	*) args=(--config.dir="$WORK/cfg") ;;
	esac
	case $name in
	*-batch) env=(IOLAT_MAP_READ=batch) ;;
	*-keys) env=(IOLAT_MAP_READ=keys) ;;
	esac
	env "${env[@]}" "$bin" serve --web.listen-address="127.0.0.1:$p" "${args[@]}" \
		2>"$WORK/serve.log" &
	PID=$!
	for _ in $(seq 1 100); do
		grep -q "listening on" "$WORK/serve.log" && break
		sleep 0.1
	done
	case $name in
	counters*) fill "$WORK/counters.batch" ;;
	hists*) fill "$WORK/hists.batch" ;;
	esac
	curl -sf "http://127.0.0.1:$p/metrics" >/dev/null
	for _ in $(seq 1 "$SCRAPES"); do
		curl -sf "http://127.0.0.1:$p/metrics" >"$WORK/body"
		lines=$(wc -l <"$WORK/body")
		awk -v n="$tag/$name" -v l="$lines" '$1 == "iolat_scrape_duration_seconds" { print n, $2, l }' \
			"$WORK/body" >>"$WORK/results"
		case $name in
		counters*) floor "$tag/$name" ;;
		esac
	done
	kill -TERM "$PID"
	wait "$PID" || true
	PID=
}

# env RUNS: a subset, in this spelling (builtin is the base of the share).
read -r -a RUNS <<<"${RUNS:-builtin counters-iter counters-batch counters-keys hists-iter hists-batch hists-keys}"
for ((r = 0; r < ROUNDS; r++)); do
	for ((k = 0; k < ${#RUNS[@]}; k++)); do
		run "${RUNS[$(((k + r) % ${#RUNS[@]}))]}" "$IOLAT" new
		[ -z "$IOLAT_OLD" ] || run "${RUNS[$(((k + r) % ${#RUNS[@]}))]}" "$IOLAT_OLD" old
	done
done

python3 - "$WORK/results" "$CMDLINE" "$ROUNDS" "$SCRAPES" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
lines = {}
for l in open(sys.argv[1]):
    name, secs, n = l.split()
    rows[name].append(float(secs) * 1e3)
    lines[name] = int(n)
tags = [t for t in ("old", "new") if t + "/builtin" in rows]
print("`%s` (%s rounds x %s scrapes; medians)\n" % (sys.argv[2], sys.argv[3], sys.argv[4]))
print("| run | sample lines | scrape ms (median) | p90 ms | user maps' share ms | floor ms | scrape / floor | share / floor |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
runs = [t + "/" + n for n in ("builtin", "counters-iter", "counters-batch", "counters-keys",
                               "hists-iter", "hists-batch", "hists-keys") for t in tags]
for name in runs:
    if name not in rows:
        continue
    base = statistics.median(rows[name.split("/")[0] + "/builtin"])
    v = sorted(rows[name])
    med = statistics.median(v)
    p90 = v[int(len(v) * 0.9) - 1]
    floor = rows.get(name + "-floor")
    fmed = statistics.median(floor) if floor else None
    print("| %s | %d | %.2f | %.2f | %s | %s | %s | %s |" % (
        name, lines[name], med, p90, "-" if name.endswith("/builtin") else "%.2f" % (med - base),
        "%.2f" % fmed if fmed else "-", "%.2fx" % (med / fmed) if fmed else "-",
        "%.2fx" % ((med - base) / fmed) if fmed else "-"))
PY
