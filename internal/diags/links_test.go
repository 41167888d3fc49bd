package diags

import (
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

// caPort builds a CA's port 1 from its PortInfo, for the link line tests.
func caPort(t *testing.T, pi iba.PortInfo) *subnet.Port {
	t.Helper()
	n := &subnet.Node{Type: iba.NodeTypeCA, NumPorts: 1}
	p := &subnet.Port{Node: n, Num: 1, HasInfo: true}
	if err := pi.MarshalTo(p.Info[:]); err != nil {
		t.Fatal(err)
	}
	n.Ports = []*subnet.Port{nil, p}
	return p
}

// TestLinkXDR: a link both ends of which support XDR but which runs at
// NDR could be at 212.5 Gbps, as infiniband-diags 56 says (get_max_msg over
// both groups of extended speeds); the second group counts only where
// CapabilityMask2 says it is there. No simulator stages such a link.
func TestLinkXDR(t *testing.T) {
	const caps = iba.PortCapIsExtendedSpeedsSupported | iba.PortCapIsCapabilityMask2Supported
	ndr := iba.PortInfo{CapabilityMask: caps, CapabilityMask2: iba.PortCap2IsExtendedSpeeds2Supported,
		PortState: iba.PortStateActive, PortPhysicalState: iba.PhysPortStateLinkUp,
		LinkWidthSupported: iba.LinkWidth4X, LinkWidthActive: iba.LinkWidth4X, LinkSpeedSupported: 7, LinkSpeedActive: 4,
		LinkSpeedExtSupported: 0xF, LinkSpeedExtActive: iba.LinkSpeedExtNDR, LinkSpeedExtSupported2: iba.LinkSpeedExt2XDR}
	xdr := ndr
	xdr.LinkSpeedExtActive, xdr.LinkSpeedExtActive2 = 0, iba.LinkSpeedExt2XDR
	noCap2 := ndr
	noCap2.CapabilityMask2 = 0
	for _, c := range []struct {
		name        string
		a, b        iba.PortInfo
		speed, hint string
	}{
		{"NDR, XDR both ends", ndr, ndr, "106.25 Gbps", "Could be 212.5 Gbps"},
		{"XDR", xdr, xdr, "212.5 Gbps", ""},
		{"NDR, the peer without the second group", ndr, noCap2, "106.25 Gbps", ""},
	} {
		a, b := caPort(t, c.a), caPort(t, c.b)
		a.Remote, b.Remote = b, a
		text, _, speed := linkState(a)
		_, hint := linkCouldBe(a)
		if speed != c.speed || hint != c.hint || !strings.Contains(text, c.speed+" Active/") {
			t.Errorf("%s: %q, speed %q, hint %q; want %q and %q", c.name, text, speed, hint, c.speed, c.hint)
		}
	}
}
