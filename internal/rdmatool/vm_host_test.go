//go:build !vmguest

package rdmatool

// The host side of the live comparison: boots the kernel VM and runs
// TestLiveCompare (live_vmguest_test.go) inside it, with the rdmatool binary
// beside the test for the runs as an unprivileged user.

import (
	"testing"

	"github.com/rdmakit/rdmakit/internal/vmtest"
)

func TestVM(t *testing.T) {
	vmtest.RunWith(t, vmtest.Options{
		Pkg:           "./internal/rdmatool",
		Args:          []string{"-test.run", "^TestLiveCompare$", "-test.v"},
		ExtraBinaries: map[string]string{"rdmatool": "./cmd/rdmatool"},
	})
}
