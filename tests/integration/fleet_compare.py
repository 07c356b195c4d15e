#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""fleet_compare.py - the mixin's queries answered by Prometheus and by VictoriaMetrics, compared.

Usage:
  fleet_compare.py queries --prom URL --vm URL --time T --window SECONDS
                   --interval SECONDS --rules FILE --alerts FILE --panels TSV
                   --buckets FILE [--frozen]
  fleet_compare.py raw --prom URL --vm URL --time T --replay URL --hosts N

`queries`: every recording rule's and alert's expression (from the rendered
rule files) and every dashboard query (panel_queries.py's TSV), asked of
both stores at the same evaluation time T; and every recording rule's
output series, which each store's own evaluator (Prometheus, vmalert)
wrote. Both answers must hold the same label sets, and values that agree
by the first of these rules that applies to the query:

  unsupported  VictoriaMetrics 1.79 has no native histograms and lacks the
               functions that read them (VM_LACKS): a query that calls one
               may fail there, and is listed as such; any other error
               fails the comparison, from either store;
  NaN          VictoriaMetrics leaves NaN samples out of its answers (a
               quantile of a window without I/O, 0/0): a series whose
               value is NaN in Prometheus may be missing there; and its
               aggregations skip NaN inputs, so a sum() of NaNs (a ratio
               of a disk without reads in the window) is 0 there;
  scraper      (scrape_* series: each scraper's own timing of its scrapes)
               label sets compared, values not;
  recorded     (a recording rule's output, as each evaluator wrote it,
               by name or by a regexp on __name__, or an *_over_time of
               one: each store's window holds its own evaluator's samples,
               taken at other moments)
               label sets compared, values not: the two evaluators run up to
               an interval apart over counters that grow in bursts (the
               rule's expression itself is compared by value, above); a
               rule whose expression VictoriaMetrics cannot run (see
               unsupported) records nothing there, and is listed as such;
  topk/bottomk a ranking of near-equal values may pick other series: the
               number of series must match, their values are compared in
               order by the rules below, their labels are not;
  quantile     (histogram_quantile, or a series recorded by a rule that
               computes one) the two values lie in the same or adjacent
               classic buckets (bounds from --buckets): VictoriaMetrics'
               rate() does not extrapolate to the window's edges and counts
               from the sample before the window, which moves an
               interpolated quantile within its bucket or across one edge;
  rate         (rate/irate/increase, or a series recorded from one) a
               relative difference of at most 4 x interval / window (with an
               absolute floor of 1e-9): the extrapolation (up to half an
               interval at each edge in Prometheus) and the sample before
               the window (one interval in VictoriaMetrics), twice over for
               a ratio of two rates; a recorded series adds its
               evaluation's skew (the two evaluators run up to an interval
               apart), which the same bound covers;
  exact        anything else (instant values, counts, info series): equal,
               once the replay is frozen (--frozen: then only these are
               asked); while it runs, the two scrapers' last samples may be
               a step apart, and only their label sets are compared.

`raw`: after the replayer was frozen (every host serves one body for good)
and both stores scraped it since: each host's series in each store (its
instance's, job "iolat", but the rule outputs, ALERTS and the scrapers' own
up and scrape_*) are exactly the body's samples, with instance and job added, and
their values equal to 12 significant digits (a label whose value is
empty is no label) (VictoriaMetrics stores values
as decimal mantissa and exponent). A store that drops, adds or relabels a
series, or changes a value, fails here.

Prints one line per query and a summary; exit 0 when all agree, 1 if not,
2 on bad usage.
"""

import argparse
import json
import math
import re
import sys
import urllib.parse
import urllib.request

import yaml

VM_LACKS = ('histogram_fraction', 'histogram_count', 'histogram_sum', 'histogram_stddev',
            'histogram_stdvar')
SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)')
LABEL_RE = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def ask(base, query, at):
    """The instant vector (labels tuple -> value) or an error string."""
    url = base + '/api/v1/query?' + urllib.parse.urlencode({'query': query, 'time': at})
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            doc = json.load(r)
    except urllib.error.HTTPError as e:
        try:
            doc = json.load(e)
        except ValueError:
            return 'HTTP %d' % e.code
    except (OSError, ValueError) as e:
        return str(e)
    if doc.get('status') != 'success':
        return str(doc.get('error'))
    data = doc['data']
    if data['resultType'] == 'scalar':
        return {(): float(data['result'][1])}
    return {tuple(sorted(r['metric'].items())): float(r['value'][1]) for r in data['result']}


def load_queries(rules, alerts, panels):
    """(kind, name, expr) of every rule, alert and panel target."""
    out = []
    for path, kind in ((rules, 'rule'), (alerts, 'alert')):
        for g in yaml.safe_load(open(path))['groups']:
            for r in g['rules']:
                name = r.get('record') or r.get('alert')
                extra = r.get('labels') or {}
                if kind == 'rule' and extra:
                    name += str(sorted(extra.items()))
                out.append((kind, name, r['expr'], r.get('record'), extra))
    for line in open(panels):
        f = line.rstrip('\n').split('\t')
        if len(f) == 4:
            out.append(('panel', '%s / %s / %s' % (f[0].split('/')[-1], f[1], f[2]), f[3], None, {}))
    return out


def recorded_rules(rules):
    """Record name -> its expression (the first rule that records it)."""
    out = {}
    for g in yaml.safe_load(open(rules))['groups']:
        for r in g['rules']:
            if r.get('record'):
                out.setdefault(r['record'], r['expr'])
    return out


def value_rule(expr, recorded):
    """Which of the module's value rules a query's values follow."""
    if re.search(r'\bscrape_\w+', expr):
        return 'scraper'
    for name in recorded:
        if re.search(r'\b\w+_over_time\s*\(\s*%s\b' % re.escape(name), expr):
            return 'recorded'
    # Recorded series picked by a regexp on the name (a panel that reads a
    # histogram's classic or native rule output, whichever exists).
    for rx in re.findall(r'__name__\s*=~\s*"([^"]+)"', expr):
        if any(re.fullmatch(rx, name) for name in recorded):
            return 'recorded'
    # What a recorded series stands for: the expression that records it.
    text = expr
    for name, body in recorded.items():
        if re.search(r'\b%s\b' % re.escape(name), expr):
            text += ' ' + body
    if re.search(r'\bhistogram_quantile\s*\(', text):
        return 'quantile'
    if re.search(r'\b(rate|irate|increase)\s*\(', text):
        return 'rate'
    return 'exact'


def bucket_index(bounds, v):
    for i, le in enumerate(bounds):
        if v <= le:
            return i
    return len(bounds)


def values_agree(rule, p, v, opts, bounds):
    if rule in ('scraper', 'recorded') or (rule == 'exact' and not opts.frozen):
        return True
    if math.isnan(p):
        return math.isnan(v) or v == 0
    if math.isnan(v):
        return False
    if rule == 'quantile':
        return abs(bucket_index(bounds, p) - bucket_index(bounds, v)) <= 1
    if rule == 'rate':
        tol = 4 * opts.interval / opts.window
        return abs(p - v) <= max(1e-9, tol * max(abs(p), abs(v)))
    return p == v or abs(p - v) <= 1e-12 * max(abs(p), abs(v))


def show(labels):
    return '{' + ','.join('%s="%s"' % kv for kv in labels) + '}'


def compare(expr, p, v, opts, bounds, recorded, rule):
    """'' if the answers agree by RULE, else what differs."""
    p = {k: x for k, x in p.items() if not (math.isnan(x) and k not in v)}
    if re.search(r'\b(topk|bottomk)\s*\(', expr):
        if len(p) != len(v):
            return 'topk: %d series in Prometheus, %d in VictoriaMetrics' % (len(p), len(v))
        for a, b in zip(sorted(p.values()), sorted(v.values())):
            if not values_agree(rule, a, b, opts, bounds):
                return 'topk: values %g and %g differ (%s rule)' % (a, b, rule)
        return ''
    if set(p) != set(v):
        only_p = sorted(set(p) - set(v))
        only_v = sorted(set(v) - set(p))
        return 'series differ: only in Prometheus %d %s, only in VictoriaMetrics %d %s' % (
            len(only_p), ' '.join(show(k) for k in only_p[:3]), len(only_v),
            ' '.join(show(k) for k in only_v[:3]))
    for k in p:
        if not values_agree(rule, p[k], v[k], opts, bounds):
            return '%s: %r in Prometheus, %r in VictoriaMetrics (%s rule)' % (show(k), p[k], v[k], rule)
    return ''


def cmd_queries(opts):
    bounds = sorted({float(x) for x in open(opts.buckets).read().split() if x != '+Inf'})
    recorded = recorded_rules(opts.rules)
    queries = load_queries(opts.rules, opts.alerts, opts.panels)
    # The rules' outputs as each evaluator wrote them.
    for name, expr in recorded.items():
        queries.append(('recorded', name, name, None, {}))
    bad = unsupported = empty = 0
    for kind, name, expr, _, _ in queries:
        p = ask(opts.prom, expr, opts.time)
        v = ask(opts.vm, expr, opts.time)
        rule = 'recorded' if kind == 'recorded' else value_rule(expr, recorded)
        if opts.frozen and rule != 'exact':
            continue
        lacks = [f for f in VM_LACKS if re.search(r'\b%s\s*\(' % f, recorded.get(expr, expr))]
        if kind == 'recorded' and lacks and not isinstance(v, str) and not v:
            unsupported += 1
            print('unsupported %s %s: not recorded by vmalert, its expression calls %s' %
                  (kind, name, ', '.join(lacks)))
            continue
        if isinstance(p, str):
            bad += 1
            print('FAIL %s %s: Prometheus: %s' % (kind, name, p))
            continue
        if isinstance(v, str):
            if lacks:
                unsupported += 1
                print('unsupported %s %s: VictoriaMetrics 1.79 lacks %s (%s)' %
                      (kind, name, ', '.join(lacks), v[:120]))
            else:
                bad += 1
                print('FAIL %s %s: VictoriaMetrics: %s' % (kind, name, v))
            continue
        diff = compare(expr, p, v, opts, bounds, recorded, rule)
        if diff:
            bad += 1
            print('FAIL %s %s: %s' % (kind, name, diff))
            print('     expr: %s' % ' '.join(expr.split()))
        else:
            empty += not p
            print('ok %s %s: %d series (%s rule)' % (kind, name, len(p), rule))
    if opts.frozen:
        queries = [q for q in queries if q[0] != 'recorded' and value_rule(q[2], recorded) == 'exact']
    print('%d queries: %d agree (%d of them empty in both), %d unsupported by VictoriaMetrics 1.79, '
          '%d differ' % (len(queries), len(queries) - bad - unsupported, empty, unsupported, bad))
    return 1 if bad else 0


def body_series(text, instance):
    """A host's body as the stores should hold it: labels tuple -> value."""
    out = {}
    for line in text.splitlines():
        m = SAMPLE_RE.match(line)
        if line.startswith('#') or not m:
            continue
        # An empty label is no label, to both stores.
        labels = {k: x for k, x in LABEL_RE.findall(m.group(2) or '') if x}
        labels.update({'__name__': m.group(1), 'instance': instance, 'job': 'iolat'})
        out[tuple(sorted(labels.items()))] = float(m.group(3))
    return out


def same_value(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))


def cmd_raw(opts):
    bad = 0
    for h in range(opts.hosts):
        instance = 'host%04d:9617' % h
        with urllib.request.urlopen('%s/host/%d/metrics' % (opts.replay, h), timeout=30) as r:
            want = body_series(r.read().decode(), instance)
        for store, base in (('Prometheus', opts.prom), ('VictoriaMetrics', opts.vm)):
            got = ask(base, '{job="iolat",instance="%s"}' % instance, opts.time)
            if isinstance(got, str):
                print('FAIL %s %s: %s' % (store, instance, got))
                bad += 1
                continue
            got = {k: x for k, x in got.items()
                   if ':' not in dict(k)['__name__']
                   and dict(k)['__name__'] not in ('up', 'ALERTS', 'ALERTS_FOR_STATE')
                   and not dict(k)['__name__'].startswith('scrape_')}
            missing = sorted(set(want) - set(got))
            extra = sorted(set(got) - set(want))
            wrong = [k for k in want if k in got and not same_value(want[k], got[k])]
            if missing or extra or wrong:
                bad += 1
                print('FAIL %s %s: %d series, body has %d: %d missing %s, %d not in the body %s, '
                      '%d other values %s' % (
                          store, instance, len(got), len(want), len(missing),
                          ' '.join(show(k) for k in missing[:2]), len(extra),
                          ' '.join(show(k) for k in extra[:2]), len(wrong),
                          ' '.join('%s %r != %r' % (show(k), want[k], got[k]) for k in wrong[:2])))
            else:
                print('ok %s %s: the %d series of its body, same values' % (store, instance, len(want)))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    q = sub.add_parser('queries')
    r = sub.add_parser('raw')
    for p in (q, r):
        p.add_argument('--prom', required=True)
        p.add_argument('--vm', required=True)
        p.add_argument('--time', required=True)
    for name in ('--rules', '--alerts', '--panels', '--buckets'):
        q.add_argument(name, required=True)
    q.add_argument('--window', type=float, required=True)
    q.add_argument('--interval', type=float, required=True)
    q.add_argument('--frozen', action='store_true')
    r.add_argument('--replay', required=True)
    r.add_argument('--hosts', type=int, required=True)
    opts = ap.parse_args()
    return cmd_queries(opts) if opts.cmd == 'queries' else cmd_raw(opts)


if __name__ == '__main__':
    sys.exit(main())
