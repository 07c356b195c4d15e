# iolat top: two cgroups run fio on the same loop device; one is held to
# 400 read IOPS by blk-throttle. `iolat top --once --json` names both
# workloads and reports each one's IOPS within 10 % of fio's own figure,
# from I/O attributed by the bio's cgroup (not the task at completion).
source tests/integration/lib.sh
command -v fio >/dev/null || skip "fio is not installed"

make_loop 256
dev=$LOOP
make_cgroup topa
cga=$CG
make_cgroup topb
cgb=$CG
throttle_reads "$cgb" "$dev" 400

run_fio() { # CGROUP NAME: 6 s of 4 KiB random reads, QD4
	in_cgroup "$1" fio --name="$2" --filename="$dev" --rw=randread --bs=4k --ioengine=io_uring \
		--iodepth=4 --direct=1 --time_based --runtime=6 --output-format=json \
		--output="$WORK/$2.json"
}
run_fio "$cga" a &
fa=$!
run_fio "$cgb" b &
fb=$!
sleep 2 # past fio's start-up, into its steady state
"$IOLAT" top --once --json -d "${dev#/dev/}" 3 >"$WORK/top.json" 2>"$WORK/top.err" || fail "top: $(cat "$WORK/top.err")"
wait $fa && wait $fb || fail "fio failed"

python3 - "$WORK" "${cga#$(cgroup_root)}" "${cgb#$(cgroup_root)}" <<'PY' || fail "top does not match fio"
import json, sys
work, a_path, b_path = sys.argv[1:]
top = json.loads(open(work + "/top.json").read().splitlines()[-1])
rows = {w["name"]: w for w in top["workloads"]}
for name, job in ((a_path, "a"), (b_path, "b")):
    assert name in rows, (name, list(rows))
    fio = json.load(open("%s/%s.json" % (work, job)))["jobs"][0]["read"]["iops"]
    got = rows[name]["r_iops"]
    print("%s: top %.0f r/s, fio %.0f r/s" % (name, got, fio))
    assert abs(got - fio) <= 0.10 * fio, (name, got, fio)
    assert rows[name]["kind"] == "cgroup" and rows[name]["w_iops"] == 0
    assert abs(rows[name]["avg_kib"] - 4) < 0.01, rows[name]["avg_kib"]
assert abs(rows[b_path]["r_iops"] - 400) <= 40, rows[b_path]["r_iops"]
PY
echo "ok: top per cgroup matches fio (and the throttled one sits at 400 r/s)"

# CSV and bad input.
"$IOLAT" top --once --csv 0.2 >"$WORK/top.csv" 2>/dev/null || fail "top --csv"
head -1 "$WORK/top.csv" | grep -q '^time,kind,name,r_iops,w_iops' || fail "CSV header: $(head -1 "$WORK/top.csv")"
rc=0
"$IOLAT" top --json --csv 2>"$WORK/err" || rc=$?
assert_eq "conflicting flags exit" 2 "$rc"
grep -q "conflicting options: --json with --csv" "$WORK/err" || fail "$(cat "$WORK/err")"
rc=0
"$IOLAT" top -s bogus 2>"$WORK/err" || rc=$?
assert_eq "bad sort exit" 2 "$rc"
echo "ok: CSV, bad input"
