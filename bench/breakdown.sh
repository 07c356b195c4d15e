#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# breakdown.sh - what each part of iolat's completion program costs.
#
# Builds the collector's BPF object once per part with that part left out
# (bpf/iolat.bpf.c, IOLAT_BENCH_WITHOUT_*: the self-cost counter, the bucket
# cells, the stamp counters, the restamps lookup, and the first three at
# once), each into build-breakdown/NAME from a copy of a built tree, and
# times them all beside the full build and the bound programs with
# bench/together.sh: every completion program attached at once, over the
# same I/O, a different one first each run. The difference of a build's
# median from the full build's is what its part costs per completion.
# Such builds count wrongly by design: they exist only here.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
BUILD=${BUILD:-$ROOT/build-bench}
OUTDIR=${OUTDIR:-$ROOT/build-breakdown}
RUNS=${RUNS:-8}
STAMP_PATH=0

usage() {
	cat <<EOF2
Usage: bash bench/breakdown.sh [--runs N] [--stamp-path]

Builds iolat with each part of its completion left out and times every
build's completion program beside the full one and the bounds (bound-slot,
bound-views-dense) in the same I/O (bench/together.sh --rotate). Needs
root and a built tree: 'make OUT=build-bench -j2 all helpers' (env BUILD).

  --runs N       fio runs (default 8, one per tool: each first once)
  --stamp-path   the kernel's stamps (IOLAT_TEST_NO_RESTAMP=1): the path of
                 kernels without the plug clock; default: this kernel's
EOF2
}

die() {
	echo "breakdown.sh: $*" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case "$1" in
	--runs) [ $# -ge 2 ] || die "--runs needs a value"; RUNS=$2; shift 2 ;;
	--stamp-path) STAMP_PATH=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer, not '$RUNS'"
if [ ! -x "$BUILD/iolat" ] || [ ! -x "$BUILD/bpfload" ]; then
	die "no $BUILD/iolat or bpfload: build first (make OUT=$BUILD -j2 all helpers)"
fi

# NAME=DEFINES: each build and what it leaves out.
variants=(
	"without-selfcost=-DIOLAT_BENCH_WITHOUT_SELFCOST"
	"without-cells=-DIOLAT_BENCH_WITHOUT_CELLS"
	"without-stamp-stats=-DIOLAT_BENCH_WITHOUT_STAMP_STATS"
	"without-all-three=-DIOLAT_BENCH_WITHOUT_SELFCOST -DIOLAT_BENCH_WITHOUT_CELLS -DIOLAT_BENCH_WITHOUT_STAMP_STATS"
)
[ "$STAMP_PATH" = 1 ] || variants+=("without-restamp-read=-DIOLAT_BENCH_WITHOUT_RESTAMP_READ")

builds=("$BUILD/iolat")
for v in "${variants[@]}"; do
	name=${v%%=*}
	out=$OUTDIR/$name
	rm -rf "$out"
	mkdir -p "$OUTDIR"
	cp -a "$BUILD" "$out"
	# The object and what embeds it are rebuilt; the rest is the copy's.
	rm -f "$out/iolat.bpf.o" "$out/iolat.skel.h"
	make -C "$ROOT" -s OUT="$out" BENCH_BPF_DEFS="${v#*=} -Wno-unused-function" \
		"$out/iolat" >/dev/null || die "cannot build $name"
	builds+=("$out/iolat")
done

echo "breakdown.sh: $(git -C "$ROOT" rev-parse --short HEAD), ${#builds[@]} builds; $([ "$STAMP_PATH" = 1 ] && echo "stamp path" || echo "this kernel's path")"
env_prefix=()
[ "$STAMP_PATH" = 1 ] && env_prefix=(env IOLAT_TEST_NO_RESTAMP=1)
"${env_prefix[@]}" env BUILD="$BUILD" bash "$HERE/together.sh" --rotate --runs "$RUNS" \
	"${builds[@]}" bound-slot bound-views-dense
