#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Print every query of Grafana dashboards with the template variables filled in.

Usage:
  python3 tests/mixin/panel_queries.py [--var NAME=VALUE]... DASHBOARD.json...

One line per panel target, every target of every panel (rows and the panels
inside collapsed rows included), tab-separated:

  <dashboard file>  <panel title>  <refId>  <expr>

with the variables substituted as Grafana's Prometheus data source does:

  - a variable given once (--var device=loop0) is that value; given several
    times (--var device=a --var device=b) it is the regex alternation (a|b);
    All (--var device=All or --var device='$__all') is the variable's
    allValue, or .* when it has none;
  - a variable not given takes its current value from the dashboard (the
    default it was saved with); a query variable with no current value, or
    All, is as above;
  - values of multi-value and All-able variables are regex-escaped (a . becomes
    \\\\. inside the PromQL string), as Grafana does; others only have \\ and '
    escaped;
  - $__rate_interval is 1m, $__interval 15s, $__range 5m ($__range_s 300,
    $__interval_ms 15000, $__rate_interval_ms 60000);
  - a panel repeated over a variable (its own repeat, or its row's) is printed
    once per given value of that variable, with that single value.

Titles get the values as text (a value, {a,b} for several, All); newlines in expressions become spaces, so
each target is one line. Exit 0, or 2 on bad usage or unreadable files.
"""

import argparse
import json
import re
import sys

VAR_RE = re.compile(r'\$\{(\w+)(?::[^}]*)?\}|\[\[(\w+)(?::[^\]]*)?\]\]|\$(\w+)')
BUILTINS = {
    '__rate_interval': '1m',
    '__interval': '15s',
    '__range': '5m',
    '__range_s': '300',
    '__range_ms': '300000',
    '__interval_ms': '15000',
    '__rate_interval_ms': '60000',
}
ALL = ('All', '$__all', '__all')
REGEX_SPECIAL = re.compile(r"[$^*{}\[\]'+?.()|]")


def regex_escape(value):
    """Grafana's escaping of a multi-value or All-able variable's value for
    a PromQL regex inside a double-quoted string."""
    value = value.replace('\\', '\\\\\\\\')
    return REGEX_SPECIAL.sub(lambda m: '\\\\' + m.group(0), value)


def plain_escape(value):
    """Grafana's escaping of a single-value variable."""
    return value.replace('\\', '\\\\').replace("'", "\\\\'")


def current_values(var):
    """The values a variable was saved with, as a list ([] for none)."""
    cur = var.get('current') or {}
    value = cur.get('value')
    if value is None:
        if var.get('type') == 'custom':
            opts = [o.get('value') for o in var.get('options') or [] if isinstance(o, dict)]
            if opts:
                return [opts[0]]
            query = var.get('query') or ''
            first = query.split(',')[0].strip()
            return [first] if first else []
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


def render(var, values):
    """The text a variable with these values becomes in a query."""
    regexy = bool(var.get('multi') or var.get('includeAll'))
    if not values or any(v in ALL for v in values):
        all_value = var.get('allValue')
        return all_value if all_value else '.*'
    if len(values) == 1:
        return regex_escape(values[0]) if regexy else plain_escape(values[0])
    return '(' + '|'.join(regex_escape(v) if regexy else plain_escape(v) for v in values) + ')'


def render_text(values):
    """The text a variable becomes in a title: its value, {a,b}, or All."""
    if not values or any(v in ALL for v in values):
        return 'All'
    if len(values) == 1:
        return values[0]
    return '{' + ','.join(values) + '}'


def substitute(text, variables, values, query=True):
    def repl(m):
        name = m.group(1) or m.group(2) or m.group(3)
        if name in BUILTINS:
            return BUILTINS[name]
        if name in variables:
            vals = values.get(name, [])
            return render(variables[name], vals) if query else render_text(vals)
        return m.group(0)
    return VAR_RE.sub(repl, text)


def panels_with_repeat(panels):
    """(panel, repeat variable or None) for every non-row panel, in order."""
    row_repeat = None
    for p in panels:
        if not isinstance(p, dict):
            continue
        if p.get('type') == 'row':
            row_repeat = p.get('repeat') or None
            for q in p.get('panels') or []:
                if isinstance(q, dict):
                    yield q, q.get('repeat') or row_repeat
            continue
        yield p, p.get('repeat') or row_repeat


def queries(path, given):
    with open(path, encoding='utf-8') as f:
        d = json.load(f)
    variables = {v['name']: v for v in (d.get('templating') or {}).get('list') or []
                 if isinstance(v, dict) and v.get('name')}
    values = {}
    for name, var in variables.items():
        values[name] = list(given[name]) if name in given else current_values(var)
    out = []
    for panel, repeat in panels_with_repeat(d.get('panels') or []):
        runs = [values]
        if repeat and repeat in variables:
            vals = values.get(repeat, [])
            if vals and not any(v in ALL for v in vals):
                runs = [dict(values, **{repeat: [v]}) for v in vals]
        for vals in runs:
            title = substitute(panel.get('title') or '', variables, vals, query=False)
            for tg in panel.get('targets') or []:
                expr = substitute(tg.get('expr') or '', variables, vals)
                expr = ' '.join(expr.split())
                out.append((path, title, tg.get('refId', ''), expr))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description='Print every dashboard query with variables substituted.')
    ap.add_argument('--var', action='append', default=[], metavar='NAME=VALUE',
                    help='a variable value; repeat a name for several values; All for all')
    ap.add_argument('files', nargs='+', help='dashboard JSON files')
    args = ap.parse_args(argv[1:])
    given = {}
    for item in args.var:
        if '=' not in item:
            ap.error('--var wants NAME=VALUE, not %r' % item)
        name, value = item.split('=', 1)
        given.setdefault(name, []).append(value)
    try:
        for path in args.files:
            for row in queries(path, given):
                print('\t'.join(s.replace('\t', ' ') for s in row))
    except (OSError, ValueError) as e:
        sys.stderr.write('panel_queries: %s\n' % e)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
