# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Starvation: 1 000 half-open connections (headers never finished), each
# from its own loopback address, while a scrape from 127.0.0.1 must answer
# within 1 s; the server closes exactly the connections it had to, and once
# the flood is gone its descriptors and memory are back where they were.
# Then slow clients: headers that never end are cut at
# --web.read-header-timeout, a request with a body gets 413, one address
# cannot open more than --web.max-connections-per-ip.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

# The collector kept to a disk of our own and without workload series, so
# what other disks and cgroups on the machine do meanwhile does not change
# the daemon's memory: this test measures what connections leave behind.
make_loop 16
export IOLAT_TEST_DISK=${LOOP#/dev/}
port=$(free_port)
url=http://127.0.0.1:$port
start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port" --no-collector.workloads \
	--web.read-header-timeout=3s --web.max-connections=64 --web.max-connections-per-ip=16
# Sockets only: the collector may attach its fallback programs (more
# descriptors) at any time, when some other disk completes an unstamped request.
fds() { find "/proc/$SERVE_PID/fd" -lname 'socket:*' | wc -l; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$SERVE_PID/status"; }
closed() { curl -sf "$url/metrics" | metric /dev/stdin iolat_http_connections_closed_total "{reason=\"$1\"}"; }
for _ in 1 2 3; do curl -sf "$url/metrics" >/dev/null; done # warm: the first scrapes allocate
sleep 0.5
fd0=$(fds) rss0=$(rss_kib)

python3 tests/integration/flood.py "$port" 1000 1.0 >"$WORK/flood.out" 2>&1 ||
	fail "scrape during the flood: $(cat "$WORK/flood.out")"
cat "$WORK/flood.out"
# 64 slots: the first 64 of the flood fill them, each of the other 936 and
# then the scrape replaces the longest-waiting one.
assert_eq "connections evicted" 937 "$(closed evicted)"
assert_eq "connections refused" 0 "$(closed full)"
sleep 1 # the server reaps the flood's closed connections
assert_eq "sockets after the flood" "$fd0" "$(fds)"
assert_eq "connections open after the flood (this scrape's)" 1 \
	"$(curl -sf "$url/metrics" | metric /dev/stdin iolat_http_connections "")"
rss1=$(rss_kib)
# Memory: floods must not keep adding. Here the first adds ~150 KiB and the
# next ones less (the allocator's arenas of libmicrohttpd's thread); a leak
# of a connection's state (~200 bytes) would add ~200 KiB a flood, linearly.
for n in 2 3 4; do
	python3 tests/integration/flood.py "$port" 1000 1.0 >"$WORK/flood$n.out" 2>&1 ||
		fail "scrape during flood $n: $(cat "$WORK/flood$n.out")"
	[ "$n" = 2 ] && { sleep 1; rss2=$(rss_kib); }
done
sleep 1
assert_eq "sockets after four floods" "$fd0" "$(fds)"
rss4=$(rss_kib)
[ "$rss4" -le $((rss2 + 512)) ] || fail "RSS grew from $rss2 KiB to $rss4 KiB in floods 3 and 4"
if [ -z "${IOLAT_SANITIZED:-}" ]; then
	[ "$rss1" -le $((rss0 + 1024)) ] || fail "RSS grew from $rss0 KiB to $rss1 KiB"
fi
echo "ok: scrapes answered during four floods; sockets $fd0 -> $(fds), RSS $rss0 -> $rss1 -> $rss2 -> $rss4 KiB"

# A header that never ends is cut after --web.read-header-timeout (3 s).
python3 - "$port" <<'PY' || fail "slow headers were not cut"
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /metrics HTTP/1.1\r\n")
t0 = time.monotonic()
for _ in range(12):  # a byte a second keeps an idle timeout from firing
    try:
        s.sendall(b"X")
    except OSError:
        break
    s.settimeout(1)
    try:
        if s.recv(1) == b"":
            break
    except socket.timeout:
        pass
took = time.monotonic() - t0
print("slow headers cut after %.1f s" % took)
sys.exit(0 if 2.5 <= took <= 5 else 1)
PY
assert_eq "header timeouts" 1 "$(closed header_timeout)"

# A request with a body: 413 at once, the body is not read.
code=$(python3 - "$port" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n" + b"x" * 1000)
print(s.recv(64).split(b" ")[1].decode())
PY
)
assert_eq "GET with a body" 413 "$code"
assert_eq "bodies refused" 1 "$(closed body)"

# One address: at most 16 connections.
python3 - "$port" <<'PY' || fail "per-address cap"
import socket, sys, time
socks = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(20)]
time.sleep(0.5)
cut = 0
for s in socks:
    s.settimeout(0.05)  # all 20 read well inside the 3 s header timeout
    try:
        cut += s.recv(1) == b""
    except socket.timeout:
        pass
    except ConnectionResetError:
        cut += 1
print("per-address: %d of 20 refused" % cut)
sys.exit(0 if cut == 4 else 1)
PY
assert_eq "refused per address" 4 "$(closed per_ip_limit)"
kill -0 "$SERVE_PID" || fail "iolat serve died"
grep -E 'level=(error|warn)' "$WORK/serve.log" && fail "errors in the log"
echo "ok: header timeout, body refused, per-address cap"
