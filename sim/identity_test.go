package sim

import (
	"errors"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
)

func TestSetNodeAndPortGUID(t *testing.T) {
	f := fatTree(t, 4, 2)
	ctx := ctxT(t)
	if _, err := f.RunSM(ctx, SMConfig{NoResweep: true}); err != nil {
		t.Fatal(err)
	}
	top := f.Topology()
	var cas, sws []string
	for i := range top.Nodes {
		if top.Nodes[i].Type == iba.NodeTypeCA {
			cas = append(cas, top.Nodes[i].ID)
		} else {
			sws = append(sws, top.Nodes[i].ID)
		}
	}
	a, b := cas[0], cas[len(cas)-1]
	ga := top.Nodes[f.ids[a]].NodeGUID
	if err := f.SetNodeGUID(b, ga); err != nil {
		t.Fatal(err)
	}
	if err := f.SetPortGUID(b, 1, 0x1234); err != nil {
		t.Fatal(err)
	}
	c := client(t, f, b, 1)
	var ni iba.NodeInfo
	if err := c.SubnGet(ctx, dr(), &ni, 0); err != nil {
		t.Fatal(err)
	}
	if ni.NodeGUID != ga || ni.PortGUID != 0x1234 {
		t.Fatalf("NodeInfo of %s: node GUID %v port GUID %v, want %v and 0x1234", b, ni.NodeGUID, ni.PortGUID, ga)
	}
	// A switch reports its node GUID on every port.
	if err := f.SetNodeGUID(sws[0], 0xabcd); err != nil {
		t.Fatal(err)
	}
	_, _, swLID, _, err := f.PortState(sws[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, lid(swLID), &ni, 0); err != nil {
		t.Fatal(err)
	}
	if ni.NodeGUID != 0xabcd || ni.PortGUID != 0xabcd {
		t.Fatalf("switch NodeInfo: %v %v", ni.NodeGUID, ni.PortGUID)
	}
	if err := f.SetPortGUID(sws[0], 1, 1); err == nil {
		t.Fatal("SetPortGUID on a switch port: no error")
	}
	if err := f.SetNodeGUID("nonesuch", 1); !errors.Is(err, ErrNoNode) {
		t.Fatalf("unknown node: %v", err)
	}
}

func TestSetSMInfo(t *testing.T) {
	f := fatTree(t, 4, 2)
	ctx := ctxT(t)
	if _, err := f.RunSM(ctx, SMConfig{NoResweep: true}); err != nil {
		t.Fatal(err)
	}
	top := f.Topology()
	var other string
	for i := len(top.Nodes) - 1; i >= 0; i-- {
		if top.Nodes[i].Type == iba.NodeTypeCA {
			other = top.Nodes[i].ID
			break
		}
	}
	if err := f.SetSMInfo(other, 1, &iba.SMInfo{Priority: 5, SMState: iba.SMStateStandby}); err != nil {
		t.Fatal(err)
	}
	_, _, l, _, err := f.PortState(other, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := client(t, f, top.Nodes[0].ID, 0)
	var pi iba.PortInfo
	if err := c.SubnGet(ctx, lid(l), &pi, 0); err != nil {
		t.Fatal(err)
	}
	if pi.CapabilityMask&capIsSM == 0 {
		t.Fatalf("CapabilityMask %#x: IsSM not set", pi.CapabilityMask)
	}
	var a, b iba.SMInfo
	if err := c.SubnGet(ctx, lid(l), &a, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, lid(l), &b, 0); err != nil {
		t.Fatal(err)
	}
	guid := top.Ports[top.Nodes[f.ids[other]].PortBase+1].GUID
	if a.SMState != iba.SMStateStandby || a.Priority != 5 || a.GUID != guid {
		t.Fatalf("SMInfo %+v", a)
	}
	if b.ActCount == a.ActCount {
		t.Fatalf("ActCount stayed at %d", a.ActCount)
	}
	if err := f.SetSMInfo(other, 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, lid(l), &a, 0); err == nil {
		t.Fatal("SMInfo answered after the SM was taken away")
	}
	if err := c.SubnGet(ctx, lid(l), &pi, 0); err != nil || pi.CapabilityMask&capIsSM != 0 {
		t.Fatalf("CapabilityMask %#x, %v", pi.CapabilityMask, err)
	}
}

func TestSetCableWidths(t *testing.T) {
	f := fatTree(t, 4, 2)
	ctx := ctxT(t)
	if _, err := f.RunSM(ctx, SMConfig{NoResweep: true}); err != nil {
		t.Fatal(err)
	}
	ca := "hca1"
	if err := f.SetCableWidths(ca, 1, iba.LinkWidth1X); err != nil {
		t.Fatal(err)
	}
	c := client(t, f, ca, 1)
	var pi iba.PortInfo
	if err := c.SubnGet(ctx, dr(), &pi, 0); err != nil {
		t.Fatal(err)
	}
	if pi.LinkWidthActive != iba.LinkWidth1X || pi.LinkWidthEnabled&iba.LinkWidth4X == 0 || pi.PortState != iba.PortStateActive {
		t.Fatalf("after a 1x cable: active %#x enabled %#x state %v", pi.LinkWidthActive, pi.LinkWidthEnabled, pi.PortState)
	}
	if err := f.SetCableWidths(ca, 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, dr(), &pi, 0); err != nil {
		t.Fatal(err)
	}
	if pi.LinkWidthActive != iba.LinkWidth4X {
		t.Fatalf("after the cable is whole again: active %#x", pi.LinkWidthActive)
	}
	if err := f.SetCableWidths("nonesuch", 1, 1); !errors.Is(err, ErrNoNode) {
		t.Fatalf("unknown node: %v", err)
	}
}

// A switch port keeps the partition enforcement bits an SM sets (OpenSM
// sets them where it enforces partitions) and reports them.
func TestPartitionEnforcementBits(t *testing.T) {
	f := fatTree(t, 4, 2)
	ctx := ctxT(t)
	if _, err := f.RunSM(ctx, SMConfig{NoResweep: true}); err != nil {
		t.Fatal(err)
	}
	c := client(t, f, "hca1", 1)
	var pi iba.PortInfo
	if err := c.SubnGet(ctx, dr(1), &pi, 1); err != nil {
		t.Fatal(err)
	}
	if pi.PartitionEnforcementInbound != 0 || pi.PartitionEnforcementOutbound != 0 {
		t.Fatalf("enforcement on before any Set: %d %d", pi.PartitionEnforcementInbound, pi.PartitionEnforcementOutbound)
	}
	pi.PartitionEnforcementInbound, pi.PartitionEnforcementOutbound = 1, 1
	pi.PortState, pi.PortPhysicalState, pi.LinkWidthEnabled, pi.LinkSpeedEnabled, pi.LinkSpeedExtEnabled = 0, 0, 0, 0, 0
	if err := c.SubnSet(ctx, dr(1), &pi, 1); err != nil {
		t.Fatal(err)
	}
	var got iba.PortInfo
	if err := c.SubnGet(ctx, dr(1), &got, 1); err != nil {
		t.Fatal(err)
	}
	if got.PartitionEnforcementInbound != 1 || got.PartitionEnforcementOutbound != 1 || got.PortState != iba.PortStateActive {
		t.Fatalf("after the Set: enforcement %d %d, state %v", got.PartitionEnforcementInbound, got.PartitionEnforcementOutbound, got.PortState)
	}
}
