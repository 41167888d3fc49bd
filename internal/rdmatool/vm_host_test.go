//go:build !vmguest

package rdmatool

// The host side of the live comparison: boots each kernel VM and runs
// TestLiveCompare (live_vmguest_test.go) inside it, with the rdmatool binary
// beside the test for the runs as an unprivileged user. The 6.1 guest has
// iproute2 6.1, the 6.12 guest iproute2 6.15.

import (
	"testing"

	"github.com/rdmakit/rdmakit/internal/vmtest"
)

func TestVM(t *testing.T) {
	for _, k := range vmtest.Kernels {
		t.Run(k, func(t *testing.T) {
			vmtest.RunWith(t, vmtest.Options{
				Pkg:           "./internal/rdmatool",
				Kernel:        k,
				Args:          []string{"-test.run", "^TestLiveCompare$", "-test.v"},
				ExtraBinaries: map[string]string{"rdmatool": "./cmd/rdmatool"},
			})
		})
	}
}
