#!/usr/bin/env bash
# Floor 3 peer of the exporter (cmd/ibfabric_exporter): Debian's Prometheus
# server, which the end-to-end test runs on loopback to scrape the exporter,
# and its promtool, which checks the exposition. Idempotent: apt-get runs
# only when the package is missing. The package's own service is not used
# (the test starts its own server on a free port); it is stopped and
# disabled where systemd runs, so it does not hold port 9090.
set -euo pipefail

. "$(dirname "$0")/../lib.sh"

pkgs=(prometheus)
if [ -z "$(missing_packages "${pkgs[@]}")" ]; then
	echo "prometheus floor: ${pkgs[*]} already installed"
	exit 0
fi
apt_install "prometheus floor" "${pkgs[@]}"
if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
	as_root systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
