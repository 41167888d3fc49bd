package diags

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/internal/floor"
	"github.com/rdmakit/rdmakit/internal/testbed"
)

// fnuScriptCache is where the script keeps its topology (IBswcountlimits'
// cache_dir, for no -C and no -P); the test puts back what was there.
const fnuScriptCache = "/var/cache/infiniband-diags/ibnetdiscover--.topology"

func saveFNUCache(t *testing.T) {
	saved, err := os.ReadFile(fnuScriptCache)
	t.Cleanup(func() {
		if err == nil {
			os.WriteFile(fnuScriptCache, saved, 0o644)
		} else {
			os.Remove(fnuScriptCache)
		}
	})
}

// TestIBFindNodesUsingLive compares ibfindnodesusing with the
// infiniband-diags script (which runs ibnetdiscover and ibroute itself)
// on every port of every switch of a fat tree with a missing uplink, and
// on the script's odd arguments. The script runs with -R, one at a time:
// every run rewrites its one topology cache.
func TestIBFindNodesUsingLive(t *testing.T) { eachRelease(t, testIBFindNodesUsingLive) }

func testIBFindNodesUsingLive(t *testing.T, p peers) {
	b := startDiscoverBed(t, p)
	saveFNUCache(t)
	f := discoverFabric(t)
	guid := func(name string) string { return fmt.Sprintf("0x%016x", uint64(f.Node(name).GUID)) }
	var cases [][]string
	for _, n := range f.Nodes {
		if n.Type != testbed.Switch {
			continue
		}
		for p := 0; p <= n.Ports+1; p++ {
			cases = append(cases, []string{guid(n.Name), strconv.Itoa(p)})
		}
	}
	leaf := f.Node(testbed.LeafName(1)).GUID
	cases = append(cases,
		[]string{fmt.Sprintf("0X%X", uint64(leaf)), "5"}, // upper case
		[]string{fmt.Sprintf("%x", uint64(leaf)), "6"},   // no 0x
		[]string{guid(testbed.LeafName(2)), "05"},        // routes match 5, the link does not
		[]string{guid(testbed.LeafName(2)), "abc"},       // Perl's 0
		[]string{guid(testbed.LeafName(2)), "5.0"},
		[]string{guid("H-3"), "1"},          // a CA: not found, exit 1
		[]string{"0x00000000deadbeef", "1"}, // nothing: not found
		[]string{testbed.SpineName(1), "1"}, // a short name: the script pads it, not found
		[]string{guid(testbed.LeafName(3))}, // usage: exit 2
		[]string{},
	)
	for _, args := range cases {
		cArgs := append([]string{"ibfindnodesusing", "-R"}, args...)
		cOut, cErr, cCode := b.c(t, cArgs...)
		if len(args) > 0 && (args[0] == testbed.SpineName(1) || strings.HasPrefix(args[0], "0X")) {
			// Ours finds a switch by name, and by a GUID the script's
			// matching misses (0X): the same as by GUID.
			if cCode != 1 || !strings.Contains(cOut, "not found") {
				t.Errorf("the script found %q: exit %d\n%s%s", args[0], cCode, cOut, cErr)
			}
			byName, errOut, code := b.ours(t, append([]string{"ibfindnodesusing"}, args...)...)
			g := args[0]
			if !strings.HasPrefix(g, "0X") {
				g = guid(g)
			}
			byGUID, _, _ := b.ours(t, "ibfindnodesusing", strings.ToLower(g), args[1])
			if code != 0 || byName != byGUID {
				t.Errorf("by name: exit %d %s\n%s--- by GUID\n%s", code, errOut, byName, byGUID)
			}
			continue
		}
		out, errOut, code := b.ours(t, append([]string{"ibfindnodesusing", "-R"}, args...)...)
		if code != cCode || out != cOut && cCode != 2 {
			t.Errorf("%q: exit %d (C %d)\n%s--- ours\n%s--- C\n%s%s", args, code, cCode, errOut, out, cOut, cErr)
		}
	}
}

// TestIBFindNodesUsingViews checks --json, -v and --all against the text
// of the same run.
func TestIBFindNodesUsingViews(t *testing.T) { eachRelease(t, testIBFindNodesUsingViews) }

func testIBFindNodesUsingViews(t *testing.T, p peers) {
	b := startDiscoverBed(t, p)
	f := discoverFabric(t)
	leaf := fmt.Sprintf("%#x", uint64(f.Node(testbed.LeafName(1)).GUID))
	spine := fmt.Sprintf("%#x", uint64(f.Node(testbed.SpineName(1)).GUID))
	text, _, code := b.ours(t, "ibfindnodesusing", leaf, "5")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	js, errOut, code := b.ours(t, "--json", "ibfindnodesusing", leaf, "5")
	var doc struct {
		Command string
		Result  FindNodesResult
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || code != 0 || doc.Command != "ibfindnodesusing" {
		t.Fatalf("exit %d %v %s\n%s", code, err, errOut, js)
	}
	r := doc.Result
	if r.Switch.GUID != fmt.Sprintf("0x%016x", uint64(f.Node(testbed.LeafName(1)).GUID)) || r.Switch.Port != 5 ||
		r.Peer == nil || r.Peer.Description != testbed.SpineName(1) || r.Peer.NodeType != "Switch" {
		t.Errorf("ends: %+v peer %+v", r.Switch, r.Peer)
	}
	names := func(ps []RoutedPortJSON) (n []string) {
		for _, p := range ps {
			if p.NodeType != "Channel Adapter" || p.LID == 0 || !strings.HasPrefix(p.PortGUID, "0x") {
				t.Errorf("routed port %+v", p)
			}
			n = append(n, p.Name)
		}
		return n
	}
	lines := strings.Split(text, "\n")
	if len(r.Out) == 0 || len(r.In) == 0 || lines[1] != fnuHostLine(names(r.Out)) || lines[4] != fnuHostLine(names(r.In)) {
		t.Errorf("JSON lists %+v / %+v do not give the text\n%s", r.Out, r.In, text)
	}

	// -v: one line per routed port, python-rdma's form.
	v, _, code := b.ours(t, "-v", "ibfindnodesusing", leaf, "5")
	want := fmt.Sprintf("%s 5 (\"%s\" base)", r.Switch.GUID, testbed.LeafName(1))
	if code != 0 || !strings.HasPrefix(v, want) || strings.Count(v, " lid ") != len(r.Out)+len(r.In) {
		t.Errorf("-v: exit %d\n%s", code, v)
	}
	for _, p := range r.Out {
		if l := fmt.Sprintf(" %s lid %d \"%s\"\n", p.PortGUID, p.LID, p.Name); !strings.Contains(v, l) {
			t.Errorf("-v lacks %q", l)
		}
	}

	// --all adds the switches: out of a spine port go the other leaves'
	// own LIDs.
	js, _, code = b.ours(t, "--json", "ibfindnodesusing", "--all", spine, "3")
	doc.Result = FindNodesResult{}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || code != 0 {
		t.Fatalf("--all: exit %d %v", code, err)
	}
	sw := 0
	for _, p := range doc.Result.Out {
		if p.NodeType == "Switch" {
			sw++
		}
	}
	if sw == 0 || !doc.Result.All {
		t.Errorf("--all lists no switch: %+v", doc.Result.Out)
	}

	// Not found: the script's words, exit 1; bad arguments: exit 2.
	out, _, code := b.ours(t, "ibfindnodesusing", "0x1234", "1")
	if code != 1 || out != "Switch \"0x0000000000001234\" not found\n   Try running with the \"-R\" or \"-P\" option.\n" {
		t.Errorf("not found: exit %d %q", code, out)
	}
	if _, _, code := b.ours(t, "ibfindnodesusing", leaf); code != 2 {
		t.Errorf("one argument: exit %d", code)
	}
}

// TestIBFindNodesUsingHostLine checks the name compression against the
// script's own functions, loaded from the installed script, on random
// lists of names.
func TestIBFindNodesUsingHostLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "",
		"H-1":                   " H-1",
		"H-1 H-2 H-3":           " H-1-3",
		"H-1 H-3 H-3 H-4 H-5":   " H-1 H-3 H-3-5",
		"b a2 a1 a3 x":          " a1-3 b x",
		"node07 node08 node010": " node07-08 node010",
	} {
		var names []string
		if in != "" {
			names = strings.Split(in, " ")
		}
		if got := fnuHostLine(names); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	script, err := testbed.LookPath("ibfindnodesusing")
	perl, perr := exec.LookPath("perl")
	floor.Need(t, err == nil && perr == nil, "ibfindnodesusing (infiniband-diags) and perl")
	// The script's subs from sortn up to its main, then one list per
	// input line (names separated by tabs), one output line each.
	prog := `open(my $f, "<", $ARGV[0]) or die; local $/; my $s = <$f>;
$s =~ /(sub sortn.*?)\nsub main/s or die "no subs"; eval $1; die $@ if $@;
open(my $in, "<", $ARGV[1]) or die; local $/ = "\n";
while (my $l = <$in>) { chomp $l; my @h = undef; push @h, split(/\t/, $l) if $l ne "";
  my @x = split ",", compress_hostlist(@h); print "@x\n"; }`
	rng := rand.New(rand.NewPCG(1, 2))
	prefixes := []string{"H-", "node", "cn", "x", "r1n", "gpu-0", ""}
	var lists [][]string
	var in strings.Builder
	for i := 0; i < 300; i++ {
		var l []string
		for j := rng.IntN(12); j > 0; j-- {
			p := prefixes[rng.IntN(len(prefixes))]
			switch rng.IntN(5) {
			case 0:
				l = append(l, p+"HCA") // no number
			case 1:
				l = append(l, fmt.Sprintf("%s%02d", p, rng.IntN(6)))
			default:
				l = append(l, fmt.Sprintf("%s%d", p, rng.IntN(8)))
			}
		}
		lists = append(lists, l)
		in.WriteString(strings.Join(l, "\t") + "\n")
	}
	inFile := t.TempDir() + "/in"
	if err := os.WriteFile(inFile, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(perl, "-e", prog, script, inFile).Output()
	if err != nil {
		t.Fatalf("perl: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != len(lists) {
		t.Fatalf("perl printed %d lines for %d lists", len(got), len(lists))
	}
	for i, l := range lists {
		if ours := fnuHostLine(l); ours != got[i] {
			t.Errorf("%q: ours %q, the script's %q", l, ours, got[i])
		}
	}
}

func TestIBFindNodesUsingPerlNumber(t *testing.T) {
	for in, want := range map[string]float64{"5": 5, "05": 5, " 7x": 7, "abc": 0, "0x10": 0, "5.0": 5, "1e1": 10, "": 0, "-3": -3} {
		if got := perlNumber(in); got != want {
			t.Errorf("perlNumber(%q) = %v, want %v", in, got, want)
		}
	}
	// Only a lower-case "0x" is a prefix; tr/[A-F]/[a-f]/ leaves the X.
	for in, want := range map[string]string{"0x2C9ab": "0x000000000002c9ab", "0X2C9AB": "0x0000000000X2c9ab", "S-leaf-1": "0x00000000S-leaf-1"} {
		if got := fnuFormatGUID(in); got != want {
			t.Errorf("fnuFormatGUID(%q) = %s, want %s", in, got, want)
		}
	}
}

// FuzzFNUTopology: no topology text makes the script's reader panic; the
// switches and link ends it finds come from lines of the text.
func FuzzFNUTopology(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "TestIBNetDiscoverOffline", "dualport.topo")); err == nil {
		f.Add(string(b))
	}
	f.Add("Switch\t8 \"S-0008f10500000000\"\t\t# \"ft-l0-0\" base port 0 lid 1 lmc 0\n" +
		"[1]\t\"H-0002c90300000000\"[1](2c90300000001) \t\t# \"hca1 HCA-1\" lid 6 4xQDR\n" +
		"[2][ext 3]\t\"S-0008f10500000004\"[1][ext 1]\t\t# \"ft-l1-0\" lid 2 4xQDR\n" +
		"\nCa\t1 \"H-0002c90300000000\"\t\t# \"hca1 HCA-1\"\n")
	f.Fuzz(func(t *testing.T, text string) {
		topo, err := parseFNUTopology([]byte(text))
		if err != nil {
			return
		}
		for _, s := range topo.switches {
			if !strings.Contains(text, "S-"+s.guid) {
				t.Fatalf("switch %q is not in the text", s.guid)
			}
		}
		for k, ends := range topo.ends {
			if !strings.HasPrefix(k, "0x") {
				t.Fatalf("switch key %q", k)
			}
			for port, e := range ends {
				if !strings.Contains(text, "["+port+"]") || !strings.HasPrefix(e.guid, "0x") {
					t.Fatalf("port %q end %+v", port, e)
				}
			}
		}
	})
}

// FuzzFNUHostLine: no list of names makes the script's host list
// compression panic, and every name's prefix shows in the line.
func FuzzFNUHostLine(f *testing.F) {
	for _, s := range []string{"H-1,H-2,H-3", "a,b10,b11,b13", "", "x1e5,x1e6", "h-1,h-01,h-2", "1,2,3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		names := strings.Split(list, ",")
		line := fnuHostLine(names)
		for _, n := range names {
			m := fnuNameDigits.FindStringSubmatch(n)
			if p := strings.ReplaceAll(m[1], ",", ""); p != "" && !strings.Contains(line, p) {
				t.Fatalf("%q: prefix %q missing from %q", names, p, line)
			}
		}
	})
}
