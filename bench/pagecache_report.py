# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""pagecache_report.py - bench/pagecache.sh's lines to a table.

Input, one line per mode, workload and round:
  MODE WORKLOAD UNITS BPF_NS WALL_NS EXTRA
EXTRA is "IOS:BLOCK_BPF_NS" for the buffered workload, "-" otherwise.
Prints each line as it comes, then the medians over rounds per mode.
"""
import statistics
import sys

rows = {}
print("%-9s %-9s %10s %14s %14s %12s" % ("mode", "workload", "units", "bpf ns/unit",
                                          "wall ns/unit", "block ns/IO"))
for line in sys.stdin:
    mode, work, units, bpf, wall, extra = line.split()
    units, bpf, wall = int(units), int(bpf), int(wall)
    per_io = "-"
    if extra != "-":
        ios, block = (int(x) for x in extra.split(":"))
        per_io = "%.0f" % (block / ios) if ios else "-"
    if work == "direct":
        # wall per unit is meaningless for a timed run: show IOPS instead
        wall_s = "%.0f IOPS" % (units / (wall / 1e9))
    else:
        wall_s = "%.0f" % (wall / units)
    print("%-9s %-9s %10d %14.1f %14s %12s" % (mode, work, units, bpf / units, wall_s, per_io),
          flush=True)
    rows.setdefault((work, mode), []).append((bpf / units, wall / units, per_io, units))

print("\nmedians over rounds")
print("%-9s %-9s %14s %14s %12s" % ("workload", "mode", "bpf ns/unit", "wall", "block ns/IO"))
for (work, mode), vals in sorted(rows.items()):
    bpf = statistics.median(v[0] for v in vals)
    if work == "direct":
        wall = "%.0f IOPS" % statistics.median(v[3] / 5 for v in vals)
    else:
        wall = "%.0f ns" % statistics.median(v[1] for v in vals)
    ios = [float(v[2]) for v in vals if v[2] != "-"]
    print("%-9s %-9s %14.1f %14s %12s" % (work, mode, bpf, wall,
                                          "%.0f" % statistics.median(ios) if ios else "-"))
