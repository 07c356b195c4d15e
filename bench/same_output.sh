#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# same_output.sh - do two builds of iolat say the same thing about the same
# I/O? For refactors that must leave the output alone (issue 27's proof).
#
# serve: each build in turn (never both at once) serves a fresh loop device
# on which three cgroups (systemd service names, so each is a workload) do
# a known number of direct 4 KiB reads; once their workloads are named (a
# scrape on builds whose scrape runs the maintenance pass, a pass on builds
# with --maintenance.interval: NEW_ARGS), the scrape is kept, with only the
# lines of that loop device or of no device (other disks are the machine's,
# and others' I/O on them differs between runs), sorted, and the values
# that depend on time masked ("T"), and those that count the whole machine's
# I/O, other disks' too (map entries, collector events, label sets, body
# size; BPF run counts, which follow the global kernel.bpf_stats_enabled):
# "M"; build_info's version: "V". Then `diff` of the two.
# hist/top/trace: both builds run at once over the same reads, JSON out;
# compared by shape (every key path and value type) and by the fields that
# count I/O (ios, bytes, reads, record counts), not by times.
#
# Usage: OLD=DIR/build/iolat NEW=build/iolat [NEW_ARGS=...] bash bench/same_output.sh
#   (root; DIO defaults to NEW's dio; NEW_ARGS defaults to
#   --maintenance.interval=100ms; OLD_ARGS to nothing). Exit 0 if serve's
#   masked scrapes differ only in lines of families in EXPECT_NEW (default:
#   the iolat_maintenance_* families) and the JSON shapes and counts agree.
#   KEEP=DIR keeps the scrapes and JSON there.
set -euo pipefail

OLD=${OLD:?OLD=path to the old iolat}
NEW=${NEW:?NEW=path to the new iolat}
DIO=${DIO:-$(dirname "$NEW")/dio}
NEW_ARGS=${NEW_ARGS---maintenance.interval=100ms}
OLD_ARGS=${OLD_ARGS-}
EXPECT_NEW=${EXPECT_NEW:-iolat_maintenance_}
[ "$(id -u)" = 0 ] || { echo "same_output.sh: needs root" >&2; exit 1; }

if mountpoint -q /sys/fs/cgroup/blkio; then CGROOT=/sys/fs/cgroup/blkio; else CGROOT=/sys/fs/cgroup; fi
BASE=$CGROOT/iolat-same-$$
WORK=$(mktemp -d /dev/shm/iolat-same.XXXXXX)
IMG=$WORK/disk.img
PID='' LOOP='' BG=()
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	for p in "${BG[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ -d "$BASE" ] && find "$BASE" -depth -type d -exec rmdir {} + 2>/dev/null
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	if [ -n "${KEEP:-}" ]; then
		mkdir -p "$KEEP"
		cp "$WORK"/*.txt "$WORK"/*.json "$KEEP"/ 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
truncate -s 64M "$IMG"
LOOP=$(losetup --direct-io=on -f --show "$IMG")
DISK=${LOOP#/dev/}
mkdir "$BASE"
WL=(p27a p27b p27c)
for w in "${WL[@]}"; do mkdir "$BASE/$w.service"; done

# reads: workload i does 8*(i+1) direct reads of 4 KiB, in its cgroup.
reads() {
	local i=0
	for w in "${WL[@]}"; do
		i=$((i + 1))
		sh -c 'echo $$ > "$0/cgroup.procs" && exec "$1" read "$2" "$3" 4096' \
			"$BASE/$w.service" "$DIO" "$LOOP" $((8 * i))
	done
}

metric() { awk -v m="$1" '$1 == m { print $2 }' "$2"; }

# serve_scrape NAME BINARY ARGS...: one serve, its masked scrape in NAME.txt.
serve_scrape() {
	local name=$1 bin=$2 port body=$WORK/$1.raw passes
	shift 2
	port=$((40000 + RANDOM % 20000))
	"$bin" serve --web.listen-address=127.0.0.1:$port "$@" 2>"$WORK/$name.log" &
	PID=$!
	for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/-/healthy" >/dev/null && break; sleep 0.1; done
	reads
	sleep 1.2 # past the hierarchy walk's once-a-second limit
	curl -sf "http://127.0.0.1:$port/metrics" >"$body"
	passes=$(metric iolat_maintenance_passes_total "$body")
	if [ -n "$passes" ]; then # passes on a schedule: wait for two more
		for _ in $(seq 100); do
			curl -sf "http://127.0.0.1:$port/metrics" >"$body"
			[ "$(metric iolat_maintenance_passes_total "$body")" -ge $((passes + 2)) ] && break
			sleep 0.05
		done
	fi
	curl -sf "http://127.0.0.1:$port/metrics" >"$body"
	kill "$PID"
	wait "$PID" 2>/dev/null || true
	PID=''
	# keep no-device lines and this loop's; mask what depends on time
	awk -v d="device=\"$DISK\"" '
		/^#/ { print; next }
		/device="/ && index($0, d) == 0 { next }
		/^(process_|iolat_scrape_duration_seconds|iolat_start_time_seconds|iolat_collector_start_time_seconds|iolat_heap_allocated_bytes|iolat_maintenance_|iolat_config_last_reload_success_timestamp_seconds|iolat_scrapes_total|iolat_http_requests_total)/ ||
		/latency_seconds_(bucket|sum)/ { $NF = "T" }
		/^(iolat_bpf_map_entries|iolat_bpf_map_fill_ratio|iolat_bpf_program_run|iolat_collector_events_total|iolat_workload_label_sets |iolat_scrape_size_bytes)/ { $NF = "M" }
		/^iolat_build_info/ { sub(/version="[^"]*"/, "version=\"V\"") }
		{ print }' "$body" | sort >"$WORK/$name.txt"
}

echo "== serve: $OLD ${OLD_ARGS:-(no extra flags)} vs $NEW $NEW_ARGS on $DISK"
# shellcheck disable=SC2086
serve_scrape old "$OLD" $OLD_ARGS
# shellcheck disable=SC2086
serve_scrape new "$NEW" $NEW_ARGS
rc=0
wc -l <"$WORK/old.txt" | sed "s/^/serve: lines old: /"
wc -l <"$WORK/new.txt" | sed "s/^/serve: lines new: /"
diff "$WORK/old.txt" "$WORK/new.txt" >"$WORK/serve.diff" || true
cat "$WORK/serve.diff"
if grep '^[<>]' "$WORK/serve.diff" | grep -v "^> \(# [A-Z]* \)\?$EXPECT_NEW" | grep -q .; then
	echo "serve: DIFFERENT beyond $EXPECT_NEW*"
	rc=1
else
	echo "serve: same apart from the new $EXPECT_NEW* families"
fi
grep -c "workload=\"p27" "$WORK/new.txt" | sed 's/^/serve: lines of this run'"'"'s workloads (new): /'

# both builds at once over the same reads; CMD... gets the build as $B
both() {
	local what=$1
	shift
	for b in old new; do
		if [ $b = old ]; then B=$OLD; else B=$NEW; fi
		"$B" "$@" >"$WORK/$what-$b.json" 2>"$WORK/$what-$b.err" &
		BG+=($!)
	done
}
finish() {
	local p
	for p in "${BG[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	for p in "${BG[@]}"; do wait "$p" 2>/dev/null || true; done
	BG=()
}

echo "== hist -j -D -d $DISK 4 1"
both hist hist -j -D -d "$DISK" 4 1
sleep 2
reads
for p in "${BG[@]}"; do wait "$p" || true; done
BG=()
echo "== top --once -j -d $DISK 4"
both top top --once -j -d "$DISK" 4
sleep 2
reads
for p in "${BG[@]}"; do wait "$p" || true; done
BG=()
echo "== trace -j -s 2 -d $DISK"
both trace trace -j -s 2 -d "$DISK"
sleep 2
reads
sleep 1
finish

python3 - "$WORK" <<'PY' || rc=1
import json, sys
work = sys.argv[1]

def shape(v, path, out):
    if isinstance(v, dict):
        for k, x in v.items():
            shape(x, path + "." + k, out)
    elif isinstance(v, list):
        out.add(path + "[]")
        for x in v:
            shape(x, path + "[]", out)
    else:
        kind = {bool: "bool", int: "number", float: "number", str: "string"}
        out.add("%s:%s" % (path, kind.get(type(v), "null")))

def counts(what, objs):
    if what == "hist":
        return [(s["disk"], s["ios"], s["bytes"], s["errors"], s["device"]["count"],
                 json.dumps(s["size_slots"])) for o in objs for s in o["series"]]
    if what == "top":
        return sorted((w["kind"], w["name"], w["reads"], w["writes"], w["read_bytes"])
                      for o in objs for w in o["workloads"])
    return [("records", len(objs)), ("bytes", sum(o["bytes"] for o in objs))]

bad = 0
for what in ("hist", "top", "trace"):
    res = {}
    for b in ("old", "new"):
        objs = [json.loads(l) for l in open("%s/%s-%s.json" % (work, what, b)) if l.strip()]
        s = set()
        for o in objs:
            shape(o, "", s)
        res[b] = (s, counts(what, objs))
    (so, co), (sn, cn) = res["old"], res["new"]
    print("%s: %d key paths old, %d new; only old: %s; only new: %s" %
          (what, len(so), len(sn), sorted(so - sn) or "none", sorted(sn - so) or "none"))
    print("%s: counts old %s" % (what, co))
    print("%s: counts new %s" % (what, cn))
    if so != sn or co != cn:
        print("%s: DIFFERENT" % what)
        bad = 1
sys.exit(bad)
PY
for b in old new; do echo "trace-$b: $(tail -1 "$WORK/trace-$b.err")"; done
exit $rc
