//go:build !vmguest

package diags

import (
	"testing"

	"github.com/rdmakit/rdmakit/internal/floor"
	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/internal/vmtest"
)

// TestIBStatVM runs the vmguest tests of ibstat, ibstatus and ibv_devices
// (ibstat_guest_test.go) in the floor-4 VMs, where rxe0 is a real device:
// in the 6.1 guest against Debian 12's infiniband-diags 44, in the 6.12
// guest against Debian 13's 56. The guests' initramfs have ibv_devices but
// not infiniband-diags, so the C ibstat (with the libibmad and
// libibnetdisc it needs) and the ibstatus script travel as extra files.
func TestIBStatVM(t *testing.T) {
	for _, g := range []struct {
		kernel string
		rel    func(t *testing.T) *testbed.Release
	}{
		{vmtest.Kernel61, func(*testing.T) *testbed.Release { return testbed.Bookworm }},
		{vmtest.Kernel612, func(t *testing.T) *testbed.Release { return testbed.Trixie(t) }},
	} {
		t.Run(g.kernel, func(t *testing.T) {
			rel := g.rel(t)
			files := map[string]string{}
			for name, pattern := range map[string]string{
				"ibstat":        "/usr/sbin/ibstat",
				"ibstatus":      "/usr/sbin/ibstatus",
				"libibmad.so.5": "/usr/lib/*-linux-gnu/libibmad.so.5",
				// 56's ibstat reads extended speeds through it.
				"libibnetdisc.so.5": "/usr/lib/*-linux-gnu/libibnetdisc.so.5",
			} {
				m, _ := rel.Glob(pattern)
				floor.Need(t, len(m) == 1, pattern+" of "+rel.Name+" (infiniband-diags, libibmad5, libibnetdisc5)")
				files[name] = m[0]
			}
			vmtest.RunWith(t, vmtest.Options{Pkg: "./internal/diags", Kernel: g.kernel,
				Args: []string{"-test.v", "-test.run=^TestGuestIBStat"}, ExtraFiles: files})
		})
	}
}
