//go:build !vmguest

package diags

import (
	"testing"

	"github.com/rdmakit/rdmakit/internal/vmtest"
)

// TestPingpongVM runs pingpong_guest_test.go as root in the floor-4 VM:
// ibtool built with cgo against rdma-core's ibv_rc_pingpong and
// ibv_ud_pingpong on rxe0, and rdma_bw against itself.
func TestPingpongVM(t *testing.T) {
	vmtest.RunWith(t, vmtest.Options{
		Pkg:           "./internal/diags",
		CGO:           true,
		ExtraBinaries: map[string]string{"ibtool": "./cmd/ibtool"},
		Args:          []string{"-test.v", "-test.run=^TestGuest(Pingpong|RDMABW)"},
	})
}
