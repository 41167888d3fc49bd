package sim

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

func status(t testing.TB, reply []byte) uint16 {
	t.Helper()
	if reply == nil {
		t.Fatal("no reply")
	}
	return binary.BigEndian.Uint16(reply[4:]) & 0x7fff
}

func TestSMAStatus(t *testing.T) {
	f := lineFabric(t, true)
	h1 := rawAt(t, f, "hca1", 1)
	lidS1 := lidOf(t, f, "sw1", 0)
	const P = LIDPermissive
	cases := []struct {
		name string
		smp  []byte
		want uint16
	}{
		{"unknown attribute", smpDR(1, 0xFF00, 0, P, P, 1), 0x0C},
		{"Set NodeInfo", smpDR(2, 0x11, 0, P, P, 1), 0x0C},
		{"Set NodeDescription", smpDR(2, 0x10, 0, P, P, 1), 0x0C},
		{"method Send", smpDR(3, 0x11, 0, P, P, 1), 0x08},
		{"PortInfo of port 9", smpDR(1, 0x15, 9, P, P, 1), 0x1C},
		{"LFT block 800", smpDR(1, 0x19, 800, P, P, 1), 0x1C},
		{"LFT of a CA", smpDR(1, 0x19, 0, P, P), 0x0C},
		{"SwitchInfo of a CA", smpDR(1, 0x12, 0, P, P), 0x0C},
		{"P_Key block 2 of a CA", smpDR(1, 0x16, 2, P, P), 0x1C},
		{"VLArb block 2", smpDR(1, 0x18, 2<<16|1, P, P, 1), 0x1C},
		{"SL2VL of port 9", smpDR(1, 0x17, 9<<8|1, P, P, 1), 0x1C},
		{"GUIDInfo block 1 of a switch", smpDR(1, 0x14, 1, P, P, 1), 0x1C},
		{"MFT position 1 of a 4-port switch", smpDR(1, 0x1B, 1<<28, P, P, 1), 0x1C},
		{"SMInfo where no SM runs", smpDR(1, 0x20, 0, P, P, 1), 0x0C},
		{"class version 2", func() []byte { b := smpDR(1, 0x11, 0, P, P, 1); b[2] = 2; return b }(), 0x04},
		{"PortInfo Set to Init", func() []byte {
			b := smpDR(2, 0x15, 0, P, P)
			b[64+32] = 0x02 // PortState Init
			return b
		}(), 0x1C},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := status(t, h1.do(t, c.smp, P)); got != c.want {
				t.Fatalf("status %#x, want %#x", got, c.want)
			}
		})
	}
	// The same over a LID-routed SMP.
	if got := status(t, h1.do(t, smpLID(1, 0xFF00, 0), lidS1)); got != 0x0C {
		t.Fatalf("LID-routed unknown attribute: status %#x", got)
	}
	// SMInfo at the SM's port answers MASTER.
	var si iba.SMInfo
	reply := h1.do(t, smpDR(1, 0x20, 0, P, P), P)
	if status(t, reply) != 0 {
		t.Fatal("SMInfo at the SM")
	}
	si.Unmarshal(reply[64:])
	if si.SMState != iba.SMStateMaster || si.GUID != guidOf(f, "hca1")+1 {
		t.Fatalf("SMInfo %+v", si)
	}
	// A GMP class nobody serves: GetResp 0x0C, as the Linux MAD layer.
	b := smpLID(1, 0x10, 0)
	b[1] = 0x06
	if got := status(t, h1.do(t, b, lidS1)); got != 0x0C {
		t.Fatalf("DevMgt Get: status %#x", got)
	}
}

func TestAttributesRoundTrip(t *testing.T) {
	f := lineFabric(t, true)
	c := client(t, f, "hca1", 1)
	ctx := ctxT(t)
	sw := dr(1)
	// P_Key table of a switch port: block 0 of port 2.
	pk := iba.PKeyTable{}
	pk.PKeyBlock[0], pk.PKeyBlock[1] = 0xFFFF, 0x8001
	if err := c.SubnSet(ctx, sw, &pk, 2<<16); err != nil {
		t.Fatal(err)
	}
	var pk2 iba.PKeyTable
	if err := c.SubnGet(ctx, sw, &pk2, 2<<16); err != nil || pk2 != pk {
		t.Fatalf("P_Key table back %v (%v)", pk2.PKeyBlock[:2], err)
	}
	// SL2VL of switch in port 1 to out port 3.
	sl := iba.SLtoVLMappingTable{}
	for i := range sl.SLtoVL {
		sl.SLtoVL[i] = uint8(15 - i)
	}
	if err := c.SubnSet(ctx, sw, &sl, 1<<8|3); err != nil {
		t.Fatal(err)
	}
	var sl2 iba.SLtoVLMappingTable
	if err := c.SubnGet(ctx, sw, &sl2, 1<<8|3); err != nil || sl2 != sl {
		t.Fatalf("SL2VL back %v (%v)", sl2, err)
	}
	// VLArb low table of port 3.
	var va iba.VLArbitrationTable
	va.VLWeightBlock[0] = 0x0120
	if err := c.SubnSet(ctx, sw, &va, 1<<16|3); err != nil {
		t.Fatal(err)
	}
	var va2 iba.VLArbitrationTable
	if err := c.SubnGet(ctx, sw, &va2, 1<<16|3); err != nil || va2.VLWeightBlock[0] != 0x0120 {
		t.Fatalf("VLArb back %v (%v)", va2.VLWeightBlock[:2], err)
	}
	// GUIDInfo of a CA: index 0 is the port GUID, others settable.
	var gi iba.GUIDInfo
	gi.GUIDBlock[0], gi.GUIDBlock[1] = 1, 0x1234
	if err := c.SubnSet(ctx, dr(), &gi, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, dr(), &gi, 0); err != nil || gi.GUIDBlock[0] != guidOf(f, "hca1")+1 || gi.GUIDBlock[1] != 0x1234 {
		t.Fatalf("GUIDInfo back %v (%v)", gi.GUIDBlock[:2], err)
	}
	// MFT block 1 position 0.
	var mf iba.MulticastForwardingTable
	mf.PortMaskBlock[3] = 0x000A
	if err := c.SubnSet(ctx, sw, &mf, 1); err != nil {
		t.Fatal(err)
	}
	var mf2 iba.MulticastForwardingTable
	if err := c.SubnGet(ctx, sw, &mf2, 1); err != nil || mf2 != mf {
		t.Fatalf("MFT back (%v)", err)
	}
	// LedInfo and the Mellanox extended port info.
	led := iba.LedInfo{LedMask: 1}
	if err := c.SubnSet(ctx, sw, &led, 2); err != nil {
		t.Fatal(err)
	}
	led = iba.LedInfo{}
	if err := c.SubnGet(ctx, sw, &led, 2); err != nil || led.LedMask != 1 {
		t.Fatalf("LedInfo back %+v (%v)", led, err)
	}
	var mx iba.MlnxExtPortInfo
	if err := c.SubnGet(ctx, sw, &mx, 1); err != nil {
		t.Fatal(err)
	}
	// SwitchInfo and the LFT the SM programmed: every CA LID leads out of
	// the port it hangs on.
	var si iba.SwitchInfo
	if err := c.SubnGet(ctx, sw, &si, 0); err != nil || si.LinearFDBCap != LinearFDBCap || si.LinearFDBTop != 5 {
		t.Fatalf("SwitchInfo %+v (%v)", si, err)
	}
	var lft iba.LinearForwardingTable
	if err := c.SubnGet(ctx, sw, &lft, 0); err != nil {
		t.Fatal(err)
	}
	if p := lft.PortBlock[lidOf(t, f, "hca1", 1)]; p != 1 {
		t.Fatalf("LFT entry for hca1: port %d", p)
	}
	if p := lft.PortBlock[lidOf(t, f, "hca2", 1)]; p != 3 {
		t.Fatalf("LFT entry for hca2: port %d", p)
	}
	var nd iba.NodeDescription
	if err := c.SubnGet(ctx, sw, &nd, 0); err != nil || string(nd.NodeString[:3]) != "sw1" {
		t.Fatalf("NodeDescription %q (%v)", nd.NodeString[:8], err)
	}
}

func TestMKey(t *testing.T) {
	f := lineFabric(t, true)
	c := client(t, f, "hca1", 1)
	ctx := ctxT(t)
	h3 := dr(1, 2) // hca3
	var pi iba.PortInfo
	if err := c.SubnGet(ctx, h3, &pi, 0); err != nil {
		t.Fatal(err)
	}
	pi.MKey, pi.MKeyProtectBits = 0xC0FFEE, 2
	pi.PortState, pi.PortPhysicalState, pi.LinkWidthEnabled, pi.LinkSpeedEnabled = 0, 0, 0, 0
	if err := c.SubnSet(ctx, h3, &pi, 0); err != nil {
		t.Fatal(err)
	}
	// Protection 2: a Get with the wrong key is dropped silently.
	if err := c.SubnGet(ctx, quick(h3), &pi, 0); !errors.Is(err, mad.ErrTimeout) {
		t.Fatalf("Get with a wrong M_Key: %v, want a timeout", err)
	}
	keyed := h3
	keyed.MKey = 0xC0FFEE
	if err := c.SubnGet(ctx, keyed, &pi, 0); err != nil || pi.MKey != 0xC0FFEE || pi.MKeyViolations != 1 {
		t.Fatalf("Get with the M_Key: %v, key %#x, violations %d", err, pi.MKey, pi.MKeyViolations)
	}
	// Protection 1: Gets pass but hide the key; Sets still need it.
	pi.MKeyProtectBits, pi.MKeyViolations = 1, 0
	pi.PortState, pi.PortPhysicalState, pi.LinkWidthEnabled, pi.LinkSpeedEnabled = 0, 0, 0, 0
	if err := c.SubnSet(ctx, keyed, &pi, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, h3, &pi, 0); err != nil || pi.MKey != 0 {
		t.Fatalf("Get at protection 1: %v, key %#x", err, pi.MKey)
	}
	if err := c.SubnSet(ctx, quick(h3), &pi, 0); !errors.Is(err, mad.ErrTimeout) {
		t.Fatalf("Set with a wrong M_Key: %v, want a timeout", err)
	}
}

// TestMKeyLevels walks the protection levels of IBA 14.2.4.1 on one port:
// without the key a Set is discarded at every level; a Get is answered
// with the key at level 0, with the key hidden at level 1, and discarded
// at levels 2 and 3; with the key all is answered and the key shows.
func TestMKeyLevels(t *testing.T) {
	f := lineFabric(t, true)
	c := client(t, f, "hca1", 1)
	ctx := ctxT(t)
	keyed := dr(1, 2) // hca3
	keyed.MKey = 0xBEEF
	for level := uint8(0); level <= 3; level++ {
		var pi iba.PortInfo
		if err := c.SubnGet(ctx, keyed, &pi, 0); err != nil {
			t.Fatalf("level %d: Get with the key: %v", level, err)
		}
		pi.MKey, pi.MKeyProtectBits = 0xBEEF, level
		pi.PortState, pi.PortPhysicalState, pi.LinkWidthEnabled, pi.LinkSpeedEnabled = 0, 0, 0, 0
		if err := c.SubnSet(ctx, keyed, &pi, 0); err != nil {
			t.Fatalf("level %d: Set with the key: %v", level, err)
		}
		var got iba.PortInfo
		err := c.SubnGet(ctx, quick(dr(1, 2)), &got, 0)
		switch level {
		case 0:
			if err != nil || got.MKey != 0xBEEF {
				t.Errorf("level 0: Get without the key: %v, key %#x; want the key shown", err, got.MKey)
			}
		case 1:
			if err != nil || got.MKey != 0 {
				t.Errorf("level 1: Get without the key: %v, key %#x; want the key hidden", err, got.MKey)
			}
		default:
			if !errors.Is(err, mad.ErrTimeout) {
				t.Errorf("level %d: Get without the key: %v; want it discarded", level, err)
			}
		}
		got = pi
		got.PortState, got.PortPhysicalState = 0, 0
		if err := c.SubnSet(ctx, quick(dr(1, 2)), &got, 0); !errors.Is(err, mad.ErrTimeout) {
			t.Errorf("level %d: Set without the key: %v; want it discarded", level, err)
		}
	}
}

func TestPortStateMachine(t *testing.T) {
	f := lineFabric(t, false)
	c := client(t, f, "hca1", 1)
	ctx := ctxT(t)
	sw := dr(1)
	get := func(port uint32) iba.PortInfo {
		var pi iba.PortInfo
		if err := c.SubnGet(ctx, sw, &pi, port); err != nil {
			t.Fatal(err)
		}
		return pi
	}
	set := func(port uint32, st iba.PortState, phys iba.PhysPortState) error {
		pi := get(port)
		pi.PortState, pi.PortPhysicalState, pi.LinkWidthEnabled, pi.LinkSpeedEnabled = st, phys, 0, 0
		return c.SubnSet(ctx, sw, &pi, port)
	}
	if pi := get(3); pi.PortState != iba.PortStateInit || pi.PortPhysicalState != iba.PhysPortStateLinkUp {
		t.Fatalf("before any SM: %v %v", pi.PortState, pi.PortPhysicalState)
	}
	if pi := get(4); pi.PortState != iba.PortStateDown || pi.PortPhysicalState != iba.PhysPortStatePolling {
		t.Fatalf("unconnected port: %v %v", pi.PortState, pi.PortPhysicalState)
	}
	if err := set(3, iba.PortStateActive, 0); !errors.Is(err, mad.ErrInvalidField) {
		t.Fatalf("Init to Active: %v", err)
	}
	if err := set(3, iba.PortStateArmed, 0); err != nil {
		t.Fatal(err)
	}
	// The neighbor (sw2 port 3) is still Init: Active must wait for it.
	if err := set(3, iba.PortStateActive, 0); !errors.Is(err, mad.ErrInvalidField) {
		t.Fatalf("Active with an Init neighbor: %v", err)
	}
	var pi iba.PortInfo
	if err := c.SubnGet(ctx, dr(1, 3), &pi, 3); err != nil {
		t.Fatal(err)
	}
	pi.PortState, pi.LinkWidthEnabled, pi.LinkSpeedEnabled = iba.PortStateArmed, 0, 0
	if err := c.SubnSet(ctx, dr(1, 3), &pi, 3); err != nil {
		t.Fatal(err)
	}
	if err := set(3, iba.PortStateActive, 0); err != nil {
		t.Fatal(err)
	}
	if st := get(3).PortState; st != iba.PortStateActive {
		t.Fatalf("state %v", st)
	}
	// Down: the link retrains, both ends back to Init, LinkDowned counted.
	if err := set(3, iba.PortStateDown, 0); err != nil {
		t.Fatal(err)
	}
	if pi := get(3); pi.PortState != iba.PortStateInit || pi.PortPhysicalState != iba.PhysPortStateLinkUp {
		t.Fatalf("after Down: %v %v", pi.PortState, pi.PortPhysicalState)
	}
	// Disabled: the link goes away (the DR path through it breaks) until
	// the port polls again.
	if err := set(3, 0, iba.PhysPortStateDisabled); err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, quick(dr(1, 3)), &pi, 0); !errors.Is(err, mad.ErrTimeout) {
		t.Fatalf("DR through a disabled port: %v", err)
	}
	if err := set(3, 0, iba.PhysPortStatePolling); err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, dr(1, 3), &pi, 3); err != nil || pi.PortState != iba.PortStateInit {
		t.Fatalf("after re-enabling: %v %v", pi.PortState, err)
	}
	if n := f.ports[f.nodes[f.ids["sw1"]].base+3].pc.linkDowned.Load(); n != 2 {
		t.Fatalf("LinkDowned %d, want 2", n)
	}
	// A width change renegotiates the active width of both ends (4x only
	// is the default, so 1x takes both ends).
	pi = get(3)
	pi.PortState, pi.PortPhysicalState, pi.LinkWidthEnabled, pi.LinkSpeedEnabled = 0, 0, iba.LinkWidth1X, 0
	if err := c.SubnSet(ctx, sw, &pi, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, dr(1, 3), &pi, 3); err != nil {
		t.Fatal(err)
	}
	pi.PortState, pi.PortPhysicalState, pi.LinkWidthEnabled, pi.LinkSpeedEnabled = 0, 0, iba.LinkWidth1X, 0
	if err := c.SubnSet(ctx, dr(1, 3), &pi, 3); err != nil {
		t.Fatal(err)
	}
	if pi := get(3); pi.LinkWidthActive != iba.LinkWidth1X || pi.LinkWidthEnabled != iba.LinkWidth1X {
		t.Fatalf("width active %#x enabled %#x after both ends enable 1x only", pi.LinkWidthActive, pi.LinkWidthEnabled)
	}
}
