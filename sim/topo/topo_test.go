package topo

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

func mustParseFile(t *testing.T, path string) *Topology {
	t.Helper()
	top, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := top.Validate(); err != nil {
		t.Fatal(err)
	}
	return top
}

func find(t *testing.T, top *Topology, id string) int {
	t.Helper()
	for i := range top.Nodes {
		if top.Nodes[i].ID == id {
			return i
		}
	}
	t.Fatalf("no node %q", id)
	return -1
}

func TestParseSmall(t *testing.T) {
	top := mustParseFile(t, "testdata/small.topo")
	s, c, r := top.Counts()
	if s != 2 || c != 4 || r != 1 {
		t.Fatalf("counts %d %d %d", s, c, r)
	}
	a := find(t, top, "sw-a")
	b := find(t, top, "sw-b")
	if g := top.Nodes[a].NodeGUID; g != 0x10 {
		t.Errorf("sw-a GUID %v", g)
	}
	if g := top.Nodes[b].NodeGUID; g != 0x11 {
		t.Errorf("sw-b GUID %v", g)
	}
	if n := &top.Nodes[a]; !n.EnhancedPort0 || n.LID != 1 || n.Desc != "switch A" {
		t.Errorf("sw-a header %+v", n)
	}
	ca1, ca2 := find(t, top, "ca-1"), find(t, top, "ca-2")
	// ibsim: a CA takes nports+1 GUIDs; sysimgguid applies to the next node only.
	if top.Nodes[ca1].NodeGUID != 0x100 || top.Nodes[ca2].NodeGUID != 0x103 {
		t.Errorf("CA GUIDs %v %v", top.Nodes[ca1].NodeGUID, top.Nodes[ca2].NodeGUID)
	}
	if top.Nodes[ca1].SysImageGUID != 0x4242 || top.Nodes[ca2].SysImageGUID != 0x103 {
		t.Errorf("sysimage GUIDs %v %v", top.Nodes[ca1].SysImageGUID, top.Nodes[ca2].SysImageGUID)
	}
	p := top.Port(ca2, 1)
	if p.GUID != 0x1234 || p.LID != 3 || p.LMC != 1 || p.Width != Width4x || p.Speed != 7 {
		t.Errorf("ca-2 port 1 %+v", p)
	}
	if p := top.Port(ca1, 1); p.GUID != 0x101 || p.Width != iba.LinkWidth4X {
		t.Errorf("ca-1 port 1 %+v (width= directive)", p)
	}
	if p := top.Port(a, 5); p.Width != 1 || p.Speed != 1 || int(p.Peer) != b || p.PeerPort != 5 {
		t.Errorf("sw-a port 5 %+v", p)
	}
	rt := find(t, top, "rt-1")
	if top.Nodes[rt].Type != iba.NodeTypeRouter || top.Port(b, 6).PeerPort != 1 {
		t.Errorf("router link %+v", top.Port(b, 6))
	}
	if d := top.Nodes[find(t, top, "ca-3")].Description(); d != "host three" {
		t.Errorf("ca-3 desc %q", d)
	}
}

// An ibnetdiscover dump, as ibsim loads it: GUID directives with the port
// GUID in parentheses, S-/H- ids, lid and width/speed annotations.
const discovered = `#
# Topology file: generated on Sat Nov 22 10:00:00 2026
#
# Initiated from node 0000000000200000 port 0000000000200000

vendid=0x2c9
devid=0xb924
sysimgguid=0x8f10400411a08
switchguid=0x8f10400411a08(8f10400411a08)
Switch	24 "S-0008f10400411a08"		# "ISR9024D Voltaire" enhanced port 0 lid 6 lmc 0
[1]	"H-0002c90200220f18"[1](2c90200220f19) 		# "node-1 HCA-1" lid 4 4xDDR
[7]	"S-0008f10400411a09"[8]		# "other switch" lid 7 4xFDR

vendid=0x2c9
devid=0xb924
switchguid=0x8f10400411a09(8f10400411a09)
Switch	24 "S-0008f10400411a09"		# "other switch" base port 0 lid 7 lmc 0
[8]	"S-0008f10400411a08"[7]		# "ISR9024D Voltaire" lid 6 4xFDR

vendid=0x2c9
devid=0x6282
sysimgguid=0x2c90200220f1b
caguid=0x2c90200220f18
Ca	2 "H-0002c90200220f18"		# "node-1 HCA-1"
[1](2c90200220f19) 	"S-0008f10400411a08"[1]		# lid 4 lmc 0 "ISR9024D Voltaire" lid 6 4xDDR
`

func TestParseIBNetDiscover(t *testing.T) {
	top, err := Parse(strings.NewReader(discovered), "discovered")
	if err != nil {
		t.Fatal(err)
	}
	sw := find(t, top, "S-0008f10400411a08")
	ca := find(t, top, "H-0002c90200220f18")
	if g := top.Nodes[sw].NodeGUID; g != 0x8f10400411a08 {
		t.Errorf("switch GUID %v", g)
	}
	n := &top.Nodes[ca]
	if n.NodeGUID != 0x2c90200220f18 || n.SysImageGUID != 0x2c90200220f1b || n.VendorID != 0x2c9 || n.DeviceID != 0x6282 {
		t.Errorf("CA %+v", n)
	}
	if p := top.Port(ca, 1); p.LID != 4 || p.Speed != 3 || p.Width != Width4x || p.GUID != 0x2c90200220f19 {
		t.Errorf("CA port %+v", p)
	}
	if p := top.Port(sw, 7); p.SpeedExt != 1 || p.MlnxSpeed != 1 || p.Speed != 7 {
		t.Errorf("FDR port %+v", p)
	}
	if top.Nodes[sw].LID != 6 || !top.Nodes[sw].EnhancedPort0 || top.Nodes[find(t, top, "S-0008f10400411a09")].EnhancedPort0 {
		t.Errorf("switch annotations")
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, in string
		line     int
		want     string
	}{
		{"port outside record", "[1] \"x\"[1]\n", 1, "outside a node record"},
		{"no port count", "Switch \"a\"\n", 1, "missing port count"},
		{"no id", "Switch 8 a\n", 1, "missing quoted node id"},
		{"too many ports", "Switch 300 \"a\"\n", 1, "300 ports"},
		{"duplicate id", "Switch 2 \"a\"\n\nSwitch 2 \"a\"\n", 3, "already exists"},
		{"duplicate guid", "switchguid=0x5\nSwitch 2 \"a\"\n\nswitchguid=0x5\nSwitch 2 \"b\"\n", 5, "GUID 0x5"},
		{"bad port", "Switch 2 \"a\"\n[x] \"b\"[1]\n", 2, "not a port number"},
		{"port 0", "Switch 2 \"a\"\n[0] \"b\"[1]\n", 2, "port 0"},
		{"port range", "Switch 2 \"a\"\n[3] \"b\"[1]\n", 2, "has 2 ports"},
		{"twice", "Switch 2 \"a\"\n[1] \"b\"[1]\n[1] \"b\"[2]\n", 3, "listed twice"},
		{"no remote", "Switch 2 \"a\"\n[1] b[1]\n", 2, "missing quoted remote"},
		{"bad remote port", "Switch 2 \"a\"\n[1] \"b\"[0]\n", 2, "bad remote port"},
		{"bad width opt", "Switch 2 \"a\"\n[1] \"b\"[1] w=40\n", 2, "w=40"},
		{"bad width ann", "Switch 2 \"a\"\n[1] \"b\"[1] # \"b\" lid 1 3xSDR\n", 2, "3x"},
		{"bad speed ann", "Switch 2 \"a\"\n[1] \"b\"[1] # \"b\" lid 1 4xWDR\n", 2, "WDR"},
		{"unknown remote", "Switch 2 \"a\"\n[1] \"b\"[1]\n", 2, "not in the topology"},
		{"remote port range", "Switch 2 \"a\"\n[1] \"b\"[5]\n\nSwitch 2 \"b\"\n[1] \"a\"[1]\n", 2, "no port 5"},
		{"one way", "Switch 2 \"a\"\n[1] \"b\"[1]\n\nSwitch 2 \"b\"\n", 2, "does not list a link back"},
		{"elsewhere", "Switch 2 \"a\"\n[1] \"b\"[1]\n[2] \"b\"[2]\n\nSwitch 2 \"b\"\n[1] \"a\"[2]\n[2] \"a\"[1]\n", 2, "links elsewhere"},
		{"unknown line", "Swich 2 \"a\"\n", 1, "unknown line"},
		{"bad directive", "switchguid 5\n", 1, "missing '='"},
		{"bad number", "vendid=zz\n", 1, "not a number"},
		{"alias", "Switch 2 \"a\"\n@1 \"x\"\n", 2, "aliases"},
		{"include", "include \"x\"\n", 1, "ParseFile"},
		{"do", "do Link\n", 1, "console commands"},
		{"reserved", "Switch 2 \"a#b\"\n", 1, "reserved"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.in), "f")
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ParseError", err)
			}
			if pe.Line != c.line || !strings.Contains(pe.Msg, c.want) {
				t.Fatalf("err = %v, want line %d and %q", err, c.line, c.want)
			}
		})
	}
}

func TestInclude(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "inner.topo"), []byte("Switch 2 \"b\"\n[1] \"a\"[1]\n[2] \"nowhere\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "outer.topo"), []byte("Switch 2 \"a\"\n[1] \"b\"[1]\n\ninclude \"inner.topo\"\n"), 0o644)
	_, err := ParseFile(filepath.Join(dir, "outer.topo"))
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || !strings.HasSuffix(pe.File, "inner.topo") {
		t.Fatalf("err = %v, want inner.topo line 3", err)
	}
	os.WriteFile(filepath.Join(dir, "inner.topo"), []byte("Switch 2 \"b\"\n[1] \"a\"[1]\n"), 0o644)
	top, err := ParseFile(filepath.Join(dir, "outer.topo"))
	if err != nil || len(top.Nodes) != 2 {
		t.Fatalf("include: %v", err)
	}
}

func roundTrip(t *testing.T, top *Topology) {
	t.Helper()
	if err := top.Validate(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, top); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(bytes.NewReader(buf.Bytes()), "written")
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if len(back.Nodes) != len(top.Nodes) {
		t.Fatalf("%d nodes back, want %d", len(back.Nodes), len(top.Nodes))
	}
	ids := map[string]int{}
	for i := range back.Nodes {
		ids[back.Nodes[i].ID] = i
	}
	for i := range top.Nodes {
		a := &top.Nodes[i]
		j, ok := ids[a.ID]
		if !ok {
			t.Fatalf("node %q lost", a.ID)
		}
		b := &back.Nodes[j]
		if a.Type != b.Type || a.NodeGUID != b.NodeGUID || a.SysImageGUID != b.SysImageGUID || a.NumPorts != b.NumPorts || a.Description() != b.Description() || a.LID != b.LID {
			t.Fatalf("node %q: %+v back as %+v", a.ID, a, b)
		}
		for p := 1; p <= int(a.NumPorts); p++ {
			x, y := top.Port(i, p), back.Port(j, p)
			if x.Peer < 0 {
				if y.Peer >= 0 {
					t.Fatalf("%q[%d] gained a link", a.ID, p)
				}
				continue
			}
			if y.Peer < 0 || back.Nodes[y.Peer].ID != top.Nodes[x.Peer].ID || x.PeerPort != y.PeerPort ||
				x.GUID != y.GUID || x.Width != y.Width || x.Speed != y.Speed || x.SpeedExt != y.SpeedExt || x.SpeedExt2 != y.SpeedExt2 || x.LID != y.LID {
				t.Fatalf("%q[%d]: %+v back as %+v", a.ID, p, x, y)
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	roundTrip(t, mustParseFile(t, "testdata/small.topo"))
	top, err := Parse(strings.NewReader(discovered), "discovered")
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, top)
}

func TestGenerators(t *testing.T) {
	cases := []struct {
		name             string
		gen              func() (*Topology, error)
		sw, ca, rt, cabl int
	}{
		{"fattree 4-ary 3-tree", func() (*Topology, error) { return FatTree(FatTreeConfig{K: 4, N: 3}) }, 48, 64, 0, 64 + 2*16*4},
		{"fattree dual port", func() (*Topology, error) {
			return FatTree(FatTreeConfig{K: 4, N: 2, HCAPorts: 2, Routers: 2, Link: LinkSpec{Lanes: 4, Speed: "EDR"}})
		}, 8, 7, 2, 16 + 4*4},
		{"leafspine XDR", func() (*Topology, error) {
			top, err := LeafSpine(LeafSpineConfig{Leaves: 2, Spines: 1, HostsPerLeaf: 2, Uplinks: 1, Link: LinkSpec{Lanes: 2, Speed: "XDR"}})
			if err == nil {
				// One host without XDR (an NDR annotation), and the leaf
				// end of its link with a width no annotation gives (port
				// options, XDR as x=1).
				top.Port(int(top.Port(0, 1).Peer), int(top.Port(0, 1).PeerPort)).SpeedExt2 = 0
				top.Port(0, 1).Width = Width1x | Width2x
			}
			return top, err
		}, 3, 4, 0, 4 + 2},
		{"leafspine full", func() (*Topology, error) {
			return LeafSpine(LeafSpineConfig{Leaves: 4, Spines: 2, HostsPerLeaf: 6, Uplinks: 4})
		}, 6, 24, 0, 24 + 16},
		{"leafspine sparse", func() (*Topology, error) {
			return LeafSpine(LeafSpineConfig{Leaves: 30, Spines: 10, HostsPerLeaf: 8, Uplinks: 3, Seed: 7})
		}, 40, 240, 0, 240 + 90},
		{"dragonfly", func() (*Topology, error) { return Dragonfly(DragonflyConfig{A: 4, P: 2, H: 2}) }, 36, 72, 0, 72 + 9*6 + 36},
		{"random", func() (*Topology, error) {
			return Random(RandomConfig{Switches: 20, Radix: 12, Hosts: 50, ExtraLinks: 15, Seed: 3, Routers: 1})
		}, 20, 50, 1, 19 + 15 + 51},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top, err := c.gen()
			if err != nil {
				t.Fatal(err)
			}
			s, ca, rt := top.Counts()
			links := 0
			for i := range top.Ports {
				if top.Ports[i].Peer >= 0 {
					links++
				}
			}
			if s != c.sw || ca != c.ca || rt != c.rt || links/2 != c.cabl {
				t.Fatalf("switches %d CAs %d routers %d links %d; want %d %d %d %d", s, ca, rt, links/2, c.sw, c.ca, c.rt, c.cabl)
			}
			if !connected(top) {
				t.Fatal("not connected")
			}
			roundTrip(t, top)
			again, _ := c.gen()
			var a, b bytes.Buffer
			Write(&a, top)
			Write(&b, again)
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatal("generator is not deterministic")
			}
		})
	}
}

func TestGeneratorErrors(t *testing.T) {
	if _, err := FatTree(FatTreeConfig{K: 200, N: 2}); err == nil {
		t.Error("fat tree with 400-port switches accepted")
	}
	if _, err := LeafSpine(LeafSpineConfig{Leaves: 3, Spines: 2, HostsPerLeaf: 1, Uplinks: 1}); err == nil {
		t.Error("uneven uplinks accepted")
	}
	if _, err := Dragonfly(DragonflyConfig{A: 100, P: 100, H: 100}); err == nil {
		t.Error("huge dragonfly accepted")
	}
	if _, err := Random(RandomConfig{Switches: 2, Radix: 2, Hosts: 10}); err == nil {
		t.Error("overfull random fabric accepted")
	}
	if _, err := FatTree(FatTreeConfig{K: 2, N: 2, Link: LinkSpec{Lanes: 3}}); err == nil {
		t.Error("3x accepted")
	}
}

func FuzzParse(f *testing.F) {
	seed, _ := os.ReadFile("testdata/small.topo")
	f.Add(string(seed))
	f.Add(discovered)
	f.Add("Switch 2 \"a\"\n[1] \"b\"[1] # lid 1 4xSDR\n")
	f.Fuzz(func(t *testing.T, in string) {
		top, err := Parse(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		if err := top.Validate(); err != nil {
			// Parse can accept what Validate refuses only for duplicate
			// GUIDs from explicit port GUIDs; anything else is a bug.
			if !strings.Contains(err.Error(), "GUID") {
				t.Fatalf("parsed topology does not validate: %v", err)
			}
		}
		var buf bytes.Buffer
		_ = Write(&buf, top)
	})
}

func TestGenerate(t *testing.T) {
	for spec, nodes := range map[string]int{
		"fattree:k=4,n=3":                                       48 + 64,
		"fat-tree:k=2,n=2,hcaports=2,speed=edr":                 4 + 2,
		"leafspine:leaves=4,spines=2,hosts=6,uplinks=4":         6 + 24,
		"dragonfly:a=4,p=2,h=2":                                 36 + 72,
		"random:switches=10,radix=8,hosts=20,extra=3,routers=1": 10 + 21,
	} {
		top, err := Generate(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if len(top.Nodes) != nodes {
			t.Errorf("%s: %d nodes, want %d", spec, len(top.Nodes), nodes)
		}
	}
	for _, spec := range []string{"torus:k=2", "fattree:k=x", "fattree:q=1", "fattree:k", "fattree:k=4,width=3", "fattree:k=4,speed=WDR"} {
		if _, err := Generate(spec); err == nil {
			t.Errorf("%s accepted", spec)
		}
	}
}

func TestLoad(t *testing.T) {
	if top, err := Load("testdata/small.topo"); err != nil || len(top.Nodes) != 7 {
		t.Fatalf("file: %v", err)
	}
	if top, err := Load("fattree:k=2,n=2"); err != nil || len(top.Nodes) != 8 {
		t.Fatalf("generator: %v", err)
	}
	if _, err := Load("testdata/missing.topo"); err == nil {
		t.Fatal("missing file accepted")
	}
}

// TestGeneratorLimits: fabrics beyond MaxNodes or MaxPorts are refused at
// once, with an estimate of the memory they would need; the largest the
// project benchmarks pass.
func TestGeneratorLimits(t *testing.T) {
	for _, spec := range []string{
		"fattree:k=2,n=21",
		"fattree:k=1,n=100000000",
		"random:switches=10000000,radix=254,hosts=1000",
		"fattree:k=127,n=3",
		"leafspine:leaves=100000000000,spines=1,hosts=8,uplinks=1",
		"dragonfly:a=200,p=10,h=40",
		"random:switches=10,radix=8,hosts=9223372036854775807",
	} {
		start := time.Now()
		_, err := Generate(spec)
		var se *SizeError
		if !errors.As(err, &se) || !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "would need about") {
			t.Errorf("%s: %v, want a SizeError", spec, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: refused after %v", spec, d)
		}
	}
	for _, c := range []LeafSpineConfig{
		{Leaves: 3000, Spines: 1000, HostsPerLeaf: 32, Uplinks: 16, Seed: 1}, // sim's BenchmarkBringUp100k
		{Leaves: 1400, Spines: 400, HostsPerLeaf: 32, Uplinks: 16, Seed: 1},  // BenchmarkBringUp45k
	} {
		if testing.Short() {
			break
		}
		if _, err := LeafSpine(c); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if _, err := Generate("leafspine:leaves=250,spines=20,hosts=40,uplinks=20"); err != nil {
		t.Errorf("the bench fabric: %v", err)
	}
	if _, err := Generate("fattree:k=4,n=2,seed=1"); err == nil {
		t.Error("seed on a fat tree accepted")
	}
	if _, err := Generate("leafspine:seed=-1"); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("negative seed: %v", err)
	}
	big := &Topology{Nodes: make([]Node, MaxNodes+1)}
	if err := big.Validate(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Validate of %d nodes: %v", MaxNodes+1, err)
	}
}

// TestParseOverflow: numbers past 64 bits and GUID counters that would wrap
// are errors, not wrapped values.
func TestParseOverflow(t *testing.T) {
	for _, tc := range []struct{ name, in, msg string }{
		{"port count", "Switch 18446744073709551617 \"s\"\n", "port count"},
		{"switchguid", "switchguid=0x1000000000000000000000\n", "64 bits"},
		{"guid wraps", "switchguid=0xffffffffffffffff\nSwitch 1 \"a\"\nSwitch 1 \"b\"\n", "no GUID left"},
		{"ca guids wrap", "caguid=0xfffffffffffffffe\nCa 2 \"h\"\n", "no GUID left"},
		{"offset", "switchguid=0xffffffffffffff00\nswitchguid+0x100\n", "passes"},
		{"lid", "Switch 1 \"a\" # \"a\" base port 0 lid 99999999999999999999999\n", "bad LID"},
		{"lmc", "Switch 1 \"a\" # \"a\" base port 0 lid 1 lmc 9\n", "bad LMC"},
		{"binary", "Switch 1 \"a\"\x00\n", "binary"},
		{"long line", "#" + strings.Repeat("x", 2<<20), "longer than"},
	} {
		if _, err := Parse(strings.NewReader(tc.in), "t"); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.msg)
		}
	}
	// The last GUID is usable; only the one after it is not.
	if top, err := Parse(strings.NewReader("switchguid=0xffffffffffffffff\nSwitch 1 \"a\"\n"), "t"); err != nil || top.Nodes[0].NodeGUID != 0xffffffffffffffff {
		t.Errorf("the last GUID: %v", err)
	}
}

// FuzzGenerate: no spec panics; what generates validates and reads back
// through Write and Parse. Specs with numbers above 300 are skipped: the
// limits are TestGeneratorLimits's, and fabrics that large only slow the
// fuzzer down.
func FuzzGenerate(f *testing.F) {
	for _, s := range []string{"fattree:k=4,n=2", "fat-tree:k=2,n=3,hcaports=2,routers=1,speed=EDR,width=12",
		"leafspine:leaves=4,spines=2,hosts=8,uplinks=4", "leafspine:leaves=5,spines=3,hosts=2,uplinks=3,seed=7",
		"dragonfly:a=4,p=2,h=2", "random:switches=16,radix=12,hosts=40,extra=8,seed=1,routers=2", "fattree:k=-1", "random:"} {
		f.Add(s)
	}
	big := regexp.MustCompile(`[0-9]{4,}|[3-9][0-9][0-9]`)
	f.Fuzz(func(t *testing.T, spec string) {
		if big.MatchString(spec) {
			return
		}
		top, err := Generate(spec)
		if err != nil {
			return
		}
		if err := top.Validate(); err != nil {
			t.Fatalf("%s: generated but does not validate: %v", spec, err)
		}
		var b bytes.Buffer
		if err := Write(&b, top); err != nil {
			t.Fatalf("%s: does not write: %v", spec, err)
		}
		back, err := Parse(&b, "generated")
		if err != nil || len(back.Nodes) != len(top.Nodes) {
			t.Fatalf("%s: written topology does not read back: %v", spec, err)
		}
	})
}
