# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# lib_fleet.sh - the simulated fleet (sourced by bench/fleet.sh and
# tests/integration/test_fleet_scale.sh): a recording of a real `iolat
# serve` under real I/O (fleet_record), replayed as N hosts
# (bench/fleet_replay.py) into Prometheus and into VictoriaMetrics fed by
# vmagent, with vmalert evaluating the same rules (fleet_stores). Every
# process gets a free port and a directory under FLEET_DIR; fleet_cleanup
# (the caller's exit trap) stops them and removes what was made.
# Needs: IOLAT, DIO (binaries), FLEET_DIR (an empty directory of the caller's).

# shellcheck source=bench/lib_workloads.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib_workloads.sh"
FLEET_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FLEET_PIDS=() FLEET_LOOPS=() FLEET_CG=''

fleet_cleanup() {
	local p l
	[ -n "${FLEET_DIR:-}" ] && touch "$FLEET_DIR/stop"
	# (|| true: callers run under set -e, and what was killed ends non-zero)
	for p in "${FLEET_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${FLEET_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	FLEET_PIDS=()
	if [ -n "$FLEET_CG" ]; then wl_remove "$FLEET_CG"; fi
	for l in "${FLEET_LOOPS[@]}"; do losetup -d "$l" 2>/dev/null || true; done
	FLEET_LOOPS=()
	rm -f /dev/shm/iolat-fleet.$$.*.img
}

# fleet_port: a free TCP port on loopback.
fleet_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# fleet_wait_http URL SECONDS: 0 once URL answers 2xx, 1 if it never does.
fleet_wait_http() {
	local i
	for ((i = 0; i < $2 * 5; i++)); do
		curl -sf -o /dev/null "$1" && return 0
		sleep 0.2
	done
	return 1
}

# fleet_record OUT WORKLOADS DISKS SCRAPES INTERVAL [SERVE FLAGS...]: a real
# `iolat serve` ($IOLAT) over DISKS loop devices (in /dev/shm) and
# WORKLOADS named cgroups, each reading and writing its disk (workload I
# uses disk I mod DISKS) all the while; once every workload was seen,
# SCRAPES text scrapes INTERVAL seconds apart, each body in OUT/body.NNN
# and its time in OUT/times; OUT/disks names the disks, one a line (workload
# I used line I mod DISKS + 1). Returns non-zero with a message on stderr.
fleet_record() {
	local out=$1 nwl=$2 ndisks=$3 nscrapes=$4 every=$5 port img i k serve
	shift 5
	mkdir -p "$out"
	for ((i = 0; i < ndisks; i++)); do
		img=/dev/shm/iolat-fleet.$$.$i.img
		truncate -s 64M "$img"
		FLEET_LOOPS+=("$(losetup --direct-io=on -f --show "$img")") || return 1
	done
	printf '%s\n' "${FLEET_LOOPS[@]#/dev/}" >"$out/disks"
	FLEET_CG=$(wl_cgroot)/iolat-fleet-$$
	mkdir "$FLEET_CG" || return 1
	port=$(fleet_port)
	"$IOLAT" serve --web.listen-address="127.0.0.1:$port" --workloads.max=100000 \
		--maintenance.interval=1s "$@" >"$out/serve.log" 2>&1 &
	serve=$!
	FLEET_PIDS+=("$serve")
	fleet_wait_http "http://127.0.0.1:$port/-/healthy" 30 ||
		{ echo "fleet_record: iolat serve did not start: $(tail -3 "$out/serve.log")" >&2; return 1; }
	rm -f "$FLEET_DIR/stop"
	# Each workload: a few direct 4 KiB reads and a 64 KiB write, then a
	# pause, until the recording ends: its counters go on as a VM's would.
	for ((i = 1; i <= nwl; i++)); do
		(
			d=${FLEET_LOOPS[$((i % ndisks))]}
			while [ ! -e "$FLEET_DIR/stop" ]; do
				wl_run "$FLEET_CG" "$i" "$DIO" read "$d" 4 4096 >/dev/null 2>&1
				wl_run "$FLEET_CG" "$i" "$DIO" write "$d" 1 65536 >/dev/null 2>&1
				sleep 1
			done
		) &
		FLEET_PIDS+=($!)
	done
	# Every workload named (each has its own cgroup, so its own series).
	for ((k = 0; k < 60; k++)); do
		sleep 1
		curl -sf "http://127.0.0.1:$port/metrics" >"$out/warm" || continue
		[ "$(grep -c '^iolat_workload_bytes_total{.*workload="w[0-9]*"' "$out/warm")" -ge "$nwl" ] && break
	done
	: >"$out/times"
	for ((k = 0; k < nscrapes; k++)); do
		[ "$k" = 0 ] || sleep "$every"
		date +%s.%N >>"$out/times"
		curl -sf -o "$(printf '%s/body.%03d' "$out" "$k")" "http://127.0.0.1:$port/metrics" ||
			{ echo "fleet_record: scrape $k of iolat serve failed" >&2; return 1; }
	done
	touch "$FLEET_DIR/stop"
	kill "$serve"
	wait "${FLEET_PIDS[@]}" 2>/dev/null || true
	FLEET_PIDS=()
	wl_remove "$FLEET_CG"
	for i in "${FLEET_LOOPS[@]}"; do losetup -d "$i" 2>/dev/null || true; done
	FLEET_LOOPS=()
	rm -f /dev/shm/iolat-fleet.$$.*.img "$out/warm"
}

# fleet_scrape_config HOSTS REPLAY_PORT INTERVAL [RULES...]: a Prometheus
# scrape configuration (Prometheus and vmagent read the same) with one
# target group per host: the replayer's path for it, and its instance
# label; with RULES, Prometheus' too (its rule files, evaluated every
# INTERVAL: vmagent refuses the keys).
fleet_scrape_config() {
	local h
	printf 'global:\n  scrape_interval: %s\n' "$3"
	if [ $# -gt 3 ]; then
		printf '  evaluation_interval: %s\nrule_files:\n' "$3"
		printf '  - %s\n' "${@:4}"
	fi
	printf 'scrape_configs:\n  - job_name: iolat\n    static_configs:\n'
	for ((h = 0; h < $1; h++)); do
		printf "      - targets: ['127.0.0.1:%s']\n" "$2"
		printf "        labels: {__metrics_path__: /host/%d/metrics, instance: 'host%04d:9617'}\n" "$h" "$h"
	done
}

# fleet_stores HOSTS STEP INTERVAL RULES ALERTS: the replayer (STEP seconds
# per recorded scrape, from $FLEET_DIR/rec), Prometheus, VictoriaMetrics,
# vmagent and vmalert (scrape and evaluation every INTERVAL, e.g. 15s),
# each with its own port and directory in FLEET_DIR. Sets REPLAY, PROM, VM,
# VMAGENT, VMALERT (their base URLs) and PROM_PID, VM_PID.
fleet_stores() {
	local hosts=$1 step=$2 every=$3 rules=$4 alerts=$5 p
	python3 "$FLEET_LIB/fleet_replay.py" --recording "$FLEET_DIR/rec" --hosts "$hosts" --step "$step" \
		--port-file "$FLEET_DIR/replay.port" >"$FLEET_DIR/replay.log" 2>&1 &
	FLEET_PIDS+=($!)
	for _ in $(seq 100); do [ -s "$FLEET_DIR/replay.port" ] && break; sleep 0.1; done
	[ -s "$FLEET_DIR/replay.port" ] || { echo "fleet_stores: the replayer did not start: $(tail -3 "$FLEET_DIR/replay.log")" >&2; return 1; }
	REPLAY=http://127.0.0.1:$(cat "$FLEET_DIR/replay.port")
	fleet_scrape_config "$hosts" "${REPLAY##*:}" "$every" >"$FLEET_DIR/scrape.yml"
	fleet_scrape_config "$hosts" "${REPLAY##*:}" "$every" "$rules" "$alerts" >"$FLEET_DIR/prometheus.yml"

	p=$(fleet_port)
	prometheus --config.file="$FLEET_DIR/prometheus.yml" --storage.tsdb.path="$FLEET_DIR/prom" \
		--web.listen-address="127.0.0.1:$p" --web.enable-admin-api >"$FLEET_DIR/prometheus.log" 2>&1 &
	PROM_PID=$!
	FLEET_PIDS+=("$PROM_PID")
	PROM=http://127.0.0.1:$p

	# VictoriaMetrics: queries see samples as soon as they are stored (no
	# 30 s latency offset) and are not cached, so both stores answer from
	# the same samples.
	p=$(fleet_port)
	victoria-metrics -storageDataPath="$FLEET_DIR/vm" -httpListenAddr="127.0.0.1:$p" \
		-search.latencyOffset=0s -search.disableCache -retentionPeriod=1 >"$FLEET_DIR/vm.log" 2>&1 &
	VM_PID=$!
	FLEET_PIDS+=("$VM_PID")
	VM=http://127.0.0.1:$p
	fleet_wait_http "$VM/health" 30 || { echo "fleet_stores: VictoriaMetrics did not start: $(tail -3 "$FLEET_DIR/vm.log")" >&2; return 1; }

	p=$(fleet_port)
	vmagent -promscrape.config="$FLEET_DIR/scrape.yml" -remoteWrite.url="$VM/api/v1/write" \
		-remoteWrite.tmpDataPath="$FLEET_DIR/vmagent" -httpListenAddr="127.0.0.1:$p" \
		-remoteWrite.flushInterval=1s >"$FLEET_DIR/vmagent.log" 2>&1 &
	FLEET_PIDS+=($!)
	VMAGENT=http://127.0.0.1:$p

	# vmalert: the same files, against VictoriaMetrics; recording rules'
	# and alerts' series written back there. Expressions are not checked
	# at start: one VictoriaMetrics cannot run must fail alone, where the
	# comparison reports it, not stop every other rule.
	p=$(fleet_port)
	vmalert -rule="$rules" -rule="$alerts" -datasource.url="$VM" -remoteWrite.url="$VM" \
		-notifier.url="$REPLAY" -evaluationInterval="$every" -rule.validateExpressions=false \
		-httpListenAddr="127.0.0.1:$p" >"$FLEET_DIR/vmalert.log" 2>&1 &
	FLEET_PIDS+=($!)
	VMALERT=http://127.0.0.1:$p
	fleet_wait_http "$PROM/-/ready" 60 || { echo "fleet_stores: Prometheus did not start: $(tail -3 "$FLEET_DIR/prometheus.log")" >&2; return 1; }
	fleet_wait_http "$VMAGENT/health" 30 || { echo "fleet_stores: vmagent did not start: $(tail -3 "$FLEET_DIR/vmagent.log")" >&2; return 1; }
	fleet_wait_http "$VMALERT/health" 30 || { echo "fleet_stores: vmalert did not start: $(tail -3 "$FLEET_DIR/vmalert.log")" >&2; return 1; }
}
