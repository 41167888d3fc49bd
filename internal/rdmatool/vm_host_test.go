//go:build vmhost

package rdmatool

// The host side of the live comparison: boots the kernel VM and runs
// TestLiveCompare (live_vmguest_test.go) inside it. The vmhost tag goes
// once internal/vmtest is in the tree; it keeps the package building until then.

import (
	"testing"

	"github.com/rdmakit/rdmakit/internal/vmtest"
)

func TestVM(t *testing.T) {
	vmtest.Run(t, "github.com/rdmakit/rdmakit/internal/rdmatool", "-test.run", "^TestLiveCompare$", "-test.v")
}
