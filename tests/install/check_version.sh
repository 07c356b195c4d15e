#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# check_version.sh - scripts/version.sh's versions sort as the commits do,
# as Debian compares them (dpkg --compare-versions), so apt never takes a
# newer build for a downgrade. No root, a second or two; `make
# check-version` runs it.
#   - this checkout: HEAD's version is above HEAD~1's (when HEAD has a
#     parent), and the dirty mark sorts between HEAD and what comes next;
#   - a repository made here (in a temporary directory, removed after):
#     with no tag, every commit above the one before it, including one whose
#     committer clock went back a day; a tag's version (v0.2.0 -> 0.2.0)
#     above the commits before it and below every later one; a pre-release
#     tag (v0.3.0-rc1 -> 0.3.0~rc1) below its release; a work tree with
#     changes marked dirty, a clean one not; a copy without .git takes
#     .tarball-version, then VERSION.
# Needs git and dpkg (dpkg --compare-versions); exit 77 without them.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
for t in git dpkg; do
	command -v $t >/dev/null || {
		echo "check_version.sh: $t is missing: skipped" >&2
		exit 77
	}
done

failed=0
fail() {
	echo "check_version.sh: $*" >&2
	failed=1
}
# gt A B: A sorts above B.
gt() {
	dpkg --compare-versions "$1" gt "$2" || fail "$1 does not sort above $2${3:+ ($3)}"
}
version() { sh "$top/scripts/version.sh" "$@"; }

# --- this checkout ---------------------------------------------------------
if [ -e .git ]; then
	head=$(version --no-dirty)
	[[ $head == *+git*.g$(git rev-parse --short=7 HEAD) || $head != *+git* ]] ||
		fail "HEAD's version $head does not end in its hash"
	if git rev-parse -q --verify 'HEAD~1^{commit}' >/dev/null; then
		prev=$(version HEAD~1)
		gt "$head" "$prev" "HEAD over HEAD~1"
		echo "HEAD $head > HEAD~1 $prev"
	fi
	[ "$(version HEAD)" = "$head" ] || fail "version.sh HEAD is $(version HEAD), not $head"
else
	echo "check_version.sh: not a git clone: only the made repository is checked" >&2
fi

# --- a repository made for the test --------------------------------------
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo=$tmp/repo
mkdir "$repo"
cp scripts/version.sh "$tmp/version.sh"
cd "$repo"
git init -q
git config user.name test
git config user.email test@localhost
git config commit.gpgsign false
echo 1.4.0 >VERSION
# commit DAYS: a commit dated DAYS days after 2026-01-01 (UTC).
i=0
commit() {
	i=$((i + 1))
	echo "$i" >file
	git add VERSION file
	GIT_AUTHOR_DATE="@$((1767225600 + $1 * 86400)) +0000" \
		GIT_COMMITTER_DATE="@$((1767225600 + $1 * 86400)) +0000" git commit -q -m "c$i"
}
v() { sh "$tmp/version.sh" "$@"; }

commit 0
first=$(v)
[ "$first" = "1.4.0+git20260101.1.g$(git rev-parse --short=7 HEAD)" ] ||
	fail "the first commit is $first, not 1.4.0+git20260101.1.g<hash>"
last=$first
for d in 0 1 1 9; do
	commit $d
	now=$(v)
	gt "$now" "$last" "commit dated day $d"
	last=$now
done
# A clock that went back: the date stays the newest seen, the count grows.
commit 3
now=$(v)
[[ $now == 1.4.0+git20260110.6.g* ]] || fail "a commit dated before its parent is $now, not 1.4.0+git20260110.6.g…"
gt "$now" "$last" "a commit dated before its parent"
last=$now

# Uncommitted changes: above the commit, below the next one.
echo changed >file
dirty=$(v)
[ "$dirty" = "$last.dirty" ] || fail "a changed work tree is $dirty, not $last.dirty"
[ "$(v --no-dirty)" = "$last" ] || fail "--no-dirty gives $(v --no-dirty), not $last"
gt "$dirty" "$last" "dirty over clean"
git checkout -q file
[ "$(v)" = "$last" ] || fail "a clean work tree is $(v), not $last"
echo changed >file
commit 10
gt "$(v)" "$dirty" "the next commit over a dirty build"
untagged=$(v)

# A release tag: above everything before it, below everything after.
git tag v2.0.0
[ "$(v)" = 2.0.0 ] || fail "the tag v2.0.0 is $(v), not 2.0.0"
gt 2.0.0 "$untagged" "the tag over the untagged commits"
echo changed >file
[ "$(v)" = 2.0.0+dirty ] || fail "a changed work tree on v2.0.0 is $(v), not 2.0.0+dirty"
gt 2.0.0+dirty 2.0.0 "dirty over its tag"
commit 11
after=$(v)
[[ $after == 2.0.0+git20260112.1.g* ]] || fail "one commit after v2.0.0 is $after, not 2.0.0+git20260112.1.g…"
gt "$after" 2.0.0 "a commit after the tag"
gt "$after" 2.0.0+dirty "a commit after a dirty build of the tag"
commit 11
gt "$(v)" "$after" "the second commit after the tag"
[ "$(v HEAD~1)" = "$after" ] || fail "version.sh HEAD~1 is $(v HEAD~1), not $after"
[ "$(v v2.0.0)" = 2.0.0 ] || fail "version.sh v2.0.0 is $(v v2.0.0), not 2.0.0"

# A pre-release tag: below its release, above what came before.
before_rc=$(v)
commit 12
git tag v3.0.0-rc1
[ "$(v)" = 3.0.0~rc1 ] || fail "the tag v3.0.0-rc1 is $(v), not 3.0.0~rc1"
gt 3.0.0~rc1 "$before_rc" "an rc over the commits before it"
gt 3.0.0 3.0.0~rc1 "the release over its rc"
commit 13
gt "$(v)" 3.0.0~rc1 "a commit after the rc"
if v nosuch >/dev/null 2>&1; then fail "version.sh nosuch succeeded"; fi

# Not a clone: .tarball-version, else VERSION.
mkdir "$tmp/copy"
cp VERSION "$tmp/copy/"
(cd "$tmp/copy" && [ "$(v)" = 1.4.0 ]) || fail "a copy with VERSION only is $(cd "$tmp/copy" && v)"
echo 1.4.0+git20260101.1.gabcdef0 >"$tmp/copy/.tarball-version"
(cd "$tmp/copy" && [ "$(v)" = 1.4.0+git20260101.1.gabcdef0 ]) ||
	fail "a copy with .tarball-version is $(cd "$tmp/copy" && v)"

[ $failed = 0 ] || exit 1
echo "ok: versions sort by commit (untagged $untagged, tagged 2.0.0 < $after)"
