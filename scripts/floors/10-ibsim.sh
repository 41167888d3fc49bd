#!/usr/bin/env bash
# Floor 3 peers (see TESTBED.md, part A): the ibsim fabric simulator with
# libumad2sim (package ibsim-utils), OpenSM and infiniband-diags, all from
# Debian. Idempotent: apt-get runs only when a package is missing, and the
# package lists are refreshed only then.
set -euo pipefail

pkgs=(ibsim-utils libumad2sim0 opensm infiniband-diags)
missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
		missing+=("$p")
	fi
done
if [ "${#missing[@]}" -eq 0 ]; then
	echo "ibsim floor: ${pkgs[*]} already installed"
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	sudo=(sudo)
fi
echo "ibsim floor: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
