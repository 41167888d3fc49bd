#!/usr/bin/env bash
# Floor 4, the real kernel: prepares the throw-away qemu VMs that
# internal/vmtest boots, one per kernel series:
#   6.1   Debian 12's kernel, with the machine's own iproute2 6.1 and
#         rdma-core 44 tools, in .cache/vm/
#   6.12  Debian 13's kernel, with iproute2 6.15 and rdma-core 56 from the
#         trixie root of 20-trixie.sh, in .cache/vm-6.12/
# Each has rdma_rxe, siw built out of tree (Debian leaves it unset), a fixed
# initramfs with the RDMA tools and the harness /init.
# See reference/kernel-rdma-vm-recipe.md in the shared notes and
# internal/vmtest/doc.go for the guest contract.
#
# Idempotent. Everything of a series lands in its directory:
#   kernel/        the extracted kernel package, vmlinux, kernel.env, siw.ko
#   initramfs.cpio the guest's root filesystem
#   ready          written last; internal/vmtest only boots when it exists
# Environment: RDMAKIT_VM_SIW=0 skips siw; RDMAKIT_VM_SERIES="6.1" prepares
# only the guests named. To retry a failed siw build, remove
# <dir>/kernel/siw.failed; to start over, remove the directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
ROOT=$PWD

# Host packages: qemu and busybox for the VMs; kmod for module dependency
# order; the rdma-core, iproute2 and perftest tools copied into the 6.1
# guest (ibverbs-providers brings libibverbs1, which package verbs loads at
# run time: no RDMA development package is needed); gcc and make for the
# 6.1 siw build and the vmtest floor's own cgo test.
PKGS="qemu-system-x86 busybox-static kmod cpio xz-utils zstd iproute2 ibverbs-providers ibverbs-utils
      rdmacm-utils perftest gcc-12 make libelf1"
# shellcheck disable=SC2086
apt_install 30-vm.sh $PKGS

TRIXIE=.cache/trixie

# prepare SERIES DIR: the guest of one kernel series in DIR.
prepare() {
	local series=$1 C=$2 t0 K key sysroot='' siwroot='' aptconf=''
	mkdir -p "$C"
	exec 9>"$C/.prepare.lock"
	flock -w 600 9 || { echo "30-vm.sh: another prepare holds $C/.prepare.lock" >&2; exit 1; }
	t0=$(date +%s)
	if [ "$series" != 6.1 ]; then
		# Debian 13's kernel, its packages through 20-trixie.sh's private
		# apt, its tools from the trixie root, siw built there.
		[ -f "$TRIXIE/ready" ] ||
			{ echo "30-vm.sh: the $series guest needs the trixie root: run scripts/floors/20-trixie.sh" >&2; exit 1; }
		aptconf=$ROOT/$TRIXIE/apt/apt.conf
		sysroot=$ROOT/$TRIXIE/root
		siwroot=$sysroot
	fi

	# withapt runs a command with the series' apt (an empty APT_CONFIG is
	# not the same as none to every apt tool).
	withapt() {
		if [ -n "$aptconf" ]; then APT_CONFIG=$aptconf "$@"; else "$@"; fi
	}

	K=$C/kernel
	if [ ! -f "$K/kernel.env" ] || [ ! -f "$K/vmlinux" ]; then
		rm -f "$C/ready"
		if [ -z "$aptconf" ]; then
			# A fresh machine may have no package lists yet.
			apt-cache show linux-image-amd64 >/dev/null 2>&1 || timeout 300 apt-get update -q >/dev/null
		fi
		withapt timeout 600 bash scripts/vm/kernel.sh "$K" "$series"
	fi

	if [ "${RDMAKIT_VM_SIW:-1}" != 0 ] && [ ! -f "$K/siw.ko" ] && [ ! -f "$K/siw.failed" ]; then
		if ! SIW_ROOT=$siwroot withapt timeout 600 bash scripts/vm/siw.sh "$K" >"$K/siw.log" 2>&1; then
			mv "$K/siw.log" "$K/siw.failed"
			echo "30-vm.sh: siw build for $series failed, the VM runs without siw0; see $K/siw.failed" >&2
		fi
	fi

	# The initramfs is rebuilt whenever its inputs change: the builder,
	# /init, the kernel, siw.ko and the versions of the tools copied into it.
	# shellcheck disable=SC2086
	key=$({
		cat scripts/vm/build-initramfs.sh scripts/vm/init "$K/kernel.env"
		[ -f "$K/siw.ko" ] && sha256sum "$K/siw.ko"
		if [ -n "$sysroot" ]; then
			cat "$TRIXIE/ready"
		else
			dpkg-query -W busybox-static iproute2 ibverbs-providers ibverbs-utils rdmacm-utils perftest libc6 libibumad3 2>/dev/null
		fi
		dpkg-query -W busybox-static 2>/dev/null
		true
	} | sha256sum | cut -d' ' -f1)
	if [ ! -f "$C/initramfs.cpio" ] || [ "$(cat "$C/initramfs.key" 2>/dev/null)" != "$key" ]; then
		rm -f "$C/ready"
		SYSROOT=$sysroot bash scripts/vm/build-initramfs.sh "$K" scripts/vm/init "$C/initramfs.cpio"
		echo "$key" >"$C/initramfs.key"
	fi

	if [ ! -f "$C/ready" ]; then
		local KV siw=no
		KV=$(. "$K/kernel.env" && echo "$KV")
		[ -f "$K/siw.ko" ] && siw=yes
		printf 'series=%s\nkernel=%s\nsiw=%s\n' "$series" "$KV" "$siw" >"$C/ready.tmp"
		mv "$C/ready.tmp" "$C/ready"
		echo "30-vm.sh: VM $series ready (kernel $KV, siw $siw) in $(($(date +%s) - t0)) s under $ROOT/$C"
	else
		echo "30-vm.sh: VM $series ready ($(sed -n 's/^kernel=//p' "$C/ready"))"
	fi
	exec 9>&-
}

for s in ${RDMAKIT_VM_SERIES:-6.1 6.12}; do
	case "$s" in
	6.1) prepare 6.1 .cache/vm ;;
	6.12) prepare 6.12 .cache/vm-6.12 ;;
	*) echo "30-vm.sh: unknown kernel series '$s' (6.1 or 6.12)" >&2; exit 1 ;;
	esac
done
