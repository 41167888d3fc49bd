//go:build !vmguest

package rdmatool

// The host side of the live comparison: boots the kernel VM and runs
// TestLiveCompare (live_vmguest_test.go) inside it.

import (
	"testing"

	"github.com/rdmakit/rdmakit/internal/vmtest"
)

func TestVM(t *testing.T) {
	vmtest.Run(t, "./internal/rdmatool", "-test.run", "^TestLiveCompare$", "-test.v")
}
