package testbed_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/internal/testbed"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", t.Name()+".golden")
	if name != "" {
		path = filepath.Join("testdata", strings.Split(t.Name(), "/")[0], name+".golden")
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file; got:\n%s", path, got)
	}
}

func TestTopology(t *testing.T) {
	cases := []struct {
		name string
		ft   testbed.FatTree
		edit func(*testbed.Fabric)
	}{
		{"single-switch", testbed.FatTree{Leaves: 1, HCAsPerLeaf: 3}, nil},
		{"leaf-spine", testbed.FatTree{Leaves: 2, Spines: 1, HCAsPerLeaf: 2}, nil},
		{"dual-port-mixed", testbed.FatTree{Leaves: 2, Spines: 2, HCAsPerLeaf: 2, DualPortHCAs: true,
			HostWidth: testbed.Width4x, HostSpeed: testbed.EDR, UplinkWidth: testbed.Width12x, UplinkSpeed: testbed.HDR},
			func(f *testbed.Fabric) {
				l := f.LinkAt("H-2", 2)
				l.A.Width, l.A.Speed = testbed.Width1x, testbed.SDR
				f.Unlink("S-spine-2", 1)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := c.ft.Build()
			if err != nil {
				t.Fatal(err)
			}
			if c.edit != nil {
				c.edit(f)
			}
			topo, err := f.Topology()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, topo)
		})
	}
}

func TestFatTreeShape(t *testing.T) {
	ft := testbed.FatTree{Leaves: 4, Spines: 3, HCAsPerLeaf: 5, DualPortHCAs: true}
	f, err := ft.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(f.Nodes), 4+3+20; got != want {
		t.Errorf("%d nodes, want %d", got, want)
	}
	if got, want := len(f.Links), 4*3+20*2; got != want {
		t.Errorf("%d links, want %d", got, want)
	}
	// H-6 is the first HCA of leaf 2: port 1 there, port 2 on leaf 3.
	if n, p, ok := f.Peer("H-6", 1); !ok || n != "S-leaf-2" || p != 1 {
		t.Errorf("H-6 port 1 goes to %s[%d]", n, p)
	}
	if n, p, ok := f.Peer("H-6", 2); !ok || n != "S-leaf-3" || p != 6 {
		t.Errorf("H-6 port 2 goes to %s[%d]", n, p)
	}
	// The last leaf's port 2s wrap to leaf 1.
	if n, _, ok := f.Peer("H-20", 2); !ok || n != "S-leaf-1" {
		t.Errorf("H-20 port 2 goes to %s", n)
	}
	if n, p, ok := f.Peer("S-leaf-4", ft.UplinkPort(3)); !ok || n != "S-spine-3" || p != 4 {
		t.Errorf("leaf 4 uplink 3 goes to %s[%d]", n, p)
	}
	h := f.Node("H-6")
	if h.GUID != testbed.HCAGUIDBase+6<<4 || h.PortGUID(2) != h.GUID+2 {
		t.Errorf("H-6 GUIDs %v %v", h.GUID, h.PortGUID(2))
	}
	if g := f.Node("S-spine-3"); g.GUID != testbed.SpineGUIDBase+3 || g.PortGUID(5) != g.GUID {
		t.Errorf("spine 3 GUIDs %v %v", g.GUID, g.PortGUID(5))
	}
}

func TestValidateRejects(t *testing.T) {
	base := func() *testbed.Fabric {
		f := &testbed.Fabric{}
		f.AddSwitch("S", 4, 0x10)
		f.AddCA("H", 2, 0x20)
		f.Connect("S", 1, "H", 1, testbed.Width4x, testbed.QDR)
		return f
	}
	cases := map[string]func(*testbed.Fabric){
		"quote in name":     func(f *testbed.Fabric) { f.AddCA(`H"x`, 1, 0x40) },
		"duplicate name":    func(f *testbed.Fabric) { f.AddCA("H", 1, 0x40) },
		"duplicate GUID":    func(f *testbed.Fabric) { f.AddSwitch("S2", 1, 0x10) },
		"port GUID clash":   func(f *testbed.Fabric) { f.AddSwitch("S2", 1, 0x21) },
		"port out of range": func(f *testbed.Fabric) { f.Connect("S", 5, "H", 2, testbed.Width4x, testbed.QDR) },
		"port used twice":   func(f *testbed.Fabric) { f.Connect("S", 1, "H", 2, testbed.Width4x, testbed.QDR) },
		"unknown node":      func(f *testbed.Fabric) { f.Connect("S", 2, "X", 1, testbed.Width4x, testbed.QDR) },
		"bad width":         func(f *testbed.Fabric) { f.Connect("S", 2, "H", 2, testbed.Width(3), testbed.QDR) },
		"bad speed":         func(f *testbed.Fabric) { f.Connect("S", 2, "H", 2, testbed.Width4x, "XDR") },
		"no common width": func(f *testbed.Fabric) {
			l := f.Connect("S", 2, "H", 2, testbed.Width4x, testbed.QDR)
			l.B.Width = testbed.Width8x
		},
		"zero GUID":  func(f *testbed.Fabric) { f.AddCA("H0", 1, 0) },
		"long name":  func(f *testbed.Fabric) { f.AddCA(strings.Repeat("h", 32), 1, 0x50) },
		"self link":  func(f *testbed.Fabric) { f.Connect("S", 3, "S", 3, testbed.Width4x, testbed.QDR) },
		"zero ports": func(f *testbed.Fabric) { f.AddCA("H0", 0, 0x60) },
	}
	if err := base().Validate(); err != nil {
		t.Fatalf("base fabric: %v", err)
	}
	for name, edit := range cases {
		f := base()
		edit(f)
		if _, err := f.Topology(); !errors.Is(err, testbed.ErrInvalidFabric) {
			t.Errorf("%s: err %v, want ErrInvalidFabric", name, err)
		}
	}
	if _, err := (testbed.FatTree{Leaves: 2}).Build(); !errors.Is(err, testbed.ErrInvalidFabric) {
		t.Errorf("two leaves without spines: %v", err)
	}
}
