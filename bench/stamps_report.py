#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# stamps_report.py RESULTS_JSONL - bench/stamps.sh's tables: per workload,
# one line per round and view (device, total) with the tracepoint
# reference's and iolat's p50/p90/p99, and the worst deviation of the
# workload over every round. RESULTS_JSONL holds stamp_truth.py's --json
# objects, each with the workload, round and trace records lost added.
import json
import sys

WORKLOADS = {
    "sync": "dio read: direct 4 KiB reads, one at a time",
    "uring": "fio io_uring 4 KiB randread, QD32, iodepth_batch_submit=16",
    "split": "dd: 1 MiB direct reads split into 128 KiB requests, mq-deadline",
}
QS = ("p50", "p90", "p99")


def us(ns):
    return f"{ns / 1e3:.2f}"


def deviation(row):
    pct = 100 * row["diff_ns"] / row["ref_ns"] if row["ref_ns"] else float("inf")
    return (f"{pct:+.1f} % ({row['diff_ns'] / 1e3:+.2f} us, bound {row['bound_ns'] / 1e3:.2f} us)"
            f" {'ok' if row['ok'] else 'OFF'}")


def worst(rows):
    return max(rows, key=lambda r: abs(r["diff_ns"]) / r["bound_ns"])


def table(name, results):
    print(f"{name}: {WORKLOADS.get(name, name)}")
    print(f"  {'round':>5} {'view':<6} {'requests':>8} {'lost':>4} "
          f"{'tracepoints p50/p90/p99 us':>28} {'iolat p50/p90/p99 us':>28}  worst")
    rows_all = []
    for res in sorted(results, key=lambda r: r["round"]):
        void = res["lost"] or res["counts"]["hist"] != res["counts"]["trace_device"]
        for view in ("device", "total"):
            rows = {r["q"]: r for r in res["rows"] if r["view"] == view}
            if not rows:
                print(f"  {res['round']:>5} {view:<6} no reference (no creation times in the trace)")
                continue
            n = res["counts"]["trace_device" if view == "device" else "trace_total"]
            ref = " / ".join(us(rows[q]["ref_ns"]) for q in QS)
            got = " / ".join(us(rows[q]["iolat_ns"]) for q in QS)
            w = worst(rows.values())
            note = "void: " if void else ""
            print(f"  {res['round']:>5} {view:<6} {n:>8} {res['lost']:>4} {ref:>28} {got:>28}  "
                  f"{note}{w['q']} {deviation(w)}")
            if not void:
                rows_all += [dict(r, round=res["round"]) for r in rows.values()]
        if void:
            print(f"  {'':>5} void round: hist counted {res['counts']['hist']}, trace "
                  f"{res['counts']['trace_device']} requests, {res['lost']} records lost")
    for view in ("device", "total"):
        rows = [r for r in rows_all if r["view"] == view]
        if rows:
            w = worst(rows)
            print(f"  worst {view}: round {w['round']} {w['q']}: tracepoints {us(w['ref_ns'])} us, "
                  f"iolat {us(w['iolat_ns'])} us, {deviation(w)}")
    print()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: stamps_report.py RESULTS_JSONL")
    by_workload = {}
    with open(sys.argv[1]) as f:
        for line in f:
            if line.strip():
                res = json.loads(line)
                by_workload.setdefault(res["workload"], []).append(res)
    if not by_workload:
        sys.exit(f"stamps_report: no results in {sys.argv[1]}")
    for name in [w for w in WORKLOADS if w in by_workload] + \
            [w for w in by_workload if w not in WORKLOADS]:
        table(name, by_workload[name])
    off = sum(not r["ok"] for rs in by_workload.values() for r in rs)
    runs = sum(len(rs) for rs in by_workload.values())
    print(f"{runs - off} of {runs} runs within every bound")
    return 0


if __name__ == "__main__":
    sys.exit(main())
