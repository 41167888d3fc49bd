package sim

import (
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// TestXDR: ports that enable XDR (the second group of extended speeds)
// train at it when both ends do, say so in CapabilityMask2 (a switch on
// its port 0), and report it in PortInfo's LinkSpeedExt*2 fields, the
// first group's active speed 0; a link with one end without XDR trains at
// NDR, and that end reports what ibsim reports.
func TestXDR(t *testing.T) {
	tp, err := topo.LeafSpine(topo.LeafSpineConfig{Leaves: 1, Spines: 1, HostsPerLeaf: 2, Uplinks: 1, Link: topo.LinkSpec{Lanes: 4, Speed: "XDR"}})
	if err != nil {
		t.Fatal(err)
	}
	var host2 int
	for i := range tp.Nodes {
		if tp.Nodes[i].Type == iba.NodeTypeCA {
			host2 = i
		}
	}
	tp.Port(host2, 1).SpeedExt2 = 0 // a host without XDR
	f, err := New(tp)
	if err != nil {
		t.Fatal(err)
	}
	pi := func(name string, port int) iba.PortInfo {
		t.Helper()
		idx, err := f.portIndex(name, port)
		if err != nil {
			t.Fatal(err)
		}
		nd := &f.nodes[f.ports[idx].node]
		return f.portInfoGet(nd, &f.ports[idx], uint8(port), false)
	}
	host1Name, host2Name := "", tp.Nodes[host2].ID
	for i := range tp.Nodes {
		if tp.Nodes[i].Type == iba.NodeTypeCA && i != host2 {
			host1Name = tp.Nodes[i].ID
		}
	}
	const xdrCaps = iba.PortCap2IsExtendedSpeeds2Supported | iba.PortCap2IsLinkSpeedXDRSupported
	h1, h2, leaf0 := pi(host1Name, 1), pi(host2Name, 1), pi("leaf1", 0)
	if h1.CapabilityMask2&xdrCaps != xdrCaps || leaf0.CapabilityMask2&xdrCaps != xdrCaps {
		t.Errorf("CapabilityMask2 %#x (host), %#x (leaf port 0): no XDR", h1.CapabilityMask2, leaf0.CapabilityMask2)
	}
	if h1.LinkSpeedExtActive2 != 1 || h1.LinkSpeedExtSupported2 != 1 || h1.LinkSpeedExtEnabled2 != 1 || h1.LinkSpeedExtActive != 0 {
		t.Errorf("XDR host: %+v", h1)
	}
	if a, s, e := h1.ExtSpeeds(&h1); a != iba.LinkSpeedExtXDR || s != 0x2F || e != 0x2F {
		t.Errorf("XDR host's extended speeds %#x %#x %#x", a, s, e)
	}
	if h2.CapabilityMask2&xdrCaps != 0 || h2.LinkSpeedExtSupported2 != 0 || h2.LinkSpeedExtActive != iba.LinkSpeedExtNDR {
		t.Errorf("host without XDR: %+v", h2)
	}
	// The leaf's ends of the two links.
	for port := 1; port <= 2; port++ {
		lp := pi("leaf1", port)
		peer := &f.ports[f.ports[f.nodes[f.ids["leaf1"]].base+int32(port)].peer]
		xdr := f.nodes[peer.node].guid == f.nodes[f.ids[host1Name]].guid
		if a, _, _ := lp.ExtSpeeds(&leaf0); (a == iba.LinkSpeedExtXDR) != xdr {
			t.Errorf("leaf port %d: active %#x, XDR %v", port, a, xdr)
		}
		if lp.CapabilityMask2 != 0 {
			t.Errorf("leaf port %d: CapabilityMask2 %#x, only port 0 has one", port, lp.CapabilityMask2)
		}
	}
	idx, _ := f.portIndex(host1Name, 1)
	if s := linkSpeed(&f.ports[idx]); s != iba.SpeedXDR {
		t.Errorf("the SA's speed of the XDR link: %v", s)
	}
}
