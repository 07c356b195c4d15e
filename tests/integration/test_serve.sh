# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `iolat serve` as a scrape target: formats (text checked by promtool,
# OpenMetrics, protobuf), negotiation, gzip, endpoints, bad requests, exact
# counters, SIGHUP keeping counters, SIGTERM detaching within 1 s.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh
command -v promtool >/dev/null || skip "promtool (Debian package prometheus) is not installed"

make_loop 32
dev=$LOOP
name=${dev#/dev/}
port=$(free_port)
url=http://127.0.0.1:$port
start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port" --bpf.stats

# After loading and attaching, only CAP_PERFMON (38) and CAP_BPF (39) remain.
assert_eq "effective capabilities" 000000c000000000 \
	"$(awk '/^CapEff:/ {print $2}' "/proc/$SERVE_PID/status")"
assert_eq "bounding set" 000000c000000000 "$(awk '/^CapBnd:/ {print $2}' "/proc/$SERVE_PID/status")"

"$DIO" read "$dev" 77 4096 || fail "dio read"
"$DIO" write "$dev" 5 65536 || fail "dio write"

# Text 0.0.4 by default; promtool finds nothing to complain about.
curl -sf -D "$WORK/h1" "$url/metrics" >"$WORK/m1" || fail "GET /metrics"
grep -qi '^content-type: text/plain; version=0.0.4' "$WORK/h1" || fail "text content type"
promtool check metrics <"$WORK/m1" >"$WORK/lint" 2>&1 || fail "promtool: $(cat "$WORK/lint")"
[ ! -s "$WORK/lint" ] || fail "promtool warnings: $(cat "$WORK/lint")"
assert_eq "completions (reads)" 77 \
	"$(metric "$WORK/m1" iolat_block_completions_total "{device=\"$name\",op=\"read\"}")"
assert_eq "completions (writes)" 5 \
	"$(metric "$WORK/m1" iolat_block_completions_total "{device=\"$name\",op=\"write\"}")"
assert_eq "read bytes" $((77 * 4096)) \
	"$(metric "$WORK/m1" iolat_block_bytes_total "{device=\"$name\",op=\"read\"}")"
assert_eq "histogram count" 77 \
	"$(metric "$WORK/m1" iolat_block_device_latency_seconds_count "{device=\"$name\",op=\"read\"}")"
assert_eq "+Inf bucket" 77 \
	"$(metric "$WORK/m1" iolat_block_device_latency_seconds_bucket "{device=\"$name\",op=\"read\",le=\"+Inf\"}")"
assert_eq "size <= 4096" 77 \
	"$(metric "$WORK/m1" iolat_block_request_size_bytes_bucket "{device=\"$name\",op=\"read\",le=\"4096\"}")"
assert_eq "size <= 512" 0 \
	"$(metric "$WORK/m1" iolat_block_request_size_bytes_bucket "{device=\"$name\",op=\"read\",le=\"512\"}")"
grep -q '^iolat_build_info{version="' "$WORK/m1" || fail "no build info"
runs=$(metric "$WORK/m1" iolat_bpf_program_runs_total '{program="rq_complete_btf"}')
[ "${runs:-0}" -ge 82 ] || fail "BPF stats: rq_complete runs $runs < 82"
# What the disk is: a loop device has no model; rotational as sysfs says.
assert_eq "device info" 1 "$(metric "$WORK/m1" iolat_block_device_info \
	"{device=\"$name\",model=\"unknown\",rotational=\"$(cat "/sys/block/$name/queue/rotational")\",serial=\"\",wwid=\"\",nvme_nsid=\"\"}")"
echo "ok: text format, promtool clean, exact counters"
# The process_* gauges: descriptors exact (the ones open now, plus the
# scrape's own connection), memory as /proc says, a heap below it.
fds=$(find "/proc/$SERVE_PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
curl -sf "$url/metrics" >"$WORK/mp" || fail "scrape (process metrics)"
assert_eq "process_open_fds" $((fds + 1)) "$(metric "$WORK/mp" process_open_fds)"
rss=$(awk '/^VmRSS:/ {print $2 * 1024}' "/proc/$SERVE_PID/status")
# Sanitizers bring their own allocator, which glibc cannot describe: then
# there is no heap gauge at all.
python3 - "$rss" "$(metric "$WORK/mp" process_resident_memory_bytes)" \
	"$(metric "$WORK/mp" iolat_heap_allocated_bytes)" "${IOLAT_SANITIZED:-0}" <<'PY' ||
import sys
rss, got = float(sys.argv[1]), float(sys.argv[2])
heap, sanitized = sys.argv[3], sys.argv[4] == "1"
assert abs(got - rss) < 0.2 * rss, (got, rss)
if sanitized:
    assert heap == "", heap
else:
    assert 0 < float(heap) < got, (heap, got)
PY
	fail "process memory gauges off"
echo "ok: process_* gauges (open fds exact), heap"

# OpenMetrics when asked: counter families named without _total, # EOF last.
curl -sf -D "$WORK/h2" -H 'Accept: application/openmetrics-text; version=1.0.0' "$url/metrics" >"$WORK/m2"
grep -qi '^content-type: application/openmetrics-text; version=1.0.0' "$WORK/h2" || fail "OM type"
[ "$(tail -n1 "$WORK/m2")" = "# EOF" ] || fail "OpenMetrics without # EOF"
grep -q '^# TYPE iolat_block_completions counter$' "$WORK/m2" || fail "OM counter metadata"
grep -q "^iolat_block_completions_total{device=\"$name\",op=\"read\"} 77$" "$WORK/m2" || fail "OM sample"
echo "ok: OpenMetrics"

# Protobuf (what Prometheus asks for with native histograms on).
curl -sf -D "$WORK/h3" -o "$WORK/m3" -H \
	'Accept: application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3' \
	"$url/metrics" || fail "protobuf scrape"
grep -qi '^content-type: application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited' \
	"$WORK/h3" || fail "protobuf content type"
[ -s "$WORK/m3" ] || fail "empty protobuf body"
echo "ok: protobuf"

# gzip when accepted, and the same body once inflated.
curl -sf -D "$WORK/h4" -H 'Accept-Encoding: gzip' "$url/metrics" -o "$WORK/m4.gz"
grep -qi '^content-encoding: gzip' "$WORK/h4" || fail "no gzip"
gunzip -c "$WORK/m4.gz" | grep -q "^iolat_block_completions_total{device=\"$name\",op=\"read\"} 77$" ||
	fail "gzip body"
echo "ok: gzip"

# Endpoints and bad requests.
assert_eq "landing" 200 "$(curl -s -o "$WORK/landing" -w '%{http_code}' "$url/")"
grep -q 'href="/metrics"' "$WORK/landing" || fail "landing page has no metrics link"
assert_eq "health" 200 "$(curl -s -o /dev/null -w '%{http_code}' "$url/-/healthy")"
assert_eq "unknown path" 404 "$(curl -s -o /dev/null -w '%{http_code}' "$url/nope")"
assert_eq "POST" 405 "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x=1 "$url/metrics")"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $(head -c 40000 /dev/zero | tr '\0' a)" "$url/metrics")
case $code in 4*) ;; *) fail "oversized header got $code, expected 4xx" ;; esac
# Malformed requests: a header line without a colon gets 400, an unknown
# HTTP version 505; a line that is not HTTP at all is closed, not answered.
raw() {
	python3 - "$port" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode())
s.settimeout(3)
print(s.recv(64).split(b"\r\n")[0].decode())
PY
}
assert_eq "header without colon" "HTTP/1.1 400 Bad Request" "$(raw 'GET /metrics HTTP/1.1\r\nNoColonHere\r\n\r\n')"
assert_eq "HTTP/7.1" "HTTP/1.1 505 HTTP Version Not Supported" "$(raw 'GET /metrics HTTP/7.1\r\nHost: x\r\n\r\n')"
assert_eq "not HTTP" "" "$(raw 'NONSENSE\r\n\r\n')"
kill -0 "$SERVE_PID" || fail "daemon died on malformed requests"
# A client that sends half a request and stalls must not block others.
(exec 3<>"/dev/tcp/127.0.0.1/$port"; printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' >&3; sleep 5) &
staller=$!
assert_eq "scrape beside a stalled client" 200 \
	"$(curl -s -m 2 -o /dev/null -w '%{http_code}' "$url/metrics")"
kill $staller 2>/dev/null
echo "ok: endpoints, 404, 405, 400/505 for malformed requests, 4xx for oversized headers, stalled client"

# Two scrapers at once during I/O: each sees its counter never go down, and
# every bucket series stays cumulative (le order) in every scrape.
"$DIO" read "$dev" 3000 4096 &
io=$!
scraper() {
	for i in $(seq 1 25); do
		curl -sf "$url/metrics" >"$WORK/c$1.$i" || return 1
	done
}
scraper a & sa=$!
scraper b & sb=$!
{ wait "$sa" && wait "$sb"; } || fail "a concurrent scrape failed"
wait $io || fail "dio during scrapes"
python3 - "$WORK" "$name" <<'PY' || fail "counters not monotonic or buckets not cumulative"
import sys, re
work, name = sys.argv[1], sys.argv[2]
key = 'iolat_block_completions_total{device="%s",op="read"}' % name
bucket = re.compile(r'^iolat_block_device_latency_seconds_bucket\{device="%s",op="read",le="([^"]+)"\} (\S+)$' % name)
for who in "ab":
    last = -1
    for i in range(1, 26):
        cum = -1
        for line in open("%s/c%s.%d" % (work, who, i)):
            if line.startswith(key + " "):
                v = float(line.split()[1])
                assert v >= last, (who, i, v, last)
                last = v
            m = bucket.match(line)
            if m:
                assert float(m.group(2)) >= cum, (who, i, line)
                cum = float(m.group(2))
PY
echo "ok: two concurrent scrapers, monotonic counters, cumulative buckets"

# SIGHUP: configuration reloaded, counters kept and monotonic.
kill -HUP "$SERVE_PID"
sleep 0.5
"$DIO" read "$dev" 3 4096 || fail "dio read"
curl -sf "$url/metrics" >"$WORK/m5" || fail "scrape after SIGHUP"
# Thousands of completions: the known, rare miss of a BPF run (lib.sh).
assert_counted "counter after SIGHUP" 3080 \
	"$(metric "$WORK/m5" iolat_block_completions_total "{device=\"$name\",op=\"read\"}")"
grep -q "configuration reloaded" "$WORK/serve.log" || fail "no reload logged"
echo "ok: SIGHUP keeps counters"

# SIGTERM: exits 0 within 1 s with nothing left attached.
t0=$(date +%s%N)
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
rc=$?
t1=$(date +%s%N)
assert_eq "exit status" 0 "$rc"
[ $(((t1 - t0) / 1000000)) -lt 1000 ] || fail "took $(((t1 - t0) / 1000000)) ms to exit"
assert_detached
echo "ok: SIGTERM exit in $(((t1 - t0) / 1000000)) ms, detached"
