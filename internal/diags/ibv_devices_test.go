package diags

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmakit/rdmakit/internal/testbed"
)

// TestIBVDevicesFixtures keeps ibv_devices of the sysfs fixtures. The C
// ibv_devices lists only devices a provider library claims, which the
// fixtures (no driver links) never are, so the comparison with it is in
// the VM (TestIBStatVM).
func TestIBVDevicesFixtures(t *testing.T) {
	for name, sys := range sysfsFixtures(t) {
		out, errOut, code := oursOnSysfs(t, sys, "ibv_devices")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		golden(t, name, out)
	}
	out, _, _ := oursOnSysfs(t, sysfsFixtures(t)["two-port"], "ibv_devices", "--json")
	golden(t, "two-port-json", out)
}

// TestIBVDevicesNoVerbs is a machine without ib_uverbs: libibverbs fails
// with ENOSYS and ibv_devices says so and exits 1.
func TestIBVDevicesNoVerbs(t *testing.T) {
	out, errOut, code := oursOnSysfs(t, t.TempDir(), "ibv_devices")
	if code != 1 || out != "" || errOut != "ibv_devices: Failed to get IB devices list: Function not implemented\n" {
		t.Errorf("exit %d, %q, %q", code, out, errOut)
	}
	empty := t.TempDir()
	if err := os.Mkdir(filepath.Join(empty, "class"), 0o755); err != nil {
		t.Fatal(err)
	}
	if cOut, _, cCode := cOnSysfs(t, testbed.Bookworm, empty, "ibv_devices"); cCode != 1 || cOut != "" {
		t.Errorf("the C ibv_devices: exit %d, %q", cCode, cOut)
	}
	if _, _, code := run(t, "", "ibtool", "--fabric", "ibsim", "ibv_devices"); code != 2 {
		t.Errorf("--fabric ibsim: exit %d, want a usage error", code)
	}
}
