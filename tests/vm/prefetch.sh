#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# prefetch.sh - fills the guest tests' cache ($OUT/vm/: each kernel series'
# kernel, modules and initramfs, then dmsetup and mdadm) ahead of them.
# tests/integration/run.sh starts it in the background when it will run a
# guest test, so that the downloads (tens of seconds each on a fresh clone)
# overlap the host-only tests before them instead of adding to the run.
# Each fill holds the cache's lock (vm_cache_lock): a test that needs a
# kernel meanwhile waits for it, and nothing is fetched twice. What cannot
# be had here is left for the tests to skip on, with their own message.
set -u
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib.sh
source tests/vm/guest.sh
# Stopped by run.sh: lib.sh's clean-up still runs.
trap 'exit 143' TERM

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
exit 0
