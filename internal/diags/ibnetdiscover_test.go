package diags

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/internal/testbed"
)

var generatedOn = regexp.MustCompile(`(?m)^# Topology file: generated on .*$`)

func stripGenerated(s string) string {
	return generatedOn.ReplaceAllString(s, "# Topology file: generated on <time>")
}

// discoverFabric is a fat tree with dual-port HCAs, a missing uplink, a
// missing HCA link and links of several widths and speeds.
func discoverFabric(t *testing.T) *testbed.Fabric {
	t.Helper()
	ft := testbed.FatTree{Leaves: 3, Spines: 2, HCAsPerLeaf: 2, DualPortHCAs: true, UplinkWidth: testbed.Width12x, UplinkSpeed: testbed.EDR}
	f, err := ft.Build()
	if err != nil {
		t.Fatal(err)
	}
	l := f.LinkAt("H-1", 1)
	l.A.Width, l.A.Speed, l.B.Width, l.B.Speed = testbed.Width1x, testbed.SDR, testbed.Width1x, testbed.SDR
	l = f.LinkAt("H-4", 1)
	l.A.Width, l.A.Speed, l.B.Width, l.B.Speed = testbed.Width8x, testbed.HDR, testbed.Width8x, testbed.HDR
	if !f.Unlink(testbed.LeafName(3), ft.UplinkPort(2)) || !f.Unlink("H-6", 2) {
		t.Fatal("nothing to unlink")
	}
	return f
}

type discoverBed struct {
	p    peers
	sim  *testbed.IBSim
	host string
}

// startDiscoverBed brings discoverFabric up on p.sim's ibsim and OpenSM;
// b.c runs p.diags' C tools.
func startDiscoverBed(t *testing.T, p peers) *discoverBed {
	t.Helper()
	p.sim.Require(t)
	p.diags.Require(t)
	topo, err := discoverFabric(t).Topology()
	if err != nil {
		t.Fatal(err)
	}
	sim := p.sim.StartIBSim(t, topo)
	testbed.StartOpenSM(t, sim, "H-1")
	t.Setenv("IBSIM_SOCKNAME", sim.SockName)
	return &discoverBed{p: p, sim: sim, host: "H-2"}
}

func (b *discoverBed) ours(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return run(t, "", append([]string{"ibtool", "--fabric", "ibsim:" + b.host}, args...)...)
}

func (b *discoverBed) c(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return b.p.diags.RunC(t, b.sim, b.host, args...)
}

// same runs the C command and ours with the same arguments and compares
// stdout (but for the time line) and success. The C tool's output is
// normalised to infiniband-diags 56's (testbed.Release.Normalise).
func (b *discoverBed) same(t *testing.T, args ...string) string {
	t.Helper()
	cOut, cErr, cCode := b.c(t, args...)
	cOut = b.p.diags.Normalise(args, cOut)
	out, errOut, code := b.ours(t, args...)
	if (code == 0) != (cCode == 0) {
		t.Errorf("%q: exit %d, C %d\nours: %s\nC: %s", args, code, cCode, errOut, cErr)
	}
	if got, want := stripGenerated(out), stripGenerated(cOut); got != want {
		t.Errorf("%q differs from the C tool:\n%s", args, firstLines(got, want))
	}
	return out
}

// samePartial is same on a fabric where a node does not answer: the C
// tool warns and exits 0, ours prints the same and exits exitIncomplete,
// saying what it lost (docs/ibtool.md).
func (b *discoverBed) samePartial(t *testing.T, args ...string) string {
	t.Helper()
	cOut, cErr, cCode := b.c(t, args...)
	out, errOut, code := b.ours(t, args...)
	if cCode != 0 || code != exitIncomplete || !strings.Contains(errOut, "discovery incomplete: ") {
		t.Errorf("%q: exit %d (C %d), want %d saying the discovery is incomplete\nours: %s\nC: %s", args, code, cCode, exitIncomplete, errOut, cErr)
	}
	if got, want := stripGenerated(out), stripGenerated(cOut); got != want {
		t.Errorf("%q differs from the C tool:\n%s", args, firstLines(got, want))
	}
	return out
}

func firstLines(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	n := 0
	for i := 0; i < max(len(g), len(w)) && n < 6; i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			n++
			b.WriteString("  got:  " + gl + "\n  want: " + wl + "\n")
		}
	}
	return b.String()
}

// TestIBNetDiscoverLive compares ibnetdiscover and its variants, the
// caches in both directions, --diff, and the ibhosts family with the C
// tools on one ibsim fabric.
func TestIBNetDiscoverLive(t *testing.T) { eachRelease(t, testIBNetDiscoverLive) }

func testIBNetDiscoverLive(t *testing.T, p peers) {
	b := startDiscoverBed(t, p)
	dir := t.TempDir()
	nameMap := filepath.Join(dir, "names")
	if err := os.WriteFile(nameMap, []byte("# map\n0x0002c90300a00001 \"leaf one\"\n0x0002c90300c00011 host-one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{}, {"-p"}, {"-l"}, {"-g"}, {"-s"}, {"-H"}, {"-S"}, {"-R"}, {"-f"}, {"-m"}, {"-o", "1"},
		{"--node-name-map", nameMap}, {"-l", "--node-name-map", nameMap},
	} {
		b.same(t, append([]string{"ibnetdiscover"}, args...)...)
	}
	for _, tool := range []string{"ibhosts", "ibswitches", "ibrouters", "ibnodes"} {
		if out := b.same(t, tool); tool != "ibrouters" && out == "" {
			t.Errorf("%s printed nothing", tool)
		}
	}

	// Caches both ways, byte for byte.
	cCache, ourCache := filepath.Join(dir, "c.cache"), filepath.Join(dir, "ours.cache")
	cOut, _, _ := b.c(t, "ibnetdiscover", "--cache", cCache)
	out, errOut, code := b.ours(t, "ibnetdiscover", "--cache", ourCache)
	if code != 0 {
		t.Fatalf("ibnetdiscover --cache: exit %d: %s", code, errOut)
	}
	cb, _ := os.ReadFile(cCache)
	ob, _ := os.ReadFile(ourCache)
	if len(cb) == 0 || !bytes.Equal(cb, ob) {
		t.Errorf("our cache (%d bytes) differs from the C one (%d bytes)", len(ob), len(cb))
	}
	if stripGenerated(out) != stripGenerated(cOut) {
		t.Errorf("ibnetdiscover --cache output differs")
	}
	for _, flags := range [][]string{{}, {"-p"}, {"-g"}, {"-H"}, {"-S"}} {
		b.same(t, append([]string{"ibnetdiscover", "--load-cache", cCache}, flags...)...)
		b.same(t, append([]string{"ibnetdiscover", "--load-cache", ourCache}, flags...)...)
	}

	// --diff against the subnet after a link went down.
	if err := b.sim.Unlink("H-3", 1); err != nil {
		t.Fatal(err)
	}
	b.same(t, "ibnetdiscover", "--diff", cCache)
	b.same(t, "ibnetdiscover", "--diff", cCache, "--diffcheck", "sw,ca,port,lid,nodedesc")
	nowCache := filepath.Join(dir, "now.cache")
	b.c(t, "ibnetdiscover", "--cache", nowCache)
	// The subnets differ: exit 1, as diff(1).
	out, errOut, code = run(t, "", "ibtool", "subnet_diff", cCache, nowCache)
	if code != 1 {
		t.Fatalf("subnet_diff: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Reference subnet has 1 more end ports than the current subnet:", "Reference subnet has 1 more links than the current subnet:",
		"Current subnet has 15 links, reference subnet has 16 links", " All links in the current subnet have the same rate in the reference subnet."} {
		if !strings.Contains(out, want) {
			t.Errorf("subnet_diff lacks %q:\n%s", want, out)
		}
	}
	live, _, code := b.ours(t, "subnet_diff", cCache)
	if code != 1 || live != out {
		t.Errorf("subnet_diff against the live subnet (exit %d) differs from the one against its cache:\n%s", code, firstLines(live, out))
	}
	js, _, code := run(t, "", "ibtool", "--json", "subnet_diff", nowCache, cCache)
	var doc struct {
		Result SubnetDiffResult `json:"result"`
	}
	if code != 1 || json.Unmarshal([]byte(js), &doc) != nil || len(doc.Result.Links.Extra) != 1 || len(doc.Result.EndPorts.Extra) != 1 {
		t.Errorf("subnet_diff --json (exit %d):\n%s", code, js)
	}
}

// TestIBNetDiscoverUnreachable drops every MAD to one HCA in ibsim:
// discovery completes, names the node's place as unreachable, prints what
// the C tool prints for the same fabric, and exits exitIncomplete where
// the C tool exits 0.
func TestIBNetDiscoverUnreachable(t *testing.T) { eachRelease(t, testIBNetDiscoverUnreachable) }

func testIBNetDiscoverUnreachable(t *testing.T, p peers) {
	b := startDiscoverBed(t, p)
	if err := b.sim.SetErrorRate("H-5", -1, 100, 0); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"ibnetdiscover"}, {"ibnetdiscover", "-p"}, {"ibhosts"}} {
		b.samePartial(t, args...)
	}
	_, errOut, code := b.ours(t, "ibnetdiscover")
	if code != exitIncomplete || !strings.Contains(errOut, "no node reachable at DR path") || !strings.Contains(errOut, `"S-leaf-`) ||
		!strings.Contains(errOut, "2 ports lead to a node that did not answer") {
		t.Errorf("exit %d; the unreachable node is not reported:\n%s", code, errOut)
	}
	js, _, code := b.ours(t, "--json", "ibnetdiscover")
	var doc struct {
		Result TopologyJSON `json:"result"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || code != exitIncomplete {
		t.Fatalf("--json: exit %d, %v", code, err)
	}
	if n := len(doc.Result.Unreachable); n != 2 {
		t.Errorf("%d unreachable entries, want 2 (both ports of H-5): %+v", n, doc.Result.Unreachable)
	}
	for _, u := range doc.Result.Unreachable {
		if u.Via == nil || !strings.HasPrefix(u.Via.Description, "S-leaf-") {
			t.Errorf("unreachable entry does not name its switch: %+v", u)
		}
	}
}
