#!/usr/bin/env bash
# Floor 3 peers (see docs/design.md, "Tests: four floors"): the ibsim fabric simulator with
# libumad2sim (package ibsim-utils), OpenSM and infiniband-diags, all from
# Debian. Idempotent: apt-get runs only when a package is missing, and the
# package lists are refreshed only then.
set -euo pipefail

. "$(dirname "$0")/../lib.sh"

pkgs=(ibsim-utils libumad2sim0 opensm infiniband-diags)
if [ -z "$(missing_packages "${pkgs[@]}")" ]; then
	echo "ibsim floor: ${pkgs[*]} already installed"
	exit 0
fi
apt_install "ibsim floor" "${pkgs[@]}"
