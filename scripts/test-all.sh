#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: installs what the test
# floors need, checks the tree (gofmt, go vet, generated code up to date) and
# runs every test, then every fuzz target for a bounded time (scripts/fuzz.sh).
# CI (.ci/run) runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
scripts/setup-floors.sh
scripts/check.sh
echo "== go test"
# Every floor's peer is installed now: a test that misses one fails.
export RDMAKIT_REQUIRE_PEERS=1
go test -count=1 -timeout 25m ./...
echo "== fuzz"
# Every fuzz target for a short, bounded time (FUZZ_TIME, FUZZ_BUDGET):
# a crasher fails the run and is saved as a corpus entry.
scripts/fuzz.sh
