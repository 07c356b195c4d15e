#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# compare_outputs.sh OLD_IOLAT NEW_IOLAT - two iolat binaries, run at the
# same time over the same known workload, must print the same thing: the
# proof that a refactor changed no behaviour. Root; run from anywhere
# (`make compare-outputs OLD=<rev>` builds OLD and runs this).
#
# Both binaries attach to the same kernel tracepoints at once, so they see
# the very same I/O: every count is the same, whatever else the machine
# does. The I/O is our own, on a fresh loop device, in a cgroup of our own.
# One line per comparison, "same: WHAT, N lines" or "DIFF: WHAT" with a
# unified diff (old -> new) of the lines that differ; exit 1 on any DIFF
# (and "FAIL: why" with exit 1 when the run itself could not be made: no
# comparison is claimed then); 2 on bad usage.
#
# What is compared, and how:
#
# 1. `iolat serve`, in three configurations (defaults: workloads on;
#    --no-label.op; --label.size-class). Both listen on 127.0.0.1 (ports
#    of their own) with IOLAT_TEST_DISK=<our loop device> (testing only:
#    the collector counts that disk alone, so other people's I/O on this
#    shared machine cannot land between the two scrapes). After the workload
#    and udev's probes settle, both are scraped (text format); sorted lines.
#    a. By value, exactly: every sample of every iolat_block_* and
#       iolat_workload_* family - iolat_block_bytes_total,
#       _completions_total, _device_info, _device_latency_seconds,
#       _errors_total, _request_size_bytes, _total_latency_seconds,
#       _untimed_total; iolat_workload_bytes_total, _completions_total,
#       _device_latency_seconds, _errors_total, _expired_total,
#       _folded_cgroups_total, _folded_completions_total, _label_sets,
#       _label_sets_max, _request_size_bytes, _retired_cgroups_total,
#       _total_latency_seconds (histograms: every _bucket, _count and
#       _sum) - except the latency _buckets and _sums (1b). Samples with a
#       device label
#       only for our disk: iolat_block_device_info lists every disk of the
#       host, and other people's loop devices come and go meanwhile.
#       Also by value: the self-metrics that must not differ -
#       iolat_bpf_map_capacity_entries, iolat_bpf_map_entries,
#       iolat_collector_events_total, iolat_config_reloads_total,
#       iolat_config_last_reload_successful, iolat_disks_expired_total,
#       iolat_disks_retired_total, iolat_http_connections_closed_total,
#       process_max_fds - and every # HELP and # TYPE line of every family.
#    b. The _bucket and _sum series of the four latency histograms
#       (iolat_{block,workload}_{device,total}_latency_seconds): label sets
#       exactly, and the _count they belong to exactly (1a), but values
#       within a tolerance: a _sum within COMPARE_SUM_TOL_US (default 20)
#       microseconds per completion, a cumulative _bucket within 2 + 2 %
#       of the completions. Each binary's BPF program reads the clock
#       itself at the completion (the start is the kernel's stamp in the
#       request, the same for both), one program after the other: the same
#       I/O is ~0.5 us longer (measured mean; more when an interrupt falls
#       between the two) for the later one. So sums are never
#       bit-identical, and an I/O that ends within a few microseconds of an
#       `le` bound (100 us, 250 us, ...; common on a loaded machine) is
#       below it for one binary and above it for the other: the same binary
#       against itself showed 102 vs 101 writes <= 100 us; another run,
#       335 vs 332 of 387 I/Os <= 100 us with --no-label.op. A changed unit,
#       bound, view or op moves far more than that. The lines that differ
#       within tolerance are printed as a note.
#    c. By name and label set only (the value dropped; iolat_build_info's
#       version label dropped too, it is the revision's): iolat_build_info,
#       iolat_start_time_seconds,
#       iolat_config_last_reload_success_timestamp_seconds,
#       iolat_heap_allocated_bytes, iolat_http_connections,
#       iolat_scrape_duration_seconds, iolat_scrape_size_bytes,
#       iolat_bpf_program_recursion_misses_total,
#       iolat_bpf_program_run_seconds_total, iolat_bpf_program_runs_total,
#       process_cpu_seconds_total, process_open_fds,
#       process_resident_memory_bytes, process_virtual_memory_bytes, and any
#       other family not listed here (so a family only one binary has is a
#       difference).
# 2. `hist --json` (twice: plain, and -DOS: per disk, op and size class),
#    `top --json --once` and `trace --json`: eight processes at once over
#    one workload. hist and top run with no interval end of their own (hist
#    without INTERVAL; top with a 1 h one) and are stopped by SIGINT after
#    the workload, so each prints one interval holding all of it. Each
#    JSON object is flattened to "path = value" lines, each list element
#    named by its identity (disk, op, ... or a slot's lo-hi), and compared
#    after dropping what is time: "time", keys ending in _s, _ns, _ms
#    (intervals, latency sums, means, percentiles, max) and the latency
#    histograms' "slots" (the clock is each binary's own, as in 1b, and
#    these slots are 4 % wide); top's rates (_iops, _mbs: per second of an
#    interval whose length is the process's own). Kept, exactly: ios,
#    bytes, errors, latency counts and unseen, size slots, the collector's
#    counters, top's reads, writes, bytes, avg_kib, workload names.
#    trace: the sorted list of (dev, disk, sector, bytes, rwbs) of its
#    records (a multiset: a record twice is not once); times excluded.
#
# Environment:
#   OUT                    the current tree's build directory (for dio; build)
#   COMPARE_NEW_SERVE_ARGS extra arguments for NEW's `iolat serve` only: a
#                          hook to check that a difference is caught, e.g.
#                          --no-collector.request-size
#   COMPARE_SUM_TOL_US     see 1b
#   KEEP=1                 keep the work directory (lib.sh)
set -u

usage() {
	echo "usage: $0 OLD_IOLAT NEW_IOLAT (as root)" >&2
	exit 2
}
[ $# -eq 2 ] || usage
[ "$(id -u)" -eq 0 ] || { echo "$0: needs root (BPF, loop devices, cgroups)" >&2; exit 2; }
OLD_BIN=$(realpath -e "$1") || usage
NEW_BIN=$(realpath -e "$2") || usage
# lib.sh finds the helpers relative to the tree's top.
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=tests/integration/lib.sh
source tests/integration/lib.sh
# shellcheck source=tests/integration/lib_serve.sh
source tests/integration/lib_serve.sh
[ -x "$DIO" ] || fail "no $DIO: make $OUT/dio"
read -ra NEW_SERVE_ARGS <<<"${COMPARE_NEW_SERVE_ARGS:-}"
SUM_TOL_US=${COMPARE_SUM_TOL_US:-20}
DIFFS=0
T0=$(date +%s)

# verdict WHAT OLDFILE NEWFILE: one line, and the diff when they differ.
verdict() {
	local n
	n=$(wc -l <"$2")
	if cmp -s "$2" "$3"; then
		echo "same: $1, $n lines"
	else
		echo "DIFF: $1"
		diff -u --label "old: $1" --label "new: $1" "$2" "$3" | head -n "${COMPARE_DIFF_LINES:-200}"
		DIFFS=$((DIFFS + 1))
	fi
}

# The known workload: each size class and op in the cgroup, exact counts
# (dio: synchronous direct I/O, neither merged nor read ahead). 2 MiB reads
# are split by the queue's limit into requests of its size; the same for
# both binaries, so no matter.
workload() {
	in_cgroup "$CG" "$DIO" read "$LOOP" 200 4096 || fail "dio read 4k"
	in_cgroup "$CG" "$DIO" write "$LOOP" 100 16384 || fail "dio write 16k"
	in_cgroup "$CG" "$DIO" read "$LOOP" 50 65536 || fail "dio read 64k"
	in_cgroup "$CG" "$DIO" write "$LOOP" 20 262144 || fail "dio write 256k"
	in_cgroup "$CG" "$DIO" read "$LOOP" 4 2097152 || fail "dio read 2m"
	# A discard; -f skips blkdiscard's signature probe (buffered reads that
	# the page cache may or may not hold).
	in_cgroup "$CG" blkdiscard -f -o 0 -l 1048576 "$LOOP" 2>/dev/null || fail "blkdiscard"
	# udev re-reads a device closed after writing: let that be over too,
	# while both binaries still look.
	udev_settle
	# serve names a cgroup at its next walk of the hierarchy (1 s).
	sleep 1.2
}

# wait_for_line FILE PATTERN PID: until FILE says PATTERN (10 s), or PID died.
wait_for_line() {
	for _ in $(seq 1 100); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || fail "$(basename "$1"): exited: $(tail -n 3 "$1")"
		sleep 0.1
	done
	fail "$(basename "$1"): no '$2' within 10 s"
}

# stop PID...: SIGINT (hist, top and trace print then; serve detaches).
stop() {
	kill -INT "$@" 2>/dev/null
	for p in "$@"; do wait "$p" || fail "pid $p exited with $?"; done
}

# split_metrics FILE OUTPREFIX: a scrape into OUTPREFIX.value (1a),
# OUTPREFIX.sum (1b: "series count sum") and OUTPREFIX.name (1c).
split_metrics() {
	python3 - "$1" "$2" "$DISK" <<'PY'
import re, sys
src, out, disk = sys.argv[1:]
by_value = re.compile(r"^(iolat_block_|iolat_workload_|iolat_bpf_map_capacity_entries$|"
                      r"iolat_bpf_map_entries$|iolat_collector_events_total$|"
                      r"iolat_config_reloads_total$|iolat_config_last_reload_successful$|"
                      r"iolat_disks_expired_total$|iolat_disks_retired_total$|"
                      r"iolat_http_connections_closed_total$|process_max_fds$)")
lat = re.compile(r"^iolat_(block|workload)_(device|total)_latency_seconds_(bucket|sum)$")
value, names, timed, counts = [], [], [], {}
for line in open(src):
    line = line.rstrip("\n")
    if not line:
        continue
    if line.startswith("#"):
        value.append(line)
        continue
    series, v = line.rsplit(" ", 1)
    name, _, labels = series.partition("{")
    dev = re.search(r'(?:^|,)device="([^"]*)"', labels)
    if dev and dev.group(1) != disk:
        continue
    if lat.match(name):
        timed.append((series, name, labels, v))
    elif name.endswith("_latency_seconds_count") and by_value.match(name):
        counts[series] = v
        value.append(line)
    elif by_value.match(name):
        value.append(line)
    else:
        if name == "iolat_build_info":
            series = re.sub(r'version="[^"]*"', 'version=""', series)
        names.append(series)
with open(out + ".value", "w") as f:
    f.writelines(l + "\n" for l in sorted(value))
with open(out + ".name", "w") as f:
    f.writelines(l + "\n" for l in sorted(names))
# "series value completions": the _count of the histogram series it is in.
with open(out + ".lat", "w") as f:
    for series, name, labels, v in sorted(timed):
        base = re.sub(r'(,?)le="[^"]*"', "", labels).replace("{,", "{").rstrip(",}")
        key = name.rsplit("_", 1)[0] + "_count" + ("{" + base + "}" if base else "")
        f.write("%s %s %s\n" % (series, v, counts.get(key, "?")))
PY
}

# compare_lat OLD NEW: the .lat files (1b). Prints the lines that differ
# ("-old" then "+new", value and completions), each marked "within
# tolerance" or "BEYOND tolerance"; 1 if any is beyond.
compare_lat() {
	python3 - "$1" "$2" "$SUM_TOL_US" <<'PY'
import sys
def load(p):
    return {l.split()[0]: l.split()[1:] for l in open(p)}
old, new, tol_us = load(sys.argv[1]), load(sys.argv[2]), float(sys.argv[3])
bad = 0
for s in sorted(set(old) | set(new)):
    o, n = old.get(s), new.get(s)
    if o == n:
        continue
    ok = o is not None and n is not None and o[1] == n[1] and o[1] != "?"
    if ok:
        count, d = int(o[1]), abs(float(o[0]) - float(n[0]))
        if "_sum{" in s:
            ok = d <= tol_us * 1e-6 * count + 1e-9
        else:
            ok = d <= 2 + count // 50
    print("  %s tolerance: -%s %s" % ("within" if ok else "BEYOND", s, " ".join(o) if o else "(none)"))
    print("  %s tolerance: +%s %s" % ("within" if ok else "BEYOND", s, " ".join(n) if n else "(none)"))
    bad += not ok
sys.exit(1 if bad else 0)
PY
}

# serve_round NAME ARGS...: both binaries' `serve ARGS` over one workload.
serve_round() {
	local what="serve $1" po pn so sn tries
	shift
	po=$(free_port)
	pn=$(free_port)
	[ "$po" != "$pn" ] || pn=$(free_port)
	IOLAT_TEST_DISK=$DISK "$OLD_BIN" serve --web.listen-address="127.0.0.1:$po" "$@" \
		2>"$WORK/old.serve.log" &
	so=$!
	on_exit "kill -TERM $so"
	IOLAT_TEST_DISK=$DISK "$NEW_BIN" serve --web.listen-address="127.0.0.1:$pn" "$@" \
		"${NEW_SERVE_ARGS[@]}" 2>"$WORK/new.serve.log" &
	sn=$!
	on_exit "kill -TERM $sn"
	wait_for_line "$WORK/old.serve.log" "listening on" "$so"
	wait_for_line "$WORK/new.serve.log" "listening on" "$sn"
	workload
	# Scrape old, new, old again: if old's counts moved meanwhile, some I/O
	# (a late udev probe) fell between the scrapes; take them again.
	for tries in 1 2 3 4 5; do
		curl -sf "http://127.0.0.1:$po/metrics" >"$WORK/old.prom" || fail "$what: scrape old"
		curl -sf "http://127.0.0.1:$pn/metrics" >"$WORK/new.prom" || fail "$what: scrape new"
		curl -sf "http://127.0.0.1:$po/metrics" >"$WORK/old2.prom" || fail "$what: scrape old"
		split_metrics "$WORK/old.prom" "$WORK/old" || fail "$what: cannot read old's scrape"
		split_metrics "$WORK/new.prom" "$WORK/new" || fail "$what: cannot read new's scrape"
		split_metrics "$WORK/old2.prom" "$WORK/old2" || fail "$what: cannot read old's scrape"
		cmp -s "$WORK/old.value" "$WORK/old2.value" && break
		[ "$tries" -lt 5 ] || fail "$what: the disk's counts kept moving"
		sleep 1
	done
	stop "$so" "$sn"
	grep -q "^iolat_block_completions_total{device=\"$DISK\"" "$WORK/old.value" ||
		fail "$what: old binary counted no I/O on $DISK"
	verdict "$what (by value: iolat_block_*, iolat_workload_*, fixed self-metrics, metadata)" \
		"$WORK/old.value" "$WORK/new.value"
	local lat="latency _bucket, _sum within the clock's tolerance"
	if compare_lat "$WORK/old.lat" "$WORK/new.lat" >"$WORK/lat.diff"; then
		echo "same: $what ($lat), $(wc -l <"$WORK/old.lat") lines," \
			"$(($(wc -l <"$WORK/lat.diff") / 2)) not bit-identical"
		grep -v '_sum{' "$WORK/lat.diff" | sed 's/^/note: /'
	else
		echo "DIFF: $what ($lat)"
		cat "$WORK/lat.diff"
		DIFFS=$((DIFFS + 1))
	fi
	verdict "$what (by name and labels: self-metrics)" "$WORK/old.name" "$WORK/new.name"
}

# flatten_json KIND FILE: hist's or top's JSON objects as sorted
# "path = value" lines without the timing fields (header, 2).
flatten_json() {
	python3 - "$1" "$2" <<'PY'
import json, re, sys
kind, src = sys.argv[1:]
timing = re.compile(r"^(time|.*_(s|ns|ms|iops|mbs))$")
out = []
def ident(x):
    if "lo" in x and "hi" in x:
        return "%s-%s" % (x["lo"], x["hi"])
    # Names, not data: strings and lists of strings (a series' "on").
    return ",".join("%s=%s" % (k, json.dumps(x[k])) for k in sorted(x)
                    if isinstance(x[k], str) or x[k] is None or
                    (isinstance(x[k], list) and all(isinstance(e, str) for e in x[k])))
def walk(x, path, parent):
    if isinstance(x, dict):
        for k, v in x.items():
            if timing.match(k):
                continue
            # Latency histograms (under device/total); size_slots stay.
            if k == "slots" and parent in ("device", "total"):
                continue
            walk(v, path + "." + k, k)
    elif isinstance(x, list) and any(isinstance(e, dict) for e in x):
        for e in x:
            walk(e, "%s[%s]" % (path, ident(e)), parent)
    else:
        out.append("%s = %s" % (path, json.dumps(x)))
for i, line in enumerate(l for l in open(src) if l.strip()):
    walk(json.loads(line), "%s#%d" % (kind, i), "")
print("\n".join(sorted(out)))
PY
}

# trace_keys FILE: the records' (dev, disk, sector, bytes, rwbs), sorted.
trace_keys() {
	python3 - "$1" <<'PY'
import json, sys
rows = []
for line in open(sys.argv[1]):
    if line.strip():
        r = json.loads(line)
        rows.append("%s %s sector=%s bytes=%s %s" % (r["dev"], r["disk"], r["sector"], r["bytes"], r["rwbs"]))
print("\n".join(sorted(rows)))
PY
}

# cli_round: hist (plain and -DOS), top and trace of both binaries at once.
cli_round() {
	local b tool pids=() logs=()
	declare -A args=(
		[hist]="hist --json -d $DISK"
		[hist-DOS]="hist -DOS --json -d $DISK"
		[top]="top --once --json -d $DISK 3600"
		[trace]="trace --json -d $DISK"
	)
	for tool in hist hist-DOS top trace; do
		for b in old new; do
			local bin=$OLD_BIN
			[ "$b" = new ] && bin=$NEW_BIN
			# shellcheck disable=SC2086 # the arguments are words
			"$bin" ${args[$tool]} >"$WORK/$b.$tool.json" 2>"$WORK/$b.$tool.err" &
			pids+=("$!")
			logs+=("$WORK/$b.$tool.err")
			on_exit "kill -INT $!"
		done
	done
	for i in "${!pids[@]}"; do wait_for_line "${logs[i]}" "Tracing block device I/O" "${pids[i]}"; done
	workload
	stop "${pids[@]}"
	for tool in hist hist-DOS top; do
		flatten_json "$tool" "$WORK/old.$tool.json" >"$WORK/old.$tool.flat" || fail "old $tool: bad JSON"
		flatten_json "$tool" "$WORK/new.$tool.json" >"$WORK/new.$tool.flat" || fail "new $tool: bad JSON"
		grep -qE '\.(ios|reads) = [1-9]' "$WORK/old.$tool.flat" || fail "old $tool saw no I/O"
		verdict "${args[$tool]% -d *} (JSON, timing fields dropped)" "$WORK/old.$tool.flat" "$WORK/new.$tool.flat"
	done
	trace_keys "$WORK/old.trace.json" >"$WORK/old.trace.keys" || fail "old trace: bad JSON"
	trace_keys "$WORK/new.trace.json" >"$WORK/new.trace.keys" || fail "new trace: bad JSON"
	grep -q . "$WORK/old.trace.keys" || fail "old trace: no records ($(tail -n 1 "$WORK/old.trace.err"))"
	echo "trace records: old $(wc -l <"$WORK/old.trace.json"), new $(wc -l <"$WORK/new.trace.json");" \
		"old: $(tail -n 1 "$WORK/old.trace.err"); new: $(tail -n 1 "$WORK/new.trace.err")"
	verdict "trace --json ((dev, disk, sector, bytes, rwbs) per record)" \
		"$WORK/old.trace.keys" "$WORK/new.trace.keys"
}

make_loop 64
DISK=${LOOP#/dev/}
make_cgroup compare
echo "old: $OLD_BIN ($("$OLD_BIN" --version 2>&1 | head -n 1))"
echo "new: $NEW_BIN ($("$NEW_BIN" --version 2>&1 | head -n 1))${COMPARE_NEW_SERVE_ARGS:+, serve with $COMPARE_NEW_SERVE_ARGS}"
echo "disk $DISK, cgroup $CG"

serve_round defaults
serve_round no-label.op --no-label.op
serve_round label.size-class --label.size-class
cli_round

echo "$DIFFS difference(s), $(($(date +%s) - T0)) s"
[ "$DIFFS" -eq 0 ]
