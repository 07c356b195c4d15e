#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# check_layers.sh - src/'s folders are layers (src/README.md): a file may
# include headers of its own folder and of the layers before it, never of
# one after it; serve/ and cli/ are both on top and do not include each
# other. Headers without a folder are bpf/'s shared ones and generated ones
# (skeletons, tables); commands.h is main.c's and the commands'.
# Prints each include that points the wrong way; exit 1 if any.
set -u
cd "$(dirname "$0")/../.." || exit 1
rank() {
	case $1 in
	util) echo 0 ;; sys) echo 1 ;; core) echo 2 ;; metrics) echo 3 ;; uprog) echo 4 ;;
	serve | cli) echo 5 ;; *) echo -1 ;;
	esac
}
bad=0
for f in src/*/*.[ch]; do
	dir=${f#src/}
	dir=${dir%%/*}
	[ "$(rank "$dir")" -ge 0 ] || { echo "check_layers: $f: $dir/ is no layer (src/README.md)"; bad=1; continue; }
	while IFS= read -r inc; do
		case $inc in
		*/*) to=${inc%%/*} ;;
		commands.h)
			case $f in */cmd_*.c) continue ;; esac
			echo "check_layers: $f includes commands.h (main.c's and the commands')"
			bad=1
			continue
			;;
		*) continue ;;
		esac
		[ "$to" = "$dir" ] && continue
		if [ "$(rank "$to")" -lt 0 ] || [ "$(rank "$to")" -ge "$(rank "$dir")" ]; then
			echo "check_layers: $f ($dir/) includes $inc: $to/ is not below $dir/"
			bad=1
		fi
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done
[ $bad -eq 0 ] && echo "check_layers: every include in src/ points down"
exit $bad
