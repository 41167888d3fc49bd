//go:build vmguest

package diags

// These tests run as root in the floor-4 VMs (internal/vmtest): rxe0 on
// dummy0, with the real sysfs, ib_umad and ib_uverbs. They compare ibstat,
// ibstatus and ibv_devices with the C tools on it: infiniband-diags 44 in
// the 6.1 guest, 56 in the 6.12 one.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// guestC runs a C tool: the ones TestIBStatVM brings along through the
// dynamic loader with $VMTEST_DIR as library path, the script with sh.
func guestC(t *testing.T, argv ...string) (string, string, int) {
	t.Helper()
	dir := os.Getenv("VMTEST_DIR")
	var cmd *exec.Cmd
	switch argv[0] {
	case "ibstat":
		loader, _ := filepath.Glob("/lib64/ld-linux-*.so.2")
		if len(loader) == 0 {
			t.Fatal("no dynamic loader in the guest")
		}
		cmd = exec.Command(loader[0], append([]string{"--library-path", dir, filepath.Join(dir, "ibstat")}, argv[1:]...)...)
	case "ibstatus":
		cmd = exec.Command("sh", append([]string{filepath.Join(dir, "ibstatus")}, argv[1:]...)...)
	default:
		cmd = exec.Command(argv[0], argv[1:]...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("%v: %v", argv, err)
	}
	t.Logf("%v: exit %d, stderr %q", argv, cmd.ProcessState.ExitCode(), errb.String())
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

func TestGuestIBStat(t *testing.T) {
	for _, argv := range [][]string{
		// Each C run costs a second or two under TCG; the options are
		// compared on the sysfs fixtures (TestIBStatFixtures).
		{"ibstat"}, {"ibstat", "-p"}, {"ibstat", "rxe0", "2"},
		{"ibstatus"}, {"ibstatus", "nosuch"},
		{"ibv_devices"},
	} {
		cOut, cErr, cCode := guestC(t, argv...)
		if argv[0] == "ibstat" {
			cCode = ibstatExit(cErr, cCode)
		}
		out, errOut, code := run(t, "", append([]string{"ibtool"}, argv...)...)
		if code != cCode || out != cOut {
			t.Errorf("%v: exit %d, C %d\n--- C\n%s--- ours\n%s%s", argv, code, cCode, cOut, out, errOut)
		}
	}
}
