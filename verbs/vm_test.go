//go:build !vmguest

package verbs_test

import (
	"testing"

	"github.com/rdmakit/rdmakit/internal/vmtest"
)

// TestVerbsVM runs this package's vmguest tests (guest_test.go) as root in
// the floor-4 VM on rxe0, built without cgo (CGO_ENABLED=0, as on a
// machine without a C compiler): libibverbs is loaded at run time from the
// guest's rdma-core.
func TestVerbsVM(t *testing.T) {
	vmtest.RunWith(t, vmtest.Options{Pkg: "./verbs", Args: []string{"-test.v", "-test.run=^TestGuest"}})
}

// TestVerbsVMCgo runs them again built with cgo, as `go build` makes
// ibtool on a machine with a C compiler: the same run-time loading, with
// the C runtime's threads instead of purego's.
func TestVerbsVMCgo(t *testing.T) {
	vmtest.RunWith(t, vmtest.Options{Pkg: "./verbs", CGO: true, Args: []string{"-test.v", "-test.run=^TestGuest"}})
}
