# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# lib.sh - shared by check_docs.sh and check_completion.sh (sourced).

# Option definitions in help-like text on stdin (lines that start with
# blanks then a dash; their words up to the first that is not a flag), one
# normalised flag a line, sorted: -X, --long, --long= (takes a value;
# --long[=V], which may take one, gives --long);
# --[no-]X gives --X and --no-X.
flags_of() {
	awk '
	/^[ \t]*-/ {
		line = $0; sub(/^[ \t]+/, "", line)
		n = split(line, w, /[ \t]+/)
		for (i = 1; i <= n; i++) {
			t = w[i]; sub(/,$/, "", t)
			if (t !~ /^-/) break
			# --x=ARG takes a value; --x[=ARG] may: offered bare.
			arg = (t ~ /=/ && t !~ /\[=/) ? "=" : ""
			sub(/\[?=.*/, "", t)
			if (t ~ /^--\[no-\]/) {
				sub(/^--\[no-\]/, "", t)
				print "--" t arg; print "--no-" t arg
			} else if (t ~ /^--/) print t arg
			else print t
		}
	}' | LC_ALL=C sort -u
}
