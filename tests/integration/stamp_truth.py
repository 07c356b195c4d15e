#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# stamp_truth.py [--label L] [--json] HIST_JSON TRACE_JSON - whether the
# latency views of `iolat hist` are the times the block tracepoints give the
# same I/Os: the device view against block_rq_issue -> block_rq_complete,
# the total view against the request's creation (block_getrq, which fires
# just before block_io_start) -> block_rq_complete, both read with a clock
# at the tracepoints by `iolat trace` (its ts_ns). For the truth bench
# (bench/stamps.sh), tests/integration/test_plugclock.sh and the guests of
# test_kernels.sh.
#
# HIST_JSON: `iolat hist --json -d DISK` stopped after the I/O (its last
# object, one series); TRACE_JSON: `iolat trace --json -d DISK` over the
# same I/O. The reference percentiles are exact (nearest rank over the
# per-I/O times); iolat's are read off its histogram, so they carry its
# slot width as well as any error of the stamps. A percentile is true when
# it is within max(2 us, 2 %) of the reference (issue 29's bound on the
# stamps) plus the width of the slot iolat's estimate lies in (the most a
# histogram's interpolation can move it). Prints a line per view and
# percentile, and with --json one JSON object with every figure; exits 1
# if a percentile is outside its bound or the counts differ, 2 on bad input.
import argparse
import json
import math
import sys

ABS_NS = 2000
REL = 0.02
QUANTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99))


def bad_input(message):
    """Exits 2, as the header says for bad input (sys.exit(message) exits 1,
    which a caller would take for a view off)."""
    print(f"stamp_truth: {message}", file=sys.stderr)
    sys.exit(2)


def last_object(path):
    obj = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                obj = json.loads(line)
    if obj is None:
        bad_input(f"no JSON object in {path}: run `iolat hist --json -d DISK`")
    return obj


def reference(path):
    """Per-I/O device and total times (ns) from the trace's tracepoint clock."""
    device, total = [], []
    with open(path) as f:
        for line in f:
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r.get("type") != "io" or r.get("bio_based"):
                continue
            ts = r["ts_ns"]
            if not ts.get("c") or not ts.get("d"):
                continue
            device.append(ts["c"] - ts["d"])
            if ts.get("g"):
                total.append(ts["c"] - ts["g"])
    return device, total


def nearest_rank(values, q):
    s = sorted(values)
    return s[max(0, math.ceil(q * len(s)) - 1)]


def slot_width(view, v):
    for s in view["slots"]:
        if s["lo"] <= v <= s["hi"] + 1:
            return s["hi"] - s["lo"] + 1
    return 0


def compare(name, view, ref):
    rows = []
    for label, q in QUANTILES:
        want = nearest_rank(ref, q)
        got = view[label + "_ns"]
        bound = max(ABS_NS, REL * want) + slot_width(view, got)
        rows.append({"view": name, "q": label, "ref_ns": want, "iolat_ns": got,
                     "diff_ns": got - want, "bound_ns": bound, "ok": abs(got - want) <= bound})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("hist")
    ap.add_argument("trace")
    a = ap.parse_args()
    h = last_object(a.hist)
    if len(h.get("series", [])) != 1:
        bad_input(f"{a.hist} has {len(h.get('series', []))} series, not 1: "
                  "run hist with -d DISK and no split")
    s = h["series"][0]
    device, total = reference(a.trace)
    if not device:
        bad_input(f"no completed requests with tracepoint times in {a.trace}")
    rows, ok = [], True
    counts = {"hist": s["ios"], "trace_device": len(device), "trace_total": len(total)}
    if counts["hist"] != len(device):
        ok = False
        print(f"{a.label}counts differ: hist {counts['hist']}, trace {len(device)}")
    rows += compare("device", s["device"], device)
    if total:
        rows += compare("total", s["total"], total)
    for r in rows:
        ok &= r["ok"]
        print(f"{a.label}{r['view']} {r['q']}: tracepoints {r['ref_ns'] / 1e3:.2f} us, iolat "
              f"{r['iolat_ns'] / 1e3:.2f} us ({r['diff_ns'] / 1e3:+.2f} us, "
              f"{100 * r['diff_ns'] / r['ref_ns']:+.1f} %), bound {r['bound_ns'] / 1e3:.2f} us: "
              f"{'ok' if r['ok'] else 'OFF'}")
    if a.json:
        print(json.dumps({"label": a.label, "counts": counts, "rows": rows, "ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
