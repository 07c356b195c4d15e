# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# docs/serve.md's metric tables are what `iolat serve` exports (issue 27,
# "docs that cannot drift"): serve runs with everything that adds a family
# turned on (--bpf.stats; workloads, on by default; --label.size-class) and
# a disk that has gone (a loop device used, then detached: the gone-disk
# gauge), and metric_docs.py compares the families of a scrape with the
# tables, both ways, and their types. Users' programs' families are theirs
# (docs/userprogs.md): an empty --config.dir keeps them out.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

# Documented families only some hosts or moments have, and why.
may_be_absent=()
# Only where a disk is built on another (dm, md); test_stacked.sh makes one.
compgen -G '/sys/block/*/slaves/*' >/dev/null || may_be_absent+=(iolat_block_stack_info)
# Only where a dm or md disk exists; test_stacked.sh makes them.
compgen -G '/sys/block/*/dm' >/dev/null || compgen -G '/sys/block/*/md' >/dev/null ||
	may_be_absent+=(iolat_block_volume_info)
# Only where serve may read a qemu's descriptors; test_devnames.sh makes one.
may_be_absent+=(iolat_block_device_holder_info)
# mallinfo2 says 0 under a sanitizer's allocator, and serve leaves it out.
[ -n "${IOLAT_SANITIZED:-}" ] && may_be_absent+=(iolat_heap_allocated_bytes)

mkdir "$WORK/conf.d"
# Our own loop device, detached before the end: cleaned up by its backing
# file, so that a number someone else attached since is never touched.
img=$WORK/docs.img
truncate -s 16M "$img"
dev=$(losetup --direct-io=on -f --show "$img") || fail "losetup failed"
on_exit "losetup -j $img | cut -d: -f1 | xargs -r -n1 losetup -d"
udev_settle
port=$(free_port)
url=http://127.0.0.1:$port/metrics
# Every workload family: "all" is the block ones, the system-call ones are named.
start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port" --bpf.stats \
	--workloads.metrics=device_time,total_time,request_size,completions,bytes,errors,syscall_time,syscall_bytes,syscall_errors \
	--label.size-class --config.dir="$WORK/conf.d" --maintenance.interval=100ms

"$DIO" read "$dev" 8 4096 || fail "dio read"
after_pass "$url"
losetup -d "$dev" || fail "losetup -d"
after_pass "$url"
curl -sf "$url" >"$WORK/m" || fail "scrape failed"
grep -q "^iolat_disks_gone_since_seconds{device=\"${dev#/dev/}\"}" "$WORK/m" ||
	fail "${dev#/dev/} not reported gone after its detach"

python3 tests/integration/metric_docs.py "$WORK/m" docs/serve.md "${may_be_absent[@]}" >"$WORK/diff" ||
	fail "docs/serve.md's metric tables and the exposition differ:
$(cat "$WORK/diff")"
stop_serve "serve"
echo "PASS: docs/serve.md's $(grep -c '^# TYPE' "$WORK/m") metric families are serve's"
