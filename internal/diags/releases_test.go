package diags

import (
	"testing"

	"github.com/rdmakit/rdmakit/internal/testbed"
)

// peers are the C peers of one live comparison: the release whose ibsim
// and OpenSM bring the fabric up, and the release whose infiniband-diags
// ibtool is compared with.
type peers struct {
	sim, diags *testbed.Release
}

// machinePeers are the machine's own peers (Debian 12), for a test that
// uses the simulator only as a fabric and compares with no C tool.
var machinePeers = peers{sim: testbed.Bookworm, diags: testbed.Bookworm}

// name is the subtest's: "diags44", "diags56", or "diags56-ibsim0.10"
// when the diags run against another release's simulator.
func (p peers) name() string {
	n := "diags" + p.diags.Diags
	if p.sim != p.diags {
		n += "-ibsim" + p.sim.IBSim
	}
	return n
}

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

// eachReleaseCross is eachRelease and a third subtest,
// diags56-ibsim0.10: Debian 13's infiniband-diags against Debian 12's
// ibsim and OpenSM. Beside diags44 on the same simulator it separates
// what the diags changed from what the simulator changed (ibsim 0.12
// reports other capability masks, speeds and table sizes), for tests
// whose output depends on them.
func eachReleaseCross(t *testing.T, f func(t *testing.T, p peers)) {
	t.Helper()
	eachRelease(t, f)
	t.Run(testbed.TrixieSubtest()+"-ibsim"+testbed.Bookworm.IBSim, func(t *testing.T) {
		testbed.Bookworm.Require(t)
		f(t, peers{sim: testbed.Bookworm, diags: testbed.Trixie(t)})
	})
}
