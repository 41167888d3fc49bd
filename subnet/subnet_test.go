package subnet

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

func TestDRPath(t *testing.T) {
	p, err := ParseDRPath("0,1,5")
	if err != nil || p.String() != "0,1,5" || len(p) != 2 {
		t.Fatalf("ParseDRPath: %v %v", p, err)
	}
	if q := p.Extend(7); q.String() != "0,1,5,7" || p.String() != "0,1,5" {
		t.Errorf("Extend changed the original or gave %v", q)
	}
	if (DRPath{}).String() != "0" {
		t.Error("empty path is not \"0\"")
	}
	for _, bad := range []string{"", "0,x", "0,0", "0,256", "0," + strings.Repeat("1,", 63) + "1"} {
		if _, err := ParseDRPath(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseDRPath(%q): %v, want ErrInvalid", bad, err)
		}
	}
}

func TestIncrementalFill(t *testing.T) {
	f, start := fatTree(2, 2, 3, 2)
	dead := f.nodes[0x2c90300c00000+6<<4] // host-6, on leaf 2
	dead.dead = true
	s := f.discover(t, start, 1)

	if s.Len() != 2+2+5 {
		t.Fatalf("%d nodes, want 9 (one host dead)", s.Len())
	}
	from, fromPort := s.From()
	if from.GUID != start.guid || fromPort != 1 || from.Index() != 0 || len(from.Path) != 0 {
		t.Errorf("start %v port %d index %d path %v", from.GUID, fromPort, from.Index(), from.Path)
	}
	leaf1 := s.Node(0x2c90300a00001)
	if leaf1 == nil || leaf1.Path.String() != "0,1" || leaf1.Description() != "leaf-1" {
		t.Fatalf("leaf-1: %+v", leaf1)
	}
	if n := s.NodeAt(DRPath{1, 4}); n == nil || n.Description() != "spine-1" {
		t.Errorf("NodeAt(0,1,4) = %v", n)
	}
	if n := s.NodesByName("host-2"); len(n) != 1 || n[0].Path.String() != "0,1,2" {
		t.Errorf("host-2 by name: %v", n)
	}
	// LIDs: spines 1,2; leaf-1 3; hosts with LMC 2 take 4 LIDs each.
	h1 := s.Node(start.guid).Port(1)
	if first, last := h1.LIDs(); first != 4 || last != 7 {
		t.Errorf("host-1 LIDs %d-%d, want 4-7", first, last)
	}
	for lid := uint16(4); lid <= 7; lid++ {
		if s.PortByLID(lid) != h1 {
			t.Errorf("LID %d does not find host-1", lid)
		}
	}
	if p := s.PortByLID(3); p == nil || p.Node != leaf1 || p.Num != 0 {
		t.Errorf("LID 3 gives %v, want leaf-1 port 0", p)
	}
	if p := s.PortByGUID(leaf1.GUID); p == nil || p.Num != 0 {
		t.Errorf("switch port GUID finds %v, want port 0", p)
	}
	if p := s.PortByGUID(start.guid + 1); p != h1 {
		t.Errorf("CA port GUID finds %v", p)
	}
	// A switch's ports carry its LID; links are two-way with rates.
	up := leaf1.Port(4)
	if up.BaseLID != 3 || up.Remote == nil || up.Remote.Remote != up || up.Remote.Node.Description() != "spine-1" {
		t.Errorf("leaf-1 port 4: %+v", up)
	}
	if lanes, speed := up.Rate(); lanes != 4 || speed != iba.SpeedEDR {
		t.Errorf("uplink rate %dx%v", lanes, speed)
	}
	un := s.Unreachable()
	if len(un) != 1 || un[0].Path.String() != "0,1,4,2,3" && un[0].Path.String() != "0,1,5,2,3" || !errors.Is(un[0].Reason, errNoAnswer) || un[0].Via == nil {
		t.Errorf("unreachable: %+v", un)
	}
	// Partial data: a port with no link prints nothing, a port with no
	// PortInfo has no rate.
	if lanes, _ := (&Port{Node: leaf1}).Rate(); lanes != 0 {
		t.Error("rate from no PortInfo")
	}
	if err := s.SetSwitchInfo(from, make([]byte, AttrSize)); !errors.Is(err, ErrInvalid) {
		t.Errorf("SwitchInfo for a CA: %v", err)
	}
	if _, err := s.SetPortInfo(from, 0, make([]byte, AttrSize)); !errors.Is(err, ErrInvalid) {
		t.Errorf("PortInfo of CA port 0: %v", err)
	}
	if _, _, _, err := s.AddNode(make([]byte, 10), nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("short NodeInfo: %v", err)
	}
	// A node seen again with another port count is rejected.
	ni := start.nodeInfo(1)
	ni[3] = 5
	if _, _, _, err := s.AddNode(ni, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("changed NodeInfo: %v", err)
	}
}

// TestDescriptionChange: the name index follows a new description.
func TestDescriptionChange(t *testing.T) {
	f, start := fatTree(1, 0, 1, 0)
	s := f.discover(t, start, 1)
	n := s.Node(start.guid)
	d := make([]byte, AttrSize)
	copy(d, "renamed\x01host")
	if err := s.SetNodeDescription(n, d); err != nil {
		t.Fatal(err)
	}
	if len(s.NodesByName("host-1")) != 0 || len(s.NodesByName("renamed host")) != 1 {
		t.Error("name index not updated (or control byte not cleaned)")
	}
}

func TestSwitchTables(t *testing.T) {
	f, start := fatTree(1, 0, 2, 0)
	s := f.discover(t, start, 1)
	sw := s.NodesOfType(iba.NodeTypeSwitch)[0]
	blk := make([]byte, AttrSize)
	for i := range blk {
		blk[i] = uint8(i % 3)
	}
	if err := s.SetLFTBlock(sw, 2, blk); err != nil {
		t.Fatal(err)
	}
	if p, ok := sw.LFTPort(128 + 5); !ok || p != 2 {
		t.Errorf("LFT 133 = %d %v", p, ok)
	}
	if _, ok := sw.LFTPort(5); ok {
		t.Error("an unread LFT block gives a port")
	}
	mft := make([]byte, AttrSize)
	mft[2*3], mft[2*3+1] = 0x80, 0x06 // MLID 0xC000+32+3: ports 1, 2 and 15
	if err := s.SetMFTBlock(sw, 1, 0, mft); err != nil {
		t.Fatal(err)
	}
	if got := sw.MFTPorts(0xc000 + 32 + 3); len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 15 {
		t.Errorf("MFT ports %v", got)
	}
	if err := s.SetLFTBlock(sw, 768, blk); !errors.Is(err, ErrInvalid) {
		t.Errorf("LFT block 768: %v", err)
	}
}

func TestProgressLine(t *testing.T) {
	f, start := fatTree(1, 0, 1, 0)
	s := New()
	n, p, isNew, err := s.AddNode(start.nodeInfo(1), DRPath{})
	if err != nil {
		t.Fatal(err)
	}
	// The format of ibnetdiscover -s, as it printed on ibsim.
	want := `DR path slid 0; dlid 0; 0 -> new Channel Adapter {0002c90300c00010} portnum 1 lid 0-0 ""`
	if got := ProgressLine(DRPath{}, isNew, n, p); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	sw := f.nodes[0x2c90300a00001]
	n, p, isNew, _ = s.AddNode(sw.nodeInfo(1), DRPath{1})
	want = `DR path slid 0; dlid 0; 0,1 -> new Switch {0002c90300a00001} portnum 0 lid 0-0 ""`
	if got := ProgressLine(DRPath{1}, isNew, n, p); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestGolden prints the C tool's caches (stored by the live test with
// -update) in every variant and compares with what the C tool printed from
// them; the caches also write back byte for byte and survive our own
// cache format.
func TestGolden(t *testing.T) {
	caches, _ := filepath.Glob(filepath.Join("testdata", "TestGolden", "*.cache"))
	if len(caches) == 0 {
		t.Fatal("no golden caches in testdata/TestGolden")
	}
	variants := map[string]func(s *Subnet, w *bytes.Buffer) error{
		".topo":     func(s *Subnet, w *bytes.Buffer) error { return s.WriteTopology(w, TopologyOptions{}) },
		"-f.golden": func(s *Subnet, w *bytes.Buffer) error { return s.WriteTopology(w, TopologyOptions{Full: true}) },
		"-g.golden": func(s *Subnet, w *bytes.Buffer) error { return s.WriteTopology(w, TopologyOptions{Group: true}) },
		"-m.golden": func(s *Subnet, w *bytes.Buffer) error { return s.WriteTopology(w, TopologyOptions{ReportHops: true}) },
		"-p.golden": func(s *Subnet, w *bytes.Buffer) error { return s.WritePortsReport(w, TopologyOptions{}) },
		"-l.golden": func(s *Subnet, w *bytes.Buffer) error { return s.WriteNodeList(w, TopologyOptions{}, 1, 2, 3) },
		"-H.golden": func(s *Subnet, w *bytes.Buffer) error { return s.WriteNodeList(w, TopologyOptions{}, 1) },
		"-S.golden": func(s *Subnet, w *bytes.Buffer) error { return s.WriteNodeList(w, TopologyOptions{}, 2) },
		"-R.golden": func(s *Subnet, w *bytes.Buffer) error { return s.WriteNodeList(w, TopologyOptions{}, 3) },
	}
	for _, c := range caches {
		name := strings.TrimSuffix(filepath.Base(c), ".cache")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(c)
			if err != nil {
				t.Fatal(err)
			}
			s, err := ParseIBNDCache(data)
			if err != nil {
				t.Fatal(err)
			}
			var back bytes.Buffer
			if err := s.WriteIBNDCache(&back); err != nil || !bytes.Equal(back.Bytes(), data) {
				t.Errorf("cache does not write back identically (%v)", err)
			}
			// Through our own format and back: the same libibnetdisc bytes.
			var own bytes.Buffer
			if err := s.WriteCache(&own); err != nil {
				t.Fatal(err)
			}
			s2, err := ParseCache(own.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			var back2 bytes.Buffer
			if err := s2.WriteIBNDCache(&back2); err != nil || !bytes.Equal(back2.Bytes(), data) {
				t.Errorf("cache through our format differs (%v)", err)
			}
			for suffix, write := range variants {
				var b bytes.Buffer
				if err := write(s, &b); err != nil {
					t.Fatal(err)
				}
				got := stripTime(b.String())
				path := filepath.Join("testdata", "TestGolden", name+suffix)
				if *update {
					writeGolden(t, "TestGolden", name+suffix, []byte(got))
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if got != string(want) {
					t.Errorf("%s differs:\n%s", suffix, lineDiff(got, string(want)))
				}
			}
		})
	}
}

func TestTopologyTimeLine(t *testing.T) {
	f, start := fatTree(1, 0, 1, 0)
	s := f.discover(t, start, 1)
	var b bytes.Buffer
	when := time.Date(2026, 3, 7, 9, 4, 5, 0, time.UTC)
	if err := s.WriteTopology(&b, TopologyOptions{Now: when}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "#\n# Topology file: generated on Sat Mar  7 09:04:05 2026\n#\n") {
		t.Errorf("header:\n%s", b.String())
	}
	if err := New().WriteTopology(&b, TopologyOptions{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty subnet: %v", err)
	}
}

func TestNodeNameMap(t *testing.T) {
	f, start := fatTree(1, 0, 1, 0)
	s := f.discover(t, start, 1)
	var b bytes.Buffer
	names := func(g iba.GUID, desc string) string {
		if g == 0x2c90300a00001 {
			return "rack1-leaf"
		}
		return desc
	}
	if err := s.WriteTopology(&b, TopologyOptions{NodeName: names}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, `# "rack1-leaf" base port 0`) || !strings.Contains(out, `"rack1-leaf" lid 1 4xQDR`) {
		t.Errorf("node name map not applied:\n%s", out)
	}
}

func TestReadTopologyIBSimFile(t *testing.T) {
	// ibsim's own syntax: no GUID lines (counters), "Hca", no comments on
	// some lines, an alias line.
	const net = `
Switch	3 "sw1"		# "Switch One" enhanced port 0 lid 7 lmc 1
[1]	"hca1"[1]		# "hca1" lid 2 4xFDR
[2]	"hca2"[2]
@fabric

Hca	1 "hca1"
[1]	"sw1"[1]		# lid 2 lmc 0 "sw1" lid 7 4xFDR

Hca	2 "hca2"
[2]	"sw1"[2]
`
	s, err := ReadTopology(strings.NewReader(net))
	if err != nil {
		t.Fatal(err)
	}
	sw := s.Node(0x200000)
	if sw == nil || !sw.EnhancedSP0 || sw.SMALID != 7 || sw.SMALMC != 1 || sw.Description() != "Switch One" {
		t.Fatalf("switch: %+v", sw)
	}
	h1, h2 := s.Node(0x100000), s.Node(0x100002)
	if h1 == nil || h2 == nil || h2.Description() != "hca2" {
		t.Fatalf("CAs by ibsim GUID counters: %v %v", h1, h2)
	}
	if p := h2.Port(2); p == nil || p.GUID != 0x100004 || p.Remote != sw.Port(2) {
		t.Errorf("hca2 port 2: %+v", p)
	}
	if lanes, speed := sw.Port(1).Rate(); lanes != 4 || speed != iba.SpeedFDR {
		t.Errorf("rate %dx%v", lanes, speed)
	}
	if s.PortByLID(2) != h1.Port(1) || s.PortByLID(8) != sw.Port(0) {
		t.Error("LIDs (with the switch's LMC 1) not indexed")
	}
}

func TestReadTopologyErrors(t *testing.T) {
	for _, tc := range []struct{ name, text string }{
		{"port outside record", "[1]\t\"x\"[1]\n"},
		{"undefined peer", "Switch 2 \"a\"\n[1]\t\"nobody\"[1]\n"},
		{"port out of range", "Switch 2 \"a\"\n[3]\t\"a\"[1]\n"},
		{"bad port count", "Switch 0 \"a\"\n"},
		{"duplicate id", "Switch 2 \"a\"\n\nSwitch 2 \"a\"\n"},
		{"include", "include \"other.net\"\n"},
		{"duplicate port", "Switch 2 \"a\"\n[1]\t\"a\"[2]\n[1]\t\"a\"[2]\n"},
	} {
		if _, err := ReadTopology(strings.NewReader(tc.text)); !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: %v, want ErrSyntax", tc.name, err)
		}
	}
	if _, err := ReadTopology(strings.NewReader(strings.Repeat("x", maxTopologyLine+1))); err == nil {
		t.Error("overlong line accepted")
	}
}

func goldenCache(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "TestGolden", "dualport.cache"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestCorruptIBNDCache(t *testing.T) {
	good := goldenCache(t)
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	for _, tc := range []struct {
		name   string
		data   []byte
		offset int64
		msg    string
	}{
		{"empty", nil, 0, "truncated header"},
		{"short header", good[:20], 20, "truncated header"},
		{"magic", mut(func(b []byte) []byte { b[0] = 0; return b }), 0, "magic"},
		{"version", mut(func(b []byte) []byte { b[4] = 2; return b }), 4, "version 2"},
		{"counts too big", mut(func(b []byte) []byte { b[8] = 0xff; return b }), 8, "do not fit"},
		{"truncated port", good[:len(good)-10], int64(len(good) - 95), "port record 39 truncated"},
		{"trailing", append(append([]byte(nil), good...), 1, 2, 3), int64(len(good)), "3 bytes after"},
		{"start node", mut(func(b []byte) []byte { b[16] ^= 0xff; return b }), 16, "start node"},
		{"keys overrun", func() []byte {
			// One node, no port records, claiming 3 port keys that are
			// not there.
			b := append([]byte(nil), good[:28+207]...)
			b[8], b[9], b[12] = 1, 0, 0
			copy(b[16:24], b[28+68:28+76])
			b[28+206] = 3
			return b
		}(), 28 + 207, "port keys"},
		{"more keys than ports", func() []byte {
			b := append([]byte(nil), good[:28+207]...)
			b[8], b[9], b[12] = 1, 0, 0
			copy(b[16:24], b[28+68:28+76])
			b[28+206] = 0xff
			return b
		}(), 28 + 206, "255 port keys for ports 0 to"},
		{"255 ports", mut(func(b []byte) []byte { b[28+77] = 255; return b }), 28 + 76, "255 ports, more than the 254"},
		{"node type", mut(func(b []byte) []byte { b[28+76] = 7; return b }), 28 + 76, "NodeType 7"},
	} {
		_, err := ParseIBNDCache(tc.data)
		var ce *CacheError
		if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want a CacheError", tc.name, err)
			continue
		}
		if ce.Offset != tc.offset || !strings.Contains(ce.Msg, tc.msg) {
			t.Errorf("%s: %v, want offset %d and %q", tc.name, err, tc.offset, tc.msg)
		}
	}
}

func TestOwnCacheRoundTrip(t *testing.T) {
	f, start := fatTree(3, 2, 4, 1)
	f.nodes[0x2c90300c00000+5<<4].dead = true
	s := f.discover(t, start, 1)
	sw := s.NodesOfType(iba.NodeTypeSwitch)[1]
	blk := make([]byte, AttrSize)
	blk[3] = 7
	if err := s.SetLFTBlock(sw, 1, blk); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMFTBlock(sw, 0, 0, blk); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := s.WriteCache(&b); err != nil {
		t.Fatal(err)
	}
	s2, err := ParseCache(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var b2 bytes.Buffer
	if err := s2.WriteCache(&b2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), b2.Bytes()) {
		t.Error("our cache does not round trip")
	}
	if d := Diff(s, s2); len(d) != 0 {
		t.Errorf("diff after round trip: %v", d)
	}
	sw2 := s2.Node(sw.GUID)
	if p, ok := sw2.LFTPort(67); !ok || p != 7 || sw2.Path.String() != sw.Path.String() {
		t.Errorf("tables or path lost: %v %v %v", p, ok, sw2.Path)
	}
	if u := s2.Unreachable(); len(u) != 1 || u[0].Reason.Error() != errNoAnswer.Error() || u[0].Via == nil {
		t.Errorf("unreachable after round trip: %+v", u)
	}
	// Corruption is found and located.
	data := b.Bytes()
	for _, tc := range []struct {
		name   string
		data   []byte
		offset int64
	}{
		{"truncated", data[:len(data)-1], 16},
		{"magic", append([]byte("XXXXXXXX"), data[8:]...), 0},
		{"flipped byte", func() []byte { c := append([]byte(nil), data...); c[200] ^= 1; return c }(), 56},
		{"short", data[:10], 10},
	} {
		_, err := ParseCache(tc.data)
		var ce *CacheError
		if !errors.As(err, &ce) || ce.Offset != tc.offset {
			t.Errorf("%s: %v, want a CacheError at %d", tc.name, err, tc.offset)
		}
	}
}

func TestDiff(t *testing.T) {
	f, start := fatTree(2, 1, 2, 0)
	ref := f.discover(t, start, 1)
	// The current fabric: host-4 gone, a host link slower, host-1's LID
	// changed, leaf-2's uplink moved to port 5 of the spine... as a new
	// link to a new node.
	g, start2 := fatTree(2, 1, 2, 0)
	delete(g.nodes, 0x2c90300c00000+4<<4)
	leaf2 := g.nodes[0x2c90300a00002]
	leaf2.ports[2] = fakePort{}
	leaf1 := g.nodes[0x2c90300a00001]
	leaf1.ports[2].width = 1
	g.nodes[0x2c90300c00000+2<<4].ports[1].width = 1
	g.nodes[start2.guid].ports[1].lid = 99
	cur := g.discover(t, start2, 1)

	kinds := map[ChangeKind]int{}
	for _, c := range Diff(ref, cur) {
		kinds[c.Kind]++
		if c.Kind == RateChanged && (c.Old != "4xQDR" || c.New != "1xQDR") {
			t.Errorf("rate change %v", c)
		}
		if c.Kind == LIDChanged && (c.Old != "lid 3 lmc 0" || c.New != "lid 99 lmc 0") {
			t.Errorf("LID change %v", c)
		}
	}
	want := map[ChangeKind]int{NodeMissing: 1, LinkMissing: 1, RateChanged: 1, LIDChanged: 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%v: %d, want %d (all: %v)", k, kinds[k], n, Diff(ref, cur))
		}
	}
	if len(Diff(ref, ref)) != 0 {
		t.Error("a subnet differs from itself")
	}
	back := Diff(cur, ref)
	found := false
	for _, c := range back {
		found = found || c.Kind == NodeAdded
	}
	if !found {
		t.Errorf("reverse diff lacks the added node: %v", back)
	}
}
