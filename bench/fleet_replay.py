#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""fleet_replay.py - N hosts' /metrics from one recording of a real `iolat serve`.

Usage:
  python3 bench/fleet_replay.py --recording DIR --hosts N --step SECONDS
                                [--listen ADDR] [--port-file FILE]

DIR holds the recorded text bodies, body.000, body.001, ... (K of them, in
the order they were scraped; bench/lib_fleet.sh's fleet_record makes them).
Host H (0..N-1) is served at /host/H/metrics. Every STEP seconds each host
moves one recorded scrape on; host H runs H scrapes ahead of host 0, so no
two hosts serve the same body at once. The series are those of the last
body (a series the recording saw only later has its first value before
then). Counters (families typed counter, histogram or summary) go on past
the end of the recording: lap L serves the recorded values plus L times
the recording's increase of each series (last body minus first), so they
never go back; gauges repeat as recorded. The bodies carry no instance
label: the scrapers give each path its own (relabelling), as a fleet's
would give each host's address.

Also:
  POST /-/freeze      every host keeps the body it serves now (tests: the
                      stores then hold the same last values to compare);
  GET  /-/status      JSON: step now, frozen, hosts, started (Unix time of
                      step 0), step_seconds, series per host, lap length,
                      CPU seconds this process used (user+system);
  POST /api/v2/alerts accepted and dropped (vmalert's notifier).

Bodies are rendered on demand from one template of the last body and the
per-series value arrays, and kept while their step is current (both
stores scrape each host once a step). Exit 2 on bad usage.
"""

import argparse
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SAMPLE_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)(?: \S+)?$')
TYPE_RE = re.compile(r'^# TYPE (\S+) (\S+)')
HOST_PATH_RE = re.compile(r'^/host/(\d+)/metrics$')


def read_bodies(directory):
    """The recorded bodies' lines, in scrape order."""
    names = sorted(n for n in os.listdir(directory) if re.match(r'^body\.\d+$', n))
    if len(names) < 2:
        raise ValueError('%s: fewer than two recorded bodies (body.NNN)' % directory)
    return [open(os.path.join(directory, n)).read().splitlines() for n in names]


def cumulative_families(lines):
    """Names of the families whose samples only grow."""
    out = set()
    for line in lines:
        m = TYPE_RE.match(line)
        if m and m.group(2) in ('counter', 'histogram', 'summary'):
            out.add(m.group(1))
    return out


def is_cumulative(name, families):
    if name in families:
        return True
    for suffix in ('_bucket', '_count', '_sum', '_total'):
        if name.endswith(suffix) and name[:-len(suffix)] in families:
            return True
    return False


class Recording:
    """The last body as a template, and each series' value per recorded scrape."""

    def __init__(self, bodies):
        last = bodies[-1]
        families = cumulative_families(last)
        self.chunks = []  # per line: (text before the value, series index or None)
        self.keys = []
        index = {}
        for line in last:
            m = SAMPLE_RE.match(line)
            if line.startswith('#') or not m:
                self.chunks.append((line, None))
                continue
            key = m.group(1) + (m.group(2) or '')
            index[key] = len(self.keys)
            self.keys.append(key)
            self.chunks.append((key, len(self.keys) - 1))
        count = len(bodies)
        values = [[None] * count for _ in self.keys]
        for k, body in enumerate(bodies):
            for line in body:
                m = SAMPLE_RE.match(line)
                if line.startswith('#') or not m:
                    continue
                i = index.get(m.group(1) + (m.group(2) or ''))
                if i is not None:
                    values[i][k] = m.group(3)
        self.values, self.increase = [], []
        for i, key in enumerate(self.keys):
            row = values[i]
            first = next(v for v in row if v is not None)
            for k in range(count):  # before its first scrape: its first value
                if row[k] is None:
                    row[k] = first
                first = row[k]
            name = key.split('{', 1)[0]
            if is_cumulative(name, families):
                nums = [float(v) for v in row]
                self.values.append(nums)
                self.increase.append(max(0.0, nums[-1] - nums[0]))
            else:
                self.values.append(row)
                self.increase.append(None)
        # Scrape K-1 of a lap is scrape 0 of the next: a lap is K-1 steps.
        self.lap = count - 1

    def render(self, position):
        """The body a host serves at its step POSITION (0, 1, ...)."""
        lap, at = divmod(position, self.lap)
        out = []
        for text, i in self.chunks:
            if i is None:
                out.append(text)
                continue
            v = self.values[i][at]
            if self.increase[i] is not None:
                v += lap * self.increase[i]
                v = '%d' % v if v.is_integer() and abs(v) < 1e15 else repr(v)
            out.append('%s %s' % (text, v))
        out.append('')
        return '\n'.join(out).encode()


class Fleet:
    """Which body each host serves, now; rendered bodies kept for their step."""

    def __init__(self, recording, hosts, step):
        self.recording, self.hosts, self.step = recording, hosts, step
        self.start = time.monotonic()
        self.started = time.time()  # the same moment, for clients' evaluation times
        self.frozen = None
        self.lock = threading.Lock()
        self.cache = {}

    def now_step(self):
        if self.frozen is not None:
            return self.frozen
        return int((time.monotonic() - self.start) / self.step)

    def body(self, host):
        s = self.now_step()
        position = s + host
        with self.lock:
            got = self.cache.get(position)
            if got is None:
                # Positions older than the oldest host's now are done with.
                for p in [p for p in self.cache if p < s]:
                    del self.cache[p]
        if got is None:
            got = self.recording.render(position)
            with self.lock:
                self.cache[position] = got
        return got

    def freeze(self):
        self.frozen = self.now_step()

    def status(self):
        t = os.times()
        return {'step': self.now_step(), 'frozen': self.frozen is not None, 'hosts': self.hosts,
                'started': self.started, 'step_seconds': self.step,
                'series_per_host': len(self.recording.keys), 'lap_steps': self.recording.lap,
                'cpu_seconds': t.user + t.system}


def handler_for(fleet):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'

        def reply(self, code, body, ctype='text/plain; version=0.0.4; charset=utf-8'):
            self.send_response(code)
            self.send_header('Content-Type', ctype)
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            m = HOST_PATH_RE.match(self.path)
            if m and int(m.group(1)) < fleet.hosts:
                self.reply(200, fleet.body(int(m.group(1))))
            elif self.path == '/-/status':
                self.reply(200, json.dumps(fleet.status()).encode(), 'application/json')
            else:
                self.reply(404, b'no such host or path\n')

        def do_POST(self):
            length = int(self.headers.get('Content-Length') or 0)
            self.rfile.read(length)
            if self.path == '/-/freeze':
                fleet.freeze()
                self.reply(200, json.dumps(fleet.status()).encode(), 'application/json')
            elif self.path.startswith('/api/v2/alerts'):
                self.reply(200, b'')
            else:
                self.reply(404, b'no such path\n')

        def log_message(self, *args):
            pass

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--recording', required=True)
    ap.add_argument('--hosts', type=int, required=True)
    ap.add_argument('--step', type=float, required=True, help='seconds per recorded scrape')
    ap.add_argument('--listen', default='127.0.0.1')
    ap.add_argument('--port', type=int, default=0, help='0: any free port')
    ap.add_argument('--port-file', help='written with the port once listening')
    a = ap.parse_args()
    if a.hosts < 1 or a.step <= 0:
        ap.error('--hosts must be at least 1 and --step above 0')
    try:
        recording = Recording(read_bodies(a.recording))
    except (OSError, ValueError) as e:
        print('fleet_replay.py: %s: record one first (bench/lib_fleet.sh fleet_record)' % e,
              file=sys.stderr)
        return 2
    fleet = Fleet(recording, a.hosts, a.step)
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.request_queue_size = 1024
    server = ThreadingHTTPServer((a.listen, a.port), handler_for(fleet))
    if a.port_file:
        with open(a.port_file + '.tmp', 'w') as f:
            f.write('%d\n' % server.server_address[1])
        os.rename(a.port_file + '.tmp', a.port_file)
    server.serve_forever()
    return 0


if __name__ == '__main__':
    sys.exit(main())
