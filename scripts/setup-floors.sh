#!/usr/bin/env bash
# Installs and prepares every test floor's peers (see docs/design.md, "Tests: four
# floors"). Idempotent: each step checks what is already there. Downloads and
# built images are cached under .cache/ (git-ignored).
#
# Each floor has one script in scripts/floors/, run in name order.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
mkdir -p .cache
for f in scripts/floors/*.sh; do
	[ -e "$f" ] || continue
	echo "== setup: $f"
	bash "$f"
done
