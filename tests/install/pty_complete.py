#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""pty_complete.py COMPLETION [BASH_COMPLETION_LIB] - real readline check.

Starts an interactive bash on a pseudo-terminal (PATH as given, so OUT's
iolat first), sources the completion (after bash-completion's library when
given), types each line below followed by a Tab and a marker, and checks the
line readline shows: what Tab inserted, and whether it added a space (it must
not after a `--flag=`). Prints one FAIL line per mismatch; exit 1 if any.
"""
import os
import pty
import select
import sys
import time

# typed, then Tab, then "#": the line must end with the expected text + "#".
CASES = [
    ("iolat se", "iolat serve #"),
    ("iolat serve --web.list", "iolat serve --web.listen-address=#"),
    ("iolat serve --attach=r", "iolat serve --attach=raw_tp #"),
    ("iolat hist --json -O", "iolat hist --json -O #"),
]


def main():
    completion = sys.argv[1]
    lib = sys.argv[2] if len(sys.argv) > 2 else None
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(PS1="PROMPT$ ", INPUTRC="/dev/null", TERM="dumb")
        os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])

    def read_until(want, timeout=10.0):
        out, end = "", time.time() + timeout
        while time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.1)
            if r:
                try:
                    out += os.read(fd, 65536).decode(errors="replace")
                except OSError:
                    break
                if want in out:
                    return out
        return out

    def run(cmd):
        os.write(fd, (cmd + "; echo DONE-$((6*7))\n").encode())
        read_until("DONE-42")

    failed = 0
    run("stty -echoctl 2>/dev/null")
    if lib:
        run("source " + lib)
    run("source " + completion)
    for typed, want in CASES:
        os.write(fd, (typed + "\t").encode())
        time.sleep(0.3)  # Tab, then the marker, as two keystrokes
        os.write(fd, b"#")
        out = read_until(want, 5.0)
        line = out.replace("\x07", "").splitlines()[-1] if out.strip() else ""
        if want not in out:
            print(f"FAIL: typing '{typed}<Tab>' shows [{line.strip()}], expected [{want}]")
            failed += 1
        os.write(fd, b"\x15")  # Ctrl-U: clear the line
    os.write(fd, b"exit\n")
    os.waitpid(pid, 0)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
