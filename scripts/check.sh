#!/usr/bin/env bash
# Static checks of the tree: formatting, vet (host and VM-guest builds, with
# cgo and without), staticcheck (pinned in go.mod), and that `go generate`
# leaves the committed generated code unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
echo "== gofmt"
bad=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
if [ -n "$bad" ]; then echo "gofmt would change:"; echo "$bad"; exit 1; fi
echo "== go vet"
go vet ./...
go vet -tags vmguest ./...
# The default build needs no C compiler or RDMA headers; vet it as a
# machine without cgo builds it too.
CGO_ENABLED=0 go vet ./...
CGO_ENABLED=0 go vet -tags vmguest ./...
echo "== staticcheck"
go tool staticcheck ./...
echo "== go generate leaves the tree unchanged"
# The state of every file that differs from the last commit, before and
# after: a working tree with changes of its own still gets a true answer.
# A deleted file is in the status and has no contents to hash.
tree_state() {
	git status --porcelain=v1 -uall -- .
	git ls-files -z -m -o --exclude-standard -- . | while IFS= read -r -d '' f; do
		if [ -e "$f" ]; then sha256sum "$f"; fi
	done
}
before=$(tree_state)
go generate ./...
after=$(tree_state)
if [ "$before" != "$after" ]; then
	echo "go generate changed files:"
	diff <(echo "$before") <(echo "$after") || true
	exit 1
fi
