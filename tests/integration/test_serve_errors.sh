# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# I/O errors, counted exactly. A loop device over slowfs whose chosen
# offsets fail with EIO: of 50 direct 4 KiB reads exactly 3 fail, of 20
# direct 64 KiB writes exactly 4 (one offset only the writes reach, one
# neither does). `iolat serve` must count every failed request under its
# disk and op (iolat_block_errors_total, and per workload), with the failed
# requests still in the completions, as the kernel's diskstats count them;
# `iolat trace` must show the status of exactly those requests, at their
# sectors (JSON error_name, text ERR column).
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

N=50 M=20
# Read i covers [i*4096, (i+1)*4096), write i [i*65536, (i+1)*65536):
# 28672 fails read 7 and write 0, 94208 read 23 and write 1, 167936 read 41
# and write 2, 655460 write 10 only, 8 MiB nothing.
EIO_OFFSETS=28672,94208,167936,655460,8388608
READ_FAILS="56 184 328" # their sectors
WRITE_FAILS="0 128 256 1280"

mkdir "$WORK/mnt"
"$SLOWFS" "$WORK/mnt" --size-mib=16 --delay-us=0 --eio-offsets=$EIO_OFFSETS ||
	fail "cannot mount slowfs"
on_exit "fusermount3 -u $WORK/mnt || umount -l $WORK/mnt"
make_loop 16 "$WORK/mnt/disk"
dev=$LOOP
disk=${dev#/dev/}
make_cgroup errors
cg=$CG
port=$(free_port)
url=http://127.0.0.1:$port/metrics
start_serve "$WORK/serve.log" "${WL_FULL[@]}" --web.listen-address="127.0.0.1:$port" --maintenance.interval=100ms
serve_progs=$OUR_PROGS

# Each scrape after a pass: the workloads of the I/O before it are named.
scrape() { after_pass "$url"; curl -sf "$url" >"$WORK/m" || fail "scrape failed"; }
value() { local v; v=$(metric "$WORK/m" "$1" "$2"); echo "${v:-0}"; }
# The kernel's own completed reads and writes on the disk (diskstats).
kernel_ios() { awk '{ print $1, $5 }' "/sys/block/$disk/stat"; }
# A scrape with the diskstats read just before and after it the same, so
# nothing else (udev's blkid, after a close for writing) read the disk in
# between; kernel_ios of that moment in KR, KW.
scrape_stable() {
	local before after
	for _ in 1 2 3 4 5; do
		before=$(kernel_ios)
		scrape
		after=$(kernel_ios)
		[ "$before" = "$after" ] && break
		sleep 0.5
	done
	read -r KR KW <<<"$after"
}

scrape_stable
base_reads=$(value iolat_block_completions_total "{device=\"$disk\",op=\"read\"}")
base_writes=$(value iolat_block_completions_total "{device=\"$disk\",op=\"write\"}")
kr0=$KR kw0=$KW

start_iolat "$WORK/trace.json" trace -j -d "$disk"
trace_progs=$OUR_PROGS
assert_eq "reads that failed (dio)" "eio 3" "$(in_cgroup "$cg" "$DIO" read "$dev" $N 4096 --eio-ok)"
assert_eq "writes that failed (dio)" "eio 4" "$(in_cgroup "$cg" "$DIO" write "$dev" $M 65536 --eio-ok)"
sleep 0.3 # the tracer polls its ring buffer on a short timer
stop_iolat INT
OUR_PROGS=$trace_progs assert_detached

# serve: every failed request, by disk and op; failed ones are completions
# too, as in the kernel's diskstats (which count ours and anyone else's).
scrape_stable
kr1=$KR kw1=$KW
echo "diskstats: $((kr1 - kr0)) reads, $((kw1 - kw0)) writes since the start"
assert_counted "read completions" $((kr1 - kr0)) \
	$(($(value iolat_block_completions_total "{device=\"$disk\",op=\"read\"}") - base_reads))
assert_counted "write completions" $((kw1 - kw0)) \
	$(($(value iolat_block_completions_total "{device=\"$disk\",op=\"write\"}") - base_writes))
assert_eq "read errors" 3 "$(value iolat_block_errors_total "{device=\"$disk\",op=\"read\"}")"
assert_eq "write errors" 4 "$(value iolat_block_errors_total "{device=\"$disk\",op=\"write\"}")"
assert_eq "errors on other ops" "" \
	"$(grep "^iolat_block_errors_total{device=\"$disk\"" "$WORK/m" | grep -vE 'op="(read|write)"' | awk '$2 != 0')"
# The same, under the workload that did the I/O (its cgroup, named by path).
wl=$(grep -E "^iolat_workload_errors_total\{device=\"$disk\",op=\"read\",kind=\"[a-z]+\",workload=\"[^\"]*${cg##*/}\"" \
	"$WORK/m" | sed -E 's/.*(kind="[^"]*",workload="[^"]*").*/\1/')
[ -n "$wl" ] || fail "no workload series for $cg: $(grep "^iolat_workload_errors_total{device=\"$disk\"" "$WORK/m")"
assert_eq "workload read errors" 3 "$(value iolat_workload_errors_total "{device=\"$disk\",op=\"read\",$wl}")"
assert_eq "workload write errors" 4 "$(value iolat_workload_errors_total "{device=\"$disk\",op=\"write\",$wl}")"
assert_eq "workload read completions" $N \
	"$(value iolat_workload_completions_total "{device=\"$disk\",op=\"read\",$wl}")"
assert_eq "workload write completions" $M \
	"$(value iolat_workload_completions_total "{device=\"$disk\",op=\"write\",$wl}")"
assert_eq "workload read bytes (failed ones included)" $((N * 4096)) \
	"$(value iolat_workload_bytes_total "{device=\"$disk\",op=\"read\",$wl}")"
assert_eq "workload write bytes (failed ones included)" $((M * 65536)) \
	"$(value iolat_workload_bytes_total "{device=\"$disk\",op=\"write\",$wl}")"
echo "ok: serve: 3 of $N reads and 4 of $M writes failed, each counted under $disk and its op ($wl)"

# trace: one record per request; the failed ones, and only they, carry EIO.
records() {
	python3 -c 'import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
recs = [r for r in recs if r["comm"] == "dio" and r["rwbs"][0] == sys.argv[2]]
what = sys.argv[3]
if what == "count":
    print(len(recs))
elif what == "failed":
    print(" ".join(str(r["sector"]) for r in sorted(recs, key=lambda r: r["sector"])
                   if r["error"] != 0))
else:
    print(sorted(set((r["error"], r["error_name"]) for r in recs if r["error"] != 0)))' \
		"$WORK/trace.json" "$1" "$2"
}
assert_counted "trace: read records" $N "$(records R count)"
assert_counted "trace: write records" $M "$(records W count)"
assert_eq "trace: failed reads at" "$READ_FAILS" "$(records R failed)"
assert_eq "trace: failed writes at" "$WRITE_FAILS" "$(records W failed)"
assert_eq "trace: read status" "[(10, 'EIO')]" "$(records R status)"
assert_eq "trace: write status" "[(10, 'EIO')]" "$(records W status)"
echo "ok: trace -j: EIO (status 10) on exactly the failed requests, at sectors $READ_FAILS / $WRITE_FAILS"

# Text: the ERR column.
start_iolat "$WORK/trace.txt" trace -d "$disk" -o write
in_cgroup "$cg" "$DIO" write "$dev" $M 65536 --eio-ok >/dev/null || fail "dio write"
sleep 0.3
stop_iolat INT
assert_eq "trace text: header" "ERR" "$(head -1 "$WORK/trace.txt" | awk '{ print $8 }')"
assert_eq "trace text: EIO lines at" "$WRITE_FAILS" \
	"$(awk '$2 == "dio" && $8 == "EIO" { print $6 }' "$WORK/trace.txt" | sort -n | xargs)"
assert_counted "trace text: lines without error" $((M - 4)) \
	"$(awk '$2 == "dio" && $8 == "-"' "$WORK/trace.txt" | wc -l)"
scrape
assert_eq "write errors after 20 more writes" 8 \
	"$(value iolat_block_errors_total "{device=\"$disk\",op=\"write\"}")"
echo "ok: trace text: ERR column shows EIO on the failed writes; serve counts 8 failed writes"

kill -TERM "$SERVE_PID"
wait "$SERVE_PID" || fail "serve exited with $?"
OUR_PROGS=$serve_progs assert_detached
