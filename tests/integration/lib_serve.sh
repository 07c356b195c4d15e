# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# lib_serve.sh - helpers for tests of `iolat serve` (sourced after lib.sh).

# Serve's per-workload detail in full (each workload's series by disk and
# operation, every family): for tests that check a workload's counts on one
# disk. The defaults sum a workload per host (docs/sizing.md).
# shellcheck disable=SC2034 # read by the tests that source this
WL_FULL=("--workloads.labels=device,op" --workloads.metrics=all)

# A free TCP port on loopback.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_serve LOGFILE ARGS...: runs `iolat serve` until it listens; sets
# SERVE_PID, notes its programs in OUR_PROGS (for assert_detached). WRAP
# (e.g. setpriv ...), when set, runs before iolat and must exec it.
start_serve() {
	local log=$1
	shift
	${WRAP:-} "$IOLAT" serve "$@" 2>"$log" &
	SERVE_PID=$!
	on_exit "kill -TERM $SERVE_PID"
	for _ in $(seq 1 100); do
		if grep -q "listening on" "$log"; then
			# shellcheck disable=SC2034 # read by assert_detached (lib.sh)
			OUR_PROGS=$(pid_prog_ids "$SERVE_PID")
			return 0
		fi
		kill -0 "$SERVE_PID" 2>/dev/null || fail "iolat serve exited: $(cat "$log")"
		sleep 0.1
	done
	fail "iolat serve did not listen within 10 s"
}

# stop_serve WHAT: SIGTERM to the serve start_serve began; it must exit 0
# and leave none of its programs attached.
stop_serve() {
	local rc=0
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID" || rc=$?
	assert_eq "$1: exit status" 0 "$rc"
	assert_detached
}

# after_pass URL [CURL_ARGS...]: returns once a whole maintenance pass has
# run since the call (it began after it): what a test that changed cgroups
# or disks waits for before a scrape that must show the pass's decisions.
# Passes keep their own time (--maintenance.interval; tests give ~100ms),
# a scrape never runs one.
after_pass() {
	local url=$1 p0 p
	shift
	passes() { curl -sf "$@" "$url" | awk '$1 == "iolat_maintenance_passes_total" { print $2 }'; }
	p0=$(passes "$@")
	[ -n "$p0" ] || fail "after_pass: no iolat_maintenance_passes_total at $url"
	for _ in $(seq 1 200); do
		p=$(passes "$@")
		[ "${p:-0}" -ge $((p0 + 2)) ] && return 0
		sleep 0.05
	done
	fail "after_pass: no maintenance pass in 10 s ($p0 -> $p)"
}

# metric FILE NAME LABELS: the value of one sample in a text exposition.
metric() {
	set -- "$1" "$2" "${3:-}"
	awk -v want="$2$3" '$1 == want { print $2 }' "$1"
}

# start_prometheus NAME FLAGS... (the configuration on stdin, without its
# global section): a Prometheus on loopback that scrapes and evaluates
# rules every second, its data in $WORK; sets ${NAME}_url. Stopped at exit.
start_prometheus() {
	local n=$1 p
	shift
	p=$(free_port)
	{
		printf 'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n'
		cat
	} >"$WORK/$n.yml"
	prometheus --config.file="$WORK/$n.yml" --storage.tsdb.path="$WORK/$n.tsdb" \
		--web.listen-address="127.0.0.1:$p" "$@" >"$WORK/$n.log" 2>&1 &
	on_exit "kill $!"
	printf -v "${n}_url" 'http://127.0.0.1:%s' "$p"
}

# Restarts and takeovers (test_handover.sh, test_upgrade.sh).
# diskstats_ios DISK: its completed reads and writes, from the kernel.
diskstats_ios() { awk -v d="$1" '$3 == d { print $4 + $8 }' /proc/diskstats; }
# scraped_ios FILE DISK: every sample of DISK's block completions in a
# scrape, summed over ops and other labels.
scraped_ios() { awk -v d="device=\"$2\"" '$1 ~ /^iolat_block_completions_total\{/ && index($1, d) { n += $2 } END { print n + 0 }' "$1"; }
# gauge FILE NAME: the value of the unlabelled sample NAME.
gauge() { awk -v n="$2" '$1 == n { print $2 }' "$1"; }

# check_monotonic OLD NEW [PREFIX...]: no counter, bucket, count or sum of
# what the collector counts (per disk, per workload, its events, and the
# series whose names start with a PREFIX) is below OLD in NEW. (The
# process's own counters, such as process_cpu_seconds_total, begin at
# iolat_start_time_seconds.)
check_monotonic() {
	python3 - "$@" <<'PY' || fail "a counter went backwards between $1 and $2"
import re, sys
prefixes = ("iolat_block_", "iolat_collector_events_total") + tuple(sys.argv[3:])
def samples(path):
    out = {}
    for line in open(path):
        if line.startswith("#"):
            continue
        name, _, value = line.rstrip("\n").rpartition(" ")
        base = re.sub(r"\{.*", "", name)
        counted = base.startswith(prefixes) or re.match(
            r"iolat_workload_(completions|bytes|errors|untimed|device_latency|total_latency|request_size)", base)
        if counted and base.endswith(("_total", "_bucket", "_count", "_sum")):
            out[name] = float(value)
    return out
old, new = samples(sys.argv[1]), samples(sys.argv[2])
bad = [(k, old[k], new[k]) for k in old if k in new and new[k] < old[k]]
for k, a, b in bad[:10]:
    print(f"{k}: {a} -> {b}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
