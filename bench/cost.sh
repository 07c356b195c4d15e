#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# cost.sh - per-I/O cost of iolat's BPF programs next to its peers, and the
# IOPS each tool leaves to a fast workload.
#
# One fio workload (4 KiB random reads, io_uring, QD32, O_DIRECT) on a loop
# device over a file in /dev/shm runs once per tool per round: with no
# tracing, under iolat, libbpf-tools biolatency -D, bpftrace's tracepoint
# biolatency (bench/biolatency.bt) and "floor": bpftrace with one empty
# program on block_rq_issue, which shows what BPF stats charge any program
# run. The tool order rotates every round so drift and noise land on every
# tool. With kernel.bpf_stats_enabled=1 the kernel keeps run_time_ns and
# run_cnt per program; the difference between `bpftool prog show -j` just
# before and just after fio, summed over the tool's programs, divided by the
# I/Os fio completed, is the tool's cost per I/O. A tool's programs are the
# ones its process holds (/proc/PID/fdinfo), so programs others load at the
# same time are not counted.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
ROUNDS=${ROUNDS:-3}
RUNTIME=${RUNTIME:-10}
IOLAT=${IOLAT:-$ROOT/build-bench/iolat}
BIOLATENCY=${BIOLATENCY:-/usr/sbin/biolatency}
SIZE_MIB=${SIZE_MIB:-1024}
STATS=1
CPU=0
CONTENTION=0
CMDLINE="bash bench/cost.sh${*:+ $*}"

usage() {
	cat <<EOF
Usage: bash bench/cost.sh [OPTIONS]

Per-I/O BPF cost (kernel BPF stats) and IOPS of iolat, libbpf-tools
biolatency -D and a bpftrace tracepoint biolatency, each on the same fio
workload (4 KiB randread, io_uring, QD32, direct) on a loop device in
/dev/shm, plus IOPS with no tracing and with one empty BPF program ("floor":
what kernel BPF stats charge per program run). Rounds interleave the tools.
Needs root.

Options:
  --rounds N      rounds of all five runs (default 3; env ROUNDS)
  --runtime S     seconds of fio per run (default 10; env RUNTIME)
  --iolat PATH    iolat binary (default build-bench/iolat; env IOLAT;
                  build it with 'make OUT=build-bench')
  --iolat-old PATH  another iolat build (env IOLAT_OLD), run beside the first
                  as tools old-iolat and old-iolat-serve: a change's cost, same run
  --size MIB      size of the /dev/shm backing file (default 1024; env SIZE_MIB)
  --no-stats      leave kernel.bpf_stats_enabled alone (off): IOPS only, without
                  the stats' own per-run overhead
  --cpu           stats-free cost: kernel.bpf_stats_enabled=0 (set for the run),
                  and each tool's cost as the machine's busy CPU time per I/O
                  (/proc/stat) and fio's own, minus that of the runs with no
                  tool, and as a ratio to biolatency's (bench/cost_cpu.py);
                  TOOLS defaults to "none iolat biolatency"
  --contention    two fio jobs, each pinned to its own CPU (QD16 each), on the
                  same disk in the same cgroup: completions of one key on both
                  CPUs at once, where serve's shared values (atomic adds) meet
                  hist's per-CPU ones
  -h, --help      this help

Environment: BIOLATENCY (default /usr/sbin/biolatency); TOOLS (a subset of:
none iolat iolat-serve iolat-trace1000 iolat-inert biolatency bpftrace floor
(iolat-inert: a serve --handover collector left pinned past its lease), and with
--iolat-old old-iolat old-iolat-serve). Also in TOOLS, not run by default:
the lower bounds of bench/bound.bpf.c, each one program at block_rq_complete
loaded by bpfload (both built by 'make helpers' beside iolat; env BPFLOAD,
BOUND): bound-empty (nothing), bound-clock (one clock read), bound-slot (an
exact one-series histogram), bound-disk (the same per disk and op, hashed),
bound-dense (per disk and op, a per-CPU array indexed by the queue's id),
bound-kval (bound-disk with iolat's key and 5 KiB value), bound-views (that
with both views, sums, maxima, size slot and bytes: iolat's account() by bit
length), bound-views-dense (bound-views found by a dense index by queue id
and op, as iolat's rows are), bound-cgroup (bound-views keyed by cgroup too, one shared value
per key, atomic adds: serve's shape) and bound-restamp (three programs: a clock
read at creation and at issue where a plug caches the kernel's stamps, and
bound-views-dense timed from them: the least that keeps both views true on
6.9+, to set against biolatency's two programs).

Examples:
  bash bench/cost.sh                          3 rounds x 10 s, about 3 minutes
  bash bench/cost.sh --rounds 5 --runtime 20
  bash bench/cost.sh --no-stats               IOPS with no measurement overhead
  bash bench/cost.sh --cpu --rounds 5         CPU ns per I/O, BPF stats off
  TOOLS="iolat iolat-serve floor" bash bench/cost.sh --contention
  TOOLS="iolat floor bound-empty bound-clock bound-slot bound-disk" bash bench/cost.sh
  TOOLS="iolat iolat-serve bound-slot bound-disk bound-dense bound-views bound-views-dense bound-cgroup" bash bench/cost.sh
  TOOLS="iolat biolatency bound-empty bound-restamp" bash bench/cost.sh
EOF
}

die() {
	echo "cost.sh: $*" >&2
	exit 1
}

is_uint() { [[ "$1" =~ ^[1-9][0-9]*$ ]]; }

while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
	--rounds=*) ROUNDS=${1#*=}; shift ;;
	--runtime) [ $# -ge 2 ] || die "--runtime needs a value"; RUNTIME=$2; shift 2 ;;
	--runtime=*) RUNTIME=${1#*=}; shift ;;
	--iolat) [ $# -ge 2 ] || die "--iolat needs a value"; IOLAT=$2; shift 2 ;;
	--iolat=*) IOLAT=${1#*=}; shift ;;
	--iolat-old) [ $# -ge 2 ] || die "--iolat-old needs a value"; IOLAT_OLD=$2; shift 2 ;;
	--iolat-old=*) IOLAT_OLD=${1#*=}; shift ;;
	--size) [ $# -ge 2 ] || die "--size needs a value"; SIZE_MIB=$2; shift 2 ;;
	--size=*) SIZE_MIB=${1#*=}; shift ;;
	--no-stats) STATS=0; shift ;;
	--cpu) STATS=0; CPU=1; shift ;;
	--contention) CONTENTION=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done

is_uint "$ROUNDS" || die "--rounds must be a positive integer, not '$ROUNDS'"
is_uint "$RUNTIME" || die "--runtime must be a positive integer (seconds), not '$RUNTIME'"
is_uint "$SIZE_MIB" || die "--size must be a positive integer (MiB), not '$SIZE_MIB'"
[ "$(id -u)" -eq 0 ] || die "needs root (BPF, losetup, sysctl)"
for c in fio bpftool losetup python3 bpftrace stdbuf sysctl; do
	command -v "$c" >/dev/null || die "'$c' not found (apt-get install it)"
done
[ -x "$BIOLATENCY" ] || die "$BIOLATENCY not found (apt-get install libbpf-tools)"
[ -x "$IOLAT" ] || die "$IOLAT not found or not executable (make OUT=build-bench)"
IOLAT=$(cd "$(dirname "$IOLAT")" && pwd)/$(basename "$IOLAT")
# Beside the iolat measured, --iolat's too (after the options are read).
BPFLOAD=${BPFLOAD:-$(dirname "$IOLAT")/bpfload}
BOUND=${BOUND:-$(dirname "$IOLAT")/bench/bound.bpf.o}
if [ -n "${IOLAT_OLD:-}" ]; then
	[ -x "$IOLAT_OLD" ] || die "$IOLAT_OLD not found or not executable"
	IOLAT_OLD=$(cd "$(dirname "$IOLAT_OLD")" && pwd)/$(basename "$IOLAT_OLD")
fi

# bpftrace reads tracepoint formats from tracefs.
if ! mountpoint -q /sys/kernel/tracing; then
	mount -t tracefs nodev /sys/kernel/tracing || die "cannot mount tracefs on /sys/kernel/tracing"
fi

WORK=$(mktemp -d /tmp/iolat-cost.XXXXXX)
IMG=/dev/shm/iolat-cost.$$.img
LOOP=""
TOOL_PID=""
INERT=""
FIO_PID=""
STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
ALL_IDS=()

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	set +e
	[ -n "$TOOL_PID" ] && stop_tool quiet
	[ -n "$FIO_PID" ] && kill -KILL "$FIO_PID" 2>/dev/null
	[ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null
	rm -f "$IMG"
	sysctl -qw kernel.bpf_stats_enabled="$STATS_OLD" || true
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Program ids held by a process's file descriptors, comma separated.
prog_ids_of() {
	grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -un |
		paste -sd, -
}

# Starts a tool in the background and waits until its programs are attached.
start_tool() {
	local tool=$1 log=$2 banner ids="" prev="" i progs
	local bin=$IOLAT
	case "$tool" in
	old-*) bin=$IOLAT_OLD; tool=${tool#old-} ;;
	esac
	case "$tool" in
	iolat)
		"$bin" hist -D -O >"$log" 2>&1 &
		banner="Tracing block device I/O" ;;
	iolat-serve)
		# The exporter's default: keyed by cgroup too, shared values, atomic adds.
		"$bin" serve --web.listen-address=127.0.0.1:$((40000 + RANDOM % 20000)) >"$log" 2>&1 &
		banner="listening on" ;;
	iolat-inert)
		# serve --handover's collector once its lease is over: attached,
		# pinned, held by no process, counting nothing (test_lifecycle.sh).
		INERT=bench-inert-$$
		"$bin" serve --handover=$INERT --handover.lease=1s \
			--web.listen-address=127.0.0.1:$((40000 + RANDOM % 20000)) >"$log" 2>&1 &
		banner="listening on" ;;
	iolat-trace1000)
		# Tracing one I/O in 1000: what following nothing most of the time costs.
		"$IOLAT" trace -s 1000 -d "${LOOP#/dev/}" >/dev/null 2>"$log" &
		banner="Tracing" ;;
	biolatency)
		# Its banner goes to a pipe or file only if stdout is line-buffered.
		stdbuf -oL "$BIOLATENCY" -D >"$log" 2>&1 &
		banner="Tracing" ;;
	bpftrace)
		bpftrace "$HERE/biolatency.bt" >"$log" 2>&1 &
		banner="Attaching" ;;
	floor)
		bpftrace -e 'tracepoint:block:block_rq_issue { }' >"$log" 2>&1 &
		banner="Attaching" ;;
	bound-*)
		{ [ -x "$BPFLOAD" ] && [ -f "$BOUND" ]; } ||
			die "no $BPFLOAD or $BOUND: build them with 'make OUT=$(dirname "$IOLAT") helpers'"
		progs=$(echo "bound_${tool#bound-}" | tr - _)
		# The restamp bound is three programs (creation, issue, completion).
		[ "$tool" = bound-restamp ] &&
			progs=bound_restamp_start,bound_restamp_issue,bound_restamp_complete
		"$BPFLOAD" "$BOUND" "$progs" >"$log" 2>&1 &
		banner="attached" ;;
	esac
	TOOL_PID=$!
	for ((i = 0; i < 300; i++)); do
		grep -q "$banner" "$log" 2>/dev/null && break
		kill -0 "$TOOL_PID" 2>/dev/null || { cat "$log" >&2; die "$tool exited while starting"; }
		sleep 0.1
	done
	grep -q "$banner" "$log" || { cat "$log" >&2; die "$tool printed no '$banner' in 30 s"; }
	# bpftrace prints its banner before it attaches: wait for a stable set of programs.
	for ((i = 0; i < 100; i++)); do
		ids=$(prog_ids_of "$TOOL_PID")
		[ -n "$ids" ] && [ "$ids" = "$prev" ] && break
		prev=$ids
		sleep 0.2
	done
	[ -n "$ids" ] || die "$tool holds no BPF programs after starting"
	if [ "$tool" = iolat-inert ]; then
		kill -TERM "$TOOL_PID"
		wait "$TOOL_PID" 2>/dev/null || true
		sleep 2 # past the lease
		"$bin" check 2>/dev/null | grep -A4 "^  $INERT: " | grep -q "lease over" ||
			die "$INERT: iolat check does not show the lease over"
		# Its programs now: those the pinned links hold (the process held
		# more, loaded but not attached, which went with it).
		ids=$(for l in "/sys/fs/bpf/iolat/$INERT"/link_*; do bpftool -j link show pinned "$l"; done |
			python3 -c 'import json, sys; print(",".join(sorted({str(json.loads(l)["prog_id"]) for l in sys.stdin if l.strip()})))')
		[ -n "$ids" ] || die "$INERT: no pinned links"
		sleep infinity & # stands for the tool: the pins hold the programs
		TOOL_PID=$!
	fi
	sleep 0.5
	TOOL_IDS=$ids
	ALL_IDS+=("${ids//,/ }")
}

stop_tool() {
	local i
	# The stand-in of iolat-inert, in the background, ignores SIGINT.
	kill "-$([ -n "$INERT" ] && echo TERM || echo INT)" "$TOOL_PID" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		kill -0 "$TOOL_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$TOOL_PID" 2>/dev/null; then
		[ "${1:-}" = quiet ] || echo "cost.sh: pid $TOOL_PID ignored SIGINT; killing it" >&2
		kill -KILL "$TOOL_PID" 2>/dev/null || true
	fi
	wait "$TOOL_PID" 2>/dev/null || true
	TOOL_PID=""
	if [ -n "$INERT" ]; then
		"$IOLAT" serve --unpin=$INERT >/dev/null || echo "cost.sh: cannot unpin $INERT" >&2
		INERT=""
	fi
}

# Busy clock ticks of all CPUs so far (/proc/stat: user, nice, system, irq,
# softirq): awk, not python, so that reading it adds next to nothing.
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }

# Microseconds some task has waited for a CPU since boot; empty without PSI.
cpu_wait_us() {
	awk '/^some/ { sub("total=", "", $5); print $5 }' /proc/pressure/cpu 2>/dev/null || true
}

# Runs fio into $1 and sets CPU_WAIT to the % of the run with CPU contention.
# In the background so that cleanup can end it by its pid.
run_fio() {
	local w0 w1 t0 t1
	w0=$(cpu_wait_us)
	t0=$(date +%s%N)
	local jobs=(--iodepth=32 --numjobs=1)
	[ "$CONTENTION" = 1 ] &&
		jobs=(--iodepth=16 --numjobs=2 "--cpus_allowed=0,1" --cpus_allowed_policy=split)
	fio --name=iolat-cost --filename="$LOOP" --ioengine=io_uring --rw=randread \
		--bs=4k --direct=1 "${jobs[@]}" --group_reporting --time_based --runtime="$RUNTIME" \
		--output-format=json --output="$1" >/dev/null 2>"$1.err" &
	FIO_PID=$!
	wait "$FIO_PID" || { cat "$1.err" >&2; die "fio failed"; }
	FIO_PID=""
	w1=$(cpu_wait_us)
	t1=$(date +%s%N)
	CPU_WAIT=-
	if [ -n "$w0" ] && [ -n "$w1" ]; then
		CPU_WAIT=$(awk -v w="$((w1 - w0))" -v t="$(((t1 - t0) / 1000))" 'BEGIN { printf "%.1f", 100 * w / t }')
	fi
}

# --- setup ---
dd if=/dev/zero of="$IMG" bs=1M count="$SIZE_MIB" status=none ||
	die "cannot write $SIZE_MIB MiB to $IMG"
LOOP=$(losetup --direct-io=on -f --show "$IMG") || die "losetup --direct-io=on failed on $IMG"
[ "$(cat /sys/block/"$(basename "$LOOP")"/queue/dio 2>/dev/null || echo 1)" = 1 ] ||
	echo "cost.sh: warning: $LOOP is not using direct I/O" >&2
if [ "$STATS" = 1 ]; then
	sysctl -qw kernel.bpf_stats_enabled=1 || die "cannot set kernel.bpf_stats_enabled=1"
elif [ "$CPU" = 1 ]; then
	# The stats' clock reads per program run are what --cpu leaves out.
	sysctl -qw kernel.bpf_stats_enabled=0 || die "cannot set kernel.bpf_stats_enabled=0"
elif [ "$STATS_OLD" != 0 ]; then
	echo "cost.sh: warning: --no-stats, but kernel.bpf_stats_enabled is already $STATS_OLD" >&2
fi

echo "command:  $CMDLINE"
echo "date:     $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine:  $(nproc) CPUs, $(uname -sr), $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
echo "workload: fio $(fio --version | sed 's/^fio-//') randread 4k io_uring direct," \
	"$([ "$CONTENTION" = 1 ] && echo "2 jobs pinned to CPUs 0 and 1, QD16 each" || echo "1 job, QD32")," \
	"${RUNTIME} s/run, $LOOP (--direct-io=on) over ${SIZE_MIB} MiB in /dev/shm"
echo "tools:    iolat $("$IOLAT" --version 2>&1 | head -1 | awk '{print $2}') (hist -D -O; serve, per workload)," \
	"biolatency -D ($BIOLATENCY), $(bpftrace --version) bench/biolatency.bt"
[ -n "${IOLAT_OLD:-}" ] &&
	echo "old:      iolat $("$IOLAT_OLD" --version 2>&1 | head -1 | awk '{print $2}') ($IOLAT_OLD) as old-iolat, old-iolat-serve"
echo "rounds:   $ROUNDS, order rotating each round; kernel BPF stats $([ "$STATS" = 1 ] && echo on || echo off)"
echo

# TOOLS="none iolat iolat-trace1000" runs only those.
if [ "$CPU" = 1 ]; then TOOLS=${TOOLS:-none iolat biolatency}; fi
read -r -a TOOLS <<<"${TOOLS:-none iolat iolat-serve iolat-trace1000 biolatency bpftrace floor${IOLAT_OLD:+ old-iolat old-iolat-serve}}"
RESULTS=$WORK/results.jsonl
CPU_RESULTS=$WORK/cpu.jsonl
: >"$RESULTS"
: >"$CPU_RESULTS"
for ((r = 0; r < ROUNDS; r++)); do
	for ((k = 0; k < ${#TOOLS[@]}; k++)); do
		tool=${TOOLS[$(((k + r) % ${#TOOLS[@]}))]}
		base=$WORK/r$r-$tool
		if [ "$tool" = none ]; then
			busy0=$(busy_ticks)
			run_fio "$base.fio.json"
			busy1=$(busy_ticks)
			python3 "$HERE/cost_report.py" sample "$tool" "$r" "$base.fio.json" "$CPU_WAIT" \
				>>"$RESULTS"
		else
			start_tool "$tool" "$base.log"
			bpftool prog show -j >"$base.before.json"
			busy0=$(busy_ticks)
			run_fio "$base.fio.json"
			busy1=$(busy_ticks)
			bpftool prog show -j >"$base.after.json"
			kill -0 "$TOOL_PID" 2>/dev/null || { cat "$base.log" >&2; die "$tool died during fio"; }
			# A tool may load or attach more programs while it runs (iolat does, on demand).
			more=$(prog_ids_of "$TOOL_PID" || true) # none for iolat-inert
			TOOL_IDS=$(echo "$TOOL_IDS,$more" | tr , '\n' | sed '/^$/d' | sort -un | paste -sd, -)
			ALL_IDS+=("${more//,/ }")
			stop_tool
			python3 "$HERE/cost_report.py" sample "$tool" "$r" "$base.fio.json" "$CPU_WAIT" \
				"$base.before.json" "$base.after.json" "$TOOL_IDS" >>"$RESULTS"
		fi
		if [ "$CPU" = 1 ]; then
			python3 "$HERE/cost_cpu.py" sample "$tool" "$r" "$base.fio.json" \
				"$busy0" "$busy1" >>"$CPU_RESULTS"
		fi
	done
done

echo
python3 "$HERE/cost_report.py" table "$RESULTS"
if [ "$CPU" = 1 ]; then
	echo
	python3 "$HERE/cost_cpu.py" table "$CPU_RESULTS"
fi

# Nothing the tools loaded may outlive them (program freeing is deferred a little).
left=""
for ((i = 0; i < 50; i++)); do
	left=$(bpftool prog show -j | python3 -c '
import json, sys
want = set(int(x) for x in sys.argv[1].split())
print(" ".join(str(p["id"]) for p in json.load(sys.stdin) if p["id"] in want))' "${ALL_IDS[*]}")
	[ -z "$left" ] && break
	sleep 0.1
done
[ -z "$left" ] || die "BPF programs still loaded after the tools exited: ids $left"
echo
echo "no BPF programs left from the tools; raw results in $WORK"
