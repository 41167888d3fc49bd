package diags

import (
	"regexp"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// xdrFabric is a leaf/spine fabric of 4x XDR links, which ibsim cannot
// stage: one host enables no XDR (its link trains at NDR) and one uplink
// is 2x wide.
func xdrFabric(t *testing.T) *topo.Topology {
	t.Helper()
	tp, err := topo.LeafSpine(topo.LeafSpineConfig{Leaves: 2, Spines: 1, HostsPerLeaf: 2, Uplinks: 1, Link: topo.LinkSpec{Lanes: 4, Speed: "XDR"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range tp.Nodes {
		n := &tp.Nodes[i]
		switch n.ID {
		case "hca4":
			tp.Port(i, 1).SpeedExt2 = 0
		case "leaf2":
			tp.SetLink(i, 3, topo.Width2x, iba.LinkSpeedSDR|iba.LinkSpeedDDR|iba.LinkSpeedQDR, 0xF, iba.LinkSpeedExt2XDR, 1)
		}
	}
	return tp
}

// TestXDRLive serves xdrFabric to OpenSM and the C tools of Debian 13
// (infiniband-diags 56, the first release that reads XDR) and compares
// what ibtool prints: the topology and its ports report, the link lines,
// the XDR lines of PortInfo and ibportstate's second group of extended
// speeds.
func TestXDRLive(t *testing.T) {
	tr := testbed.Trixie(t)
	_, bed := serveTopo(t, xdrFabric(t), "hca1", tr)
	l := &live{p: peers{sim: tr, diags: tr}, sim: bed}
	host := "hca2"
	c := func(args ...string) (string, string, int) { return tr.RunC(t, bed, host, args...) }
	ours := func(args ...string) (string, string, int) {
		return run(t, "", append([]string{"ibtool", "--fabric", "ibsim:" + host}, args...)...)
	}
	lidLine := regexp.MustCompile(`(?m)^Lid:\.+(\d+)$`)
	lid := func(path, port string) string {
		out, errOut, code := c("smpquery", "-D", "portinfo", path, port)
		m := lidLine.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("LID at %s: exit %d\n%s%s", path, code, out, errOut)
		}
		return m[1]
	}
	self, leaf1 := lid("0", "1"), lid("0,1", "0")
	for _, args := range [][]string{
		{"ibnetdiscover"}, {"ibnetdiscover", "-p"}, {"ibnetdiscover", "-f"},
		{"iblinkinfo"}, {"iblinkinfo", "-l"}, {"iblinkinfo", "--switches-only", "-d"},
		{"ibqueryerrors", "--skip-sl", "-r"},
		{"smpquery", "portinfo", self, "1"}, {"smpquery", "portinfo", leaf1, "3"}, {"smpquery", "portinfo", leaf1, "0"},
		{"smpquery", "-D", "portinfo", "0,1,3,2", "3"}, {"smpquery", "-D", "portinfo", "0,1,3,2,2", "1"},
		{"ibportstate", leaf1, "0"}, {"ibportstate", self, "1"}, {"ibportstate", "-D", "0,1", "1"},
		{"ibportstate", "-D", "0,1,3,2", "3"}, {"ibportstate", "-D", "0,1,3,2", "2"},
	} {
		if l.broken(t, args[0], args[1:]) {
			continue
		}
		cOut, cErr, cCode := c(args...)
		out, errOut, code := ours(args...)
		l.check(t, args[0], args[1:], stripGenerated(cOut), cErr, cCode, stripGenerated(out), errOut, code, nil)
	}
	// What the comparisons stand on: XDR and NDR links, and the second
	// group of extended speeds where ibportstate shows a port.
	out, _, _ := ours("iblinkinfo", "-l")
	for _, want := range []string{"( 4X         212.5 Gbps Active/", "( 4X        106.25 Gbps Active/", "( 2X         212.5 Gbps Active/"} {
		if !strings.Contains(out, want) {
			t.Errorf("iblinkinfo shows no %q link:\n%s", want, out)
		}
	}
	out, _, _ = ours("ibportstate", "-D", "0,1", "1")
	if !strings.Contains(out, "LinkSpeedExtActive2:.............212.5 Gbps\n") || strings.Count(out, "LinkSpeedExtSupported2:") != 2 {
		t.Errorf("ibportstate of an XDR switch port and its peer:\n%s", out)
	}
	// No CapabilityMask2 bit is named that libibmad 56 does not name.
	out, _, _ = ours("smpquery", "portinfo", self, "1")
	if !strings.Contains(out, "CapabilityMask2:.................0x1830\n\t\t\t\tIsLinkWidth2xSupported\n\t\t\t\tIsLinkSpeedHDRSupported\nLinkSpeedExtActive:") {
		t.Errorf("smpquery portinfo of an XDR port:\n%s", out)
	}
}
