# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""logcheck.py - reads `iolat serve` log files strictly, for the tests.

lines(fmt, path) parses every line of path as fmt ("json" or "logfmt") and
returns them as dicts (logfmt values as strings), or raises ValueError on
the first line that is not well formed: ts, level and msg first, in that
order, each key once, nothing before or after. The logfmt reader takes what
go-logfmt writes: key=value pairs split by one space, a value bare (no space,
=, " or \\, no control character) or double-quoted with the escapes \\" \\\\
\\n \\r \\t and \\uXXXX, and no raw control character inside quotes.

As a command, `logcheck.py FMT FILE` prints each line as one JSON object.
"""
import json
import re
import sys

TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
KEY = re.compile(r"[A-Za-z0-9_.]+")
BARE = re.compile(r'[^\s="\\\x00-\x1f\x7f]+')
ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "r": "\r", "t": "\t"}


def _quoted(s, i):
    """The string quoted at s[i] (a double quote) and where it ends."""
    out, i = [], i + 1
    while i < len(s):
        c = s[i]
        if c == '"':
            return "".join(out), i + 1
        if ord(c) < 0x20:
            raise ValueError(f"raw control character at {i}")
        if c == "\\":
            e = s[i + 1 : i + 2]
            if e in ESCAPES:
                out.append(ESCAPES[e])
                i += 2
            elif e == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", s[i + 2 : i + 6]):
                out.append(chr(int(s[i + 2 : i + 6], 16)))
                i += 6
            else:
                raise ValueError(f"bad escape at {i}")
            continue
        out.append(c)
        i += 1
    raise ValueError("unterminated quote")


def logfmt(line):
    pairs, i = [], 0
    while i < len(line):
        if pairs:
            if line[i] != " ":
                raise ValueError(f"no space before the pair at {i}")
            i += 1
        m = KEY.match(line, i)
        if not m or line[m.end() : m.end() + 1] != "=":
            raise ValueError(f"no key= at {i}")
        key, i = m.group(), m.end() + 1
        if line[i : i + 1] == '"':
            value, i = _quoted(line, i)
        else:
            m = BARE.match(line, i)
            if not m:
                raise ValueError(f"empty or bad bare value at {i}")
            value, i = m.group(), m.end()
        pairs.append((key, value))
    return pairs


def _check(pairs, line):
    keys = [k for k, _ in pairs]
    if keys[:3] != ["ts", "level", "msg"]:
        raise ValueError(f"ts, level, msg are not first: {line!r}")
    if len(set(keys)) != len(keys):
        raise ValueError(f"a key twice: {line!r}")
    d = dict(pairs)
    if not TS.fullmatch(d["ts"]) or d["level"] not in ("debug", "info", "warn", "error"):
        raise ValueError(f"bad ts or level: {line!r}")
    if not isinstance(d["msg"], str) or not d["msg"]:
        raise ValueError(f"no msg: {line!r}")
    return d


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def lines(fmt, path):
    out = []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if text and not text.endswith("\n"):
        raise ValueError("the last line is not ended")
    for line in text.splitlines():
        try:
            if fmt == "json":
                pairs = json.loads(line, object_pairs_hook=lambda p: p,
                                   parse_constant=_no_constant)
                if not isinstance(pairs, list):
                    raise ValueError("not an object")
            else:
                pairs = logfmt(line)
        except ValueError as e:
            raise ValueError(f"{path}: {e}: {line!r}") from None
        out.append(_check(pairs, line))
    return out


if __name__ == "__main__":
    for d in lines(sys.argv[1], sys.argv[2]):
        print(json.dumps(d))
