# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# check --memory: the kernel memory it computes for each of the collector's
# maps, on this host, is what the kernel itself accounts for the maps of a
# running hist and serve (bpftool's bytes_memlock), and the sizes it chose
# from this host are serve's (iolat_bpf_map_capacity_entries, its start log,
# plain `check`); for a described fleet host the sizes follow its CPUs,
# disks and workloads and stay within the performance goal (64 MiB); a
# small-memory host's maps stay within 1/32 of its memory; --bpf.map-size
# sets sizes; bad input is refused.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

# plan_entries FILE SECTION MAP: the entries check --memory planned for MAP.
plan_entries() {
	awk -v sect="$2" -v m="$3" '/^[^ ]/ { on = index($0, sect) == 1 } on && $1 == m { print $3; exit }' "$1"
}

# sized_kib FILE SECTION: the KiB of the maps whose size is chosen (the
# histogram map in use, the start-time maps, comms and restamps) in one section.
sized_kib() {
	awk -v sect="$2" '/^[^ ]/ { on = index($0, sect) == 1; shared = /shared/ }
		on && ($1 == (shared ? "hists_shared" : "hists") || $1 == "rq_starts" || $1 == "bio_starts" || $1 == "comms" || $1 == "restamps") { kib += $5 }
		END { print kib }' "$1"
}

# plan_kib FILE SECTION: "name KiB" per map of one section of check --memory.
plan_kib() {
	awk -v sect="$2" '/^[^ ]/ { on = index($0, sect) == 1 } on && /^  [a-z_.]+ +[a-z_]+ +[0-9]+ / { print $1, $5 }' "$1"
}

# held_memlock PID: "name bytes" per BPF map process PID holds, as the kernel counts them.
held_memlock() {
	local id
	grep -rhs '^map_id:' "/proc/$1/fdinfo/" | awk '{ print $2 }' | sort -u | while read -r id; do
		bpftool map show id "$id" -j | python3 -c 'import json, sys; m = json.load(sys.stdin); print(m["name"], m["bytes_memlock"])'
	done
}

# compare PLANFILE SECTION PID: every map of the plan is within 1 KiB (the
# map's own header, which the plan leaves out) below the kernel's figure.
compare() {
	local plan=$1 sect=$2 pid=$3 name kib bytes n=0
	held_memlock "$pid" >"$WORK/held"
	while read -r name kib; do
		bytes=$(awk -v n="$name" '$1 == n { print $2 }' "$WORK/held")
		[ -n "$bytes" ] || fail "$sect: $name is in the plan but not among the maps iolat holds"
		python3 - "$name" "$kib" "$bytes" <<'EOF' || fail "$sect: $name"
import sys
name, kib, kernel = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
plan = kib * 1024
print("  %-16s plan %12.0f  kernel %12d  (%+.0f B)" % (name, plan, kernel, kernel - plan))
# The plan prints KiB to one decimal (+-52 B); the kernel adds the map's header.
sys.exit(0 if -60 <= kernel - plan <= 1024 else 1)
EOF
		n=$((n + 1))
	done < <(plan_kib "$plan" "$sect")
	[ "$n" -ge 9 ] || fail "$sect: only $n maps in the plan"
	[ "$(wc -l <"$WORK/held")" -eq "$n" ] || fail "$sect: iolat holds $(wc -l <"$WORK/held") maps, the plan has $n"
}

"$IOLAT" check --memory >"$WORK/plan" || fail "check --memory"
cat "$WORK/plan"

start_iolat "$WORK/hist" hist -D -O
compare "$WORK/plan" "iolat hist" "$IOLAT_PID"
stop_iolat INT
echo "ok: hist's maps take what check --memory says"

port=$(free_port)
start_serve "$WORK/serve.log" --web.listen-address="127.0.0.1:$port"
compare "$WORK/plan" "iolat serve" "$SERVE_PID"
curl -sf "http://127.0.0.1:$port/metrics" >"$WORK/serve.metrics" || fail "scrape"
stop_serve "serve"
echo "ok: serve's maps take what check --memory says"

# The sizes check chose from this host are the ones serve took, as its
# metrics, its start log and plain `check` say.
"$IOLAT" check --no-load >"$WORK/check" || fail "check --no-load"
sed -n '/^Map sizes/,/^$/p' "$WORK/check"
logged=$(grep 'level=info msg="started" ' "$WORK/serve.log") || fail "no sizes logged: $(cat "$WORK/serve.log")"
for m in hists_shared rq_starts bio_starts comms; do
	planned=$(plan_entries "$WORK/plan" "iolat serve" "$m")
	[ -n "$planned" ] || fail "$m is not in check --memory's serve plan"
	assert_eq "serve's $m capacity = check --memory's" "$planned" \
		"$(metric "$WORK/serve.metrics" iolat_bpf_map_capacity_entries "{map=\"$m\"}")"
	assert_eq "check's $m = check --memory's" "$planned" \
		"$(awk -v m="$m" '/^Map sizes/ { on = 1 } on && $1 == m { print $2; exit }' "$WORK/check")"
	grep -q " map_$m=$planned\b" <<<"$logged" || fail "map_$m=$planned not in '$logged'"
	echo "  $m: $planned entries (check, check --memory, serve's capacity and log)"
done
grep -q '^    why: .*requests the disks hold at once' "$WORK/plan" || fail "no reason for rq_starts"
assert_eq "serve's histogram keys on 500 workloads: twice (500 + 1) x 2 x 3, in 1024s" 6144 \
	"$(plan_entries "$WORK/plan" "iolat serve" hists_shared)"
echo "ok: serve's map sizes are what check chose for this host"

# The performance goal's host: 192 CPUs, 24 disks, 500 workloads.
"$IOLAT" check --memory --cpus 192 --disks 24 --workloads 500 >"$WORK/fleet" || fail "check --memory (fleet)"
cat "$WORK/fleet"
grep -q "of 192 CPUs, 24 disks and 500 workloads" "$WORK/fleet" || fail "the host is not the one described"
grep -q "needed: 3000 (500 workloads x 2 disks each x 3 operations)" "$WORK/fleet" || fail "serve's keys needed"
grep -q "DOES NOT FIT" "$WORK/fleet" && fail "a described host's keys do not fit"
serve_mib=$(awk '/^iolat serve/ { on = 1 } on && /total:/ { print $2; exit }' "$WORK/fleet")
python3 -c "import sys; sys.exit(0 if 0 < $serve_mib <= 64 else 1)" ||
	fail "serve on 192 CPUs takes $serve_mib MiB, more than 64"
echo "ok: serve on 192 CPUs, 24 disks, 500 workloads: $serve_mib MiB of kernel memory"
# Its sizes, from its description: 24 disks x 1024 requests + 192 CPUs x 128
# = 49152 -> 65536 (the cap) for the start-time maps; the histogram map from
# the 500 workloads.
for m in rq_starts bio_starts; do
	assert_eq "fleet $m" 65536 "$(plan_entries "$WORK/fleet" "iolat serve" "$m")"
done
assert_eq "fleet hists_shared" 6144 "$(plan_entries "$WORK/fleet" "iolat serve" hists_shared)"
grep -q "why: 24576 requests the disks hold at once .* + 192 CPUs x 128 (LRU free lists) = 49152" "$WORK/fleet" ||
	fail "the fleet's rq_starts reason"
# The restamps table: 8 slots a request, 8 x 24576 -> 262144 (the cap).
assert_eq "fleet restamps" 262144 "$(plan_entries "$WORK/fleet" "iolat serve" restamps)"
grep -q "why: 8 x 24576 requests the disks hold at once, as a power of two from 8192 to 262144" "$WORK/fleet" ||
	fail "the fleet's restamps reason"
# Twice the disks' queues: the same cap; a host of 8 CPUs and 4 disks: the floor.
"$IOLAT" check --memory --cpus 8 --disks 4 --queue-depth 256 >"$WORK/few" || fail "check --memory (few)"
assert_eq "rq_starts on 8 CPUs, 4 disks of 256" 4096 "$(plan_entries "$WORK/few" "iolat serve" rq_starts)"
assert_eq "restamps on 4 disks of 256: 8 x 1024" 8192 "$(plan_entries "$WORK/few" "iolat serve" restamps)"
"$IOLAT" check --memory --cpus 8 --disks 64 --queue-depth 256 >"$WORK/more" || fail "check --memory (more)"
assert_eq "rq_starts on 8 CPUs, 64 disks of 256" 32768 "$(plan_entries "$WORK/more" "iolat serve" rq_starts)"
assert_eq "restamps on 64 disks of 256: 8 x 16384" 131072 "$(plan_entries "$WORK/more" "iolat serve" restamps)"
echo "ok: the start-time maps and the restamps table follow the disks' queues and the CPUs"

# A small host: 4 CPUs, 2 disks, 512 MiB. The sized maps take at most 1/32
# of it (16 MiB), so serve's histogram map holds fewer keys than the 6144
# its 500 workloads would get.
"$IOLAT" check --memory --cpus 4 --disks 2 --mem-total 512M >"$WORK/small" || fail "check --memory (small)"
cat "$WORK/small"
for sect in "iolat hist" "iolat serve"; do
	kib=$(sized_kib "$WORK/small" "$sect")
	echo "  $sect on 512 MiB: sized maps $kib KiB"
	if [ "${kib%.*}" -gt 16384 ] || [ "${kib%.*}" -le 8192 ]; then
		fail "$sect on 512 MiB: $kib KiB, not within (8, 16] MiB"
	fi
done
grep -q "which bound them" "$WORK/small" || fail "the memory bound is not said"
keys=$(plan_entries "$WORK/small" "iolat serve" hists_shared)
if [ "$keys" -ge 6144 ] || [ "$keys" -le 2000 ]; then fail "small host: $keys histogram keys"; fi
echo "ok: on 512 MiB the maps take at most 16 MiB ($keys histogram keys for serve)"

# --bpf.map-size: the operator's size, said as such.
"$IOLAT" check --memory --bpf.map-size=rq_starts=5000,hists=100 >"$WORK/set" || fail "check --memory --bpf.map-size"
assert_eq "rq_starts set" 5000 "$(plan_entries "$WORK/set" "iolat serve" rq_starts)"
assert_eq "hists set" 100 "$(plan_entries "$WORK/set" "iolat serve" hists_shared)"
grep -q "why: set (--bpf.map-size or bpf_map_sizes); the host's plan: " "$WORK/set" || fail "a set size is not said"

# 20 000 workloads need more keys than the map holds: said plainly.
"$IOLAT" check --memory --cpus 192 --disks 24 --workloads 20000 >"$WORK/big" || fail "check --memory (big)"
grep -q "needed: 120000 .*DOES NOT FIT" "$WORK/big" || fail "no warning for keys beyond capacity"

expect_error 2 "cpus: '0' is not a count" check --memory --cpus 0
expect_error 2 "workloads: 'many' is not a count" check --memory --workloads many
expect_error 2 "describe a host for --memory" check --cpus 4
expect_error 2 "describe a host for --memory" check --mem-total 1G
expect_error 2 "mem-total: '1X' is not a memory size" check --memory --mem-total 1X
expect_error 2 "mem-total: '1K' is not a memory size" check --memory --mem-total 1K
expect_error 2 "queue-depth: '0' is not a count" check --memory --queue-depth 0
expect_error 2 "unknown map 'stats'" check --memory --bpf.map-size=stats=1
expect_error 2 "bad --bpf.map-size: rq_starts: entries must be a number from 1 to 16777216" serve --bpf.map-size=rq_starts=0
expect_error 2 "bad --bpf.map-size: 'rq_starts': want MAP=ENTRIES" serve --bpf.map-size=rq_starts
