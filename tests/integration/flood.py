#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# flood.py - N half-open HTTP connections (headers never finished), each from
# its own loopback address (127.0.x.y), held while a scrape from 127.0.0.1
# must still be answered; then all are closed.
#
# Usage: flood.py PORT N SCRAPE_DEADLINE_S
# Prints "connected N", "scrape SECONDS", "evicted_seen N" (connections of
# the flood the server had closed when the scrape was answered). Exit 1 if
# the scrape failed or took longer than the deadline.
import socket
import sys
import time
import urllib.request

port, n, deadline = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
socks = []
for i in range(n):
    s = socket.socket()
    s.bind(("127.0.%d.%d" % (1 + i // 250, 1 + i % 250), 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: flood\r\n")  # no blank line: never ends
    socks.append(s)
print("connected %d" % len(socks))
t0 = time.monotonic()
try:
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        ok = r.status == 200 and b"iolat_build_info" in r.read()
except Exception as e:  # noqa: BLE001 - the failure is the finding
    print("scrape failed: %s" % e)
    ok = False
took = time.monotonic() - t0
print("scrape %.3f" % took)
closed = 0
for s in socks:
    s.setblocking(False)
    try:
        closed += s.recv(1) == b""
    except BlockingIOError:
        pass
    except ConnectionResetError:
        closed += 1
print("evicted_seen %d" % closed)
for s in socks:
    s.close()
sys.exit(0 if ok and took <= deadline else 1)
