//go:build !vmguest

package vmad_test

import (
	"testing"

	"github.com/rdmakit/rdmakit/internal/vmtest"
)

// TestVMADVM runs this package's vmguest tests (guest_test.go) as root in
// the floor-4 VM: our UD QP talks to a umad agent on rxe0's QP1. The test
// binary is built without cgo (CGO_ENABLED=0, as on a machine without a C
// compiler).
func TestVMADVM(t *testing.T) {
	vmtest.RunWith(t, vmtest.Options{Pkg: "./verbs/vmad", Args: []string{"-test.v", "-test.run=^TestGuest"}})
}
