# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# lib_workloads.sh - named workloads for the benches (sourced): cgroups in
# the blkio hierarchy (cgroup v1 here, the unified root on v2-only hosts)
# named as systemd services, so that iolat names each a workload of its own.
# bench/workloads.sh and bench/fleet.sh make their workloads through it.

# wl_cgroot: the hierarchy that holds the blkio controller.
wl_cgroot() {
	if mountpoint -q /sys/fs/cgroup/blkio; then echo /sys/fs/cgroup/blkio; else echo /sys/fs/cgroup; fi
}

# wl_run BASE I CMD...: CMD run inside workload I's cgroup (BASE/wI.service,
# made if missing), waited for.
wl_run() {
	local cg=$1/w$2.service
	shift 2
	[ -d "$cg" ] || mkdir "$cg"
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# wl_remove BASE: BASE and every workload cgroup under it (their tasks must
# have ended).
wl_remove() {
	[ -d "$1" ] && find "$1" -depth -type d -exec rmdir {} + 2>/dev/null
	true
}
