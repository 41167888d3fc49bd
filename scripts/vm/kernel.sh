#!/usr/bin/env bash
# Fetches a Debian amd64 kernel image package of one series (never installed
# on the host), extracts it into <dir>/kroot, indexes its modules with
# depmod, and unpacks the bzImage payload into a raw ELF vmlinux that qemu
# boots through the PVH entry point (this skips ~3 s of in-guest
# decompression per boot under TCG). The package comes from the apt that
# APT_CONFIG chooses: the machine's own for bookworm's 6.1, 20-trixie.sh's
# private one for trixie's 6.12.
#
# Usage: kernel.sh <dir> [series]   (series: 6.1, the default, or 6.12)
#        -> <dir>/kroot, <dir>/vmlinux, <dir>/kernel.env
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
D=$(realpath -m "$1")
series=${2:-6.1}
case "$series" in [0-9]*.[0-9]*) ;; *) echo "kernel.sh: series '$series' is not N.M" >&2; exit 1 ;; esac
mkdir -p "$D"
cd "$D"

# The kernel linux-image-amd64 points at, when it is of the series; otherwise
# the newest linux-image-<series>.*-amd64 the archive offers. Resolved once
# and cached: the security archive keeps only the newest ABI. Debian 12 names
# them linux-image-6.1.0-NN-amd64, Debian 13 linux-image-6.12.NN+debNN-amd64.
# apt-cache and grep exit non-zero when they find nothing: an answer here,
# checked below, so their status does not end the script.
re="^linux-image-${series//./\\.}\\.[0-9]+(-[0-9]+|\\+deb[0-9]+)-amd64(-unsigned)?\$"
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	RE=$re awk '$1=="Depends:" && $2 ~ ENVIRON["RE"] {print $2; exit}' || true)
if [ -z "$pkg" ]; then
	pkg=$( (apt-cache pkgnames "linux-image-$series." || true) |
		(grep -E "$re" || true) | sort -V | tail -n 1)
fi
[ -n "$pkg" ] || { echo "kernel.sh: no linux-image-$series.*-amd64 package known to apt (run apt-get update)" >&2; exit 1; }
kv=${pkg#linux-image-}
kv=${kv%-unsigned}
ver=$(apt-cache show --no-all-versions "$pkg" | awk '$1=="Version:" {print $2; exit}')
echo "kernel.sh: $pkg $ver"

rm -rf debs kroot vmlinux
mkdir debs kroot
(cd debs && apt-get download -q "$pkg=$ver" 2>&1 | grep -v 'unsandboxed' || true)
deb=$(ls debs/*.deb)
dpkg-deb -x "$deb" kroot
# Debian 13 puts the modules under /usr/lib; depmod and modprobe -d look in
# /lib of their base.
[ -e kroot/lib ] || ln -s usr/lib kroot/lib
depmod -b kroot "$kv"

vmlinuz=kroot/boot/vmlinuz-$kv
# Find the compressed payload inside the bzImage by its magic and decompress
# it; the decompressor stops at the end of the stream, trailing bytes are ignored.
off=$(grep -abo $'\xfd7zXZ\x00' "$vmlinuz" | head -n 1 | cut -d: -f1 || true)
if [ -n "$off" ]; then
	tail -c +$((off + 1)) "$vmlinuz" | xz -dcq >vmlinux 2>/dev/null || true
else
	off=$(grep -abo $'\x28\xb5\x2f\xfd' "$vmlinuz" | head -n 1 | cut -d: -f1 || true)
	[ -n "$off" ] && { tail -c +$((off + 1)) "$vmlinuz" | zstd -dcq >vmlinux 2>/dev/null || true; }
fi
# An ELF with the Xen PVH note boots directly; otherwise fall back to the bzImage.
if [ "$(head -c 4 vmlinux 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; then
	echo "kernel.sh: PVH vmlinux extracted"
else
	echo "kernel.sh: could not extract vmlinux; booting the bzImage (slower)" >&2
	cp "$vmlinuz" vmlinux
fi
printf 'KV=%s\nKPKG=%s\nKVER=%s\n' "$kv" "$pkg" "$ver" >kernel.env
rm -rf debs
