#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# reload_race.py - scrapes `iolat serve` from four clients (text, OpenMetrics,
# protobuf, gzip) while SIGHUP alternates between two valid configs and an
# invalid one, and checks that every scrape was answered 200 with a body that
# parses, and that a rejected reload left the running settings as they were.
#
# Usage: reload_race.py PORT PID CONFIG GOOD1 GOOD2 BAD RELOADS SECONDS OUTDIR
# CONFIG is the file iolat reads; GOODn/BAD are copied over it (atomically).
# A few text bodies are kept in OUTDIR for promtool. Exit 0 when all held.
# The run ends after RELOADS SIGHUPs, or after SECONDS if that comes first
# (a sanitizer build on a busy machine may reload several times slower).
import gzip
import os
import re
import shutil
import signal
import sys
import threading
import time
import urllib.request

port, pid, config, good1, good2, bad, reloads, seconds, outdir = sys.argv[1:10]
pid, reloads, seconds = int(pid), int(reloads), float(seconds)
base = "http://127.0.0.1:%s" % port
ACCEPT = {
    "text": "text/plain;version=0.0.4",
    "openmetrics": "application/openmetrics-text;version=1.0.0",
    "protobuf": "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
    "encoding=delimited",
    "gzip": "text/plain;version=0.0.4",
}
# One sample line of the text formats: name{labels} value [timestamp].
SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eE]+|[-+]?Inf|NaN$')
stop = threading.Event()
errors = []
counts = {k: 0 for k in ACCEPT}
kept = {}


def check_text(body, openmetrics):
    lines = body.decode().split("\n")
    if openmetrics:
        if lines[-2:] != ["# EOF", ""]:
            return "OpenMetrics body does not end with # EOF"
        lines = lines[:-2]
    elif lines[-1] != "":
        return "text body does not end with a newline"
    for line in lines[:-1] if not openmetrics else lines:
        if line.startswith("#"):
            if not re.match(r"^# (HELP|TYPE|UNIT) ", line):
                return "bad comment line %r" % line
        elif not SAMPLE.match(line):
            return "bad sample line %r" % line
    if "iolat_build_info" not in body.decode():
        return "no iolat_build_info"
    return None


def check_protobuf(body):
    """Walks the varint-delimited MetricFamily messages; each must start with
    field 1 (name, length-delimited) and the framing must end exactly."""
    i, n = 0, 0
    while i < len(body):
        size, shift = 0, 0
        while True:
            if i >= len(body):
                return "truncated length prefix"
            b = body[i]
            i += 1
            size |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        if i + size > len(body):
            return "message runs past the body"
        if size == 0 or body[i] != 0x0A:
            return "message does not start with its name"
        i += size
        n += 1
    return None if n > 10 else "only %d families" % n


def scraper(kind):
    headers = {"Accept": ACCEPT[kind]}
    if kind == "gzip":
        headers["Accept-Encoding"] = "gzip"
    while not stop.is_set():
        req = urllib.request.Request(base + "/metrics", headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                status, body = r.status, r.read()
                encoding = r.headers.get("Content-Encoding")
        except Exception as e:  # noqa: BLE001 - any failure is the finding
            errors.append("%s scrape failed: %s" % (kind, e))
            return
        if status != 200:
            errors.append("%s scrape answered %d" % (kind, status))
            return
        if kind == "gzip":
            if encoding != "gzip":
                errors.append("gzip asked for, not given")
                return
            body = gzip.decompress(body)
        why = check_protobuf(body) if kind == "protobuf" else check_text(
            body, kind == "openmetrics")
        if why:
            errors.append("%s: %s" % (kind, why))
            return
        counts[kind] += 1
        if kind == "text" and counts[kind] % 50 == 1:
            kept[counts[kind]] = body


def get(path):
    with urllib.request.urlopen(base + path, timeout=10) as r:
        return r.read().decode()


def reloads_done():
    text = get("/metrics")
    ok = re.search(r'^iolat_config_reloads_total\{result="success"\} (\d+)', text, re.M)
    bad = re.search(r'^iolat_config_reloads_total\{result="failure"\} (\d+)', text, re.M)
    return int(ok.group(1)), int(bad.group(1))


def settings():
    """The running settings as the daemon shows them: the landing page's
    configuration block and the latency buckets it exports."""
    page = get("/")
    conf = page[page.index("<pre>"):page.index("</pre>")]
    les = sorted(set(re.findall(r'^iolat_block_device_latency_seconds_bucket\{[^}]*le="([^"]+)"',
                                get("/metrics"), re.M)))
    return conf, les


def install(src):
    tmp = config + ".tmp"
    shutil.copyfile(src, tmp)
    os.rename(tmp, config)


def hup_and_wait(expect_ok):
    before = reloads_done()
    os.kill(pid, signal.SIGHUP)
    deadline = time.time() + 10
    while time.time() < deadline:
        now = reloads_done()
        if now != before:
            if (now[0] > before[0]) != expect_ok:
                errors.append("a reload %s that should have %s" %
                              ("succeeded" if expect_ok is False else "failed",
                               "failed" if expect_ok is False else "succeeded"))
            return
        time.sleep(0.005)
    errors.append("a SIGHUP was not acted on within 10 s")


threads = [threading.Thread(target=scraper, args=(k,)) for k in ACCEPT]
for t in threads:
    t.start()
cycle = [(good1, True), (bad, False), (good2, True), (bad, False)]
hups = rejected = 0
end = time.time() + seconds
while hups < reloads and time.time() < end and not errors:
    for src, ok in cycle:
        if not ok:
            before = settings()
        install(src)
        hup_and_wait(ok)
        hups += 1
        if not ok:
            after = settings()
            rejected += 1
            if after != before:
                errors.append("a rejected reload changed the settings:\n%s\n->\n%s" %
                              (before, after))
        time.sleep(0.05)
stop.set()
for t in threads:
    t.join()
try:
    os.kill(pid, 0)
except OSError:
    errors.append("iolat serve died")
for n, body in kept.items():
    with open(os.path.join(outdir, "scrape.%d.txt" % n), "wb") as f:
        f.write(body)
print("SIGHUPs %d (%d rejected); scrapes: %s" % (hups, rejected, counts))
if errors:
    print("FAIL: " + "\nFAIL: ".join(errors[:5]))
    sys.exit(1)
if min(counts.values()) < 10:
    print("FAIL: too few scrapes: %s" % counts)
    sys.exit(1)
