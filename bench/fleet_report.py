#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""fleet_report.py - what the simulated fleet costs each store (bench/fleet.sh's measurements).

Usage:
  fleet_report.py snap --out FILE --replay URL URL...
                                                every URL's /metrics and the replayer's
                                                status, now, into FILE (JSON)
  fleet_report.py measure --hosts N --before SNAP --after SNAP --prom URL --vm URL
                  --vmagent URL --vmalert URL --replay URL --prom-dir DIR --vm-dir DIR
                  --panels TSV --rules FILE [--runs 3]      one JSON line for N, on stdout
  fleet_report.py table FILE                    the rows of FILE (JSON lines), and the
                                                projection to 1 000 and 10 000 hosts

measure takes the counters' increase between the two snapshots (samples
ingested, the replayer's CPU), the gauges of the second (active series,
resident memory), the data directories' bytes (Prometheus: its WAL and any
blocks, as the head is not cut into a block for 2 h; VictoriaMetrics: after
/internal/force_flush), and times each query (the fleet dashboard's, each
recording rule's expression) against each store: an instant query now, the
median of --runs runs, wall time seen by the client. table fits each column
linearly over N (least squares) and projects it; per-host and per-series
figures are the fit's slope.
"""

import argparse
import json
import os
import re
import statistics
import sys
import time
import urllib.parse
import urllib.request

import yaml

SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)')


def get(url, timeout=120):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def metrics(url):
    out = {}
    for line in get(url + '/metrics').splitlines():
        m = SAMPLE_RE.match(line)
        if m and not line.startswith('#'):
            out[m.group(1) + (m.group(2) or '')] = float(m.group(3))
    return out


def pick(samples, name, **labels):
    """Sum of NAME's samples whose labels include LABELS."""
    total = 0.0
    for key, v in samples.items():
        base = key.split('{', 1)[0]
        if base != name:
            continue
        if all('%s="%s"' % kv in key for kv in labels.items()):
            total += v
    return total


def du(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def timed_query(base, expr, runs):
    """Median seconds of an instant query, and the series it returned."""
    url = base + '/api/v1/query?' + urllib.parse.urlencode({'query': expr})
    times, n = [], -1
    for _ in range(runs):
        t = time.monotonic()
        try:
            doc = json.loads(get(url))
            n = len(doc['data']['result']) if doc.get('status') == 'success' else -1
        except (OSError, ValueError, KeyError):
            n = -1
        times.append(time.monotonic() - t)
    return statistics.median(times), n


def cmd_snap(a):
    json.dump({'time': time.time(), 'metrics': {u: metrics(u) for u in a.urls},
               'replay': json.loads(get(a.replay + '/-/status'))}, open(a.out, 'w'))


def queries_of(a):
    out = []
    for line in open(a.panels):
        f = line.rstrip('\n').split('\t')
        if len(f) == 4 and 'fleet' in f[0]:
            out.append(('panel', '%s / %s' % (f[1], f[2]), f[3]))
    for g in yaml.safe_load(open(a.rules))['groups']:
        for r in g['rules']:
            if r.get('record'):
                out.append(('rule', r['record'] + ''.join(
                    '{%s=%s}' % kv for kv in sorted((r.get('labels') or {}).items())), r['expr']))
    return out


def cmd_measure(a):
    before, after = json.load(open(a.before)), json.load(open(a.after))
    secs = after['time'] - before['time']
    p0, p1 = before['metrics'][a.prom], after['metrics'][a.prom]
    v0, v1 = before['metrics'][a.vm], after['metrics'][a.vm]
    ag1, al1 = after['metrics'][a.vmagent], after['metrics'][a.vmalert]
    get(a.vm + '/internal/force_flush')
    time.sleep(2)
    row = {
        'hosts': a.hosts,
        'series_per_host': after['replay']['series_per_host'],
        'seconds': round(secs, 1),
        'prom_series': pick(p1, 'prometheus_tsdb_head_series'),
        'prom_samples_s': (pick(p1, 'prometheus_tsdb_head_samples_appended_total')
                           - pick(p0, 'prometheus_tsdb_head_samples_appended_total')) / secs,
        'prom_rss': pick(p1, 'process_resident_memory_bytes'),
        'prom_disk': du(a.prom_dir),
        'prom_rules_s': sum(v for k, v in p1.items()
                            if k.startswith('prometheus_rule_group_last_duration_seconds')),
        'vm_series': pick(v1, 'vm_cache_entries', type='storage/hour_metric_ids'),
        'vm_samples_s': (pick(v1, 'vm_rows_inserted_total') - pick(v0, 'vm_rows_inserted_total')) / secs,
        'vm_rss': pick(v1, 'process_resident_memory_bytes'),
        'vm_disk': du(a.vm_dir),
        'vmagent_rss': pick(ag1, 'process_resident_memory_bytes'),
        'vmalert_rss': pick(al1, 'process_resident_memory_bytes'),
        'vmalert_rules_s': (pick(al1, 'vmalert_iteration_duration_seconds_sum')
                            / max(1.0, pick(al1, 'vmalert_iteration_duration_seconds_count'))),
        'replay_cpu': (after['replay']['cpu_seconds'] - before['replay']['cpu_seconds']) / secs,
        'queries': [],
    }
    for kind, name, expr in queries_of(a):
        pt, pn = timed_query(a.prom, expr, a.runs)
        vt, vn = timed_query(a.vm, expr, a.runs)
        row['queries'].append({'kind': kind, 'name': name, 'prom_s': pt, 'prom_n': pn,
                               'vm_s': vt, 'vm_n': vn})
    print(json.dumps(row))


def fit(xs, ys):
    """Least-squares line: (slope, intercept)."""
    if len(xs) < 2:
        return ys[0] / xs[0], 0.0
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return slope, my - slope * mx


COLUMNS = (
    ('prom_series', 'Prometheus active series (head)', 1),
    ('vm_series', 'VictoriaMetrics active series (hour_metric_ids)', 1),
    ('prom_samples_s', 'Prometheus samples/s ingested', 1),
    ('vm_samples_s', 'VictoriaMetrics rows/s ingested', 1),
    ('prom_rss', 'Prometheus RSS, MiB', 1 / 2**20),
    ('vm_rss', 'VictoriaMetrics RSS, MiB', 1 / 2**20),
    ('vmagent_rss', 'vmagent RSS, MiB', 1 / 2**20),
    ('vmalert_rss', 'vmalert RSS, MiB', 1 / 2**20),
    ('prom_disk', 'Prometheus on disk (WAL), MiB', 1 / 2**20),
    ('vm_disk', 'VictoriaMetrics on disk, MiB', 1 / 2**20),
    ('prom_rules_s', 'Prometheus rule groups, last evaluation, s', 1),
    ('vmalert_rules_s', 'vmalert rule groups, mean iteration, s', 1),
    ('replay_cpu', 'replayer CPU, cores', 1),
)


def cmd_table(a):
    rows = [json.loads(line) for line in open(a.file) if line.strip()]
    rows.sort(key=lambda r: r['hosts'])
    xs = [r['hosts'] for r in rows]
    print('series per host (from the recording): %d; %s s between the two snapshots' %
          (rows[0]['series_per_host'], ', '.join(str(r['seconds']) for r in rows)))
    print('%-50s %s %14s %12s %12s' % ('', ' '.join('%10s' % ('N=%d' % x) for x in xs),
                                       'per host', '1 000 hosts', '10 000 hosts'))
    for key, title, scale in COLUMNS:
        ys = [r[key] * scale for r in rows]
        slope, icpt = fit(xs, ys)
        print('%-50s %s %14.4g %12.4g %12.4g' % (title, ' '.join('%10.4g' % y for y in ys), slope,
                                                 icpt + slope * 1000, icpt + slope * 10000))
    for store, series, rss, disk in (('Prometheus', 'prom_series', 'prom_rss', 'prom_disk'),
                                     ('VictoriaMetrics', 'vm_series', 'vm_rss', 'vm_disk')):
        s = [r[series] for r in rows]
        for what, key in (('memory (RSS)', rss), ('disk', disk)):
            slope, _ = fit(s, [r[key] for r in rows])
            print('%s %s per active series (slope over the runs): %.0f bytes' % (store, what, slope))
    print('\nquery times, median of runs, ms (Prometheus / VictoriaMetrics), series returned at the largest N:')
    names = [(q['kind'], q['name']) for q in rows[-1]['queries']]
    for i, (kind, name) in enumerate(names):
        cells = ' '.join('%8.1f/%-8.1f' % (r['queries'][i]['prom_s'] * 1e3, r['queries'][i]['vm_s'] * 1e3)
                         for r in rows)
        q = rows[-1]['queries'][i]
        print('%-5s %-70.70s %s %6d/%-6d' % (kind, name, cells, q['prom_n'], q['vm_n']))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    s = sub.add_parser('snap')
    s.add_argument('--out', required=True)
    s.add_argument('--replay', required=True, help="the replayer's URL")
    s.add_argument('urls', nargs='+')
    m = sub.add_parser('measure')
    m.add_argument('--hosts', type=int, required=True)
    for name in ('--before', '--after', '--prom', '--vm', '--vmagent', '--vmalert', '--replay',
                 '--prom-dir', '--vm-dir', '--panels', '--rules'):
        m.add_argument(name, required=True)
    m.add_argument('--runs', type=int, default=3)
    t = sub.add_parser('table')
    t.add_argument('file')
    a = ap.parse_args()
    return {'snap': cmd_snap, 'measure': cmd_measure, 'table': cmd_table}[a.cmd](a) or 0


if __name__ == '__main__':
    sys.exit(main())
