//go:build !vmguest

package verbs_test

import (
	"testing"

	"github.com/rdmakit/rdmakit/internal/vmtest"
)

// TestVerbsVM runs this package's vmguest tests (guest_test.go) as root in
// the floor-4 VM on rxe0, built with cgo against the VM's libibverbs.
func TestVerbsVM(t *testing.T) {
	vmtest.RunWith(t, vmtest.Options{Pkg: "./verbs", CGO: true, Args: []string{"-test.v", "-test.run=^TestGuest"}})
}
