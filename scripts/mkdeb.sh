#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# mkdeb.sh: `make deb`. Builds the Debian package (debian/, debhelper) from a
# copy of the tree in $OUT/deb/iolat-VERSION/, so the build leaves nothing in
# the tree; the .deb lands in $OUT/deb/. Then lintian on it, when installed
# (LINTIAN=0: not at all), failing on errors and warnings (each finding we
# keep has an override with its reason in debian/iolat.lintian-overrides).
#
# The copy is the work tree as it stands (tracked and new files, not ignored
# ones), as `make` would build it. Its version is scripts/version.sh's,
# which sorts by commit (0.1.0+git20261127.42.gabc1234); a snapshot that is
# not the version at the top of debian/changelog gets an entry of its own
# there (in the copy). Any "-" (an older tarball's .tarball-version) is made
# "+", since Debian reads a "-" as the start of a Debian revision.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac

for t in dpkg-buildpackage dh; do
	command -v $t >/dev/null || {
		echo "mkdeb.sh: $t is missing: apt-get install dpkg-dev debhelper (and lintian)" >&2
		exit 1
	}
done

version=$(sh scripts/version.sh)
debver=${version//-/+}
src=$OUT/deb/iolat-$debver
rm -rf "$OUT/deb"
mkdir -p "$src"

# The tree, less build output ($OUT may be inside it).
if [ -e .git ] && command -v git >/dev/null; then
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -T - -cf - | tar -C "$src" -xf -
else
	tar --exclude="./${OUT#"$PWD"/}" --exclude='./build*' -cf - . | tar -C "$src" -xf -
fi
printf '%s\n' "$version" >"$src/.tarball-version"

top=$(dpkg-parsechangelog -l debian/changelog -S Version)
if [ "$top" != "$debver" ]; then
	maint=$(dpkg-parsechangelog -l debian/changelog -S Maintainer)
	{
		printf 'iolat (%s) UNRELEASED; urgency=medium\n\n' "$debver"
		printf '  * Snapshot %s, built by make deb.\n\n' "$version"
		printf ' -- %s  %s\n\n' "$maint" "$(date -R)"
		cat debian/changelog
	} >"$src/debian/changelog"
fi

echo "mkdeb.sh: building iolat $debver in $src"
# Nothing of an outer make reaches the package's build: not OUT (the copy
# builds into its own build/), nor MAKEFLAGS (`make deb OUT=x` puts OUT there).
(cd "$src" && env -u OUT -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u VERSION \
	dpkg-buildpackage -b --no-sign -Jauto) >"$OUT/deb/build.log" 2>&1 || {
	tail -n 40 "$OUT/deb/build.log"
	echo "mkdeb.sh: dpkg-buildpackage failed; the whole log is $OUT/deb/build.log" >&2
	exit 1
}
deb=$(ls "$OUT"/deb/iolat_"$debver"_*.deb)
echo "$deb"

if [ "${LINTIAN:-1}" != 0 ] && command -v lintian >/dev/null; then
	# --fail-on warning: a new finding fails the build until it is fixed or
	# overridden with a reason.
	lintian --info --display-info --fail-on error,warning "$deb"
	echo "mkdeb.sh: lintian: no errors or warnings"
fi
