#!/usr/bin/env bash
# Builds the fixed initramfs of the kernel test VM: busybox, the RDMA kernel
# modules in load order, the rdma-core/iproute2/perftest tools with the shared
# libraries they need, and the harness /init (scripts/vm/init). Test binaries
# are not in it: they come from the host over 9p at boot.
#
# The tools come from the machine's own root, or with SYSROOT from another
# (20-trixie.sh's Debian 13 root for the 6.12 guest): their libraries are
# resolved by that root's own loader, so the guest gets that release's
# programs and C library whole.
#
# The archive is left uncompressed: it is read from the host's page cache, and
# unpacking gzip in the guest costs several tenths of a second under TCG.
#
# Usage: [SYSROOT=<root>] build-initramfs.sh <kernel dir from kernel.sh> <init script> <out.cpio>
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
K=$(realpath "$1")
INIT=$(realpath "$2")
OUT=$(realpath -m "$3")
S=${SYSROOT:+$(realpath "$SYSROOT")}
. "$K/kernel.env"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"

# Debian's merged-/usr layout, so ldd's paths and the tools' paths hold as is.
mkdir -p usr/bin usr/sbin usr/lib/x86_64-linux-gnu usr/lib64 etc proc sys dev tmp run root mnt opt
ln -s usr/bin bin
ln -s usr/sbin sbin
ln -s usr/lib lib
ln -s usr/lib64 lib64
cp /usr/bin/busybox usr/bin/busybox
for a in $(/usr/bin/busybox --list); do [ -e "usr/bin/$a" ] || ln -s busybox "usr/bin/$a"; done

# Kernel modules in dependency order (nothing autoloads modules in the guest).
# crc32_generic is listed first because rdma_rxe allocates the "crc32" shash
# at link creation and fails with ENOENT without it.
MODS="crc32_generic crc32-pclmul crc32c_generic crc32c-intel libcrc32c
      ib_core ib_uverbs ib_umad rdma_rxe rdma_ucm dummy veth
      virtio_pci 9pnet_virtio 9p"
md=lib/modules/$KV
mkdir -p "$md"
for m in $MODS; do
	modprobe -d "$K/kroot" -S "$KV" --show-depends "$m" | awk '$1=="insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r f; do
	b=$(basename "$f")
	case "$b" in
	*.xz) b=${b%.xz}; xz -dc "$f" >"$md/$b" ;;
	*.zst) b=${b%.zst}; zstd -dcq "$f" >"$md/$b" ;;
	*) cp "$f" "$md/$b" ;;
	esac
	# Rewriting the ELF drops the appended signature: checking ~30 RSA
	# signatures costs about a second per boot under TCG, and the kernel
	# does not enforce them (it only taints, as it does for siw.ko).
	strip --strip-debug "$md/$b"
	echo "$b" >>"$md/load-order"
done
# siw.ko (built out of tree by siw.sh) goes last: it needs ib_core and libcrc32c.
if [ -f "$K/siw.ko" ]; then
	strip --strip-debug -o "$md/siw.ko" "$K/siw.ko"
	echo siw.ko >>"$md/load-order"
fi

# Tools and every shared library the loader names for them: the host's ldd,
# or the root's loader with the root's libraries only. The awk takes the
# resolved path of "name => path" lines and the bare loader line; mawk has
# no \s, so plain fields only. Paths are the root's, without the prefix.
deps() {
	if [ -z "$S" ]; then
		ldd "$1"
	else
		"$S/usr/lib64/ld-linux-x86-64.so.2" --inhibit-cache --library-path "$S/usr/lib/x86_64-linux-gnu" --list "$S$1"
	fi | awk '$2=="=>" && $3 ~ /^\// {print $3} $1 ~ /^\/lib64\// {print $1}' | while read -r l; do
		echo "${l#"$S"}"
	done
}
copy() {
	mkdir -p "$W/$(dirname "$1")"
	rm -f "$W/$1"
	cp -L "$S$1" "$W/$1"
}
BINS="/usr/bin/rdma /usr/bin/ip /usr/bin/ibv_devices /usr/bin/ibv_devinfo /usr/bin/ibv_rc_pingpong
      /usr/bin/ibv_ud_pingpong /usr/bin/rping /usr/bin/ib_write_bw /usr/bin/ib_send_bw /usr/bin/ib_read_lat"
LIBDIR=/usr/lib/x86_64-linux-gnu
# libibverbs dlopen()s its providers; glibc dlopen()s libgcc_s for
# pthread_exit (rping). libibumad is for cgo tests of umad. A Go binary
# built without cgo that loads libibverbs at run time (package verbs, by
# purego) names libdl.so.2 and libpthread.so.0, glibc's compatibility
# stubs, which every glibc system has but no tool here needs.
LIBS="$LIBDIR/libibverbs/librxe-rdmav34.so $LIBDIR/libibverbs/libsiw-rdmav34.so $LIBDIR/libgcc_s.so.1
      $LIBDIR/libdl.so.2 $LIBDIR/libpthread.so.0"
for f in "$LIBDIR"/libibumad.so.3 "$LIBDIR"/librdmacm.so.1 "$LIBDIR"/libibverbs.so.1; do
	[ -e "$S$f" ] && LIBS="$LIBS $f"
done
for f in $BINS $LIBS; do
	[ -e "$S$f" ] || { echo "build-initramfs.sh: missing $S$f" >&2; exit 1; }
	copy "$f"
	deps "$f" | while read -r l; do copy "$l"; done
done
mkdir -p etc/libibverbs.d
cp "$S/etc/libibverbs.d/rxe.driver" "$S/etc/libibverbs.d/siw.driver" etc/libibverbs.d/
[ -d "$S/etc/iproute2" ] && cp -r "$S/etc/iproute2" etc/
[ -d "$S/usr/share/iproute2" ] && mkdir -p usr/share && cp -r "$S/usr/share/iproute2" usr/share/
echo 'root:x:0:0:root:/root:/bin/sh' >etc/passwd
echo 'root:x:0:' >etc/group
printf '127.0.0.1 localhost\n' >etc/hosts
echo vmtest >etc/hostname
install -m 0755 "$INIT" init

find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "build-initramfs.sh: $(du -h "$OUT" | cut -f1) $(wc -l <"$md/load-order") modules"
