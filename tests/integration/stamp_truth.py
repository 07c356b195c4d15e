#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# stamp_truth.py [--label L] [--json] [--allow-us N] [--rank-slack N] [--shown-only pNN]... HIST_JSON TRACE_JSON - whether the
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
# histogram's interpolation can move it). The means are exact on both
# sides (iolat's sums of nanoseconds, no slots): the device and total means
# are held to the same max(2 us, 2 %), and the queue time between them
# (total - device; creation -> block_rq_issue by the tracepoints), which a
# collector that takes one cached stamp for both views reports as 0, to
# max(QUEUE_ABS_NS, QUEUE_REL): block_getrq comes before block_io_start by
# the request's set-up, and where each program reads its clock at a
# tracepoint moves it too. Prints a line per view and percentile or mean,
# and with --json one JSON object with every figure; exits 1 if one is
# outside its bound or the counts differ, 2 on bad input.
import argparse
import json
import math
import sys

ABS_NS = 2000
REL = 0.02
QUANTILES = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99))
QUEUE_ABS_NS = ABS_NS
QUEUE_REL = 0.5


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
    """Per-I/O device and total times (ns) from the trace's tracepoint clock,
    and the queue times (issue - creation) of the I/Os that have both."""
    device, total, queue = [], [], []
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
            created = creation(ts, r.get("k_start_ns") or 0)
            if created:
                total.append(ts["c"] - created)
                queue.append(ts["d"] - created)
    return device, total, queue


def creation(ts, k_start):
    """When the request was created, as near block_io_start as the record
    tells: block_getrq's time, or the kernel's own start stamp if that is
    later (and not after issue). The kernel reads its clock, or its plug's
    cached one, at block_io_start (6.10+); the task can be preempted between
    the two tracepoints (23 us seen on a busy machine), and a schedule ends
    the plug's cached time, so then the stamp is a fresh read there. A
    cached stamp from before block_getrq is earlier than it and not used."""
    g = ts.get("g")
    if not g:
        return 0
    if g < k_start <= ts["d"]:
        return k_start
    return g


def nearest_rank(values, q):
    s = sorted(values)
    return s[max(0, math.ceil(q * len(s)) - 1)]


def slot_width(view, v):
    for s in view["slots"]:
        if s["lo"] <= v <= s["hi"] + 1:
            return s["hi"] - s["lo"] + 1
    return 0


def rank_range(values, q, slack):
    """The reference values `slack` ranks either side of q's nearest rank."""
    s = sorted(values)
    k = max(0, math.ceil(q * len(s)) - 1)
    return s[max(0, k - slack)], s[min(len(s) - 1, k + slack)]


def compare(name, view, ref, allow_ns, slack):
    rows = []
    for label, q in QUANTILES:
        want = nearest_rank(ref, q)
        lo, hi = rank_range(ref, q, slack)
        got = view[label + "_ns"]
        bound = max(ABS_NS, REL * want) + slot_width(view, got) + allow_ns
        rows.append({"view": name, "q": label, "ref_ns": want, "iolat_ns": got,
                     "diff_ns": got - want, "bound_ns": bound,
                     "ok": lo - bound <= got <= hi + bound,
                     "near_ns": rank_range(ref, q, 2), "rank_of": (math.ceil(q * len(ref)), len(ref))})
    return rows


def mean_row(name, got, ref, allow_ns, abs_ns=ABS_NS, rel=REL):
    want = sum(ref) / len(ref)
    bound = max(abs_ns, rel * abs(want)) + allow_ns
    return {"view": name, "q": "mean", "ref_ns": want, "iolat_ns": got, "diff_ns": got - want,
            "bound_ns": bound, "ok": abs(got - want) <= bound}


def view_mean(view):
    return view["sum_ns"] / view["count"] if view["count"] else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="")
    ap.add_argument("--json", action="store_true")
    # What the measuring itself moves, added to every bound: hist's and
    # trace's programs at one tracepoint read their clocks one program's
    # run apart, ~0.1 us on the host but 10-40 us under qemu/TCG.
    ap.add_argument("--allow-us", type=float, default=0.0)
    # Percentiles printed but not held to the bound: under qemu/TCG the
    # guest's vCPU can stop for hundreds of us between two programs' clock
    # reads, and the p99 of a few hundred requests is one or two of them.
    ap.add_argument("--shown-only", action="append", default=[], choices=[q for q, _ in QUANTILES])
    # Requests whose rank may be moved, either way: a percentile is then
    # true when within its bound of any reference value that many ranks
    # from the nearest rank. Under qemu/TCG one request's two clock reads
    # at a tracepoint can be a stopped vCPU apart, and where the few hundred
    # requests' times have a gap at the percentile's rank, that one request
    # moves the percentile by the whole gap.
    ap.add_argument("--rank-slack", type=int, default=0)
    ap.add_argument("hist")
    ap.add_argument("trace")
    a = ap.parse_args()
    allow = a.allow_us * 1e3
    if a.rank_slack < 0:
        bad_input(f"--rank-slack {a.rank_slack}: give a number of requests, 0 or more")
    h = last_object(a.hist)
    if len(h.get("series", [])) != 1:
        bad_input(f"{a.hist} has {len(h.get('series', []))} series, not 1: "
                  "run hist with -d DISK and no split")
    s = h["series"][0]
    device, total, queue = reference(a.trace)
    if not device:
        bad_input(f"no completed requests with tracepoint times in {a.trace}")
    rows, ok = [], True
    counts = {"hist": s["ios"], "trace_device": len(device), "trace_total": len(total)}
    if counts["hist"] != len(device):
        ok = False
        print(f"{a.label}counts differ: hist {counts['hist']}, trace {len(device)}")
    rows += compare("device", s["device"], device, allow, a.rank_slack)
    rows.append(mean_row("device", view_mean(s["device"]), device, allow))
    if total:
        rows += compare("total", s["total"], total, allow, a.rank_slack)
        rows.append(mean_row("total", view_mean(s["total"]), total, allow))
        rows.append(mean_row("queue", view_mean(s["total"]) - view_mean(s["device"]), queue,
                             allow, QUEUE_ABS_NS, QUEUE_REL))
    for r in rows:
        if r["q"] in a.shown_only:
            r["ok"] = r["ok"] or None  # None: outside the bound, not held to it
        ok &= r["ok"] is not False
        print(f"{a.label}{r['view']} {r['q']}: tracepoints {r['ref_ns'] / 1e3:.2f} us, iolat "
              f"{r['iolat_ns'] / 1e3:.2f} us ({r['diff_ns'] / 1e3:+.2f} us, "
              f"{100 * r['diff_ns'] / r['ref_ns'] if r['ref_ns'] else 0:+.1f} %), bound {r['bound_ns'] / 1e3:.2f} us: "
              f"{'ok' if r['ok'] else 'off (shown only)' if r['ok'] is None else 'OFF'}")
        if not r["ok"] and "rank_of" in r:
            # Where the reference's times lie around the rank: a gap there
            # is what one displaced request turns into a percentile's error.
            k, n = r["rank_of"]
            near = sorted(v for v in (device if r["view"] == "device" else total)
                          if r["near_ns"][0] <= v <= r["near_ns"][1])
            print(f"{a.label}  {r['view']} {r['q']} is rank {k} of {n}; the tracepoints' times at ranks "
                  f"{k - 2} to {k + 2}: {', '.join(f'{v / 1e3:.2f}' for v in near)} us")
    if a.json:
        print(json.dumps({"label": a.label, "counts": counts, "rows": rows, "ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
