#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""soak.py - the scraping and statistics side of bench/soak.sh (stdlib only).

  soak.py scrape --port P --pid PID --scrapes N --workers W --sample-every K
                 --dir DIR [--until FILE]
      W worker processes scrape http://127.0.0.1:P/metrics over keep-alive
      connections, each cycling through the formats in MODES, until N
      scrapes are done in all and, with --until, FILE exists (soak.sh
      creates it once the cgroup, disk and SIGHUP churn is done). Every
      response is checked: status 200, the content type the format asked
      for, gzip when asked (and only then), and a whole body (text ends in a
      newline, OpenMetrics in "# EOF", protobuf's length-delimited messages
      fill the body exactly). A connection the server closed or refused is
      opened again and the scrape repeated (counted as a reconnect, not as
      a scrape). Every K scrapes the main process records, in
      DIR/samples.jsonl: the scrape count, VmRSS and VmHWM of PID, its open
      fds and threads, and the iolat_bpf_map_entries gauges plus a few
      workload counters from one more text scrape of its own. DIR/progress
      holds the running scrape count (soak.sh paces its churn by it);
      DIR/scrapers.json the per-format counts, times and failures.
      Exits 0, or 1 if a scrape was wrong or the server went away.
  soak.py report --dir DIR [--warmup F] [--max-rss-kib S] [--max-fds S]
                 [--max-map-entries S]
      For RSS, open fds and every map's entries, fits least-squares lines
      over the samples after the first fraction F of scrapes (the warm-up):
      one through all of them (printed with its standard error) and one
      through their floor, the lowest sample in each of --bins equal
      stretches of the run. Transient peaks (a body being built, a
      connection open) scatter the samples upwards; a leak lifts the floor.
      Prints the slopes per 10 000 scrapes and the per-format scrape table;
      exits 1 if a floor slope is above its limit.
"""
import argparse
import gzip
import http.client
import json
import math
import multiprocessing as mp
import os
import re
import socket
import statistics
import sys
import time

ACCEPT = {
    "text": "text/plain; version=0.0.4",
    "openmetrics": "application/openmetrics-text; version=1.0.0",
    "proto": "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; "
             "encoding=delimited",
}
CTYPE = {"text": "text/plain", "openmetrics": "application/openmetrics-text",
         "proto": "application/vnd.google.protobuf"}
MODES = ["text", "openmetrics", "proto", "text+gzip", "openmetrics+gzip", "proto+gzip"]
# Self-metrics the sampler keeps beside the map entries.
GAUGES = ["iolat_workload_label_sets", "iolat_workload_retired_cgroups_total",
          "iolat_workload_expired_total", "iolat_workload_folded_cgroups_total",
          "iolat_scrape_size_bytes"]
EVENT_RE = re.compile(r'^iolat_collector_events_total\{event="([^"]+)"\} (\S+)$', re.M)
# name{label="value"} pairs kept as gauges NAME_VALUE (all that are there).
LABELLED_RE = re.compile(r'^iolat_(config_reloads_total|http_connections_closed_total)'
                         r'\{[a-z]+="([^"]+)"\} (\S+)$', re.M)
MAP_RE = re.compile(r'^iolat_bpf_map_entries\{map="([^"]+)"\} (\S+)$', re.M)
CAP_RE = re.compile(r'^iolat_bpf_map_capacity_entries\{map="([^"]+)"\} (\S+)$', re.M)
# Errors after which a new connection is tried: the server closed or reset an
# idle keep-alive connection, or was between listeners (a reload).
RECONNECT = (http.client.RemoteDisconnected, http.client.BadStatusLine, ConnectionError,
             BrokenPipeError, socket.timeout)


class BadScrape(Exception):
    pass


def varint(data, i):
    shift = value = 0
    while True:
        if i >= len(data):
            raise BadScrape("protobuf body ends inside a length prefix")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def check_body(mode, body):
    """Raises BadScrape unless BODY (already gunzipped) is a whole exposition."""
    base = mode.split("+")[0]
    if base == "proto":
        i = n = 0
        while i < len(body):
            size, i = varint(body, i)
            i += size
            n += 1
        if i != len(body) or n == 0:
            raise BadScrape(f"protobuf framing: {n} messages do not fill {len(body)} bytes")
    elif base == "openmetrics":
        if not body.endswith(b"# EOF\n"):
            raise BadScrape("OpenMetrics body does not end in '# EOF'")
    elif not body.endswith(b"\n") or b"iolat_build_info" not in body:
        raise BadScrape("text body cut short")


def scrape_once(conn, mode):
    """One scrape on CONN; returns the body size on the wire."""
    base, _, enc = mode.partition("+")
    hdrs = {"Accept": ACCEPT[base], "Accept-Encoding": "gzip" if enc else "identity"}
    conn.request("GET", "/metrics", headers=hdrs)
    r = conn.getresponse()
    body = r.read()
    if r.status != 200:
        raise BadScrape(f"HTTP {r.status}")
    ctype = r.getheader("Content-Type", "")
    if not ctype.startswith(CTYPE[base]):
        raise BadScrape(f"asked for {base}, got Content-Type '{ctype}'")
    got_enc = r.getheader("Content-Encoding", "")
    if enc and got_enc != "gzip":
        raise BadScrape("gzip asked for, not given")
    if not enc and got_enc:
        raise BadScrape(f"Content-Encoding '{got_enc}' unasked")
    try:
        check_body(mode, gzip.decompress(body) if enc else body)
    except (OSError, EOFError) as e:
        raise BadScrape(f"bad gzip: {e}") from None
    return len(body)


class Conn:
    """A keep-alive connection that reconnects (and counts it) when the
    server closed it, retrying for up to `patience` seconds."""

    def __init__(self, port, patience=30.0):
        self.port, self.patience = port, patience
        self.conn, self.reconnects, self.refused = None, 0, 0

    def scrape(self, mode):
        deadline = time.monotonic() + self.patience
        while True:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                return scrape_once(self.conn, mode)
            except RECONNECT as e:
                self.conn.close()
                self.conn = None
                self.reconnects += 1
                if isinstance(e, ConnectionRefusedError):
                    self.refused += 1
                    time.sleep(0.01)
                if time.monotonic() > deadline:
                    raise BadScrape(f"no answer for {self.patience:.0f} s: {e!r}") from None


def worker(idx, port, total, count, stop, outq):
    conn = Conn(port)
    stats = {m: {"n": 0, "bytes": 0, "times": []} for m in MODES}
    k, err = idx, None
    try:
        while not stop.value:
            mode = MODES[k % len(MODES)]
            k += 1
            t0 = time.monotonic()
            size = conn.scrape(mode)
            s = stats[mode]
            s["times"].append(time.monotonic() - t0)
            s["n"] += 1
            s["bytes"] += size
            with count.get_lock():
                count.value += 1
    except (BadScrape, OSError, http.client.HTTPException) as e:
        err = f"worker {idx}, {mode} scrape: {e}"
        stop.value = 1
    outq.put({"worker": idx, "stats": stats, "reconnects": conn.reconnects,
              "refused": conn.refused, "error": err})


def proc_status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, val = line.partition(":")
            if key in ("VmRSS", "VmHWM", "Threads"):
                out[key] = int(val.split()[0])
    return out


def sample(pid, conn, scrapes, t0):
    st = proc_status(pid)
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    conn.request("GET", "/metrics", headers={"Accept": ACCEPT["text"]})
    r = conn.getresponse()
    body = r.read().decode()
    if r.status != 200:
        raise BadScrape(f"sampler: HTTP {r.status}")
    maps = {m: int(float(v)) for m, v in MAP_RE.findall(body)}
    caps = {m: int(float(v)) for m, v in CAP_RE.findall(body)}
    gauges = {f"events_{e}": float(v) for e, v in EVENT_RE.findall(body)}
    gauges.update({f"{n}_{lv}": float(v) for n, lv, v in LABELLED_RE.findall(body)})
    for g in GAUGES:
        m = re.search(rf"^{g} (\S+)$", body, re.M)
        if m:
            gauges[g] = float(m.group(1))
    heap = re.search(r"^iolat_heap_allocated_bytes (\S+)$", body, re.M)
    return {"scrapes": scrapes, "t": round(time.monotonic() - t0, 3), "rss_kib": st["VmRSS"],
            "heap_kib": int(float(heap.group(1)) / 1024) if heap else 0,
            "hwm_kib": st["VmHWM"], "threads": st["Threads"], "fds": fds, "maps": maps,
            "caps": caps, "gauges": gauges}


def write_progress(path, n):
    with open(path + ".tmp", "w") as f:
        f.write(f"{n}\n")
    os.replace(path + ".tmp", path)


def cmd_scrape(a):
    count, stop = mp.Value("q", 0), mp.Value("i", 0)
    outq = mp.Queue()
    procs = [mp.Process(target=worker, args=(i, a.port, a.scrapes, count, stop, outq))
             for i in range(a.workers)]
    progress = os.path.join(a.dir, "progress")
    samples = open(os.path.join(a.dir, "samples.jsonl"), "w")
    sconn = Conn(a.port)
    t0 = time.monotonic()
    err = None
    next_sample = 0
    write_progress(progress, 0)
    for p in procs:
        p.start()
    try:
        while True:
            n = count.value
            write_progress(progress, n)
            if not os.path.exists(f"/proc/{a.pid}/status"):
                err = f"iolat (pid {a.pid}) is gone after {n} scrapes"
                break
            if stop.value:
                break  # a worker failed: it says why
            if n >= next_sample:
                # The sampler's own scrape goes through Conn too, so a
                # reload between listeners does not end the soak.
                sconn.conn = sconn.conn or http.client.HTTPConnection(
                    "127.0.0.1", a.port, timeout=30)
                for attempt in range(3):
                    try:
                        s = sample(a.pid, sconn.conn, n, t0)
                        break
                    except RECONNECT:
                        sconn.conn.close()
                        sconn.conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=30)
                        sconn.reconnects += 1
                        time.sleep(0.05)
                else:
                    raise BadScrape("sampler: no answer after 3 connections")
                samples.write(json.dumps(s) + "\n")
                samples.flush()
                next_sample = (n // a.sample_every + 1) * a.sample_every
            if n >= a.scrapes and (not a.until or os.path.exists(a.until)):
                break
            time.sleep(0.02)
    except (BadScrape, OSError, http.client.HTTPException) as e:
        err = f"sampler: {e}"
    stop.value = 1
    results = [outq.get() for _ in procs]
    for p in procs:
        p.join()
    n = count.value
    elapsed = time.monotonic() - t0
    # The last sample, after the workers stopped: the end of the line.
    if err is None:
        try:
            samples.write(json.dumps(sample(a.pid, sconn.conn or http.client.HTTPConnection(
                "127.0.0.1", a.port, timeout=30), n, t0)) + "\n")
        except (BadScrape, OSError, http.client.HTTPException) as e:
            err = f"sampler, last sample: {e}"
    samples.close()
    write_progress(progress, n)
    errors = [r["error"] for r in results if r["error"]] + ([err] if err else [])
    per_mode = {}
    for m in MODES:
        times = sorted(t for r in results for t in r["stats"][m]["times"])
        nm = sum(r["stats"][m]["n"] for r in results)
        per_mode[m] = {
            "n": nm,
            "bytes_avg": sum(r["stats"][m]["bytes"] for r in results) / nm if nm else 0,
            "ms_med": 1000 * times[len(times) // 2] if times else 0,
            "ms_p99": 1000 * times[min(len(times) - 1, int(len(times) * 0.99))] if times else 0,
            "ms_max": 1000 * times[-1] if times else 0,
        }
    summary = {"scrapes": n, "seconds": elapsed, "workers": a.workers, "modes": per_mode,
               "reconnects": sum(r["reconnects"] for r in results) + sconn.reconnects,
               "refused": sum(r["refused"] for r in results), "errors": errors}
    with open(os.path.join(a.dir, "scrapers.json"), "w") as f:
        json.dump(summary, f, indent=1)
    for e in errors:
        print(f"soak.py: {e}", file=sys.stderr)
    return 1 if errors else 0


# --- report ---

def fit(xs, ys):
    """Least-squares slope and its standard error (0 with fewer than 3 points)."""
    n = len(xs)
    if n < 2:
        return 0.0, 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0, 0.0
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    if n < 3:
        return slope, 0.0
    resid = sum((y - my - slope * (x - mx)) ** 2 for x, y in zip(xs, ys))
    return slope, math.sqrt(resid / (n - 2) / sxx)


def floor_points(xs, ys, bins):
    """The lowest sample of each of BINS equal stretches of x: what stays
    when the transient part (bodies being built, connections open) is gone."""
    lo, hi = xs[0], xs[-1]
    width = (hi - lo) / bins or 1
    best = {}
    for x, y in zip(xs, ys):
        b = min(bins - 1, int((x - lo) / width))
        if b not in best or y < best[b][1]:
            best[b] = (x, y)
    pts = [best[b] for b in sorted(best)]
    return [p[0] for p in pts], [p[1] for p in pts]


def cmd_report(a):
    with open(os.path.join(a.dir, "samples.jsonl")) as f:
        samples = [json.loads(line) for line in f if line.strip()]
    with open(os.path.join(a.dir, "scrapers.json")) as f:
        sc = json.load(f)
    last = samples[-1]["scrapes"] if samples else 0
    fitted = [s for s in samples if s["scrapes"] >= a.warmup * last]
    if len(fitted) < 2 * a.bins:
        print(f"soak.py: only {len(fitted)} samples after the warm-up, too few for "
              f"{a.bins} bins", file=sys.stderr)
        return 1
    xs = [s["scrapes"] / 10000 for s in fitted]
    maps = sorted({m for s in samples for m in s["maps"]})
    # The heap is shown, not judged: beside RSS it tells a leak (both grow)
    # from memory the allocator keeps (only RSS grows).
    rows = [("RSS KiB", "rss_kib", a.max_rss_kib), ("heap in use KiB", "heap_kib", None),
            ("open fds", "fds", a.max_fds),
            ("threads", "threads", None)]
    rows += [(f"map {m} entries", ("maps", m), a.max_map_entries) for m in maps]
    rows += [("map entries, all", ("maps", None), a.max_map_entries)]

    def value(s, key):
        if isinstance(key, tuple):
            return sum(s["maps"].values()) if key[1] is None else s["maps"].get(key[1], 0)
        return s.get(key, 0)

    over = []
    print(f"{len(samples)} samples, one every {a.sample_every or '?'} scrapes; fitted from scrape "
          f"{fitted[0]['scrapes']} (after the first {a.warmup:.0%}) to {last}")
    print(f"slope per 10 000 scrapes of all those samples (+- its standard error), and of "
          f"the floor: the lowest sample in each of {a.bins} equal stretches (judged)")
    print(f"{'':<24}{'start':>9}{'fit from':>9}{'end':>9}{'min':>9}{'max':>9}"
          f"{'all':>10}{'+-se':>8}{'floor':>10}{'limit':>8}")
    for name, key, limit in rows:
        ys_all = [value(s, key) for s in samples]
        ys = [value(s, key) for s in fitted]
        slope, se = fit(xs, ys)
        fslope, _ = fit(*floor_points(xs, ys, a.bins))
        bad = limit is not None and fslope > limit
        if bad:
            over.append(f"{name}: floor slope {fslope:.2f} per 10 000 scrapes, limit {limit}")
        print(f"{name:<24}{ys_all[0]:>9}{ys[0]:>9}{ys_all[-1]:>9}{min(ys_all):>9}"
              f"{max(ys_all):>9}{slope:>10.2f}{se:>8.2f}{fslope:>10.2f}"
              f"{'-' if limit is None else limit:>8}{'  OVER' if bad else ''}")
    print(f"VmHWM: {samples[-1]['hwm_kib']} KiB at the end")
    caps = samples[-1].get("caps", {})
    if caps:
        print("map capacity: " + ", ".join(f"{m} {c}" for m, c in sorted(caps.items())))
    g = samples[-1]["gauges"]
    print("at the end: " + ", ".join(f"{k.replace('iolat_', '')} {v:.0f}" for k, v in g.items()))
    print()
    print(f"scrapes: {sc['scrapes']} in {sc['seconds']:.0f} s ({sc['scrapes'] / sc['seconds']:.0f}/s)"
          f" by {sc['workers']} keep-alive clients; reconnects {sc['reconnects']}"
          f" (refused {sc['refused']})")
    print(f"{'format':<18}{'scrapes':>9}{'avg bytes':>11}{'ms med':>9}{'ms p99':>9}{'ms max':>9}")
    for m, s in sc["modes"].items():
        print(f"{m:<18}{s['n']:>9}{s['bytes_avg']:>11.0f}{s['ms_med']:>9.2f}"
              f"{s['ms_p99']:>9.2f}{s['ms_max']:>9.1f}")
    for o in over:
        print(f"soak.py: {o}", file=sys.stderr)
    return 1 if over else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("scrape")
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--pid", type=int, required=True)
    s.add_argument("--scrapes", type=int, required=True)
    s.add_argument("--workers", type=int, default=3)
    s.add_argument("--sample-every", type=int, default=1000)
    s.add_argument("--dir", required=True)
    s.add_argument("--until")
    r = sub.add_parser("report")
    r.add_argument("--dir", required=True)
    r.add_argument("--warmup", type=float, default=0.1)
    r.add_argument("--bins", type=int, default=10)
    r.add_argument("--sample-every", type=int)
    r.add_argument("--max-rss-kib", type=float, default=48)
    r.add_argument("--max-fds", type=float, default=1)
    r.add_argument("--max-map-entries", type=float, default=5)
    a = p.parse_args()
    return cmd_scrape(a) if a.cmd == "scrape" else cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
