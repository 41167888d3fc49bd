#!/usr/bin/env bash
# Proves the README's two commands on a fresh machine: a Debian 12 root made
# by debootstrap (minbase with ca-certificates, git, gcc and libc6-dev, and
# nothing else), the running Go toolchain copied in (Go is the README's one
# prerequisite), /proc, /sys and /dev bound, this machine's certificate
# authorities and apt sources copied in (a machine here trusts extra
# authorities and reaches Debian through its own sources; without them
# module and package downloads fail), the repository cloned into it at HEAD,
# and the commands of the README's first sh block run inside chroot, one by
# one, exactly as the README writes them. Mounts are undone on every exit.
#
# Usage: scripts/fresh-machine.sh [-k]     (as root)
#   -k   keep the root afterwards (in .cache/fresh/root) for a look inside
#
# Environment: FRESH_SUITE (default bookworm), FRESH_DIR (default
# .cache/fresh). The clone is of HEAD: commit what you want proved.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

keep=0
[ "${1:-}" = -k ] && keep=1
[ "$(id -u)" -eq 0 ] || { echo "fresh-machine.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
command -v go >/dev/null || { echo "fresh-machine.sh: no go on PATH: the fresh root gets a copy of the running toolchain" >&2; exit 1; }

SUITE=${FRESH_SUITE:-bookworm}
D=$(realpath -m "${FRESH_DIR:-.cache/fresh}")
R=$D/root
REPO=$PWD
t0=$(date +%s)

apt_install fresh-machine.sh debootstrap

# The README's first ```sh block: every line that is not a comment or blank
# is one command.
mapfile -t cmds < <(awk '/^```sh$/ {inblock=1; next} inblock && /^```/ {exit}
	inblock && !/^[[:space:]]*(#|$)/ {print}' README.md)
[ "${#cmds[@]}" -ge 2 ] || { echo "fresh-machine.sh: README.md's first sh block has ${#cmds[@]} commands, want 2" >&2; exit 1; }

# The archive this machine's apt uses (deb822 sources first, then the
# one-line format): the fresh root is made from the same one.
mirror=$(awk '$1=="URIs:" {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
if [ -z "$mirror" ]; then
	mirror=$(awk '$1=="deb" && $0 !~ /security/ {for (i=2;i<=NF;i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' \
		/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
fi
[ -n "$mirror" ] || { echo "fresh-machine.sh: no Debian archive found in this machine's apt sources" >&2; exit 1; }

unmount_all() {
	local m
	# Deepest first; lazily, so a process that still holds a mount cannot
	# keep the root from being removed.
	for m in $(awk -v r="$R" '$2 == r || index($2, r "/") == 1 {print $2}' /proc/mounts | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
}
# remove_root deletes the root only when nothing is mounted under it any
# more, and never crosses into another file system: a bound /dev must not
# lose its nodes.
remove_root() {
	[ -d "$R" ] || return 0
	if awk -v r="$R" '$2 == r || index($2, r "/") == 1 {found=1} END {exit !found}' /proc/mounts; then
		echo "fresh-machine.sh: $R still has mounts; not removing it" >&2
		return 1
	fi
	rm -rf --one-file-system "$R"
}
cleanup() {
	local rc=$?
	unmount_all
	if [ "$keep" = 0 ]; then remove_root || true; fi
	exit "$rc"
}
trap cleanup EXIT

unmount_all
remove_root
mkdir -p "$R"
echo "fresh-machine.sh: debootstrap $SUITE (minbase, ca-certificates git gcc libc6-dev)"
if ! debootstrap --variant=minbase --include=ca-certificates,git,gcc,libc6-dev \
	"$SUITE" "$R" "$mirror" >"$D/debootstrap.log" 2>&1; then
	tail -n 30 "$D/debootstrap.log" >&2
	echo "fresh-machine.sh: debootstrap failed; the whole log is $D/debootstrap.log" >&2
	exit 1
fi

goroot=$(go env GOROOT)
echo "fresh-machine.sh: Go $(go env GOVERSION) from the running toolchain"
mkdir -p "$R/usr/local"
cp -a "$goroot" "$R/usr/local/go"
cp -a /etc/ssl/certs/. "$R/etc/ssl/certs/"
if [ -d /usr/local/share/ca-certificates ]; then
	mkdir -p "$R/usr/local/share/ca-certificates"
	cp -a /usr/local/share/ca-certificates/. "$R/usr/local/share/ca-certificates/"
fi
# apt: the machine's sources and its Acquire settings, as any machine here has.
rm -f "$R/etc/apt/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && cp "$f" "$R$f"
done
for f in /etc/apt/apt.conf.d/*; do
	[ -f "$f" ] && grep -q '^Acquire::' "$f" && cp "$f" "$R$f"
done
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
# No service may start inside the root (opensm's package would try).
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
chmod +x "$R/usr/sbin/policy-rc.d"

# The root is a mount point of its own, as / is on a machine: unshare -m
# (tests bind sysfs fixtures in a private namespace) needs to set its
# propagation.
mount --bind "$R" "$R"
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mount --make-rslave "$R/sys"
mount --rbind /dev "$R/dev"
mount --make-rslave "$R/dev"
mount -t tmpfs tmpfs "$R/tmp"
mkdir -p "$R/run"
mount -t tmpfs tmpfs "$R/run"

git clone -q "$REPO" "$R/root/rdmakit"
echo "fresh-machine.sh: cloned $(git -C "$R/root/rdmakit" rev-parse --short HEAD)"

# A login's environment: only what a new machine has, plus the Go module
# proxy settings this machine's go uses.
env_in=(HOME=/root USER=root LANG=C.UTF-8 TERM=dumb
	PATH=/root/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
for v in GOPROXY GOSUMDB GONOSUMDB GOPRIVATE GOINSECURE GOFLAGS; do
	val=$(go env "$v")
	[ -n "$val" ] && env_in+=("$v=$val")
done
[ -n "${CI:-}" ] && env_in+=("CI=$CI")

fail=0
for c in "${cmds[@]}"; do
	t1=$(date +%s)
	echo "fresh-machine.sh: \$ $c"
	if chroot "$R" /usr/bin/env -i "${env_in[@]}" /bin/bash -c "cd /root/rdmakit && $c"; then
		echo "fresh-machine.sh: ok in $(($(date +%s) - t1)) s: $c"
	else
		rc=$?
		echo "fresh-machine.sh: FAILED (exit $rc) after $(($(date +%s) - t1)) s: $c" >&2
		fail=1
		break
	fi
done
echo "fresh-machine.sh: $([ $fail = 0 ] && echo passed || echo failed) in $(($(date +%s) - t0)) s"
exit $fail
