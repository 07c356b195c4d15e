#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# check_function_length.sh - fails on a function in src/ longer than MAX
# lines (default 100), counted from the line that opens its body to the one
# that closes it: past a screenful or two a function does several things,
# and they belong in functions of their own whose names say what.
# --files also lists the files longer than MAX_FILE lines (default 600),
# for a reader's judgement, not a failure: a long file can have one job.
# Relies on the kernel style .clang-format keeps: a function's braces
# alone on their lines, in column 0, its name on the line before (or a few
# lines before, when the parameters wrap).
set -u
cd "$(dirname "$0")/../.." || exit 1
MAX=${MAX:-100}
MAX_FILE=${MAX_FILE:-600}
files=0
[ "${1:-}" = --files ] && files=1

# shellcheck disable=SC2016 # awk's $0, not the shell's
long=$(git ls-files 'src/*.c' 'src/*.h' | xargs awk -v max="$MAX" '
	FNR == 1 { sig = ""; start = 0 }
	/^[A-Za-z_].*\(/ && start == 0 { sig = $0 }
	/^\{$/ && start == 0 { start = FNR; next }
	/^\}/ && start > 0 {
		n = FNR - start + 1
		if (n > max) {
			name = sig
			sub(/\(.*/, "", name)
			sub(/.*[ *]/, "", name)
			printf "%s:%d: %s: %d lines\n", FILENAME, start, name, n
		}
		start = 0
		sig = ""
	}')
if [ "$files" -eq 1 ]; then
	git ls-files 'src/*.c' 'src/*.h' | xargs wc -l |
		awk -v max="$MAX_FILE" '$2 != "total" && $1 > max { printf "%s: %d lines (over %d)\n", $2, $1, max }'
fi
[ -z "$long" ] && exit 0
echo "functions over $MAX lines (split them; tests/lint/check_function_length.sh):" >&2
echo "$long" >&2
exit 1
