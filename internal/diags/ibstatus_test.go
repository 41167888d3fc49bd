package diags

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/internal/testbed"
)

// TestIBStatusFixtures compares ibstatus with the ibstatus script of
// each release's infiniband-diags on every sysfs fixture, the failure for
// an unknown device included (its message names the sysfs directory,
// which differs).
func TestIBStatusFixtures(t *testing.T) {
	testbed.EachRelease(t, testIBStatusFixtures)
}

func testIBStatusFixtures(t *testing.T, rel *testbed.Release) {
	for name, sys := range sysfsFixtures(t) {
		t.Run(name, func(t *testing.T) {
			for _, args := range [][]string{{}, {"mlx5_0"}, {"mlx5_0:1"}, {"mlx5_0:7"}, {"rxe0:1", "mlx5_0"}, {"mlx5_1"}, {"nosuch"}, {"mlx5_0:"}} {
				cOut, _, cCode := cOnSysfs(t, rel, sys, append([]string{"ibstatus"}, args...)...)
				out, errOut, code := oursOnSysfs(t, sys, append([]string{"ibstatus"}, args...)...)
				out = strings.ReplaceAll(out, filepath.Join(sys, "class"), "/sys/class")
				if code != cCode || out != cOut {
					t.Errorf("ibstatus %v: exit %d, C %d\n--- C\n%s--- ours\n%s%s", args, code, cCode, cOut, out, errOut)
				}
			}
		})
	}
}

func TestIBStatusJSON(t *testing.T) {
	out, errOut, code := oursOnSysfs(t, sysfsFixtures(t)["two-port"], "ibstatus", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "two-port", out)
}

// TestIBStatusNoDevices is the script on a machine without an RDMA stack.
func TestIBStatusNoDevices(t *testing.T) {
	out, _, code := oursOnSysfs(t, t.TempDir(), "ibstatus")
	if code != 255 || out != "Fatal error:  No devices\n" {
		t.Errorf("exit %d, %q", code, out)
	}
}
