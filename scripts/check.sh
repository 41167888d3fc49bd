#!/usr/bin/env bash
# Static checks of the tree: formatting, vet (host and VM-guest builds),
# staticcheck (pinned in go.mod), and that `go generate` leaves the committed
# generated code unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== gofmt"
bad=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
if [ -n "$bad" ]; then echo "gofmt would change:"; echo "$bad"; exit 1; fi
echo "== go vet"
go vet ./...
go vet -tags vmguest ./...
echo "== staticcheck"
go tool staticcheck ./...
echo "== go generate leaves the tree unchanged"
go generate ./...
if [ -n "$(git status --porcelain -- .)" ]; then
	echo "go generate changed committed files:"; git status --short -- .; exit 1
fi
