package testbed_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/internal/testbed"
)

// diags56 stands for Debian 13's release where a test needs only its
// version, not its root.
var diags56 = &testbed.Release{Name: "trixie", Diags: "56", IBSim: "0.12"}

func TestNormalise(t *testing.T) {
	portInfo44 := "# Port info: Lid 2 port 1\nLinkSpeedExtActive:..............No Extended Speed\n" +
		"LinkSpeedExtSupported:...........0\nLinkSpeedExtEnabled:.............0\n"
	portInfo56 := portInfo44 + "LinkSpeedExtActive2:.............No Extended Speed 2\n" +
		"LinkSpeedExtSupported2:..........0\nLinkSpeedExtEnabled2:............0\n"
	record44 := "\tPortInfo dump:\n\t\tLinkSpeedExtEnabled:.............0\n\tPortInfo dump:\n\t\tLinkSpeedExtEnabled:.............0\n"
	record56 := strings.Repeat("\tPortInfo dump:\n\t\tLinkSpeedExtEnabled:.............0\n"+
		"\t\tLinkSpeedExtActive2:.............No Extended Speed 2\n"+
		"\t\tLinkSpeedExtSupported2:..........0\n\t\tLinkSpeedExtEnabled2:............0\n", 2)
	for _, c := range []struct {
		rel            *testbed.Release
		argv           []string
		out, wantOut   string
		whatIsExpected string
	}{
		{testbed.Bookworm, []string{"smpquery", "portinfo", "2"}, portInfo44, portInfo56, "44's PortInfo gains the XDR lines"},
		{nil, []string{"smpquery", "portinfo", "2"}, portInfo44, portInfo56, "nil is Bookworm"},
		{testbed.Bookworm, []string{"saquery", "PIR"}, record44, record56, "every record of saquery, tabs kept"},
		{diags56, []string{"smpquery", "portinfo", "2"}, portInfo44, portInfo44, "56 is the reference: unchanged"},
		{testbed.Bookworm, []string{"ibportstate", "2", "1"}, portInfo44, portInfo44, "ibportstate is not dump_portinfo"},
		{testbed.Bookworm, []string{"perfquery"}, portInfo44, portInfo44, "other tools print no PortInfo dump"},
	} {
		if out := c.rel.Normalise(c.argv, c.out); out != c.wantOut {
			t.Errorf("%s: %v gives\n%s--- want\n%s", c.whatIsExpected, c.argv, out, c.wantOut)
		}
	}
}

func TestBroken(t *testing.T) {
	for _, c := range []struct {
		rel    *testbed.Release
		argv   []string
		broken bool
	}{
		{diags56, []string{"ibtracert", "-m", "0xc000", "1", "2"}, true},
		{diags56, []string{"ibtracert", "--mlid=0xc000", "1", "2"}, true},
		{diags56, []string{"ibtracert", "1", "2"}, false},
		{diags56, []string{"ibqueryerrors", "-D", "0,1"}, true},
		{diags56, []string{"ibqueryerrors", "--skip-sl"}, false},
		{testbed.Bookworm, []string{"ibtracert", "-m", "0xc000", "1", "2"}, false},
		{testbed.Bookworm, []string{"ibqueryerrors", "-D", "0"}, false},
		{diags56, nil, false},
	} {
		if got := c.rel.Broken(c.argv) != ""; got != c.broken {
			t.Errorf("%s: Broken(%q) = %v", c.rel.Name, c.argv, got)
		}
	}
}

// TestBrokenIs56 runs what Broken names with both releases on one
// simulator: 56.1 crashes (killed by a signal: exit -1) where 44 exits as
// a program does. When a later 56 stops crashing, this fails, and Broken
// and docs/ibtool.md are to be revised. Each crash leaves a client slot
// of the simulator taken: the simulator is this test's alone.
func TestBrokenIs56(t *testing.T) {
	tr := testbed.Trixie(t)
	_, topo := buildTopo(t, testbed.FatTree{Leaves: 2, Spines: 1, HCAsPerLeaf: 2}, nil)
	sim := testbed.Bookworm.StartIBSim(t, topo)
	testbed.StartOpenSM(t, sim, "H-1")
	lidLine := regexp.MustCompile(`(?m)^Lid:\.+(\d+)$`)
	lid := func(path, port string) string {
		out, errOut, code := testbed.RunC(t, sim, "H-2", "smpquery", "-D", "portinfo", path, port)
		m := lidLine.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("LID at %s: exit %d\n%s%s", path, code, out, errOut)
		}
		return m[1]
	}
	// From one CA to another: the search inserts the leaf switch, and
	// 56.1 frees it.
	self, h1 := lid("0", "1"), lid("0,1,1", "1")
	for _, argv := range [][]string{
		{"ibtracert", "-m", "0xc000", self, h1},
		{"ibqueryerrors", "-D", "0,1"},
	} {
		if tr.Broken(argv) == "" {
			t.Errorf("%q is not listed as broken", argv)
		}
		_, _, code := testbed.Bookworm.RunC(t, sim, "H-2", argv...)
		out, errOut, code56 := tr.RunC(t, sim, "H-2", argv...)
		if code < 0 || code56 != -1 {
			t.Errorf("%q: diags 44 exit %d, diags 56 exit %d (want killed by a signal)\n%s%s", argv, code, code56, out, errOut)
		}
	}
}

var (
	argv0    = regexp.MustCompile(`(?m)^/\S*/([^/\s]+): iberror`)
	activity = regexp.MustCompile(`activity count \d+`)
)

// TestDiagsChanges runs both releases' infiniband-diags on one simulator,
// Debian 12's ibsim with its OpenSM, so that only the diags differ: for
// each command line, 44's output through Normalise is 56's, byte for byte,
// and the exit statuses are the same. This is what tells the differences
// of docs/ibtool.md's table from those of the simulators, which each
// release's own comparisons (internal/diags) meet on its own ibsim. The
// command lines cover every tool that reads a fabric; counters, which the
// runs themselves move, are left to the comparisons that mask them.
func TestDiagsChanges(t *testing.T) {
	tr := testbed.Trixie(t)
	f, topo := buildTopo(t, testbed.FatTree{Leaves: 2, Spines: 1, HCAsPerLeaf: 2, DualPortHCAs: true,
		UplinkWidth: testbed.Width12x, UplinkSpeed: testbed.EDR}, func(f *testbed.Fabric) {
		l := f.LinkAt("H-4", 2)
		l.A.Width, l.A.Speed, l.B.Width, l.B.Speed = testbed.Width1x, testbed.SDR, testbed.Width1x, testbed.SDR
		l = f.LinkAt("H-1", 1)
		l.A.Width, l.A.Speed, l.B.Width, l.B.Speed = testbed.Width8x, testbed.HDR, testbed.Width8x, testbed.HDR
	})
	sim := testbed.Bookworm.StartIBSim(t, topo)
	testbed.StartOpenSM(t, sim, "H-1")
	lidLine := regexp.MustCompile(`(?m)^Lid:\.+(\d+)$`)
	lid := func(path, port string) string {
		out, errOut, code := testbed.RunC(t, sim, "H-2", "smpquery", "-D", "portinfo", path, port)
		m := lidLine.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("LID at %s: exit %d\n%s%s", path, code, out, errOut)
		}
		return m[1]
	}
	// From H-2: its leaf is one hop, H-1 behind it, the spine above.
	self, leaf, h1, spine := lid("0", "1"), lid("0,1", "0"), lid("0,1,1", "1"), lid("0,1,5", "0")
	guid := fmt.Sprintf("0x%016x", uint64(f.Node("H-3").PortGUID(1)))
	for _, argv := range [][]string{
		{"ibnetdiscover"}, {"ibnetdiscover", "-p"}, {"ibnetdiscover", "-g"}, {"ibnetdiscover", "-f"}, {"ibnetdiscover", "-s"},
		{"ibhosts"}, {"ibswitches"}, {"iblinkinfo"}, {"iblinkinfo", "-l"}, {"iblinkinfo", "-d"},
		{"smpquery", "nodeinfo", leaf}, {"smpquery", "nodedesc", h1}, {"smpquery", "portinfo", self},
		{"smpquery", "portinfo", leaf, "5"}, {"smpquery", "portinfo", h1, "1"}, {"smpquery", "-D", "portinfo", "0,1,5", "0"},
		{"smpquery", "switchinfo", spine}, {"smpquery", "pkeys", self}, {"smpquery", "sl2vl", leaf}, {"smpquery", "vlarb", self},
		{"smpquery", "guidinfo", leaf}, {"smpquery", "mepi", self, "1"}, {"smpquery", "PortInfoExtended", leaf, "1"},
		{"smpdump", "-D", "0,1", "0x15", "1"},
		{"saquery", "NR", leaf}, {"saquery", "PIR", self + "/1"}, {"saquery", "PIR", leaf + "/0"}, {"saquery", "SWIR", leaf},
		{"saquery", "PR", "--slid", self, "--dlid", h1}, {"saquery", "-s"}, {"saquery", "-g"}, {"saquery", "LR", leaf + "/1"},
		{"ibroute", leaf}, {"ibroute", "-M", spine}, {"dump_fts"}, {"ibtracert", self, h1}, {"ibtracert", "-G", guid, "0x0002c90300c00011"},
		{"ibaddr", h1}, {"ibaddr", "-G", guid}, {"ibportstate", "-D", "0,1", "1"}, {"ibportstate", h1, "1"},
		{"ibstat"}, {"ibstat", "-p"}, {"ibstat", "ibsim0", "3"}, {"sminfo", "-s", "3"},
		{"ibqueryerrors", "--skip-sl", "-s", "PortXmitWait"}, {"ibccquery", "CongestionInfo", leaf},
	} {
		if why := tr.Broken(argv); why != "" {
			t.Logf("%q: not run: %s", argv, why)
			continue
		}
		old, oldErr, oldCode := testbed.Bookworm.RunC(t, sim, "H-2", argv...)
		cur, curErr, curCode := tr.RunC(t, sim, "H-2", argv...)
		// Not the diags': the date, the path the tool was run by, the SM's
		// activity between the two runs.
		for _, m := range []struct {
			re   *regexp.Regexp
			with string
		}{{generatedOn, ""}, {argv0, "$1: iberror"}, {activity, "activity count N"}} {
			old, cur = m.re.ReplaceAllString(old, m.with), m.re.ReplaceAllString(cur, m.with)
		}
		// ibstat: 44 panics where 56 warns and exits 0; ibtool keeps the
		// status (docs/ibtool.md), so Normalise does not forgive it.
		if argv[0] == "ibstat" && oldCode == 255 && curCode == 0 && strings.Contains(curErr, "stat of IB device") {
			oldCode = 0
		}
		if got := testbed.Bookworm.Normalise(argv, old); got != cur || oldCode != curCode {
			t.Errorf("%q: diags 44 (exit %d) normalised differs from 56 (exit %d):\n--- 44\n%s%s--- 56\n%s%s", argv, oldCode, curCode, got, oldErr, cur, curErr)
		}
	}
}
