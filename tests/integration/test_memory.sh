# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# check --memory: the kernel memory it computes for each of the collector's
# maps, on this host, is what the kernel itself accounts for the maps of a
# running hist and serve (bpftool's bytes_memlock); for a described fleet
# host it stays within the performance goal (64 MiB); bad input is refused.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

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
stop_serve "serve"
echo "ok: serve's maps take what check --memory says"

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

# 20 000 workloads need more keys than the map holds: said plainly.
"$IOLAT" check --memory --cpus 192 --disks 24 --workloads 20000 >"$WORK/big" || fail "check --memory (big)"
grep -q "needed: 120000 .*DOES NOT FIT" "$WORK/big" || fail "no warning for keys beyond capacity"

expect_error 2 "cpus: '0' is not a count" check --memory --cpus 0
expect_error 2 "workloads: 'many' is not a count" check --memory --workloads many
expect_error 2 "describe a host for --memory" check --cpus 4
