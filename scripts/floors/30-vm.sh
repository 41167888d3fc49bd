#!/usr/bin/env bash
# Floor 4, the real kernel: prepares the throw-away qemu VM that
# internal/vmtest boots (Debian's 6.1 kernel with rdma_rxe, siw built out of
# tree, a fixed initramfs with the RDMA tools and the harness /init).
# See reference/kernel-rdma-vm-recipe.md in the shared notes and
# internal/vmtest/doc.go for the guest contract.
#
# Idempotent. Everything lands in .cache/vm/:
#   kernel/        the extracted kernel package, vmlinux, kernel.env, siw.ko
#   initramfs.cpio the guest's root filesystem
#   ready          written last; internal/vmtest only boots when it exists
# Environment: RDMAKIT_VM_SIW=0 skips siw. To retry a failed siw build,
# remove .cache/vm/kernel/siw.failed; to start over, remove .cache/vm.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
ROOT=$PWD
C=.cache/vm
mkdir -p "$C"
exec 9>"$C/.prepare.lock"
flock -w 600 9 || { echo "30-vm.sh: another prepare holds $C/.prepare.lock" >&2; exit 1; }
t0=$(date +%s)

# Host packages: qemu and busybox for the VM; kmod for module dependency
# order; the rdma-core, iproute2 and perftest tools copied into the guest
# (ibverbs-providers brings libibverbs1, which package verbs loads at run
# time: no RDMA development package is needed); gcc and make for the siw
# build and the vmtest floor's own cgo test.
PKGS="qemu-system-x86 busybox-static kmod cpio xz-utils zstd iproute2 ibverbs-providers ibverbs-utils
      rdmacm-utils perftest gcc-12 make libelf1"
# shellcheck disable=SC2086
apt_install 30-vm.sh $PKGS

K=$C/kernel
if [ ! -f "$K/kernel.env" ] || [ ! -f "$K/vmlinux" ]; then
	rm -f "$C/ready"
	# A fresh machine may have no package lists yet.
	apt-cache show linux-image-amd64 >/dev/null 2>&1 || timeout 300 apt-get update -q >/dev/null
	timeout 600 bash scripts/vm/kernel.sh "$K"
fi

if [ "${RDMAKIT_VM_SIW:-1}" != 0 ] && [ ! -f "$K/siw.ko" ] && [ ! -f "$K/siw.failed" ]; then
	if ! timeout 300 bash scripts/vm/siw.sh "$K" >"$K/siw.log" 2>&1; then
		mv "$K/siw.log" "$K/siw.failed"
		rm -rf "$K/siwbuild"
		echo "30-vm.sh: siw build failed, the VM runs without siw0; see $K/siw.failed" >&2
	fi
fi

# The initramfs is rebuilt whenever its inputs change: the builder, /init,
# the kernel, siw.ko and the versions of the host tools copied into it.
# shellcheck disable=SC2086
key=$({
	cat scripts/vm/build-initramfs.sh scripts/vm/init "$K/kernel.env"
	[ -f "$K/siw.ko" ] && sha256sum "$K/siw.ko"
	dpkg-query -W busybox-static iproute2 ibverbs-providers ibverbs-utils rdmacm-utils perftest libc6 libibumad3 2>/dev/null
	true
} | sha256sum | cut -d' ' -f1)
if [ ! -f "$C/initramfs.cpio" ] || [ "$(cat "$C/initramfs.key" 2>/dev/null)" != "$key" ]; then
	rm -f "$C/ready"
	bash scripts/vm/build-initramfs.sh "$K" scripts/vm/init "$C/initramfs.cpio"
	echo "$key" >"$C/initramfs.key"
fi

if [ ! -f "$C/ready" ]; then
	. "$K/kernel.env"
	siw=no
	[ -f "$K/siw.ko" ] && siw=yes
	printf 'kernel=%s\nsiw=%s\n' "$KV" "$siw" >"$C/ready.tmp"
	mv "$C/ready.tmp" "$C/ready"
	echo "30-vm.sh: VM ready (kernel $KV, siw $siw) in $(($(date +%s) - t0)) s under $ROOT/$C"
fi
