#!/usr/bin/env bash
# Builds siw.ko (soft-iWARP) out of tree for the kernel kernel.sh fetched:
# Debian ships CONFIG_RDMA_SIW unset. The source comes from linux-source-<x.y>
# and is compiled against the matching linux-headers with the compiler that
# built the kernel (its CONFIG_CC_VERSION_TEXT), so the module's vermagic and
# symbol versions match; it is unsigned, which Debian's kernels accept
# because MODULE_SIG_FORCE is off (it only taints). The packages come from
# the apt APT_CONFIG chooses.
#
# With SIW_ROOT set, the build runs in that root (chroot), with its compiler
# and its linux-kbuild programs: trixie's kernel is built with gcc-14, and
# its kbuild programs need trixie's C library (20-trixie.sh's root has both).
#
# Usage: [SIW_ROOT=<root>] siw.sh <dir>   (needs <dir>/kernel.env)   -> <dir>/siw.ko
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
D=$(realpath -m "$1")
ROOT=${SIW_ROOT:+$(realpath "$SIW_ROOT")}
cd "$D"
. ./kernel.env
abi=${KV%-amd64}
srcver=$(echo "$KV" | cut -d. -f1-2)
cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "kroot/boot/config-$KV")
[ -n "$cc" ] || { echo "siw.sh: no CONFIG_CC_VERSION_TEXT in kroot/boot/config-$KV" >&2; exit 1; }
# linux-headers-<abi> names its linux-kbuild package: linux-kbuild-6.1 for
# Debian 12, linux-kbuild-6.12.NN+debNN for Debian 13.
kbuild=$(apt-cache depends "linux-headers-$KV=$KVER" 2>/dev/null |
	awk '$1=="Depends:" && $2 ~ /^linux-kbuild-/ {print $2; exit}' || true)
[ -n "$kbuild" ] || { echo "siw.sh: linux-headers-$KV=$KVER names no linux-kbuild package" >&2; exit 1; }

if [ -n "$ROOT" ]; then
	B=$(mktemp -d "$ROOT/tmp/siwbuild.XXXXXX")
	in=${B#"$ROOT"} # the build directory as the chroot sees it
	command -v "$ROOT/usr/bin/$cc" >/dev/null ||
		{ echo "siw.sh: the root $ROOT has no $cc" >&2; exit 1; }
	build() { as_root chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C "$@"; }
else
	B=$D/siwbuild
	rm -rf "$B"
	in=$B
	build() { "$@"; }
fi
trap 'rm -rf "$B"' EXIT
rm -f siw.ko
mkdir -p "$B/debs" "$B/hroot" "$B/src"
# Pinned to the image's version so headers, kbuild and source all match it.
(cd "$B/debs" && apt-get download -q "linux-headers-$KV=$KVER" "linux-headers-$abi-common=$KVER" \
	"$kbuild=$KVER" "linux-source-$srcver=$KVER" 2>&1 | grep -v 'unsandboxed' || true)
for p in "$B"/debs/linux-headers-*.deb "$B"/debs/linux-kbuild-*.deb; do dpkg-deb -x "$p" "$B/hroot"; done
h=hroot/usr/src/linux-headers-$KV
# The arch headers' Makefile includes the -common tree by absolute path.
sed -i "s|^include /usr/src/|include $in/hroot/usr/src/|" "$B/$h/Makefile"
dpkg-deb --fsys-tarfile "$B"/debs/linux-source-"$srcver"_*.deb |
	tar -xO "./usr/src/linux-source-$srcver.tar.xz" |
	tar -xJ --strip-components=5 -C "$B/src" --wildcards "linux-source-$srcver/drivers/infiniband/sw/siw/*"
build make -s -C "$in/$h" M="$in/src" CC="$cc" CONFIG_RDMA_SIW=m -j"$(nproc)" modules 2>&1 | grep -v 'Skipping BTF' || true
[ -f "$B/src/siw.ko" ] || { echo "siw.sh: build produced no siw.ko" >&2; exit 1; }
vm=$(modinfo -F vermagic "$B/src/siw.ko")
case "$vm" in "$KV "*) ;; *) echo "siw.sh: vermagic '$vm' does not match $KV" >&2; exit 1 ;; esac
cp "$B/src/siw.ko" siw.ko
echo "siw.sh: built siw.ko ($vm) with $cc"
