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

# Cgroups that come and go leave top's kernel map: 200 short-lived cgroups,
# one read each, while top runs; once they are gone, their keys are too.
"$IOLAT" top --json -d "${dev#/dev/}" 0.5 30 >"$WORK/churn.json" 2>"$WORK/churn.err" &
toppid=$!
on_exit "kill $toppid"
sleep 1
in_cgroup "$cga" "$DIO" read "$dev" 1 4096 || fail "dio" # alive: its key stays
for i in $(seq 1 200); do
	mkdir "$cga/c$i"
	in_cgroup "$cga/c$i" "$DIO" read "$dev" 1 4096 || fail "dio"
	rmdir "$cga/c$i"
done
sleep 2
# top's histogram map: among the maps its descriptors hold, hists_shared.
map=
for id in $(grep -h '^map_id:' /proc/"$toppid"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u); do
	bpftool map show id "$id" | grep -q "name hists_shared" && map=$id
done
[ -n "$map" ] || fail "cannot find top's histogram map"
keys=$(bpftool map dump id "$map" -j | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
kill "$toppid"
wait "$toppid" 2>/dev/null
echo "top's kernel map after 200 short-lived cgroups: $keys keys"
[ "$keys" -ge 1 ] || fail "top dropped the key of a cgroup that is still there"
[ "$keys" -le 20 ] || fail "top kept $keys keys of gone cgroups"
rows=$(grep -o '"name":"[^"]*/c[0-9]*"' "$WORK/churn.json" | sort -u | wc -l)
echo "ok: gone cgroups leave top's kernel map ($rows of them shown while they did I/O)"
