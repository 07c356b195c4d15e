#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# prefetch.sh - fills the guest tests' cache ($OUT/vm/) ahead of them: each
# kernel series' kernel, modules and initramfs, then dmsetup and mdadm
# (PREFETCH_KERNELS=1), then the systemd guest's image
# (PREFETCH_SYSTEMD_GUEST=1, tests/vm/systemd_guest.sh). tests/integration/run.sh
# starts it in the background when it will run a guest test, asking for
# what the selected tests use, so that the downloads (tens of seconds each
# on a fresh clone) and the image's build (about two minutes) overlap the
# host-only tests before them instead of adding to the run. Each fill
# holds its cache's lock (vm_cache_lock, sg_lock): a test that needs a
# kernel or the image meanwhile waits for it, and nothing is made twice.
# What cannot be had here is left for the tests to skip on, with their own
# message.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib.sh
source tests/vm/guest.sh
# Stopped by run.sh: lib.sh's clean-up still runs.
trap 'exit 143' TERM

if [ "${PREFETCH_KERNELS:-1}" = 1 ]; then
	# 6.1 first: the first guest tests in run.sh's order (test_fleet,
	# test_guest_v2) boot it; test_kernels then needs 5.10 and 6.12, and
	# test_stacked the tools.
	for series in 6.1 5.10 6.12; do
		(
			vm_series "$series"
			vm_prepare
			echo "prefetch: $series ready ($(cat "$VM_DIR/package"))"
		)
	done
	(
		vm_add_tools
		echo "prefetch: dmsetup and mdadm ready"
	)
fi
# Last: test_systemd_guest comes late in the run. The package is not built
# yet; its dependencies are those of the binary it will hold.
if [ "${PREFETCH_SYSTEMD_GUEST:-0}" = 1 ]; then
	(
		# Its own clean-ups (a half-built image) when it ends or is
		# stopped: a subshell does not inherit the EXIT trap.
		CLEANUPS=()
		trap cleanup EXIT
		trap 'exit 143' TERM
		source tests/vm/systemd_guest.sh
		deps=$(sg_binary_depends "${OUT:-build}/iolat")
		[ -n "$deps" ] || { echo "prefetch: no dependencies from ${OUT:-build}/iolat: the test builds the image"; exit 0; }
		# shellcheck disable=SC2086 # one package a word
		sg_prepare_for $deps
		echo "prefetch: systemd guest image ready"
	)
fi
exit 0
