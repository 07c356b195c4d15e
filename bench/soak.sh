#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# soak.sh - months of `iolat serve` compressed into minutes: does anything
# grow that should stay flat?
#
# `iolat serve` runs with workload series on (keyed by cgroup) on a free
# loopback port. Keep-alive clients (bench/soak.py) scrape it in six formats
# (text, OpenMetrics, protobuf, each plain and gzipped) until --scrapes are
# done. Meanwhile, paced by the scrape count so each spreads over the whole
# run:
#   - cgroups are created in the io controller's hierarchy (v1 blkio where it
#     is bound, else v2), each does direct reads and writes on a loop device
#     from inside (build/dio), lives while the next --live ones are made, and
#     is removed: --cgroups in all;
#   - loop devices are attached (over a file in /dev/shm), used, and detached
#     once the next one is up: --disks cycles; every --unstamped-every-th
#     has iostats off, so its requests go through the request-map fallback
#     (rq_starts) rather than the kernel's own timestamps;
#   - SIGHUPs alternate between two valid configuration files, and every
#     --bad-every-th one finds an invalid file: an injected fault, whose log
#     lines are expected (--hups in all; 0 turns them off).
# Every --sample-every scrapes soak.py records VmRSS, open fds, threads and
# the iolat_bpf_map_entries gauges. At the end it fits a least-squares line
# through them (the first --warmup of the scrapes left out) and prints each
# slope per 10 000 scrapes, and the log is read for error and warning lines
# that no injected fault explains.
#
# Exit 0 only if: the daemon lived to the end and stopped cleanly on SIGTERM,
# every scrape was well-formed, every SIGHUP was answered with its log line,
# no slope is above its limit, and the log has nothing unexpected.
#
# The limits (per 10 000 scrapes), and why:
#   RSS 48 KiB:   a year of 15 s scrapes is 210 x 10 000 scrapes, so at
#                 most ~10 MiB a year, about the daemon's own RSS. It is met
#                 by a leak of less than ~5 bytes a scrape, 100 bytes a
#                 cgroup, 2.4 KiB a SIGHUP or 4.8 KiB a disk cycle.
#   fds 1:        every event here happens at least 10 times per 10 000
#                 scrapes (with the defaults: 10 disk cycles, 20 SIGHUPs,
#                 500 cgroups), so leaking one fd per event of any kind shows
#                 as 10 or more; connections coming and going move the count
#                 by a few, which over ~90 samples fits well below 1.
#   map entries 5: the same argument for kernel map keys; live cgroups and
#                 requests in flight move the count up and down, not along.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT=${OUT:-build}
IOLAT=${IOLAT:-$ROOT/$OUT/iolat}
DIO=${DIO:-$ROOT/$OUT/dio}
SCRAPES=${SCRAPES:-100000}
CGROUPS=${CGROUPS:-5000}
DISKS=${DISKS:-100}
HUPS=${HUPS:-200}
BAD_EVERY=${BAD_EVERY:-10}
LIVE=${LIVE:-20}
UNSTAMPED_EVERY=${UNSTAMPED_EVERY:-2}
WORKERS=${WORKERS:-3}
SAMPLE_EVERY=${SAMPLE_EVERY:-}
WARMUP=${WARMUP:-0.1}
MAX_RSS_KIB=${MAX_RSS_KIB:-48}
MAX_FDS=${MAX_FDS:-1}
MAX_MAP_ENTRIES=${MAX_MAP_ENTRIES:-5}
KEEP=${KEEP:-0}
CMDLINE="bash bench/soak.sh${*:+ $*}"

usage() {
	cat <<EOF
Usage: bash bench/soak.sh [OPTIONS]     (or: make soak [SCRAPES=N ...])

A compressed soak of 'iolat serve': scrapes in six formats over keep-alive
connections while cgroups come and go doing direct I/O, loop devices are
attached and detached and SIGHUPs reload alternating configurations (now and
then an invalid one). Prints the slope of RSS, open fds and BPF map entries
per 10 000 scrapes; fails if one is above its limit, the daemon died, a
scrape was wrong or its log has an error no injected fault explains. Root.

Options (each also an environment variable, named in brackets):
  --scrapes N        scrapes in all (default 100000) [SCRAPES]
  --cgroups N        cgroups created, used and removed (default 5000) [CGROUPS]
  --disks N          loop device attach/use/detach cycles (default 100) [DISKS]
  --hups N           SIGHUPs (default 200; 0: none) [HUPS]
  --bad-every N      every Nth SIGHUP finds an invalid config (default 10;
                     0: never) [BAD_EVERY]
  --live N           cgroups alive at once (default 20) [LIVE]
  --unstamped-every N  every Nth disk has iostats off, so the kernel does not
                     stamp its requests and iolat times them through its
                     request-map fallback (default 2; 0: never) [UNSTAMPED_EVERY]
  --workers N        concurrent scraping clients (default 3) [WORKERS]
  --sample-every N   scrapes between samples (default: scrapes / 500)
                     [SAMPLE_EVERY]
  --warmup F         fraction of the scrapes left out of the fit (default
                     0.1) [WARMUP]
  --max-rss-kib S, --max-fds S, --max-map-entries S
                     slope limits per 10 000 scrapes (default 48, 1, 5)
                     [MAX_RSS_KIB, MAX_FDS, MAX_MAP_ENTRIES]
  --iolat PATH       iolat binary (default $OUT/iolat) [IOLAT]
  --dio PATH         the dio helper (default $OUT/dio) [DIO]
  --keep             keep the work directory (samples, log) in /dev/shm [KEEP=1]
  -h, --help         this help

Examples:
  make soak                                        the full run (~25 minutes)
  bash bench/soak.sh --scrapes 3000 --cgroups 150 --disks 5 --hups 10
  bash bench/soak.sh --scrapes 20000 --hups 0      without SIGHUPs
EOF
}

die() {
	echo "soak.sh: $*" >&2
	exit 1
}

is_uint() { [[ "$1" =~ ^(0|[1-9][0-9]*)$ ]]; }
is_num() { [[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]]; }

while [ $# -gt 0 ]; do
	opt=$1 val=
	case "$opt" in
	--keep) KEEP=1; shift; continue ;;
	-h | --help) usage; exit 0 ;;
	--*=*) val=${opt#*=}; opt=${opt%%=*}; shift ;;
	--*) [ $# -ge 2 ] || die "$opt needs a value"; val=$2; shift 2 ;;
	*) usage >&2; die "unknown argument '$opt'" ;;
	esac
	case "$opt" in
	--scrapes) SCRAPES=$val ;;
	--cgroups) CGROUPS=$val ;;
	--disks) DISKS=$val ;;
	--hups) HUPS=$val ;;
	--bad-every) BAD_EVERY=$val ;;
	--live) LIVE=$val ;;
	--unstamped-every) UNSTAMPED_EVERY=$val ;;
	--workers) WORKERS=$val ;;
	--sample-every) SAMPLE_EVERY=$val ;;
	--warmup) WARMUP=$val ;;
	--max-rss-kib) MAX_RSS_KIB=$val ;;
	--max-fds) MAX_FDS=$val ;;
	--max-map-entries) MAX_MAP_ENTRIES=$val ;;
	--iolat) IOLAT=$val ;;
	--dio) DIO=$val ;;
	*) usage >&2; die "unknown option '$opt'" ;;
	esac
done
[ -n "$SAMPLE_EVERY" ] || SAMPLE_EVERY=$(((SCRAPES + 499) / 500))
for v in SCRAPES CGROUPS DISKS HUPS BAD_EVERY LIVE UNSTAMPED_EVERY WORKERS SAMPLE_EVERY; do
	is_uint "${!v}" || die "${v,,} must be a whole number, not '${!v}'"
done
for v in WARMUP MAX_RSS_KIB MAX_FDS MAX_MAP_ENTRIES; do
	is_num "${!v}" || die "${v,,} must be a number, not '${!v}'"
done
[ "$SCRAPES" -ge 1000 ] || die "--scrapes must be at least 1000"
[ "$DISKS" -ge 1 ] || die "--disks must be at least 1 (the cgroups' I/O needs a disk)"
((WORKERS >= 1 && SAMPLE_EVERY >= 1 && LIVE >= 1)) ||
	die "--workers, --sample-every and --live must be at least 1"
[ "$(id -u)" -eq 0 ] || die "needs root (BPF programs, loop devices, cgroups)"
for c in curl python3 losetup flock bpftool; do
	command -v "$c" >/dev/null || die "'$c' not found"
done
[[ -x "$IOLAT" && -x "$DIO" ]] || die "$IOLAT or $DIO missing: make -j2 all helpers"

# The io controller's hierarchy, as tests/integration/lib.sh finds it.
if mountpoint -q /sys/fs/cgroup/blkio 2>/dev/null; then
	CGROOT=/sys/fs/cgroup/blkio
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	CGROOT=/sys/fs/cgroup
else
	CGROOT=/sys/fs/cgroup/unified
fi

WORK=$(mktemp -d /dev/shm/iolat-soak.XXXXXX)
BASE=$CGROOT/iolat-soak-$$
CONF=$WORK/iolat.yml
LOG=$WORK/serve.log
PID='' SCRAPER='' CHURN_PIDS=()
mkdir "$BASE"

cleanup() {
	local rc=$? p l
	trap - EXIT INT TERM
	set +e
	for p in "${CHURN_PIDS[@]}" $SCRAPER; do kill "$p" 2>/dev/null; done
	for p in "${CHURN_PIDS[@]}" $SCRAPER; do wait "$p" 2>/dev/null; done
	if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
		kill -TERM "$PID"
		wait "$PID" 2>/dev/null
	fi
	# Cgroups left by an interrupted run: their tasks (dio) end by themselves.
	for _ in 1 2 3 4 5; do
		find "$BASE" -depth -type d -exec rmdir {} + 2>/dev/null
		[ -d "$BASE" ] || break
		sleep 0.2
	done
	# Only disks over our own files: a number we freed may be someone else's now.
	for img in "$WORK"/disk*.img; do
		[ -e "$img" ] || continue
		for l in $(losetup -j "$img" -O NAME -n 2>/dev/null); do losetup -d "$l" 2>/dev/null; done
	done
	if [ "$KEEP" = 1 ]; then
		rm -f "$WORK"/disk*.img
		echo "soak.sh: kept $WORK" >&2
	else
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- configurations: two valid ones, and the injected fault ---
# They differ in what a reload rebuilds: the workload cap and expiry, the
# user rules, the classic bucket bounds, the op label and a view.
cat >"$WORK/a.yml" <<'YML'
workloads:
  max: 100
  expire: 4s
  rules:
    - match: '/soak-([0-9]*[05])\.service$'
      kind: tenant
      name: 'five-\1'
log_level: info
YML
cat >"$WORK/b.yml" <<'YML'
workloads:
  max: 60
  expire: 2s
buckets:
  latency_seconds: [0.00005, 0.0005, 0.005, 0.05, 0.5]
labels:
  op: false
views:
  total_time: false
log_level: info
YML
printf 'workloads:\n  max: [\n' >"$WORK/bad.yml"
install_conf() { cp "$WORK/$1" "$CONF.tmp" && mv "$CONF.tmp" "$CONF"; }
install_conf a.yml

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
progress() { cat "$WORK/progress" 2>/dev/null || echo 0; }
# wait_scrapes N: until N scrapes are done (the churn's pace).
wait_scrapes() {
	while [ "$(progress)" -lt "$1" ]; do
		[ -e "$WORK/scraper.done" ] && return 0
		sleep 0.05
	done
}

# --- disks: attach, use, detach, one after the other ---
# $WORK/loop names the disk the cgroups use now; the lock keeps a disk
# from going while a cgroup's dio runs on it.
attach_disk() {
	local img=$WORK/disk$1.img dev
	truncate -s 16M "$img"
	dev=$(losetup --direct-io=on -f --show "$img") || die "losetup failed"
	# A loop device keeps its queue settings across uses: set both ways.
	if ((UNSTAMPED_EVERY > 0 && $1 % UNSTAMPED_EVERY == 0)); then
		echo 0 >"/sys/block/${dev#/dev/}/queue/iostats"
	else
		echo 1 >"/sys/block/${dev#/dev/}/queue/iostats"
	fi
	"$DIO" write "$dev" 4 4096 >/dev/null
	"$DIO" read "$dev" 4 4096 >/dev/null
	echo "$dev"
}
disk_churn() {
	local c dev old
	for ((c = 2; c <= DISKS; c++)); do
		wait_scrapes $((SCRAPES * (c - 1) / DISKS))
		dev=$(attach_disk "$c")
		# shellcheck disable=SC2016 # expanded by the inner sh
		old=$(flock "$WORK/disk.lock" sh -c 'cat "$0/loop"; echo "$1" >"$0/loop"' "$WORK" "$dev")
		losetup -d "$old"
		rm -f "$WORK/disk$((c - 1)).img"
	done
	echo "$DISKS" >"$WORK/disks.done"
}

# --- cgroups: make, do I/O inside, remove once LIVE newer ones exist ---
cgroup_churn() {
	local i cg
	for ((i = 1; i <= CGROUPS; i++)); do
		wait_scrapes $((SCRAPES * (i - 1) / CGROUPS))
		cg=$BASE/soak-$i.service
		mkdir "$cg"
		# shellcheck disable=SC2016 # expanded by the inner sh
		flock "$WORK/disk.lock" sh -c 'echo $$ >"$0/cgroup.procs" &&
			dev=$(cat "$1/loop") && "$2" read "$dev" 4 4096 && "$2" write "$dev" 2 4096' \
			"$cg" "$WORK" "$DIO" >/dev/null || die "I/O in $cg failed"
		if ((i > LIVE)); then
			rmdir "$BASE/soak-$((i - LIVE)).service"
		fi
	done
	for ((i = CGROUPS - LIVE + 1; i <= CGROUPS; i++)); do
		((i >= 1)) && rmdir "$BASE/soak-$i.service"
	done
	echo "$CGROUPS" >"$WORK/cgroups.done"
}

# --- SIGHUPs: a, b, a, b, ... every BAD_EVERY-th one the invalid file ---
# Each waits for its answer in the log, so none coalesce.
log_count() { grep -c "$1" "$LOG" || true; }
hup_churn() {
	local h want what n0 good=0 bad=0 t
	for ((h = 1; h <= HUPS; h++)); do
		wait_scrapes $((SCRAPES * h / (HUPS + 1)))
		if ((BAD_EVERY > 0 && h % BAD_EVERY == 0)); then
			install_conf bad.yml
			want="reload failed, keeping the running configuration" what=bad
		else
			if ((good % 2)); then install_conf a.yml; else install_conf b.yml; fi
			want="configuration reloaded\" counters=kept" what=good
		fi
		n0=$(log_count "$want")
		kill -HUP "$PID" || die "SIGHUP $h: iolat is gone"
		for ((t = 0; t < 200; t++)); do
			[ "$(log_count "$want")" -gt "$n0" ] && break
			sleep 0.05
		done
		[ "$(log_count "$want")" -gt "$n0" ] || die "SIGHUP $h ($what config) unanswered in 10 s"
		if [ "$what" = bad ]; then bad=$((bad + 1)); else good=$((good + 1)); fi
	done
	echo "$good $bad" >"$WORK/hups.done"
}

# --- start ---
echo "command:  $CMDLINE"
echo "date:     $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine:  $(nproc) CPUs, $(awk '/^MemTotal:/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)," \
	"$(uname -sr), $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
echo "iolat:    $("$IOLAT" --version 2>&1 | head -1) ($IOLAT), commit" \
	"$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo '+changes')"
echo "plan:     $SCRAPES scrapes by $WORKERS keep-alive clients (text, OpenMetrics, protobuf; plain and gzip);" \
	"$CGROUPS cgroups in $CGROOT ($LIVE alive at once); $DISKS loop disks; $HUPS SIGHUPs" \
	"(every ${BAD_EVERY}th invalid); a sample every $SAMPLE_EVERY scrapes"
echo "work:     $WORK"
echo

dev=$(attach_disk 1) || die "cannot attach the first disk"
echo "$dev" >"$WORK/loop"
before_progs=$(bpftool prog show 2>/dev/null | sed -nE 's/^([0-9]+): .*/\1/p' | sort)
"$IOLAT" serve --web.listen-address="127.0.0.1:$PORT" --config.file="$CONF" 2>"$LOG" &
PID=$!
for _ in $(seq 100); do
	grep -q "listening on" "$LOG" && break
	kill -0 "$PID" 2>/dev/null || die "iolat serve exited: $(cat "$LOG")"
	sleep 0.1
done
grep -q "listening on" "$LOG" || die "iolat serve did not listen within 10 s"
our_progs=$(comm -13 <(echo "$before_progs") \
	<(bpftool prog show 2>/dev/null | sed -nE 's/^([0-9]+): .*/\1/p' | sort))
curl -sf -o /dev/null "http://127.0.0.1:$PORT/metrics" || die "first scrape failed"
fds_idle_start=$(find "/proc/$PID/fd" -mindepth 1 | wc -l)
t_start=$(date +%s.%N)

python3 "$HERE/soak.py" scrape --port "$PORT" --pid "$PID" --scrapes "$SCRAPES" \
	--workers "$WORKERS" --sample-every "$SAMPLE_EVERY" --dir "$WORK" \
	--until "$WORK/churn.done" &
SCRAPER=$!
disk_churn &
CHURN_PIDS+=($!)
cgroup_churn &
CHURN_PIDS+=($!)
if [ "$HUPS" -gt 0 ]; then
	hup_churn &
	CHURN_PIDS+=($!)
fi

# Waits for the churn, then lets the scrapers finish. The scrapers ending
# first means they failed (they wait for churn.done); any failure ends all.
failed='' scrape_rc=''
while [ ${#CHURN_PIDS[@]} -gt 0 ]; do
	rc=0
	wait -n -p done_pid "${CHURN_PIDS[@]}" "$SCRAPER" || rc=$?
	if [ "$done_pid" = "$SCRAPER" ]; then
		scrape_rc=$rc SCRAPER=
		failed="the scrapers stopped before the churn was done"
		break
	fi
	rest=()
	for p in "${CHURN_PIDS[@]}"; do [ "$p" = "$done_pid" ] || rest+=("$p"); done
	CHURN_PIDS=("${rest[@]}")
	[ "$rc" = 0 ] || { failed="churn (pid $done_pid) failed"; break; }
done
touch "$WORK/churn.done"
if [ -n "$failed" ]; then
	for p in "${CHURN_PIDS[@]}" $SCRAPER; do kill "$p" 2>/dev/null; done
	for p in "${CHURN_PIDS[@]}" $SCRAPER; do wait "$p" 2>/dev/null || true; done
	CHURN_PIDS=() SCRAPER=
	kill -0 "$PID" 2>/dev/null || failed="$failed; iolat serve died"
	die "$failed; log tail: $(tail -5 "$LOG")"
fi
scrape_rc=0
wait "$SCRAPER" || scrape_rc=$?
touch "$WORK/scraper.done"
SCRAPER=
t_end=$(date +%s.%N)
kill -0 "$PID" 2>/dev/null || die "iolat serve died; log tail: $(tail -5 "$LOG")"
curl -sf -o "$WORK/last.prom" "http://127.0.0.1:$PORT/metrics" || die "the last scrape failed"
reloads_ok=$(awk '$1 == "iolat_config_reloads_total{result=\"success\"}" { print $2 }' "$WORK/last.prom")
reloads_failed=$(awk '$1 == "iolat_config_reloads_total{result=\"failure\"}" { print $2 }' "$WORK/last.prom")
sleep 2 # the clients' connections are closed; let the server see it
fds_idle_end=$(find "/proc/$PID/fd" -mindepth 1 | wc -l)

# --- stop: SIGTERM must end it at once, with every program detached ---
kill -TERM "$PID"
stop_rc=0
wait "$PID" || stop_rc=$?
PID=
left=$(comm -12 <(echo "$our_progs") \
	<(bpftool prog show 2>/dev/null | sed -nE 's/^([0-9]+): .*/\1/p' | sort) | tr '\n' ' ')

# --- the log: everything not info must belong to an injected fault ---
# An invalid file's reload fails with one error line naming the file and the
# place in it; nothing else may be above info.
hups_good=0 hups_bad=0
[ ! -e "$WORK/hups.done" ] || read -r hups_good hups_bad <"$WORK/hups.done"
fault_re="^ts=[^ ]* level=error msg=\"reload failed, keeping the running configuration\" file=$CONF line=[0-9]+ col=[0-9]+ err="
rejected=$(grep -cE "$fault_re" "$LOG" || true)
unexpected=$(grep -vE -e '^ts=[^ ]* level=info ' -e "$fault_re" "$LOG" || true)
echo
python3 "$HERE/soak.py" report --dir "$WORK" --sample-every "$SAMPLE_EVERY" --warmup "$WARMUP" --max-rss-kib "$MAX_RSS_KIB" \
	--max-fds "$MAX_FDS" --max-map-entries "$MAX_MAP_ENTRIES" || failed="a slope is above its limit"
echo
awk -v a="$t_start" -v b="$t_end" 'BEGIN { printf "duration: %.0f s\n", b - a }'
echo "churn:    $(cat "$WORK/cgroups.done") cgroups, $(cat "$WORK/disks.done") disk cycles," \
	"$((hups_good + hups_bad)) SIGHUPs ($hups_good valid, $hups_bad invalid)"
echo "fds idle: $fds_idle_start after the first scrape, $fds_idle_end at the end (clients gone)"
echo "log:      $(wc -l <"$LOG") lines; $(log_count 'configuration reloaded" counters=kept') reloads," \
	"$rejected failed on the invalid file (injected: $hups_bad);" \
	"iolat_config_reloads_total: ${reloads_ok:-?} success, ${reloads_failed:-?} failure"
echo "stop:     exit $stop_rc${left:+, programs still loaded: $left}"

[ "$scrape_rc" = 0 ] || failed="${failed:+$failed; }a scrape failed (above)"
[ "$stop_rc" = 0 ] || failed="${failed:+$failed; }iolat exited $stop_rc on SIGTERM"
[ -z "${left// /}" ] || failed="${failed:+$failed; }programs left loaded: $left"
[ "${reloads_ok:-0}" = "$hups_good" ] && [ "${reloads_failed:-0}" = "$hups_bad" ] ||
	failed="${failed:+$failed; }iolat_config_reloads_total says ${reloads_ok:-0} + ${reloads_failed:-0}, sent $hups_good + $hups_bad"
[ "$rejected" = "$hups_bad" ] ||
	failed="${failed:+$failed; }$hups_bad invalid configs, but $rejected failed reloads logged"
if [ -n "$unexpected" ]; then
	echo "unexpected log lines:" >&2
	echo "$unexpected" | head -20 >&2
	failed="${failed:+$failed; }$(echo "$unexpected" | wc -l) unexpected log lines"
fi
[ -z "$failed" ] || die "FAIL: $failed"
echo "PASS"
