//go:build !vmguest

package diags

import (
	"path/filepath"
	"testing"

	"github.com/rdmakit/rdmakit/internal/floor"
	"github.com/rdmakit/rdmakit/internal/vmtest"
)

// TestIBStatVM runs the vmguest tests of ibstat, ibstatus and ibv_devices
// (ibstat_guest_test.go) in the floor-4 VM, where rxe0 is a real device.
// The VM's initramfs has ibv_devices but not infiniband-diags, so the C
// ibstat (with the libibmad it needs) and the ibstatus script travel as
// extra files.
func TestIBStatVM(t *testing.T) {
	files := map[string]string{}
	for name, pattern := range map[string]string{
		"ibstat":        "/usr/sbin/ibstat",
		"ibstatus":      "/usr/sbin/ibstatus",
		"libibmad.so.5": "/usr/lib/*-linux-gnu/libibmad.so.5",
	} {
		m, _ := filepath.Glob(pattern)
		floor.Need(t, len(m) == 1, pattern+" (infiniband-diags, libibmad5)")
		files[name] = m[0]
	}
	vmtest.RunWith(t, vmtest.Options{Pkg: "./internal/diags", Args: []string{"-test.v", "-test.run=^TestGuestIBStat"}, ExtraFiles: files})
}
