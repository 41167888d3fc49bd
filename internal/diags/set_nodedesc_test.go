package diags

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies a fixture tree, so that a test can write to it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestSetNodeDesc shows and sets node descriptions on copies of the sysfs
// fixtures, every device and one chosen with -C or -P, in UTF-8.
func TestSetNodeDesc(t *testing.T) {
	fx := sysfsFixtures(t)
	sys := copyTree(t, fx["smi-split"])
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"view", []string{"set_nodedesc"}},
		{"view-flag", []string{"set_nodedesc", "--view", "ignored"}},
		{"view-one", []string{"-C", "mlx5_1", "set_nodedesc"}},
		{"set-one", []string{"-C", "mlx5_1", "set_nodedesc", "höst 7 ✓"}},
		{"set-port", []string{"-P", "smi1/1", "set_nodedesc", "by port"}},
		{"after", []string{"set_nodedesc"}},
		{"set-all", []string{"set_nodedesc", "all of them"}},
		{"json", []string{"set_nodedesc", "--json", "again"}},
	} {
		out, errOut, code := oursOnSysfs(t, sys, tc.args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, errOut)
		}
		golden(t, tc.name, out)
	}
	b, err := os.ReadFile(filepath.Join(sys, "class/infiniband/mlx5_1/node_desc"))
	if err != nil || string(b) != "again" {
		t.Errorf("node_desc holds %q (%v)", b, err)
	}
	for _, bad := range [][]string{{"set_nodedesc", strings.Repeat("x", 65)}, {"set_nodedesc", "\xff"}, {"-C", "nosuch", "set_nodedesc", "x"}} {
		if _, errOut, code := oursOnSysfs(t, sys, bad...); code == 0 {
			t.Errorf("%q: succeeded (%s)", bad, errOut)
		}
	}
	if _, _, code := oursOnSysfs(t, t.TempDir(), "set_nodedesc", "x"); code == 0 {
		t.Error("no devices: succeeded")
	}
}
