# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Kubernetes names on workload series: pods' cgroups as containerd makes
# them under the systemd driver (kubepods-burstable-podUID.slice/
# cri-containerd-ID.scope) and as CRI-O makes them under cgroupfs
# (kubepods/burstable/podUID/crio-ID) do real direct reads; a fake node's
# kubelet pod log directories and CRI log links name them (serve's
# --kubernetes.* flags). The scraped series carry the exact namespace, pod
# and container, and count the exact reads; a pod gone from the directories
# loses its name and a pod that appears in them gains one, at the next
# maintenance pass.
source tests/integration/lib.sh
source tests/integration/lib_serve.sh

make_loop 64
dev=$LOOP
disk=${dev#/dev/}
workload_base kube
base=$BASE

uid_web=1a2b3c4d-0000-4000-8000-0000000$$
uid_db=5e6f7a8b-1111-4111-8111-0000000$$
uid_new=9c9c9c9c-2222-4222-8222-0000000$$
id() { printf '%064x' "$1"; } # a 64-hex container id
id_web=$(id $((0x1000 + $$))) id_db=$(id $((0x2000 + $$))) id_new=$(id $((0x3000 + $$)))
# containerd, systemd driver: the slice spells the UID with '_'.
cg_web=$base/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid_web//-/_}.slice/cri-containerd-$id_web.scope
# CRI-O, cgroupfs driver.
cg_db=$base/kubepods/burstable/pod$uid_db/crio-$id_db
cg_new=$base/kubepods/besteffort/pod$uid_new/crio-$id_new
mkdir -p "$cg_web" "$cg_db" "$cg_new" || fail "cannot make the pods' cgroups"

# The node's directories: /var/log/pods/NAMESPACE_POD_UID/CONTAINER/N.log
# and /var/log/containers/POD_NAMESPACE_CONTAINER-ID.log -> that file.
pods=$WORK/var/log/pods ctrs=$WORK/var/log/containers
add_pod() { # NAMESPACE POD UID CONTAINER ID
	local d=$pods/$1_$2_$3/$4
	mkdir -p "$d" "$ctrs" && : >"$d/0.log" && ln -s "$d/0.log" "$ctrs/$2_$1_$4-$5.log"
}
add_pod default web-0 "$uid_web" nginx "$id_web"
add_pod team-b db-0 "$uid_db" postgres "$id_db"

port=$(free_port)
url=http://127.0.0.1:$port/metrics
IOLAT_TEST_DISK=$disk start_serve "$WORK/serve.log" "${WL_FULL[@]}" --web.listen-address="127.0.0.1:$port" \
	--maintenance.interval=100ms --kubernetes.pod-logs-dir="$pods" \
	--kubernetes.container-logs-dir="$ctrs"

scrape() { after_pass "$url"; curl -sf "$url" >"$WORK/m" || fail "scrape failed"; }
# reads LABELS: the read completions of our disk under exactly these labels.
reads() { metric "$WORK/m" iolat_workload_completions_total "{device=\"$disk\",op=\"read\",$1}"; }
# series_of CGROUP_TEXT: every workload series of our disk whose labels hold it.
series_of() { grep "^iolat_workload_completions_total{device=\"$disk\"" "$WORK/m" | grep -F "$1" || true; }

in_cgroup "$cg_web" "$DIO" read "$dev" 7 4096 || fail "dio web"
in_cgroup "$cg_db" "$DIO" read "$dev" 5 4096 || fail "dio db"
in_cgroup "$cg_new" "$DIO" read "$dev" 3 4096 || fail "dio new"
sleep 1.1 # a cgroup younger than the last walk of the hierarchy waits one
scrape
scrape
web='kind="container",workload="default/web-0/nginx",namespace="default",pod="web-0",container="nginx"'
db='kind="container",workload="team-b/db-0/postgres",namespace="team-b",pod="db-0",container="postgres"'
assert_counted "web-0's nginx reads" 7 "$(reads "$web")"
assert_counted "db-0's postgres reads" 5 "$(reads "$db")"
# Not in the directories: its UID, no Kubernetes labels at all.
assert_counted "an unnamed pod's reads (by UID)" 3 "$(reads "kind=\"pod\",workload=\"$uid_new\"")"
! series_of "$uid_new" | grep -qF namespace= || fail "an unnamed pod has a namespace: $(series_of "$uid_new")"
# Workloads of other kinds have none either (empty labels are left out).
grep -E '^iolat_workload_completions_total\{.*kind="(service|scope|cgroup)".*(namespace|pod|container)=' "$WORK/m" &&
	fail "a workload that is no pod has Kubernetes labels"
echo "ok: containerd (systemd) and CRI-O (cgroupfs) containers named: 7 and 5 reads"

# A pod leaves the node's directories; another comes into them.
rm -r "${pods:?}/default_web-0_$uid_web" "$ctrs/web-0_default_nginx-$id_web.log"
add_pod batch job-x "$uid_new" worker "$id_new"
scrape
assert_eq "web-0 after its pod left the directories" "" "$(series_of 'pod="web-0"')"
assert_counted "web-0's reads under its UID" 7 "$(reads "kind=\"pod\",workload=\"$uid_web\"")"
assert_counted "the new pod's reads under its names" 3 \
	"$(reads 'kind="container",workload="batch/job-x/worker",namespace="batch",pod="job-x",container="worker"')"
assert_eq "the new pod's series under its UID" "" "$(series_of "$uid_new")"
assert_counted "db-0's postgres reads, unchanged" 5 "$(reads "$db")"
# New I/O of a renamed cgroup counts under its new name.
in_cgroup "$cg_new" "$DIO" read "$dev" 4 4096 || fail "dio new"
scrape
assert_counted "the new pod's reads, later ones too" 7 \
	"$(reads 'kind="container",workload="batch/job-x/worker",namespace="batch",pod="job-x",container="worker"')"
echo "ok: a pod gone from the directories lost its name, a new one gained its own"

# The kube-state-metrics join works on these labels: one series per pod.
pods_seen=$(grep "^iolat_workload_completions_total{device=\"$disk\"" "$WORK/m" |
	sed -nE 's/.*namespace="([^"]*)",pod="([^"]*)".*/\1\/\2/p' | sort -u | tr '\n' ' ')
assert_eq "namespace/pod pairs" "batch/job-x team-b/db-0 " "$pods_seen"
stop_serve "serve with Kubernetes names"
echo "ok: test_kube_names"
