#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""cost_cpu.py - bench/cost.sh --cpu: each tool's cost as CPU time per I/O,
with kernel BPF statistics off (stdlib only).

BPF statistics charge every program run two clock reads of their own, so
run_time_ns overstates a tool that runs more programs. With them off there
is no run time to read; what a tool costs is then the CPU time the machine
spends per I/O beyond what it spends with no tool.

  cost_cpu.py sample TOOL ROUND FIO.json BUSY_BEFORE BUSY_AFTER
      Prints one JSON line for one run: fio's I/Os, IOPS, the machine's
      busy CPU over the run and fio's own (usr + sys) CPU, both per I/O.
      BUSY_*: the sum of /proc/stat's first line's user, nice, system, irq
      and softirq (clock ticks of all CPUs; not idle, iowait or steal,
      which are no work of this machine's) just before and after fio.
  cost_cpu.py table RESULTS.jsonl
      Prints, per tool, the medians over rounds and the CPU ns per I/O it
      added to the runs with no tool ("none", which must be among the
      tools), and that added cost as a ratio to biolatency's.
"""
import json
import os
import statistics
import sys

BASELINE = "none"
REFERENCE = "biolatency"


def sample(tool, rnd, fio_path, before, after):
    with open(fio_path) as f:
        text = f.read()
    # fio may print notes before the JSON object.
    job = json.loads(text[text.index("{"):])["jobs"][0]
    ios = job["read"]["total_ios"]
    if not ios:
        raise SystemExit(f"{tool}: fio completed no I/O")
    # usr_cpu and sys_cpu are percentages of the job's run time (ms).
    fio_ns = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] * 1e6
    print(json.dumps({
        "tool": tool,
        "round": int(rnd),
        "ios": ios,
        "iops": job["read"]["iops"],
        "busy_ns_io": (int(after) - int(before)) * 1e9 / os.sysconf("SC_CLK_TCK") / ios,
        "fio_ns_io": fio_ns / ios,
    }))


def table(path):
    runs = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                runs.setdefault(r["tool"], []).append(r)
    if BASELINE not in runs:
        raise SystemExit(f"cost_cpu.py: no runs of '{BASELINE}' to measure the tools against")
    order = [BASELINE] + sorted(t for t in runs if t != BASELINE)

    def med(t, field):
        return statistics.median(r[field] for r in runs[t])

    added = {t: {k: med(t, k) - med(BASELINE, k) for k in ("busy_ns_io", "fio_ns_io")}
             for t in order}
    hdr = ("tool", "machine CPU ns/IO", "added", "x biolat", "fio CPU ns/IO", "added",
           "x biolat", "IOPS med")
    rows = []
    for t in order:
        row = [t]
        for k in ("busy_ns_io", "fio_ns_io"):
            ref = added.get(REFERENCE, {}).get(k)
            vals = [r[k] for r in runs[t]]
            row.append(f"{med(t, k):.0f} ({min(vals):.0f}-{max(vals):.0f})")
            row.append("-" if t == BASELINE else f"{added[t][k]:+.0f}")
            row.append(f"{added[t][k] / ref:.2f}" if t != BASELINE and ref and ref > 0 else "-")
        row.append(f"{med(t, 'iops') / 1000:.1f}k")
        rows.append(row)
    widths = [max(len(str(x)) for x in col) for col in zip(hdr, *rows)]
    for row in (hdr, *rows):
        print("  ".join(str(x).rjust(w) if i else str(x).ljust(w)
                        for i, (x, w) in enumerate(zip(row, widths))))
    rounds = max(len(rs) for rs in runs.values())
    print(f"\nMedians over {rounds} rounds (min-max), kernel BPF statistics off. machine CPU:"
          " busy time of all CPUs (/proc/stat)\nover the fio run / I/Os fio completed; it"
          " includes the completions' work in other tasks and any other\nwork on the machine."
          " fio CPU: fio's own usr + sys, which holds the submission side only. added: the\n"
          f"tool's median - {BASELINE}'s; x biolat: that / {REFERENCE}'s added.")


def main(argv):
    if len(argv) == 7 and argv[1] == "sample":
        sample(*argv[2:])
    elif len(argv) == 3 and argv[1] == "table":
        table(argv[2])
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
