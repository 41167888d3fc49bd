//go:build !vmguest

package umad

import (
	"testing"

	"github.com/rdmakit/rdmakit/internal/vmtest"
)

// TestVM runs this package's vmguest tests (guest_test.go) as root in the
// floor-4 VM with rdma_rxe; see internal/vmtest. The unit tests already ran
// on the host, and they read fixtures the guest may not see.
func TestVM(t *testing.T) { vmtest.Run(t, "./umad", "-test.v", "-test.run=^TestGuest") }
