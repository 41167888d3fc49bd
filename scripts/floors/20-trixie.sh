#!/usr/bin/env bash
# The current peers (docs/design.md, "Tests: four floors"): a minimal Debian 13 (trixie) root
# with its infiniband-diags, ibsim, OpenSM, iproute2, rdma-core and perftest,
# built with debootstrap from the Debian mirror this machine's apt uses. Tests
# run the root's programs through its own dynamic loader and libraries
# (internal/testbed, Trixie), so nothing is mounted and no chroot is needed;
# the 6.12 VM guest (30-vm.sh) copies its tools into its initramfs. A private
# apt configuration for trixie, beside the root, lets 30-vm.sh fetch trixie's
# kernel without touching the machine's own apt sources.
#
# Idempotent. Everything lands in .cache/trixie/:
#   root/        the debootstrap root (package archives removed)
#   bin/         a wrapper per program of the root, to run it from outside
#   apt/         the private apt configuration and package lists for trixie
#   ready        written last: the package list's key and the peers' versions
# To start over, remove .cache/trixie.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
C=.cache/trixie
mkdir -p "$C"
exec 9>"$C/.prepare.lock"
flock -w 900 9 || { echo "20-trixie.sh: another prepare holds $C/.prepare.lock" >&2; exit 1; }
t0=$(date +%s)
SUITE=trixie

# What the tests and the 6.12 guest use from the root. libumad2sim0 brings
# ibsim's LD_PRELOAD library; ibverbs-providers the rxe and siw providers.
# The compiler and the libraries of trixie's linux-kbuild are for siw.ko,
# which 30-vm.sh builds in this root for trixie's kernel (Debian leaves
# CONFIG_RDMA_SIW unset), with the gcc that built the kernel.
PKGS=infiniband-diags,ibsim-utils,libumad2sim0,opensm,iproute2,rdma-core,ibverbs-utils,ibverbs-providers,perftest,rdmacm-utils
PKGS=$PKGS,gcc-14,make,libc6-dev,libelf1t64,libssl3t64,zlib1g,pahole
key=$(printf '%s %s\n' "$SUITE" "$PKGS" | sha256sum | cut -d' ' -f1)

apt_install 20-trixie.sh debootstrap debian-archive-keyring

MIRROR=$(debian_mirror)
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# The private apt: trixie's package lists, for downloads only (apt-get
# download, apt-cache); the machine's own apt state is left alone.
A=$PWD/$C/apt
mkdir -p "$A/state/lists/partial" "$A/cache/archives/partial" "$A/sources.list.d"
printf 'deb [signed-by=%s] %s %s main\n' "$KEYRING" "$MIRROR" "$SUITE" >"$A/sources.list.new"
touch "$A/state/status"
cat >"$A/apt.conf.new" <<EOF
Dir::Etc::SourceList "$A/sources.list";
Dir::Etc::SourceParts "$A/sources.list.d";
Dir::State "$A/state";
Dir::State::status "$A/state/status";
Dir::Cache "$A/cache";
APT::Architecture "amd64";
APT::Architectures { "amd64"; };
EOF
if ! cmp -s "$A/sources.list.new" "$A/sources.list" || ! cmp -s "$A/apt.conf.new" "$A/apt.conf" ||
	! ls "$A"/state/lists/*_Packages* >/dev/null 2>&1; then
	mv "$A/sources.list.new" "$A/sources.list"
	mv "$A/apt.conf.new" "$A/apt.conf"
	APT_CONFIG=$A/apt.conf timeout 300 apt-get update -q >"$A/update.log" 2>&1 ||
		{ cat "$A/update.log" >&2; echo "20-trixie.sh: apt-get update for $SUITE failed" >&2; exit 1; }
else
	rm -f "$A/sources.list.new" "$A/apt.conf.new"
fi

# wrappers writes $C/bin: one small script per program of the root's
# /usr/bin and /usr/sbin that runs it from outside. An ELF program runs
# through the root's loader with the root's libraries only (the host's
# ld.so.cache is not read) and, when RDMAKIT_TRIXIE_PRELOAD names a library
# (libumad2sim.so), with that preloaded: LD_PRELOAD itself would reach the
# host's programs too. A shell or Perl script runs with the host's
# interpreter, with $C/bin first in PATH (and as IBPATH, where the diags'
# scripts look for their programs); a shell script's absolute /usr/sbin/
# paths are turned into IBPATH ones, and Perl finds the root's modules.
# The wrappers use shell builtins only: with the root first in PATH, a
# dirname would be the root's own, run through a wrapper.
# Paths are relative to the wrapper, so the cache may be reached by any path.
wrappers() {
	local b=$C/bin.new f n dir first
	rm -rf "$b"
	mkdir -p "$b/.scripts"
	for f in "$C"/root/usr/bin/* "$C"/root/usr/sbin/*; do
		[ -f "$f" ] && [ -x "$f" ] || continue
		n=${f##*/}
		case "$n" in *[!A-Za-z0-9._+-]*) continue ;; esac
		[ -e "$b/$n" ] && continue # /usr/bin wins, as in PATH
		dir=${f#"$C"/root}
		dir=${dir%/*}
		first=$(head -c 64 "$f" | tr -d '\0' | head -n 1)
		case "$first" in
		$'\x7fELF'*)
			cat >"$b/$n" <<EOF
#!/bin/sh
# trixie's $dir/$n through the root's own loader (scripts/floors/20-trixie.sh)
r=\${0%/*}/../root
exec "\$r/usr/lib64/ld-linux-x86-64.so.2" --inhibit-cache --library-path "\$r/usr/lib/x86_64-linux-gnu:\$r/usr/lib" \${RDMAKIT_TRIXIE_PRELOAD:+--preload "\$RDMAKIT_TRIXIE_PRELOAD"} --argv0 $n "\$r$dir/$n" "\$@"
EOF
			;;
		'#!/bin/sh'* | '#!/bin/bash'*)
			sed '/^IBPATH=/!s|/usr/sbin/|${IBPATH}/|g' "$f" >"$b/.scripts/$n"
			cat >"$b/$n" <<EOF
#!/bin/sh
# trixie's $dir/$n, a shell script, with the root's programs first in PATH
d=\$(cd "\${0%/*}" && pwd)
PATH=\$d:\$PATH IBPATH=\$d exec ${first#\#!} "\$d/.scripts/$n" "\$@"
EOF
			;;
		'#!/usr/bin/perl'*)
			cat >"$b/$n" <<EOF
#!/bin/sh
# trixie's $dir/$n, a Perl script, with the root's programs and modules
d=\$(cd "\${0%/*}" && pwd)
PATH=\$d:\$PATH PERL5LIB=\$d/../root/usr/share/perl5 exec /usr/bin/perl "\$d/../root$dir/$n" "\$@"
EOF
			;;
		*) continue ;;
		esac
		chmod 0755 "$b/$n"
	done
	rm -rf "$C/bin"
	mv "$b" "$C/bin"
}
wkey=$(declare -f wrappers | sha256sum | cut -d' ' -f1)

if [ -f "$C/ready" ] && [ "$(sed -n 's/^key=//p' "$C/ready")" = "$key" ] && [ -x "$C/root/usr/sbin/ibnetdiscover" ]; then
	if [ "$(cat "$C/bin/.key" 2>/dev/null)" != "$wkey" ]; then
		wrappers
		echo "$wkey" >"$C/bin/.key"
	fi
	echo "20-trixie.sh: trixie root ready ($(sed -n 's/^versions=//p' "$C/ready"))"
	exit 0
fi

rm -f "$C/ready"
rm -rf "$C/root.new"
echo "20-trixie.sh: debootstrap $SUITE from the machine's Debian mirror"
if ! as_root timeout 900 debootstrap --variant=minbase --include="$PKGS" --keyring="$KEYRING" \
	"$SUITE" "$C/root.new" "$MIRROR" >"$C/debootstrap.log" 2>&1; then
	tail -n 30 "$C/debootstrap.log" >&2
	[ -f "$C/root.new/debootstrap/debootstrap.log" ] && tail -n 30 "$C/root.new/debootstrap/debootstrap.log" >&2
	echo "20-trixie.sh: debootstrap failed; see $C/debootstrap.log" >&2
	exit 1
fi
rm -f "$C"/root.new/var/cache/apt/archives/*.deb
rm -rf "$C/root"
mv "$C/root.new" "$C/root"

# The loader and the programs the tests run must be there.
for f in usr/lib64/ld-linux-x86-64.so.2 usr/bin/ibsim usr/sbin/opensm usr/sbin/ibnetdiscover usr/bin/rdma; do
	[ -e "$C/root/$f" ] || { echo "20-trixie.sh: the root has no /$f" >&2; exit 1; }
done
[ -n "$(ls "$C"/root/usr/lib/*/umad2sim/libumad2sim.so 2>/dev/null)" ] ||
	{ echo "20-trixie.sh: the root has no libumad2sim.so" >&2; exit 1; }
wrappers
echo "$wkey" >"$C/bin/.key"
versions=$(dpkg-query --admindir="$C/root/var/lib/dpkg" -W -f='${Package}=${Version} ' \
	infiniband-diags ibsim-utils opensm iproute2 rdma-core perftest)
printf 'key=%s\nversions=%s\n' "$key" "${versions% }" >"$C/ready.tmp"
mv "$C/ready.tmp" "$C/ready"
echo "20-trixie.sh: trixie root ready in $(($(date +%s) - t0)) s (${versions% })"
