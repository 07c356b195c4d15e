#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# deps.sh - installs the Debian packages iolat builds and tests with, if missing.
# Why each is needed is in README.md ("Dependencies").
set -eu
build=(make gcc clang llvm pkg-config libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev
	libmicrohttpd-dev libyaml-dev protobuf-c-compiler libprotobuf-c-dev libcap-dev
	libsystemd-dev nettle-dev libcrypt-dev libgnutls28-dev scdoc)
test=(libcmocka-dev libclang-rt-dev libfuse3-dev fuse3 python3 util-linux fdisk xz-utils curl openssl prometheus fio
	qemu-system-x86 busybox-static cpio mmdebstrap jsonnet prometheus-alertmanager man-db bash-completion
	debhelper lintian strace python3-yaml python3-prometheus-client libcap2-bin clang-format cppcheck shellcheck xfsprogs
	victoria-metrics)
missing=()
for p in "${build[@]}" "${test[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Commands, by the package that has them in Debian, installed only when no
# command of that name is there: another package's (a kubectl from the
# Kubernetes or Google Cloud repositories, Node.js from NodeSource) would
# conflict over the file. check_deploy.sh renders with kubectl and
# validates with node and npm.
for c in kubectl:kubernetes-client node:nodejs npm:npm; do
	command -v "${c%%:*}" >/dev/null || missing+=("${c#*:}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]}; run as root to install them" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# victoria-metrics' postinst starts its daemon (port 8428, /var/lib): the
# tests start their own on free ports; the package's stays stopped and off.
if [[ " ${missing[*]} " == *" victoria-metrics "* ]]; then
	if [ -d /run/systemd/system ]; then
		systemctl disable --now victoria-metrics.service >/dev/null 2>&1 || true
	else
		/etc/init.d/victoria-metrics stop >/dev/null 2>&1 || true
		update-rc.d victoria-metrics disable >/dev/null 2>&1 || true
	fi
fi
