#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# join.sh - what `iolat trace --join` costs as traces grow: for each N, a
# guest trace and a host trace of N requests (bench/join_gen.c: a VM's
# random 4 KiB reads and writes, the host's clock 86 400 s ahead and 20 ppm
# fast), joined with --summary ROUNDS times; the median wall time, the peak
# memory (GNU time's maximum RSS), and what the join found (matched, the
# clock's drift and bound), which must be every request, with the true
# clock within the stated bound. HOT=P sends P %
# of the requests to 16 hot offsets (read and written over and over).
# Usage: bash bench/join.sh [N...]   (default 10000 100000 1000000;
#        ROUNDS=3, HOT=0, IOLAT=build/iolat; build first: make)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT=${OUT:-build}
IOLAT=${IOLAT:-$ROOT/$OUT/iolat}
ROUNDS=${ROUNDS:-3}
HOT=${HOT:-0}
if ! [ -x "$IOLAT" ] || ! [ -f "$ROOT/$OUT/libiolat.a" ]; then
	echo "join.sh: make first" >&2
	exit 1
fi
[ -x /usr/bin/time ] || { echo "join.sh: needs GNU time (package time)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/iolat-bench-join.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -std=gnu11 -I"$ROOT/$OUT" -I"$ROOT/bpf" -I"$ROOT/src" "$HERE/join_gen.c" \
	"$ROOT/$OUT/libiolat.a" -lm -o "$WORK/join_gen"

echo "| requests (hot %) | trace MB (guest + host) | join s (median of $ROUNDS) | max RSS MiB | matched | drift ppm | bound us |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for n in "${@:-10000 100000 1000000}"; do
	for n1 in $n; do
		rm -f "$WORK/g" "$WORK/h"
		"$WORK/join_gen" "$n1" "$WORK/g" "$WORK/h" "$HOT"
		mb=$(( ($(stat -c %s "$WORK/g") + $(stat -c %s "$WORK/h")) / 1000000 ))
		times=() rss=0
		for _ in $(seq 1 "$ROUNDS"); do
			/usr/bin/time -f '%e %M' -o "$WORK/t" "$IOLAT" trace --join --summary --json \
				"$WORK/g" "$WORK/h" >"$WORK/s.json"
			read -r sec kib <"$WORK/t"
			times+=("$sec")
			[ "$kib" -gt "$rss" ] && rss=$kib
		done
		med=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (ROUNDS + 1) / 2 ))p")
		python3 - "$n1" "$mb" "$med" "$rss" "$WORK/s.json" "$HOT" <<'PY'
import json, sys
n, mb, med, rss, path, hot = sys.argv[1:]
s = json.load(open(path))
k = s["clock"]
assert s["matched"] == int(n), (s["matched"], n)
# The truth join_gen made: host = guest + 86 400 s + 20 ppm of guest time.
truth = 86400000000000 + int(20e-6 * k["t0_ns"])
assert abs(k["offset_ns"] - truth) <= k["bound_ns"], ("clock off by more than its bound", k, truth)
print(f"| {int(n):,} ({hot}) | {mb} | {med} | {int(rss) / 1024:.0f} | {s['matched']:,} | {k['drift_ppm']:.2f} | {k['bound_ns'] / 1000:.1f} |")
PY
	done
done
