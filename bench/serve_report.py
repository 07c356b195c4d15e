#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""serve_report.py - the parsing and table side of bench/serve.sh (stdlib only).

  serve_report.py count FILE
      Prints one JSON object about one saved /metrics body (text or
      delimited protobuf, gzipped or not: told apart by their first bytes):
      for text, the sample lines (lines that are not comments), the label
      sets (samples with a histogram's or summary's _bucket/_sum/_count
      suffix and le/quantile label folded into one) and the families; for
      protobuf, the families and the metrics (label sets) it holds.
  serve_report.py renders DIR
      For every body DIR/SEQ.MODE (iolat's scrapes, numbered from 1 in the
      order iolat served them), prints "SEQ VALUE": the gauge
      iolat_scrape_duration_seconds in that body, which is the build+render
      time of scrape SEQ-1.
  serve_report.py table RESULTS.jsonl
      Prints the summary table (serve.sh writes RESULTS.jsonl).
"""
import gzip
import json
import re
import statistics
import struct
import sys

SELF_GAUGE = "iolat_scrape_duration_seconds"
MODES = ["text", "text+gzip", "proto", "proto+gzip"]
LABEL_RE = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')


def read_body(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data


def is_text(data):
    return data[:1] == b"#" or data[:1].isalpha()


# --- text exposition ---

def text_count(data):
    types, lines, sets = {}, 0, set()
    for line in data.decode().splitlines():
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(None, 3)
            types[name] = typ
            continue
        if not line or line.startswith("#"):
            continue
        lines += 1
        brace = line.find("{")
        if brace >= 0:
            name = line[:brace]
            labels = LABEL_RE.findall(line[brace:line.rindex("}")])
        else:
            name, labels = line.split()[0], []
        for suffix in ("_bucket", "_sum", "_count"):
            base = name[:-len(suffix)]
            if name.endswith(suffix) and types.get(base) in ("histogram", "summary"):
                name = base
                labels = [kv for kv in labels if kv[0] not in ("le", "quantile")]
                break
        sets.add((name, tuple(sorted(labels))))
    return {"lines": lines, "label_sets": len(sets), "families": len(types)}


def text_gauge(data, name):
    for line in data.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


# --- delimited protobuf (io.prometheus.client.MetricFamily) ---

def varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, i
        shift += 7


def fields(buf):
    """(field number, wire type, value) of one message; value is bytes for
    length-delimited fields, an int for varints, raw bytes for fixed ones."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"protobuf wire type {wt} not expected")
        yield num, wt, v


def proto_families(data):
    i = 0
    while i < len(data):
        n, i = varint(data, i)
        yield data[i:i + n]
        i += n


def proto_count(data):
    fams = metrics = 0
    for fam in proto_families(data):
        fams += 1
        metrics += sum(1 for num, _, _ in fields(fam) if num == 4)
    return {"families": fams, "metrics": metrics}


def proto_gauge(data, name):
    for fam in proto_families(data):
        fs = list(fields(fam))
        if not any(num == 1 and v == name.encode() for num, _, v in fs):
            continue
        for num, _, metric in fs:
            if num != 4:
                continue
            for mnum, _, gauge in fields(metric):
                if mnum == 2:  # Metric.gauge
                    for gnum, _, v in fields(gauge):
                        if gnum == 1:  # Gauge.value
                            return struct.unpack("<d", v)[0]
                    return 0.0
    return None


def count(path):
    data = read_body(path)
    print(json.dumps(text_count(data) if is_text(data) else proto_count(data)))


def renders(directory):
    import os

    for fn in sorted(os.listdir(directory), key=lambda f: int(f.split(".")[0])):
        data = read_body(os.path.join(directory, fn))
        v = text_gauge(data, SELF_GAUGE) if is_text(data) else proto_gauge(data, SELF_GAUGE)
        if v is None:
            raise SystemExit(f"{fn}: no {SELF_GAUGE} in the body")
        print(fn.split(".")[0], repr(v))


# --- table ---

def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return None
    k = (len(xs) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def ratio(a, b):
    return None if a is None or not b else a / b


def table(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    meta = next(r for r in rows if r["kind"] == "meta")
    tools = meta["tools"]
    scrapes = [r for r in rows if r["kind"] == "scrape"]
    counts = {(r["tool"], r["mode"]): r for r in rows if r["kind"] == "count"}
    cpu = [r for r in rows if r["kind"] == "cpu"]
    mem = {(r["tool"], r["when"]): r for r in rows if r["kind"] == "mem"}
    idle = {r["tool"]: r for r in rows if r["kind"] == "idle"}
    rend = {r["seq"]: r["value"] for r in rows if r["kind"] == "render"}

    # Render time of iolat scrape s is reported by scrape s+1.
    iolat_mode = {r["seq"]: r["mode"] for r in scrapes if r["tool"] == "iolat"}
    render_ms = {m: [] for m in MODES}
    for seq, mode in iolat_mode.items():
        if seq + 1 in rend:
            render_ms[mode].append(rend[seq + 1] * 1e3)

    def times(tool, mode):
        return [r["time"] * 1e3 for r in scrapes if r["tool"] == tool and r["mode"] == mode]

    def size(tool, mode):
        xs = [r["bytes"] for r in scrapes if r["tool"] == tool and r["mode"] == mode]
        return statistics.median(xs) if xs else None

    def cpu_ms(tool, mode):
        xs = [r["cpu_ns"] / r["n"] / 1e6 for r in cpu if r["tool"] == tool and r["mode"] == mode]
        return statistics.median(xs) if xs else None

    out = []  # (label, [value per tool], format, ratio?)

    def row(label, vals, spec, with_ratio=True):
        out.append((label, vals, spec, with_ratio))

    row("sample lines (series)", [counts.get((t, "text"), {}).get("lines") for t in tools], "d")
    row("label sets", [counts.get((t, "text"), {}).get("label_sets") for t in tools], "d")
    row("families", [counts.get((t, "text"), {}).get("families") for t in tools], "d")
    row("protobuf metrics", [counts.get((t, "proto"), {}).get("metrics") for t in tools], "d")
    for m in MODES:
        row(f"scrape {m} ms med", [pct(times(t, m), 0.5) for t in tools], ".2f")
        row(f"scrape {m} ms p90", [pct(times(t, m), 0.9) for t in tools], ".2f")
    row("iolat render ms med (text)", [pct(render_ms["text"] + render_ms["text+gzip"], 0.5)
                                       if t == "iolat" else None for t in tools], ".2f", False)
    row("iolat render ms p90 (text)", [pct(render_ms["text"] + render_ms["text+gzip"], 0.9)
                                       if t == "iolat" else None for t in tools], ".2f", False)
    row("iolat render ms med (proto)", [pct(render_ms["proto"] + render_ms["proto+gzip"], 0.5)
                                        if t == "iolat" else None for t in tools], ".2f", False)
    for m in MODES:
        row(f"server CPU ms/scrape {m}", [cpu_ms(t, m) for t in tools], ".2f")
    for m in MODES:
        row(f"bytes {m}", [size(t, m) for t in tools], ",.0f")
    text_lines = [counts.get((t, "text"), {}).get("lines") for t in tools]
    row("scrape text us per 1000 lines",
        [None if not n else pct(times(t, "text"), 0.5) * 1e3 / (n / 1000)
         for t, n in zip(tools, text_lines)], ".0f")
    for when in ("start", "after"):
        row(f"VmRSS MiB {'at start' if when == 'start' else 'after scrapes'}",
            [mem.get((t, when), {}).get("rss_kb", 0) / 1024 for t in tools], ".1f")
    row("VmHWM MiB at start", [mem.get((t, "start"), {}).get("hwm_kb", 0) / 1024
                               for t in tools], ".1f")
    row("VmHWM MiB after scrapes", [mem.get((t, "after"), {}).get("hwm_kb", 0) / 1024
                                    for t in tools], ".1f")
    row("threads", [mem.get((t, "after"), {}).get("threads") for t in tools], "d")
    row("idle CPU ms/min (utime+stime)",
        [idle[t]["ticks"] * 1000 / meta["clk_tck"] * 60 / idle[t]["secs"] for t in tools], ".1f")
    row("idle CPU ms/min (schedstat)",
        [idle[t]["cpu_ns"] / 1e6 * 60 / idle[t]["secs"] for t in tools], ".2f")
    row("idle wakeups/s (ctx switches)", [idle[t]["ctxsw"] / idle[t]["secs"] for t in tools],
        ".1f")

    names = [meta["names"][t] for t in tools]
    rnames = [f"iolat/{meta['short'][t]}" for t in tools[1:]]
    w0 = max(len(r[0]) for r in out) + 2
    cw = max(14, *(len(n) + 2 for n in names + rnames))
    print(f"{'':<{w0}}" + "".join(f"{n:>{cw}}" for n in names + rnames))
    for label, vals, spec, with_ratio in out:
        cells = [fmt(v, spec) for v in vals]
        if with_ratio:
            cells += [fmt(ratio(vals[0], v), ".2f") for v in vals[1:]]
        print(f"{label:<{w0}}" + "".join(f"{c:>{cw}}" for c in cells))
    print()
    print(f"Medians and p90 over {meta['rounds']} rounds x {meta['scrapes']} scrapes per "
          "tool and format (curl time_total: connect, request, server work, transfer).")
    print("render: iolat's own iolat_scrape_duration_seconds (collect + build + render, "
          "no gzip, no HTTP), read from the following scrape.")
    print("server CPU: the exporter's on-CPU time (sum of /proc/PID/task/*/schedstat) over "
          "each batch of scrapes / scrapes.")
    print(f"idle: {meta['idle']} s with no scrapes, after the rounds; utime+stime in "
          f"ticks of {1000 // meta['clk_tck']} ms.")
    for t in tools[1:]:
        print(f"{meta['short'][t]}: {meta['names'][t]} = {meta['desc'][t]}")


def main(argv):
    if len(argv) == 3 and argv[1] == "count":
        count(argv[2])
    elif len(argv) == 3 and argv[1] == "renders":
        renders(argv[2])
    elif len(argv) == 3 and argv[1] == "table":
        table(argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
