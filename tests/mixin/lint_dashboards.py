#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Headless checks of Grafana dashboard JSON files (the iolat mixin's dashboards_out).

Usage: python3 tests/mixin/lint_dashboards.py mixin/dashboards_out/*.json

Prints one line per problem, "FILE: where: what", and exits 1 if there is any
(0 otherwise, 2 on bad usage). Python 3 standard library only.

Checked:
  - the file is JSON, an object with title, uid (1-40 characters of
    [A-Za-z0-9_-]), schemaVersion >= 36, panels (a list), templating.list,
    time.from/time.to, editable (a boolean), tags, annotations;
  - every panel (rows and the panels inside collapsed rows included) has an id
    unique in the dashboard, a type, a title and a gridPos (h, w, x, y; w <= 24,
    x + w <= 24); panels other than rows also have a description, a datasource
    and targets, and each target an expr, a refId (unique in its panel) and a
    datasource; the top-level panels do not overlap;
  - every datasource is the Prometheus datasource variable ({type: prometheus,
    uid: ${datasource}}), and that variable exists, of type datasource with
    query prometheus;
  - every variable used ($var, ${var}, ${var:format}, [[var]]) in a query, a
    legend, a title, a description, a repeat or another variable's query is
    defined in templating (Grafana's built-ins such as $__rate_interval,
    $__interval, $__range, $__auto, $__all are allowed), and every defined
    variable is used somewhere else than in its own definition;
  - query variables have a query, custom variables options including their
    current value; parentheses, brackets and braces of each expr balance;
  - made for hosts with hundreds of disks: no row or panel repeats over a
    variable that can be All or is All by default, and on a one-host
    dashboard (a single-select instance variable) the device variable is not
    All by default;
  - every heatmap panel has exactly one target, format heatmap, whose query
    selects the native histogram and the classic buckets alike
    ({__name__=~"NAME(_bucket)?"}): no empty twin;
  - the dashboard links to the other iolat dashboards keeping the time range
    and the variables; every data link goes to /d/UID of one of the
    dashboards given, carries the time range (${__url_time_range}), and sets
    (var-NAME=) or passes on (${NAME:queryparam}) only variables that the
    target dashboard has (and, passed on, this one too).
"""

import json
import re
import signal
import sys

# $var, ${var}, ${var:fmt}, [[var]], [[var:fmt]]
VAR_RE = re.compile(r'\$\{(\w+)(?::[^}]*)?\}|\[\[(\w+)(?::[^\]]*)?\]\]|\$(\w+)')
UID_RE = re.compile(r'^[A-Za-z0-9_-]{1,40}$')
# A heatmap query of either histogram kind: {__name__=~"NAME(_bucket)?", ...},
# or of a recording rule's rates of either: LEVEL:NAME(_bucket)?:rate5m
HEATMAP_RE = re.compile(r'\{__name__=~"[\w:]+\(_bucket\)\?(:\w+)?"')
LINK_RE = re.compile(r'^/d/([A-Za-z0-9_-]+)\?(.*)$')
QUERYPARAM_RE = re.compile(r'\$\{(\w+):queryparam\}')
SETVAR_RE = re.compile(r'(?:^|&)var-(\w+)=')
BUILTIN = {'timeFilter', 'interval', 'interval_ms', 'range', 'range_s', 'range_ms',
           'rate_interval', 'rate_interval_ms', 'from', 'to', 'dashboard', 'org',
           'user', 'name', 'all', 'auto', 'searchFilter'}
PANEL_TYPES = {'row', 'timeseries', 'heatmap', 'stat', 'table', 'bargauge', 'gauge',
               'text', 'barchart', 'piechart', 'histogram', 'state-timeline',
               'status-history', 'logs', 'nodeGraph', 'dashlist', 'news'}


def var_refs(text):
    """Names of the variables a string refers to."""
    out = []
    for m in VAR_RE.finditer(text):
        out.append(m.group(1) or m.group(2) or m.group(3))
    return out


def builtin(name):
    return name.startswith('__') or name in BUILTIN


def strings(obj):
    """Every string inside a JSON value."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)


def balanced(expr):
    """None if (), [] and {} balance outside string literals, else a message."""
    pairs = {')': '(', ']': '[', '}': '{'}
    stack = []
    quote = None
    i = 0
    while i < len(expr):
        c = expr[i]
        if quote:
            if c == '\\':
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in '"\'`':
            quote = c
        elif c in '([{':
            stack.append(c)
        elif c in ')]}':
            if not stack or stack[-1] != pairs[c]:
                return 'unbalanced %r at offset %d' % (c, i)
            stack.pop()
        i += 1
    if quote:
        return 'unterminated string'
    if stack:
        return 'unclosed %r' % stack[-1]
    return None


def is_ds_var(ds):
    return (isinstance(ds, dict) and ds.get('type') == 'prometheus'
            and ds.get('uid') in ('${datasource}', '$datasource'))


def lint(path):
    problems = []

    def bad(where, what):
        problems.append('%s: %s: %s' % (path, where, what))

    try:
        with open(path, encoding='utf-8') as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        bad('file', 'not readable JSON: %s' % e)
        return problems, None, set(), []
    if not isinstance(d, dict):
        bad('file', 'not a JSON object')
        return problems, None, set(), []

    # Top level.
    for key, typ in (('title', str), ('uid', str), ('schemaVersion', int), ('panels', list),
                     ('templating', dict), ('time', dict), ('editable', bool), ('tags', list),
                     ('annotations', dict)):
        if key not in d:
            bad('dashboard', 'missing %s' % key)
        elif not isinstance(d[key], typ) or (typ is int and isinstance(d[key], bool)):
            bad('dashboard', '%s is not a %s' % (key, typ.__name__))
    if isinstance(d.get('title'), str) and not d['title'].strip():
        bad('dashboard', 'empty title')
    if isinstance(d.get('uid'), str) and not UID_RE.match(d['uid']):
        bad('dashboard', 'uid %r is not 1-40 characters of [A-Za-z0-9_-]' % d['uid'])
    if isinstance(d.get('schemaVersion'), int) and d['schemaVersion'] < 36:
        bad('dashboard', 'schemaVersion %d < 36' % d['schemaVersion'])
    if isinstance(d.get('time'), dict):
        for k in ('from', 'to'):
            if not isinstance(d['time'].get(k), str):
                bad('dashboard', 'time.%s missing' % k)
    templating = d.get('templating') if isinstance(d.get('templating'), dict) else {}
    variables = templating.get('list')
    if not isinstance(variables, list):
        bad('dashboard', 'templating.list missing')
        variables = []
    panels = d.get('panels') if isinstance(d.get('panels'), list) else []

    # Variables.
    defined = {}
    for i, var in enumerate(variables):
        where = 'variable #%d' % i
        if not isinstance(var, dict) or not isinstance(var.get('name'), str) or not var['name']:
            bad(where, 'no name')
            continue
        name = var['name']
        where = 'variable %s' % name
        if name in defined:
            bad(where, 'defined twice')
        defined[name] = var
        vtype = var.get('type')
        if vtype not in ('query', 'custom', 'datasource', 'constant', 'interval', 'textbox', 'adhoc'):
            bad(where, 'unknown type %r' % vtype)
        if vtype == 'query':
            q = var.get('query')
            if isinstance(q, dict):
                q = q.get('query')
            if not isinstance(q, str) or not q.strip():
                bad(where, 'query variable without a query')
            if not is_ds_var(var.get('datasource')):
                bad(where, 'datasource is not {type: prometheus, uid: ${datasource}}: %r' % (var.get('datasource'),))
        if vtype == 'custom':
            opts = var.get('options') or []
            values = [o.get('value') for o in opts if isinstance(o, dict)]
            cur = (var.get('current') or {}).get('value')
            if not values:
                bad(where, 'custom variable without options')
            elif cur is not None and cur not in values:
                bad(where, 'current value %r is not among its options' % (cur,))
    dsvar = defined.get('datasource')
    if dsvar is None:
        bad('templating', 'no datasource variable')
    else:
        if dsvar.get('type') != 'datasource':
            bad('variable datasource', 'type is %r, not datasource' % dsvar.get('type'))
        if dsvar.get('query') != 'prometheus':
            bad('variable datasource', 'query is %r, not prometheus' % dsvar.get('query'))

    # Panels, with the panels of collapsed rows.
    flat = []
    for p in panels:
        flat.append((p, True))
        if isinstance(p, dict) and p.get('type') == 'row':
            for q in p.get('panels') or []:
                flat.append((q, False))
    ids = {}
    used = {}  # variable name -> where it is used
    data_links = []  # (where, link)

    def use(text, where):
        for name in var_refs(text):
            if builtin(name):
                continue
            used.setdefault(name, where)
            if name not in defined:
                bad(where, 'uses undefined variable $%s' % name)

    for idx, (p, top) in enumerate(flat):
        if not isinstance(p, dict):
            bad('panel #%d' % idx, 'not an object')
            continue
        title = p.get('title')
        where = 'panel %r' % (title if title else '#%d' % idx)
        ptype = p.get('type')
        pid = p.get('id')
        if not isinstance(pid, int) or isinstance(pid, bool):
            bad(where, 'no integer id')
        elif pid in ids:
            bad(where, 'id %d already used by panel %r' % (pid, ids[pid]))
        else:
            ids[pid] = title
        if not isinstance(ptype, str) or not ptype:
            bad(where, 'no type')
        elif ptype not in PANEL_TYPES:
            bad(where, 'unknown panel type %r' % ptype)
        if not isinstance(title, str) or not title.strip():
            bad(where, 'no title')
        gp = p.get('gridPos')
        if not isinstance(gp, dict) or any(not isinstance(gp.get(k), int) for k in ('h', 'w', 'x', 'y')):
            bad(where, 'gridPos needs integer h, w, x, y')
        else:
            if gp['w'] < 1 or gp['h'] < 1 or gp['x'] < 0 or gp['y'] < 0 or gp['x'] + gp['w'] > 24:
                bad(where, 'gridPos %r outside the 24-column grid' % gp)
        repeat = p.get('repeat')
        if repeat:
            if repeat not in defined:
                bad(where, 'repeats over undefined variable %r' % repeat)
            used.setdefault(repeat, where)
        # Every string of the panel may refer to variables.
        for text in strings({k: v for k, v in p.items() if k != 'panels'}):
            use(text, where)
        if ptype == 'row':
            if not top:
                bad(where, 'a row inside a row')
            continue
        if not isinstance(p.get('description'), str) or not p['description'].strip():
            bad(where, 'no description')
        if not is_ds_var(p.get('datasource')):
            bad(where, 'datasource is not {type: prometheus, uid: ${datasource}}: %r' % (p.get('datasource'),))
        targets = p.get('targets')
        if ptype != 'text' and (not isinstance(targets, list) or not targets):
            bad(where, 'no targets')
            targets = []
        refids = set()
        for j, tg in enumerate(targets or []):
            tw = '%s target #%d' % (where, j)
            if not isinstance(tg, dict):
                bad(tw, 'not an object')
                continue
            ref = tg.get('refId')
            if not isinstance(ref, str) or not ref:
                bad(tw, 'no refId')
            elif ref in refids:
                bad(tw, 'refId %s used twice' % ref)
            else:
                refids.add(ref)
            expr = tg.get('expr')
            if not isinstance(expr, str) or not expr.strip():
                bad(tw, 'no expr')
            else:
                msg = balanced(expr)
                if msg:
                    bad(tw, 'expr %s' % msg)
            if 'legendFormat' not in tg:
                bad(tw, 'no legendFormat')
            if not is_ds_var(tg.get('datasource')):
                bad(tw, 'datasource is not {type: prometheus, uid: ${datasource}}: %r' % (tg.get('datasource'),))

        if ptype == 'heatmap':
            exprs = [tg.get('expr') for tg in targets or [] if isinstance(tg, dict)]
            if len(exprs) != 1:
                bad(where, 'a heatmap with %d targets (one, for native and classic alike)' % len(exprs))
            elif not isinstance(exprs[0], str) or not HEATMAP_RE.search(exprs[0]):
                bad(where, 'heatmap query does not select native and classic alike ({__name__=~"NAME(_bucket)?"})')
            elif targets[0].get('format') != 'heatmap':
                bad(where, 'heatmap target format is %r, not heatmap' % targets[0].get('format'))
        field_links = ((p.get('fieldConfig') or {}).get('defaults') or {}).get('links') or []
        for link in field_links:
            data_links.append((where, link))

    # Repeats: over a variable that is never All (hundreds of disks, or
    # workloads, would each get a row).
    for idx, (p, top) in enumerate(flat):
        if not isinstance(p, dict) or not p.get('repeat') or p['repeat'] not in defined:
            continue
        var = defined[p['repeat']]
        if var.get('includeAll') or is_all(var.get('current')):
            bad('panel %r' % p.get('title'), 'repeats over $%s, which can be All' % p['repeat'])
    inst = defined.get('instance')
    devvar = defined.get('device')
    if inst is not None and not inst.get('multi') and devvar is not None:
        if is_all(devvar.get('current')) or (devvar.get('includeAll') and not (devvar.get('current') or {}).get('value')):
            bad('variable device', 'All by default on a one-host dashboard')

    # Links to the other dashboards keep the time range and the variables.
    dlinks = d.get('links') if isinstance(d.get('links'), list) else []
    if not any(isinstance(l, dict) and l.get('keepTime') and l.get('includeVars') for l in dlinks):
        bad('dashboard', 'no link to the other dashboards that keeps the time range and the variables')

    # Top-level panels must not overlap.
    cells = {}
    for p in panels:
        gp = p.get('gridPos') if isinstance(p, dict) else None
        if not isinstance(gp, dict) or any(not isinstance(gp.get(k), int) for k in ('h', 'w', 'x', 'y')):
            continue
        for y in range(gp['y'], gp['y'] + gp['h']):
            for x in range(gp['x'], min(gp['x'] + gp['w'], 24)):
                other = cells.get((x, y))
                if other is not None and other is not p:
                    bad('panel %r' % p.get('title'), 'overlaps panel %r' % other.get('title'))
                    break
                cells[(x, y)] = p
            else:
                continue
            break

    # Variables' own queries may use the variables before them.
    for name, var in defined.items():
        for text in strings({k: v for k, v in var.items() if k not in ('name', 'current', 'options')}):
            for ref in var_refs(text):
                if builtin(ref):
                    continue
                if ref == name:
                    bad('variable %s' % name, 'refers to itself')
                    continue
                used.setdefault(ref, 'variable %s' % name)
                if ref not in defined:
                    bad('variable %s' % name, 'uses undefined variable $%s' % ref)
    # Links carry variables (includeVars) but do not "use" them.
    for name in defined:
        if name not in used:
            bad('variable %s' % name, 'defined but never used')
    # One line per problem, however many strings show it.
    return list(dict.fromkeys(problems)), d.get('uid'), set(defined), data_links


def is_all(current):
    """Whether a variable's saved current value is All."""
    if not isinstance(current, dict):
        return False
    value = current.get('value')
    values = value if isinstance(value, list) else [value]
    return '$__all' in values


def lint_links(path, uid, own, links, dashboards):
    """Problems of one dashboard's data links; dashboards: uid -> variables."""
    problems = []
    for where, link in links:
        url = link.get('url') if isinstance(link, dict) else None
        m = LINK_RE.match(url or '')
        if not m:
            problems.append('%s: %s: data link %r is not /d/UID?...' % (path, where, url))
            continue
        target, query = m.group(1), m.group(2)
        if target not in dashboards:
            problems.append('%s: %s: data link to unknown dashboard %s' % (path, where, target))
            continue
        params = query.split('&')
        if '${__url_time_range}' not in params:
            problems.append('%s: %s: data link to %s does not keep the time range' % (path, where, target))
        for name in QUERYPARAM_RE.findall(query):
            if name not in own or name not in dashboards[target]:
                problems.append('%s: %s: data link passes on $%s, which %s does not have' %
                                (path, where, name, uid if name not in own else target))
        for name in SETVAR_RE.findall(query):
            if name not in dashboards[target]:
                problems.append('%s: %s: data link sets var-%s, which %s does not have' % (path, where, name, target))
    return problems


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if len(argv) < 2 or argv[1] in ('-h', '--help'):
        sys.stderr.write(__doc__)
        return 2
    problems = []
    results = []
    for path in argv[1:]:
        found, uid, variables, links = lint(path)
        problems.extend(found)
        results.append((path, uid, variables, links))
    dashboards = {uid: variables for _, uid, variables, _ in results if uid}
    for path, uid, variables, links in results:
        problems.extend(lint_links(path, uid, variables, links, dashboards))
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
