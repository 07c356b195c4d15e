#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# version.sh [--no-dirty] [REV]: iolat's version on stdout, for `iolat
# --version`, the man pages, `make dist` and `make deb`. Run from the top of
# the source tree. Versions of later commits sort higher, as Debian compares
# them (dpkg --compare-versions; tests/install/check_version.sh checks it):
#   - a git clone (.git here, not in some directory above: a copy of the
#     tree inside another repository's build directory is not a clone):
#       on a tag vX.Y.Z (or X.Y.Z):   X.Y.Z (a "-" in it made "~", so
#                                     v0.2.0-rc1 is 0.2.0~rc1, below 0.2.0)
#       N commits after that tag:     X.Y.Z+gitYYYYMMDD.N.gHASH
#       with no tag below it:         VERSION+gitYYYYMMDD.N.gHASH, N the
#                                     number of commits in its history
#     YYYYMMDD is the newest committer date (UTC) in the history counted,
#     which is the commit's own unless a clock went back; N grows with every
#     commit on top, so the date and N never fall along a branch and the
#     hash (which does not sort) only tells commits apart. When tracked files
#     differ from the commit, ".dirty" is appended ("+dirty" on a tag), which
#     sorts above that commit and below the next.
#   - a tarball from `make dist`, or make deb's copy: the .tarball-version
#     it carries.
#   - otherwise the VERSION file (0.0.0 if there is none).
# --no-dirty leaves the dirty mark out (make dist archives HEAD, not the work
# tree). REV: that commit's version instead of HEAD's (never dirty).
# A shallow clone counts only the commits it has: unshallow it first.
set -eu
dirty=1
rev=
for a in "$@"; do
	case $a in
	--no-dirty) dirty= ;;
	-*) echo "usage: version.sh [--no-dirty] [REV]" >&2 && exit 2 ;;
	*) rev=$a dirty= ;;
	esac
done
base=$(cat VERSION 2>/dev/null || echo 0.0.0)

git_version() {
	commit=$(git rev-parse --verify -q "${rev:-HEAD}^{commit}") || return 1
	tag=$(git describe --tags --abbrev=0 --match 'v[0-9]*' --match '[0-9]*' "$commit" 2>/dev/null) || tag=
	if [ -n "$tag" ]; then
		range="$tag..$commit"
		base=$(printf '%s\n' "${tag#v}" | tr - '~')
	else
		range=$commit
	fi
	n=$(git rev-list --count "$range") || return 1
	if [ "$n" = 0 ]; then
		v=$base
		mark=+dirty
	else
		newest=$(git log --format=%ct "$range" | sort -n | tail -n 1)
		date=$(date -u -d "@$newest" +%Y%m%d) || return 1
		hash=$(git rev-parse --short=7 "$commit") || return 1
		v="$base+git$date.$n.g$hash"
		mark=.dirty
	fi
	if [ -n "$dirty" ]; then
		git update-index -q --refresh >/dev/null 2>&1 || true
		git diff-index --quiet HEAD -- 2>/dev/null || v=$v$mark
	fi
	echo "$v"
}

if [ -e .git ] && command -v git >/dev/null 2>&1 && git_version; then
	:
elif [ -n "$rev" ]; then
	echo "version.sh: $rev is not a commit of a git clone here" >&2
	exit 1
elif [ -s .tarball-version ]; then
	cat .tarball-version
else
	echo "$base"
fi
