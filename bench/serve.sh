#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# serve.sh - what `iolat serve` costs to scrape, to keep in memory and to
# keep idle, next to prometheus-node-exporter on the same machine.
#
# iolat serve runs with --test.synthetic-disks=N, which adds N fake disks x 2
# operations of series (3 histograms and 5 counters each), so one scrape
# carries more than 10 000 sample lines. node-exporter (the Debian package)
# runs with its defaults next to it. A third instance, node-exporter with
# only its textfile collector reading a copy of one iolat scrape, carries the
# same series, so it shows what a Go exporter pays for them (it parses the
# file on every scrape, which iolat does not have to do).
#
# Every round scrapes each exporter K times in each of four formats (text,
# text with gzip, protobuf, protobuf with gzip), tool order rotating per
# round, with one curl per scrape (new connection), timing curl's
# time_total. iolat reports the collect+build+render time of its previous
# scrape in iolat_scrape_duration_seconds, so each scrape's body gives the
# one before it. Server CPU per scrape is the exporter's on-CPU time
# (schedstat of all its threads) over each batch. Then VmRSS/VmHWM, and CPU
# and wakeups over an idle window with no scrapes at all.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
ROUNDS=${ROUNDS:-5}
SCRAPES=${SCRAPES:-20}
SYNTHETIC=${SYNTHETIC:-100}
IDLE=${IDLE:-30}
IOLAT=${IOLAT:-$ROOT/build-bench/iolat}
NODE_EXPORTER=${NODE_EXPORTER:-/usr/bin/prometheus-node-exporter}
TEXTFILE=1
CMDLINE="bash bench/serve.sh${*:+ $*}"

ACCEPT_TEXT='text/plain; version=0.0.4'
ACCEPT_PROTO='application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited'
MODES=(text text+gzip proto proto+gzip)

usage() {
	cat <<EOF
Usage: bash bench/serve.sh [OPTIONS]

Scrape time, body size, server CPU per scrape, memory and idle CPU of
'iolat serve' (with N synthetic disks, for > 10 000 series) next to
prometheus-node-exporter with its defaults and, unless --no-textfile, a
node-exporter serving the same series as iolat through its textfile
collector. All listen on free 127.0.0.1 ports. Needs root (iolat loads BPF).

Options:
  --rounds N         rounds; each scrapes every exporter --scrapes times in
                     each of 4 formats (default 5; env ROUNDS)
  --scrapes N        scrapes per exporter, format and round (default 20;
                     env SCRAPES)
  --synthetic N      iolat --test.synthetic-disks=N: N x 2 x 57 sample lines
                     (default 100, about 11 500 lines; env SYNTHETIC)
  --idle S           seconds of the idle window, no scrapes (default 30;
                     env IDLE)
  --iolat PATH       iolat binary (default build-bench/iolat; env IOLAT;
                     build it with 'make OUT=build-bench')
  --node-exporter P  node-exporter binary (default
                     /usr/bin/prometheus-node-exporter; env NODE_EXPORTER)
  --no-textfile      leave out the node-exporter carrying iolat's series
  -h, --help         this help

Examples:
  bash bench/serve.sh                            about 2 minutes
  bash bench/serve.sh --rounds 3 --scrapes 10 --idle 10
  bash bench/serve.sh --synthetic 300            about 34 000 lines per scrape
EOF
}

die() {
	echo "serve.sh: $*" >&2
	exit 1
}

is_uint() { [[ "$1" =~ ^[1-9][0-9]*$ ]]; }

while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
	--rounds=*) ROUNDS=${1#*=}; shift ;;
	--scrapes) [ $# -ge 2 ] || die "--scrapes needs a value"; SCRAPES=$2; shift 2 ;;
	--scrapes=*) SCRAPES=${1#*=}; shift ;;
	--synthetic) [ $# -ge 2 ] || die "--synthetic needs a value"; SYNTHETIC=$2; shift 2 ;;
	--synthetic=*) SYNTHETIC=${1#*=}; shift ;;
	--idle) [ $# -ge 2 ] || die "--idle needs a value"; IDLE=$2; shift 2 ;;
	--idle=*) IDLE=${1#*=}; shift ;;
	--iolat) [ $# -ge 2 ] || die "--iolat needs a value"; IOLAT=$2; shift 2 ;;
	--iolat=*) IOLAT=${1#*=}; shift ;;
	--node-exporter) [ $# -ge 2 ] || die "--node-exporter needs a value"; NODE_EXPORTER=$2; shift 2 ;;
	--node-exporter=*) NODE_EXPORTER=${1#*=}; shift ;;
	--no-textfile) TEXTFILE=0; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done

is_uint "$ROUNDS" || die "--rounds must be a positive integer, not '$ROUNDS'"
is_uint "$SCRAPES" || die "--scrapes must be a positive integer, not '$SCRAPES'"
is_uint "$SYNTHETIC" || die "--synthetic must be a positive integer, not '$SYNTHETIC'"
is_uint "$IDLE" || die "--idle must be a positive integer (seconds), not '$IDLE'"
[ "$(id -u)" -eq 0 ] || die "needs root (iolat serve loads BPF programs)"
for c in curl python3; do
	command -v "$c" >/dev/null || die "'$c' not found (apt-get install $c)"
done
[ -x "$IOLAT" ] || die "$IOLAT not found or not executable (make OUT=build-bench)"
[ -x "$NODE_EXPORTER" ] ||
	die "$NODE_EXPORTER not found (apt-get install prometheus-node-exporter)"
IOLAT=$(cd "$(dirname "$IOLAT")" && pwd)/$(basename "$IOLAT")
[ -r /proc/self/schedstat ] || die "/proc/PID/schedstat missing (kernel without CONFIG_SCHED_INFO)"

WORK=$(mktemp -d /tmp/iolat-serve.XXXXXX)
RESULTS=$WORK/results.jsonl
BODIES=$WORK/bodies
TFDIR=$WORK/textfile
mkdir -p "$BODIES" "$TFDIR"
declare -A PID=() PORT=() LOG=() SEQ=()

cleanup() {
	local rc=$? t i
	trap - EXIT INT TERM
	set +e
	for t in "${!PID[@]}"; do kill -TERM "${PID[$t]}" 2>/dev/null; done
	for t in "${!PID[@]}"; do
		for ((i = 0; i < 100; i++)); do
			kill -0 "${PID[$t]}" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "${PID[$t]}" 2>/dev/null; then
			echo "serve.sh: $t (pid ${PID[$t]}) ignored SIGTERM; killing it" >&2
			kill -KILL "${PID[$t]}" 2>/dev/null
		fi
		wait "${PID[$t]}" 2>/dev/null
	done
	rm -rf "$BODIES" "$TFDIR"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Free 127.0.0.1 TCP ports, all held open together so they differ.
free_ports() {
	python3 -c '
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

# Starts exporter $1 with the command after it; waits until it answers on /.
start() {
	local tool=$1 i
	shift
	LOG[$tool]=$WORK/$tool.log
	"$@" >"${LOG[$tool]}" 2>&1 &
	PID[$tool]=$!
	SEQ[$tool]=0
	for ((i = 0; i < 300; i++)); do
		curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:${PORT[$tool]}/" && break
		kill -0 "${PID[$tool]}" 2>/dev/null ||
			{ cat "${LOG[$tool]}" >&2; die "$tool exited while starting: $*"; }
		sleep 0.1
	done
	curl -sf -o /dev/null --max-time 2 "http://127.0.0.1:${PORT[$tool]}/" ||
		{ cat "${LOG[$tool]}" >&2; die "$tool does not answer on 127.0.0.1:${PORT[$tool]} after 30 s"; }
}

# On-CPU ns of all threads of a process (threads that exited are not counted).
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'
}

# utime + stime of a process, its exited threads included, in clock ticks.
cpu_ticks() {
	# The command name (field 2) may hold spaces: count from after its ')'.
	sed 's/^.*) //' /proc/"$1"/stat | awk '{ print $12 + $13 }'
}

ctx_switches() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/^(non)?voluntary_ctxt_switches/ { s += $2 } END { printf "%.0f", s }'
}

record_mem() {
	local tool=$1 when=$2 rss hwm threads
	rss=$(awk '/^VmRSS:/ { print $2 }' /proc/"${PID[$tool]}"/status)
	hwm=$(awk '/^VmHWM:/ { print $2 }' /proc/"${PID[$tool]}"/status)
	threads=$(awk '/^Threads:/ { print $2 }' /proc/"${PID[$tool]}"/status)
	printf '{"kind":"mem","tool":"%s","when":"%s","rss_kb":%d,"hwm_kb":%d,"threads":%d}\n' \
		"$tool" "$when" "$rss" "$hwm" "$threads" >>"$RESULTS"
}

# One timed scrape of exporter $1 in format $2 into file $3; sets T and SIZE.
scrape() {
	local tool=$1 mode=$2 out=$3 line code ctype enc
	local -a hdr=()
	case "$mode" in
	text) hdr=(-H "Accept: $ACCEPT_TEXT" -H "Accept-Encoding: identity") ;;
	text+gzip) hdr=(-H "Accept: $ACCEPT_TEXT" -H "Accept-Encoding: gzip") ;;
	proto) hdr=(-H "Accept: $ACCEPT_PROTO" -H "Accept-Encoding: identity") ;;
	proto+gzip) hdr=(-H "Accept: $ACCEPT_PROTO" -H "Accept-Encoding: gzip") ;;
	esac
	line=$(curl -sS --max-time 30 -o "$out" "${hdr[@]}" \
		-w '%{http_code}\t%{time_total}\t%{size_download}\t%{content_type}\t%header{content-encoding}\n' \
		"http://127.0.0.1:${PORT[$tool]}/metrics") || die "curl failed on $tool ($mode)"
	IFS=$'\t' read -r code T SIZE ctype enc <<<"$line"
	[ "$code" = 200 ] || die "$tool answered HTTP $code to a $mode scrape"
	case "$mode" in
	proto*) [[ "$ctype" == *protobuf* ]] || die "$tool answered a protobuf scrape with '$ctype'" ;;
	*) [[ "$ctype" == text/plain* ]] || die "$tool answered a text scrape with '$ctype'" ;;
	esac
	case "$mode" in
	*gzip) [ "$enc" = gzip ] || die "$tool did not gzip a $mode scrape" ;;
	*) [ -z "$enc" ] || die "$tool used Content-Encoding '$enc' unasked" ;;
	esac
	SEQ[$tool]=$((SEQ[$tool] + 1))
}

count_into_results() {
	local tool=$1 mode=$2 file=$3 c
	c=$(python3 "$HERE/serve_report.py" count "$file") || die "cannot parse $file"
	echo "{\"kind\":\"count\",\"tool\":\"$tool\",\"mode\":\"$mode\",${c#\{}" >>"$RESULTS"
}

renders_into_results() {
	python3 "$HERE/serve_report.py" renders "$BODIES" |
		awk '{ printf "{\"kind\":\"render\",\"seq\":%d,\"value\":%s}\n", $1, $2 }' >>"$RESULTS"
	find "$BODIES" -type f -delete
}

# --- setup ---
if [ "$TEXTFILE" = 1 ]; then
	TOOLS=(iolat node ne-textfile)
	read -r 'PORT[iolat]' 'PORT[node]' 'PORT[ne-textfile]' <<<"$(free_ports 3)"
else
	TOOLS=(iolat node)
	read -r 'PORT[iolat]' 'PORT[node]' <<<"$(free_ports 2)"
fi

NE_VERSION=$("$NODE_EXPORTER" --version 2>&1 | head -1 | awk '{print $3}')
echo "command:   $CMDLINE"
echo "date:      $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine:   $(nproc) CPUs, $(awk '/^MemTotal:/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)," \
	"$(uname -sr), $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
echo "iolat:     $("$IOLAT" --version 2>&1 | head -1 | awk '{print $2}') ($IOLAT)" \
	"serve --test.synthetic-disks=$SYNTHETIC on 127.0.0.1:${PORT[iolat]}"
echo "node:      node-exporter $NE_VERSION ($NODE_EXPORTER), defaults, on 127.0.0.1:${PORT[node]}"
[ "$TEXTFILE" = 1 ] &&
	echo "ne-textfile: node-exporter $NE_VERSION, --collector.disable-defaults --collector.textfile" \
		"(one iolat text scrape), on 127.0.0.1:${PORT[ne-textfile]}"
echo "scrapes:   $ROUNDS rounds x $SCRAPES per exporter and format (${MODES[*]}), curl $(curl --version | head -1 | awk '{print $2}'), tool order rotating"
echo "idle:      $IDLE s without scrapes after the rounds"
echo "raw:       $WORK"
echo

start iolat "$IOLAT" serve --web.listen-address="127.0.0.1:${PORT[iolat]}" \
	--test.synthetic-disks="$SYNTHETIC"
start node "$NODE_EXPORTER" --web.listen-address="127.0.0.1:${PORT[node]}"
sleep 1
record_mem iolat start
record_mem node start

# Warm-up: one text scrape each, counted (iolat's also feeds the textfile).
# The table counts the first scrape of each format in round 1 instead: real
# disks may come and go in between.
scrape iolat text "$WORK/warmup.iolat.text"
cp "$WORK/warmup.iolat.text" "$BODIES/${SEQ[iolat]}.text"
if [ "$TEXTFILE" = 1 ]; then
	grep -v '^$' "$WORK/warmup.iolat.text" >"$TFDIR/iolat.prom.tmp"
	mv "$TFDIR/iolat.prom.tmp" "$TFDIR/iolat.prom"
	start ne-textfile "$NODE_EXPORTER" --web.listen-address="127.0.0.1:${PORT[ne-textfile]}" \
		--collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$TFDIR"
	sleep 1
	record_mem ne-textfile start
fi
for tool in "${TOOLS[@]}"; do
	[ "$tool" = iolat ] || scrape "$tool" text "$WORK/warmup.$tool.text"
	python3 "$HERE/serve_report.py" count "$WORK/warmup.$tool.text" | python3 -c '
import json, sys
c = json.load(sys.stdin)
print("{:<12} {:>6} sample lines, {:>5} label sets, {:>3} families in one text scrape".format(
    sys.argv[1], c["lines"], c["label_sets"], c["families"]))' "$tool"
done
lines=$(python3 "$HERE/serve_report.py" count "$WORK/warmup.iolat.text" |
	sed 's/.*"lines": *\([0-9]*\).*/\1/')
[ "$lines" -ge 10000 ] ||
	echo "serve.sh: warning: iolat has only $lines sample lines; raise --synthetic for >= 10 000" >&2
echo

{
	printf '{"kind":"meta","tools":[%s],"rounds":%d,"scrapes":%d,"idle":%d,"clk_tck":%d,' \
		"$(printf '"%s",' "${TOOLS[@]}" | sed 's/,$//')" "$ROUNDS" "$SCRAPES" "$IDLE" \
		"$(getconf CLK_TCK)"
	printf '"names":{"iolat":"iolat","node":"node-exporter","ne-textfile":"ne+textfile"},'
	printf '"short":{"iolat":"iolat","node":"node","ne-textfile":"ne+tf"},'
	printf '"desc":{"node":"node-exporter %s, default collectors","ne-textfile":"node-exporter %s, textfile collector only, serving one iolat text scrape"}}\n' \
		"$NE_VERSION" "$NE_VERSION"
} >>"$RESULTS"

# --- rounds ---
for ((r = 0; r < ROUNDS; r++)); do
	for ((k = 0; k < ${#TOOLS[@]}; k++)); do
		tool=${TOOLS[$(((k + r) % ${#TOOLS[@]}))]}
		for mode in "${MODES[@]}"; do
			times=()
			c0=$(cpu_ns "${PID[$tool]}")
			for ((i = 0; i < SCRAPES; i++)); do
				if [ "$tool" = iolat ]; then
					out=$BODIES/$((SEQ[iolat] + 1)).$mode
				elif [ "$r" = 0 ] && [ "$i" = 0 ]; then
					out=$WORK/sample.$tool.$mode
				else
					out=/dev/null
				fi
				scrape "$tool" "$mode" "$out"
				[ "$tool" = iolat ] && [ "$r" = 0 ] && [ "$i" = 0 ] && cp "$out" "$WORK/sample.iolat.$mode"
				times+=("$T")
				printf '{"kind":"scrape","round":%d,"tool":"%s","mode":"%s","seq":%d,"time":%s,"bytes":%s}\n' \
					"$r" "$tool" "$mode" "${SEQ[$tool]}" "$T" "$SIZE" >>"$RESULTS"
			done
			c1=$(cpu_ns "${PID[$tool]}")
			printf '{"kind":"cpu","round":%d,"tool":"%s","mode":"%s","n":%d,"cpu_ns":%d}\n' \
				"$r" "$tool" "$mode" "$SCRAPES" "$((c1 - c0))" >>"$RESULTS"
			printf '%s\n' "${times[@]}" | sort -g | awk -v r=$((r + 1)) -v t="$tool" -v m="$mode" \
				-v cpu=$((c1 - c0)) -v n="$SCRAPES" -v b="$SIZE" '
				{ x[NR] = $1 }
				END { printf "round %d  %-12s %-11s med %7.2f ms  max %7.2f ms  server cpu %6.2f ms/scrape  %9d B\n",
					r, t, m, 1000 * (NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2),
					1000 * x[NR], cpu / n / 1e6, b }'
		done
	done
	# The next iolat scrape reports this round's last render time: the first
	# of the next round or, after the last round, one more untimed scrape.
	if [ $((r + 1)) -eq "$ROUNDS" ]; then
		scrape iolat text "$BODIES/$((SEQ[iolat] + 1)).text"
	fi
	renders_into_results
done
for tool in "${TOOLS[@]}"; do
	for mode in "${MODES[@]}"; do
		count_into_results "$tool" "$mode" "$WORK/sample.$tool.$mode"
	done
	kill -0 "${PID[$tool]}" 2>/dev/null || { cat "${LOG[$tool]}" >&2; die "$tool died during the scrapes"; }
	record_mem "$tool" after
done
echo

# --- idle ---
declare -A TK0=() NS0=() CS0=()
for tool in "${TOOLS[@]}"; do
	TK0[$tool]=$(cpu_ticks "${PID[$tool]}")
	NS0[$tool]=$(cpu_ns "${PID[$tool]}")
	CS0[$tool]=$(ctx_switches "${PID[$tool]}")
done
t0=$(date +%s%N)
sleep "$IDLE"
t1=$(date +%s%N)
for tool in "${TOOLS[@]}"; do
	tk=$(($(cpu_ticks "${PID[$tool]}") - TK0[$tool]))
	ns=$(($(cpu_ns "${PID[$tool]}") - NS0[$tool]))
	cs=$(($(ctx_switches "${PID[$tool]}") - CS0[$tool]))
	printf '{"kind":"idle","tool":"%s","secs":%s,"ticks":%d,"cpu_ns":%d,"ctxsw":%d}\n' "$tool" \
		"$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e9 }')" "$tk" "$ns" "$cs" >>"$RESULTS"
	echo "idle ${IDLE} s  $(printf '%-12s' "$tool") utime+stime $tk ticks, on-CPU $((ns / 1000)) us, $cs context switches"
done
echo

python3 "$HERE/serve_report.py" table "$RESULTS"
