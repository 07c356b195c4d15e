#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# fleet.sh - what iolat's series cost a fleet's metrics store: one recording
# of a real `iolat serve` (WORKLOADS named cgroups doing direct I/O on
# DISKS loop devices, scraped SCRAPES times every 15 s), replayed as N hosts
# (bench/fleet_replay.py, one recorded scrape per 15 s step) into
# Prometheus 2.42 and into VictoriaMetrics fed by vmagent, with the mixin's
# rendered rules and alerts (mixin/prometheus_*.yaml) evaluated by
# Prometheus and by vmalert, scraped and evaluated every 15 s. Each N runs
# RUN seconds from a fresh start (both stores empty); the measurements
# (bench/fleet_report.py) are the last MEASURE seconds of it: active
# series, samples/s ingested, resident memory of each process, bytes on
# disk, rule evaluation time, the replayer's CPU, and the time of every
# fleet-dashboard query (All instances and disks, op read) and of every
# recording rule's expression in each store. Then a table, with each column
# fitted linearly over N and projected to 1 000 and 10 000 hosts.
# Usage: bash bench/fleet.sh [--hosts N,N,...] [--workloads W] [--disks D]
#        (default --hosts 100,250,500 --workloads 50 --disks 4; root)
# Env: IOLAT, DIO (the binaries; default build-bench/, else build/),
# SERVE_ARGS (more serve flags, e.g. --workloads.labels=device,op), RUN
# (seconds per N, default 300), MEASURE (default 120), SCRAPES (recorded,
# default 5), RUNS (each query timed that many times, median; default 1:
# at 100 hosts a rule's expression takes 1-3 s here), RESULTS (the JSON
# lines file; default a temporary one, kept).
# A run takes about 1.5 + N_sizes x (RUN + 60) / 60 minutes: under 20 with
# the defaults.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"
HOSTS=100,250,500 WORKLOADS=50 DISKS=4
while [ $# -gt 0 ]; do
	case $1 in
	--hosts | --workloads | --disks)
		[ $# -ge 2 ] || { echo "fleet.sh: $1 needs a value" >&2; exit 2; }
		v=$2
		[[ "$v" =~ ^[0-9]+(,[0-9]+)*$ ]] || { echo "fleet.sh: $1 takes numbers (N or N,N,...), not '$v'" >&2; exit 2; }
		case $1 in --hosts) HOSTS=$v ;; --workloads) WORKLOADS=$v ;; --disks) DISKS=$v ;; esac
		shift 2
		;;
	*) echo "fleet.sh: unknown argument '$1'; usage: bash bench/fleet.sh [--hosts N,N] [--workloads W] [--disks D]" >&2; exit 2 ;;
	esac
done
B=build-bench
[ -x $B/iolat ] || B=build
IOLAT=${IOLAT:-$ROOT/$B/iolat}
DIO=${DIO:-$ROOT/$B/dio}
RUN=${RUN:-300}
MEASURE=${MEASURE:-120}
SCRAPES=${SCRAPES:-5}
SERVE_ARGS=${SERVE_ARGS:-}
[ "$(id -u)" = 0 ] || { echo "fleet.sh: needs root (cgroups, loop devices, BPF)" >&2; exit 1; }
{ [ -x "$IOLAT" ] && [ -x "$DIO" ]; } || { echo "fleet.sh: build first: make OUT=build-bench all helpers" >&2; exit 1; }
for c in prometheus victoria-metrics vmagent vmalert curl python3; do
	command -v $c >/dev/null || { echo "fleet.sh: $c is missing (make deps: packages prometheus, victoria-metrics)" >&2; exit 1; }
done
[ "$RUN" -gt $((MEASURE + 60)) ] || { echo "fleet.sh: RUN must exceed MEASURE + 60 s (warm-up)" >&2; exit 2; }

FLEET_DIR=$(mktemp -d /dev/shm/iolat-fleet-bench.XXXXXX)
RESULTS=${RESULTS:-$(mktemp /tmp/iolat-fleet-results.XXXXXX)}
export IOLAT DIO FLEET_DIR
# shellcheck source=bench/lib_fleet.sh
source "$HERE/lib_fleet.sh"
trap 'fleet_cleanup; rm -rf "$FLEET_DIR"' EXIT
trap 'exit 130' INT TERM

echo "recording: $WORKLOADS workloads on $DISKS loop devices, $SCRAPES scrapes 15 s apart ($IOLAT)"
# shellcheck disable=SC2086 # SERVE_ARGS: flags, split on blanks
fleet_record "$FLEET_DIR/rec" "$WORKLOADS" "$DISKS" "$SCRAPES" 15 $SERVE_ARGS
last=$(find "$FLEET_DIR/rec" -name 'body.*' | sort | tail -1)
echo "recorded: $(grep -vc '^#' "$last") series per host, $(wc -c <"$last") bytes per scrape"
# The mixin in classic mode (nativeHistograms: false), as docs/dashboards.md
# renders it for VictoriaMetrics 1.79 (no histogram_count, _sum, _fraction):
# both stores evaluate the same rules, of a fleet without native histograms.
echo "(import 'mixin.libsonnet') + { _config+:: { nativeHistograms: false } }" >"$FLEET_DIR/classic.jsonnet"
bash "$ROOT/scripts/render_mixin.sh" "$FLEET_DIR/mixin" "$FLEET_DIR/classic.jsonnet" >/dev/null ||
	{ echo "fleet.sh: cannot render the mixin" >&2; exit 1; }
MIXIN=$FLEET_DIR/mixin
# The fleet dashboard's queries for the global view: every instance and
# disk, reads.
python3 tests/mixin/panel_queries.py --var instance=All --var device=All --var op=read \
	"$MIXIN/dashboards_out/iolat-fleet.json" >"$FLEET_DIR/panels.tsv"

IFS=, read -ra SIZES <<<"$HOSTS"
for n in "${SIZES[@]}"; do
	rm -rf "$FLEET_DIR"/{prom,vm,vmagent} "$FLEET_DIR/replay.port"
	fleet_stores "$n" 15 15s "$MIXIN/prometheus_rules.yaml" "$MIXIN/prometheus_alerts.yaml"
	echo "N=$n: replaying for $RUN s (measured over the last $MEASURE s)"
	sleep $((RUN - MEASURE))
	python3 "$HERE/fleet_report.py" snap --out "$FLEET_DIR/before.json" --replay "$REPLAY" \
		"$PROM" "$VM" "$VMAGENT" "$VMALERT"
	sleep "$MEASURE"
	python3 "$HERE/fleet_report.py" snap --out "$FLEET_DIR/after.json" --replay "$REPLAY" \
		"$PROM" "$VM" "$VMAGENT" "$VMALERT"
	python3 "$HERE/fleet_report.py" measure --hosts "$n" --before "$FLEET_DIR/before.json" \
		--after "$FLEET_DIR/after.json" --prom "$PROM" --vm "$VM" --vmagent "$VMAGENT" \
		--vmalert "$VMALERT" --replay "$REPLAY" --prom-dir "$FLEET_DIR/prom" --vm-dir "$FLEET_DIR/vm" \
		--panels "$FLEET_DIR/panels.tsv" --rules "$MIXIN/prometheus_rules.yaml" --runs "${RUNS:-1}" >>"$RESULTS"
	fleet_cleanup
done
python3 "$HERE/fleet_report.py" table "$RESULTS"
echo "(rows kept in $RESULTS)"
