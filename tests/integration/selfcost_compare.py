#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# selfcost_compare.py PROGRAM ROUND_DIR... - iolat's own measure of a BPF
# program's time per run (iolat_bpf_sampled_seconds_total /
# iolat_bpf_sampled_runs_total) against the kernel's BPF statistics
# (iolat_bpf_program_run_seconds_total / iolat_bpf_program_runs_total) over
# the same I/O, for test_selfcost.sh and bench/selfcost.sh. Each ROUND_DIR
# holds two scrapes (m1, m2) and the floor program's `bpftool prog show -j`
# just before and after (f1, f2): what the kernel's statistics charge a run
# of an empty program at the same hook. Prints one JSON line per round and a
# last one with the medians.
import json
import re
import statistics
import sys

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$")


def scrape(path):
    out = {}
    with open(path) as f:
        for line in f:
            m = SAMPLE.match(line.strip())
            if m:
                out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def round_of(prog, d):
    a, b = scrape(d + "/m1"), scrape(d + "/m2")
    with open(d + "/f1") as f1, open(d + "/f2") as f2:
        e1, e2 = json.load(f1), json.load(f2)
    lab = '{program="%s"}' % prog

    def delta(name):
        return b.get(name + lab, 0.0) - a.get(name + lab, 0.0)

    k_runs, k_s = delta("iolat_bpf_program_runs_total"), delta("iolat_bpf_program_run_seconds_total")
    s_runs, s_n = delta("iolat_bpf_self_runs_total"), delta("iolat_bpf_sampled_runs_total")
    s_s = delta("iolat_bpf_sampled_seconds_total")
    # bpftool leaves run_time_ns and run_cnt out while run_time_ns is 0: on
    # a quiet machine the floor program has not run yet when f1 is taken.
    f_runs = e2.get("run_cnt", 0) - e1.get("run_cnt", 0)
    if not (k_runs and s_n and f_runs):
        sys.exit("%s: no runs to compare (kernel %d, sampled %d, floor %d)" % (d, k_runs, s_n, f_runs))
    kernel = k_s / k_runs * 1e9
    floor = (e2.get("run_time_ns", 0) - e1.get("run_time_ns", 0)) / f_runs
    self_ns = s_s / s_n * 1e9
    return {
        "kernel_runs": int(k_runs),
        "self_runs": int(s_runs),
        "sampled_runs": int(s_n),
        "kernel_ns": round(kernel, 1),
        "self_ns": round(self_ns, 1),
        "floor_ns": round(floor, 1),
        "self_over_kernel": round(self_ns / kernel, 3),
        "self_over_kernel_less_floor": round(self_ns / (kernel - floor), 3),
    }


def main():
    rounds = [round_of(sys.argv[1], d) for d in sys.argv[2:]]
    for r in rounds:
        print(json.dumps(r))
    keys = ("kernel_ns", "self_ns", "floor_ns", "self_over_kernel", "self_over_kernel_less_floor")
    print(json.dumps({"median": {k: statistics.median(r[k] for r in rounds) for k in keys}}))


main()
