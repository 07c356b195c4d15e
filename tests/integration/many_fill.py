#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""many_fill.py COUNTERS IDS: a bpftool batch file (on stdout) filling
tests/data/many.bpf.c's maps: counters 0..COUNTERS-1 with value = id, and
for ids 0..IDS-1 an exp2 histogram with one observation in each of buckets
0..9 and the sum key (bucket 10) = id."""
import struct
import sys


def hexbytes(b):
    return " ".join("0x%02x" % x for x in b)


def main():
    counters, ids = int(sys.argv[1]), int(sys.argv[2])
    out = sys.stdout
    for i in range(counters):
        out.write("map update name many_counts key %s value %s\n"
                  % (hexbytes(struct.pack("<I", i)), hexbytes(struct.pack("<Q", i))))
    for i in range(ids):
        for b in range(11):
            v = i if b == 10 else 1
            out.write("map update name many_hists key %s value %s\n"
                      % (hexbytes(struct.pack("<II", i, b)), hexbytes(struct.pack("<Q", v))))


main()
