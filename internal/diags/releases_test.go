package diags

import (
	"testing"

	"github.com/rdmakit/rdmakit/internal/testbed"
)

// peers are the C peers of one live comparison: the release whose ibsim
// and OpenSM bring the fabric up, and the release whose infiniband-diags
// ibtool is compared with. They are one release in every comparison here;
// both releases' diags on one simulator, which tells what the diags
// changed from what the simulators changed, are internal/testbed's
// TestDiagsChanges.
type peers struct {
	sim, diags *testbed.Release
}

// machinePeers are the machine's own peers (Debian 12), for a test that
// uses the simulator only as a fabric and compares with no C tool.
var machinePeers = peers{sim: testbed.Bookworm, diags: testbed.Bookworm}

// eachRelease runs f once per release of the C peers, as subtests named
// by the release's diags (testbed.EachRelease): diags44 (Debian 12's
// infiniband-diags 44 on its ibsim 0.10 and OpenSM) and diags56 (Debian
// 13's infiniband-diags 56 on its ibsim 0.12 and OpenSM). Each subtest
// brings its own fabric up, so a comparison never shares a simulator or an
// OpenSM with another release's.
func eachRelease(t *testing.T, f func(t *testing.T, p peers)) {
	t.Helper()
	testbed.EachRelease(t, func(t *testing.T, r *testbed.Release) {
		f(t, peers{sim: r, diags: r})
	})
}
