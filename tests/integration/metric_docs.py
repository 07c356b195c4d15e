#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# metric_docs.py EXPOSITION DOC [MAY_BE_ABSENT...] - the metric families a
# text exposition holds against those DOC's tables list (every table whose
# header is "| metric | type | meaning |"), both ways: a family exported but
# not documented, documented but not exported (unless named in
# MAY_BE_ABSENT), or exported with another type than the table's fails.
# A row may name several families (`a`, `b{label}`): its type applies to
# each. Prints one line per difference; exit status 1 if there is one.
import re
import sys

NAME = re.compile(r"`((?:iolat|process)_[a-z0-9_]+)[^`]*`")
SUFFIXES = {"histogram": ("_bucket", "_sum", "_count")}


def exported(path):
    """{family: type} from the TYPE lines; and sample names no family has."""
    types, stray = {}, set()
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines:
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(None, 3)
            types[name] = kind
    for line in lines:
        if not line or line.startswith("#"):
            continue
        name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
        if name in types:
            continue
        # A histogram's series carry a suffix its family name does not.
        folded = [name[: -len(s)] for k in SUFFIXES.values() for s in k if name.endswith(s)]
        if not any(types.get(b) in SUFFIXES for b in folded):
            stray.add(name)
    return types, stray


def documented(path):
    """{family: type} from the doc's metric tables."""
    types, in_table = {}, False
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not line.startswith("|"):
                in_table = False
            elif cells[:3] == ["metric", "type", "meaning"]:
                in_table = True
            elif in_table and not set(cells[0]) <= set("- "):
                for name in NAME.findall(cells[0]):
                    types[name] = cells[1]
    return types


def main():
    expo, doc, may_be_absent = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    got, stray = exported(expo)
    want = documented(doc)
    bad = []
    for name in sorted(stray):
        bad.append(f"{name}: exported samples without a TYPE line")
    for name in sorted(set(got) - set(want)):
        bad.append(f"{name} ({got[name]}): exported, not in {doc}'s metric tables")
    for name in sorted(set(want) - set(got) - may_be_absent):
        bad.append(f"{name}: in {doc}'s metric tables, not exported")
    for name in sorted(set(want) & set(got)):
        if want[name] != got[name]:
            bad.append(f"{name}: exported as {got[name]}, {doc} says {want[name]}")
    for line in bad:
        print(line)
    if not want:
        print(f"no metric table found in {doc}")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
