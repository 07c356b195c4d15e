#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# version.sh [--no-dirty]: iolat's version on stdout, for `iolat --version`,
# `make dist` and `make deb`. Run from the top of the source tree.
#   - a git clone (.git here, not in some directory above: a copy of the
#     tree inside another repository's build directory is not a clone):
#     `git describe --tags --dirty --always` less a tag's leading v, so
#     0.1.0 on the tag v0.1.0, 0.1.0-12-gabc1234 twelve commits on, with
#     -dirty when tracked files changed; with no tag to describe from,
#     VERSION-gHASH (0.1.0-gabc1234).
#   - a tarball from `make dist`: the .tarball-version it carries.
#   - otherwise the VERSION file (0.0.0 if there is none).
# --no-dirty leaves -dirty out (make dist archives HEAD, not the work tree).
set -eu
dirty=--dirty
[ "${1:-}" = --no-dirty ] && dirty=
base=$(cat VERSION 2>/dev/null || echo 0.0.0)
if [ -e .git ] && command -v git >/dev/null 2>&1 &&
	d=$(git describe --tags $dirty --always 2>/dev/null); then
	case $d in
	v[0-9]*) echo "${d#v}" ;;
	[0-9]*.*) echo "$d" ;;
	*) echo "$base-g$d" ;; # no tag: the abbreviated hash, maybe -dirty
	esac
elif [ -s .tarball-version ]; then
	cat .tarball-version
else
	echo "$base"
fi
