#!/usr/bin/env bash
# Builds siw.ko (soft-iWARP) out of tree for the kernel kernel.sh fetched:
# Debian ships CONFIG_RDMA_SIW unset. The source comes from linux-source-<x.y>
# and is compiled against the matching linux-headers with the same gcc, so the
# module's vermagic and symbol versions match; it is unsigned, which the Debian
# kernel accepts because MODULE_SIG_FORCE is off (it only taints).
#
# Usage: siw.sh <dir>   (needs <dir>/kernel.env)   -> <dir>/siw.ko
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
D=$(realpath -m "$1")
cd "$D"
. ./kernel.env
abi=${KV%-amd64}
srcver=$(echo "$KV" | cut -d. -f1-2)

rm -rf siwbuild siw.ko
mkdir -p siwbuild/debs siwbuild/hroot siwbuild/src
cd siwbuild
# Pinned to the image's version so headers, kbuild and source all match it.
(cd debs && apt-get download -q "linux-headers-$KV=$KVER" "linux-headers-$abi-common=$KVER" \
	"linux-kbuild-$srcver=$KVER" "linux-source-$srcver=$KVER" 2>&1 | grep -v 'unsandboxed' || true)
for p in debs/linux-headers-*.deb debs/linux-kbuild-*.deb; do dpkg-deb -x "$p" hroot; done
h=$PWD/hroot/usr/src/linux-headers-$KV
# The arch headers' Makefile includes the -common tree by absolute path.
sed -i "s|^include /usr/src/|include $PWD/hroot/usr/src/|" "$h/Makefile"
dpkg-deb --fsys-tarfile debs/linux-source-"$srcver"_*.deb |
	tar -xO "./usr/src/linux-source-$srcver.tar.xz" |
	tar -xJ --strip-components=5 -C src --wildcards "linux-source-$srcver/drivers/infiniband/sw/siw/*"
make -s -C "$h" M="$PWD/src" CONFIG_RDMA_SIW=m -j"$(nproc)" modules 2>&1 | grep -v 'Skipping BTF' || true
[ -f src/siw.ko ] || { echo "siw.sh: build produced no siw.ko" >&2; exit 1; }
vm=$(modinfo -F vermagic src/siw.ko)
case "$vm" in "$KV "*) ;; *) echo "siw.sh: vermagic '$vm' does not match $KV" >&2; exit 1 ;; esac
cp src/siw.ko ../siw.ko
cd ..
rm -rf siwbuild
echo "siw.sh: built siw.ko ($vm)"
