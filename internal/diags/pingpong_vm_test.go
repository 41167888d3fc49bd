//go:build !vmguest

package diags

import (
	"testing"

	"github.com/rdmakit/rdmakit/internal/vmtest"
)

// TestPingpongVM runs pingpong_guest_test.go as root in the floor-4 VM:
// ibtool, built without cgo (CGO_ENABLED=0; libibverbs is loaded at run
// time), against rdma-core's ibv_rc_pingpong and ibv_ud_pingpong on rxe0,
// and rdma_bw against itself.
func TestPingpongVM(t *testing.T) {
	vmtest.RunWith(t, vmtest.Options{
		Pkg:           "./internal/diags",
		ExtraBinaries: map[string]string{"ibtool": "./cmd/ibtool"},
		Args:          []string{"-test.v", "-test.run=^TestGuest(Pingpong|RDMABW)"},
	})
}

// TestPingpongVMCgo runs the same with ibtool and the test built with cgo,
// as `go run ./cmd/ibtool` builds it on a machine with a C compiler.
func TestPingpongVMCgo(t *testing.T) {
	vmtest.RunWith(t, vmtest.Options{
		Pkg:           "./internal/diags",
		CGO:           true,
		ExtraBinaries: map[string]string{"ibtool": "./cmd/ibtool"},
		Args:          []string{"-test.v", "-test.run=^TestGuest(Pingpong|RDMABW)"},
	})
}
