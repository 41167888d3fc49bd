package testbed_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/internal/testbed"
)

func buildTopo(t *testing.T, ft testbed.FatTree, edit func(*testbed.Fabric)) (*testbed.Fabric, string) {
	t.Helper()
	f, err := ft.Build()
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(f)
	}
	topo, err := f.Topology()
	if err != nil {
		t.Fatal(err)
	}
	return f, topo
}

// TestSMPQueryDirectRoute is the floor's smoke test: the C smpquery reaches
// the switch one hop from H-1 by directed route, with no SM running.
func TestSMPQueryDirectRoute(t *testing.T) {
	f, topo := buildTopo(t, testbed.FatTree{Leaves: 2, Spines: 1, HCAsPerLeaf: 2}, nil)
	sim := testbed.StartIBSim(t, topo)
	out, errOut, code := testbed.RunC(t, sim, "H-1", "smpquery", "-D", "nodeinfo", "0,1")
	if code != 0 {
		t.Fatalf("smpquery exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	leaf := f.Node("S-leaf-1")
	guid := regexp.MustCompile(fmt.Sprintf(`(?m)^Guid:\.+0x%016x$`, uint64(leaf.GUID)))
	typ := regexp.MustCompile(`(?m)^NodeType:\.+Switch$`)
	if !guid.MatchString(out) || !typ.MatchString(out) {
		t.Fatalf("smpquery output lacks node GUID %v or type Switch:\n%s", leaf.GUID, out)
	}
}

// TestIBNetDiscoverSeesGeneratedFabric checks the topology writer against
// what ibsim built from it, as ibnetdiscover reports it: every node with its
// GUID, every link with the rate both ends agreed on, and no link where one
// was removed.
func TestIBNetDiscoverSeesGeneratedFabric(t *testing.T) {
	ft := testbed.FatTree{Leaves: 3, Spines: 2, HCAsPerLeaf: 2, DualPortHCAs: true, UplinkWidth: testbed.Width12x, UplinkSpeed: testbed.EDR}
	f, topo := buildTopo(t, ft, func(f *testbed.Fabric) {
		// A degraded link: H-1 enables only 1x SDR, the leaf 4x QDR.
		l := f.LinkAt("H-1", 1)
		l.A.Width, l.A.Speed = testbed.Width1x, testbed.SDR
		// A missing link: leaf 3 lost its uplink to spine 2.
		if !f.Unlink("S-leaf-3", ft.UplinkPort(2)) {
			t.Fatal("no uplink to unlink")
		}
	})
	sim := testbed.StartIBSim(t, topo)
	out, errOut, code := testbed.RunC(t, sim, "H-3", "ibnetdiscover")
	if code != 0 {
		t.Fatalf("ibnetdiscover exit %d\n%s\n%s", code, out, errOut)
	}
	for _, n := range f.Nodes {
		if !strings.Contains(out, fmt.Sprintf("%016x", uint64(n.GUID))) {
			t.Errorf("node %s GUID %v not discovered", n.Name, n.GUID)
		}
	}
	// ibnetdiscover prints each link once per switch end and once per CA
	// end: count the port lines.
	portLine := regexp.MustCompile(`(?m)^\[\d+\]`)
	want := 2 * len(f.Links)
	if got := len(portLine.FindAllString(out, -1)); got != want {
		t.Errorf("ibnetdiscover shows %d port lines, want %d for %d links:\n%s", got, want, len(f.Links), out)
	}
	if !strings.Contains(out, "1xSDR") {
		t.Errorf("degraded H-1 link not shown as 1xSDR:\n%s", out)
	}
	if !strings.Contains(out, "12xEDR") {
		t.Errorf("12x EDR uplinks not shown:\n%s", out)
	}
}

// TestOpenSMBringsSubnetUp runs OpenSM as the SA and checks LID-routed
// diags and the SA through it.
func TestOpenSMBringsSubnetUp(t *testing.T) {
	_, topo := buildTopo(t, testbed.FatTree{Leaves: 2, Spines: 1, HCAsPerLeaf: 2}, nil)
	sim := testbed.StartIBSim(t, topo)
	sm := testbed.StartOpenSM(t, sim, "H-1")
	if !sm.Running() {
		t.Fatal("opensm exited after SUBNET UP")
	}
	out, errOut, code := testbed.RunC(t, sim, "H-4", "saquery", "-s")
	if code != 0 {
		t.Fatalf("saquery -s exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "IsSM ports") || !strings.Contains(out, "PortInfoRecord dump:") {
		t.Errorf("saquery -s does not list the SM port:\n%s", out)
	}
	out, errOut, code = testbed.RunC(t, sim, "H-4", "perfquery")
	if code != 0 || !strings.Contains(out, "PortXmitData") {
		t.Fatalf("perfquery exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestConsoleErrorRate drives ibsim's console: with every NodeInfo to H-2
// dropped, smpquery fails; after clearing the rate it works again.
func TestConsoleErrorRate(t *testing.T) {
	_, topo := buildTopo(t, testbed.FatTree{Leaves: 1, HCAsPerLeaf: 2}, nil)
	sim := testbed.StartIBSim(t, topo)
	if err := sim.SetErrorRate("H-2", 1, 100, 0x11); err != nil {
		t.Fatal(err)
	}
	_, _, code := testbed.RunC(t, sim, "H-1", "smpquery", "-D", "nodeinfo", "0,1,2")
	if code == 0 {
		t.Fatal("smpquery succeeded through a 100% drop")
	}
	if err := sim.SetErrorRate("H-2", -1, 0, 0); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := testbed.RunC(t, sim, "H-1", "smpquery", "-D", "nodeinfo", "0,1,2")
	if code != 0 {
		t.Fatalf("smpquery after clearing the drop: exit %d\n%s\n%s", code, out, errOut)
	}
	if err := sim.SetErrorRate("no-such-node", 1, 30, 0); err == nil {
		t.Error("error rate on a missing node accepted")
	}
	att, err := sim.Console("Attached")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(att, "Client") {
		t.Errorf("clients still attached after the diags exited:\n%s", att)
	}
}

// TestInetMode runs ibsim in remote mode and a diag over UDP.
func TestInetMode(t *testing.T) {
	_, topo := buildTopo(t, testbed.FatTree{Leaves: 1, HCAsPerLeaf: 2}, nil)
	sim := testbed.StartIBSimWith(t, topo, testbed.IBSimOptions{Inet: true})
	if sim.Port == 0 || sim.SockName != "" {
		t.Fatalf("inet simulator has port %d, sockname %q", sim.Port, sim.SockName)
	}
	out, errOut, code := testbed.RunC(t, sim, "H-2", "smpquery", "-D", "nodedesc", "0,1")
	if code != 0 || !strings.Contains(out, "S-leaf-1") {
		t.Fatalf("smpquery over inet: exit %d\n%s\n%s", code, out, errOut)
	}
}
