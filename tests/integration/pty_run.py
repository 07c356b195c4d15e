#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""pty_run.py COLUMNS CMD...: runs CMD with its stdout on a new pseudo-terminal
COLUMNS wide (stdin /dev/null, stderr as given), prints what it wrote there
(with the terminal's \\r\\n) and exits with its status: how a test sees what
iolat does at a terminal (test_cli.sh, test_top.sh)."""
import fcntl
import os
import struct
import subprocess
import sys
import termios


def main():
    cols, argv = int(sys.argv[1]), sys.argv[2:]
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave)
    os.close(slave)
    out = bytearray()
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child's side is closed
            break
        if not data:
            break
        out += data
    rc = child.wait()
    sys.stdout.buffer.write(bytes(out))
    sys.exit(rc)


if __name__ == "__main__":
    main()
