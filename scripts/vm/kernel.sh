#!/usr/bin/env bash
# Fetches Debian's 6.1 amd64 kernel image package (never installed on the host),
# extracts it into <dir>/kroot, indexes its modules with depmod, and unpacks the
# bzImage payload into a raw ELF vmlinux that qemu boots through the PVH entry
# point (this skips ~3 s of in-guest decompression per boot under TCG).
#
# Usage: kernel.sh <dir>    -> <dir>/kroot, <dir>/vmlinux, <dir>/kernel.env
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
D=$(realpath -m "$1")
mkdir -p "$D"
cd "$D"

# The kernel linux-image-amd64 points at, when it is a 6.1 one; otherwise the
# newest linux-image-6.1.*-amd64 the archive offers. Resolved once and cached:
# bookworm-security keeps only the newest ABI.
# apt-cache and grep exit non-zero when they find nothing: an answer here,
# checked below, so their status does not end the script.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	awk '$1=="Depends:" && $2 ~ /^linux-image-6\.1\.[0-9]+-[0-9]+-amd64(-unsigned)?$/ {print $2; exit}' || true)
if [ -z "$pkg" ]; then
	pkg=$( (apt-cache pkgnames linux-image-6.1. || true) |
		(grep -E '^linux-image-6\.1\.[0-9]+-[0-9]+-amd64(-unsigned)?$' || true) | sort -V | tail -n 1)
fi
[ -n "$pkg" ] || { echo "kernel.sh: no linux-image-6.1.*-amd64 package known to apt (run apt-get update)" >&2; exit 1; }
kv=${pkg#linux-image-}
kv=${kv%-unsigned}
ver=$(apt-cache show --no-all-versions "$pkg" | awk '$1=="Version:" {print $2; exit}')
echo "kernel.sh: $pkg $ver"

rm -rf debs kroot vmlinux
mkdir debs kroot
(cd debs && apt-get download -q "$pkg=$ver" 2>&1 | grep -v 'unsandboxed' || true)
deb=$(ls debs/*.deb)
dpkg-deb -x "$deb" kroot
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
