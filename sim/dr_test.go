package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// line is hca1 - sw1 - sw2 - hca2, with hca3 on sw1:
//
//	hca1[1] - [1]sw1[3] - [3]sw2[1] - [1]hca2
//	          sw1[2] - [1]hca3
const line = `
Switch 4 "sw1"
[1] "hca1"[1]
[2] "hca3"[1]
[3] "sw2"[3]

Switch 4 "sw2"
[1] "hca2"[1]
[3] "sw1"[3]

Hca 2 "hca1"
[1] "sw1"[1]

Hca 1 "hca2"
[1] "sw2"[1]

Hca 1 "hca3"
[1] "sw1"[2]
`

func lineFabric(t testing.TB, sm bool) *Fabric {
	t.Helper()
	top, err := topo.Parse(strings.NewReader(line), "line")
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(top)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if sm {
		if _, err := f.RunSM(ctxT(t), SMConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func lidOf(t testing.TB, f *Fabric, node string, port int) uint16 {
	t.Helper()
	_, _, l, _, err := f.PortState(node, port)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// raw sends hand-built MADs, so tests control every header field.
type raw struct {
	tr mad.Transport
	ag map[uint8]int
}

func rawAt(t testing.TB, f *Fabric, node string, port int) *raw {
	t.Helper()
	tr, err := f.Attach(node, port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	r := &raw{tr: tr, ag: map[uint8]int{}}
	for _, c := range []uint8{0x01, 0x81, 0x04, 0x06} {
		id, err := tr.Register(mad.AgentSpec{Class: c, ClassVersion: 1})
		if err != nil {
			t.Fatal(err)
		}
		r.ag[c] = id
	}
	return r
}

// do sends b to lid and returns the reply, or nil when none comes.
func (r *raw) do(t testing.TB, b []byte, lid uint16) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	addr := mad.Addr{LID: lid}
	if b[1] != 0x01 && b[1] != 0x81 {
		addr.QPN, addr.QKey = mad.QP1, mad.QP1QKey
	}
	if err := r.tr.Send(ctx, &mad.Packet{Agent: r.ag[b[1]], Addr: addr, MAD: b}); err != nil {
		t.Fatal(err)
	}
	p, err := r.tr.Recv(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if binary.BigEndian.Uint32(p.MAD[12:]) != binary.BigEndian.Uint32(b[12:]) {
		t.Fatalf("reply TID %x for request %x", p.MAD[8:16], b[8:16])
	}
	return p.MAD
}

var tidLow uint32

func smpDR(method uint8, attr uint16, mod uint32, drslid, drdlid uint16, path ...byte) []byte {
	b := make([]byte, 256)
	b[0], b[1], b[2], b[3] = 1, 0x81, 1, method
	b[7] = uint8(len(path))
	tidLow++
	binary.BigEndian.PutUint32(b[12:], tidLow)
	binary.BigEndian.PutUint16(b[16:], attr)
	binary.BigEndian.PutUint32(b[20:], mod)
	binary.BigEndian.PutUint16(b[32:], drslid)
	binary.BigEndian.PutUint16(b[34:], drdlid)
	copy(b[129:], path)
	return b
}

func smpLID(method uint8, attr uint16, mod uint32) []byte {
	b := make([]byte, 256)
	b[0], b[1], b[2], b[3] = 1, 0x01, 1, method
	tidLow++
	binary.BigEndian.PutUint32(b[12:], tidLow)
	binary.BigEndian.PutUint16(b[16:], attr)
	binary.BigEndian.PutUint32(b[20:], mod)
	return b
}

func nodeInfoOf(t testing.TB, reply []byte) iba.NodeInfo {
	t.Helper()
	if reply == nil {
		t.Fatal("no reply")
	}
	if st := binary.BigEndian.Uint16(reply[4:]) & 0x7fff; st != 0 {
		t.Fatalf("status %#x", st)
	}
	var ni iba.NodeInfo
	ni.Unmarshal(reply[64:])
	return ni
}

func guidOf(f *Fabric, node string) iba.GUID { return f.nodes[f.ids[node]].guid }

func TestDirectedRoute(t *testing.T) {
	f := lineFabric(t, true)
	h1 := rawAt(t, f, "hca1", 1)
	lidH1, lidS1, lidS2, lidH2 := lidOf(t, f, "hca1", 1), lidOf(t, f, "sw1", 0), lidOf(t, f, "sw2", 0), lidOf(t, f, "hca2", 1)
	const P = LIDPermissive
	cases := []struct {
		name      string
		smp       []byte
		lrhDLID   uint16
		want      string // node whose NodeInfo answers, "" for no reply
		localPort uint8
	}{
		{"0 hops: the local CA", smpDR(1, 0x11, 0, P, P), P, "hca1", 1},
		{"1 hop", smpDR(1, 0x11, 0, P, P, 1), P, "sw1", 1},
		{"2 hops", smpDR(1, 0x11, 0, P, P, 1, 3), P, "sw2", 3},
		{"3 hops", smpDR(1, 0x11, 0, P, P, 1, 3, 1), P, "hca2", 1},
		{"LID-routed first part (DrSLID)", smpDR(1, 0x11, 0, lidH1, P, 1), lidS2, "hca2", 1},
		{"LID-routed last part (DrDLID)", smpDR(1, 0x11, 0, P, lidH2, 1), P, "hca2", 1},
		{"both LID-routed parts", smpDR(1, 0x11, 0, lidH1, lidH2, 3), lidS1, "hca2", 1},
		{"0 hops with both LID-routed parts", smpDR(1, 0x11, 0, lidH1, lidH2), lidS2, "hca2", 1},
		{"DrDLID to a switch", smpDR(1, 0x11, 0, P, lidS2, 1), P, "sw2", 0},
		{"hop count 64", func() []byte { b := smpDR(1, 0x11, 0, P, P, 1); b[7] = 64; return b }(), P, "", 0},
		{"hop pointer beyond the path", func() []byte { b := smpDR(1, 0x11, 0, P, P, 1); b[6] = 5; return b }(), P, "", 0},
		{"D bit on a request", func() []byte { b := smpDR(1, 0x11, 0, P, P, 1); b[4] = 0x80; return b }(), P, "", 0},
		{"port 0 in the path", smpDR(1, 0x11, 0, P, P, 1, 0), P, "", 0},
		{"port beyond the switch", smpDR(1, 0x11, 0, P, P, 1, 9), P, "", 0},
		{"unconnected port", smpDR(1, 0x11, 0, P, P, 1, 4), P, "", 0},
		{"a CA does not forward", smpDR(1, 0x11, 0, P, P, 1, 2, 1), P, "", 0},
		{"a CA sends only out of its own port", smpDR(1, 0x11, 0, P, P, 2), P, "", 0},
		{"a CA cannot end the directed part LID routed", smpDR(1, 0x11, 0, P, lidH2), P, "", 0},
		{"DrDLID to nowhere", smpDR(1, 0x11, 0, P, 999, 1), P, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reply := h1.do(t, c.smp, c.lrhDLID)
			if c.want == "" {
				if reply != nil {
					t.Fatalf("got a reply with status %#x; want none", binary.BigEndian.Uint16(reply[4:]))
				}
				return
			}
			ni := nodeInfoOf(t, reply)
			if ni.NodeGUID != guidOf(f, c.want) || ni.LocalPortNum != c.localPort {
				t.Fatalf("NodeInfo from %v port %d; want %s port %d", ni.NodeGUID, ni.LocalPortNum, c.want, c.localPort)
			}
			if reply[4]&0x80 == 0 || reply[3] != 0x81 {
				t.Fatalf("reply header %x: want GetResp with D set", reply[:8])
			}
			if reply[6] != 0 {
				t.Fatalf("reply hop pointer %d, want 0 back at the requester", reply[6])
			}
		})
	}
	// The return path records the ports each hop came in on (C14-9:2/3).
	reply := h1.do(t, smpDR(1, 0x11, 0, P, P, 1, 3, 1), P)
	if got := reply[193:196]; got[0] != 1 || got[1] != 3 || got[2] != 1 {
		t.Fatalf("return path %v, want [1 3 1]", got)
	}
	// From a switch's port 0: a 0-hop SMP is the switch itself, and with
	// a DrDLID it goes on LID routed.
	s1 := rawAt(t, f, "sw1", 0)
	if ni := nodeInfoOf(t, s1.do(t, smpDR(1, 0x11, 0, P, P), P)); ni.NodeGUID != guidOf(f, "sw1") || ni.LocalPortNum != 0 {
		t.Fatalf("0-hop from sw1: %+v", ni)
	}
	if ni := nodeInfoOf(t, s1.do(t, smpDR(1, 0x11, 0, P, lidH2), P)); ni.NodeGUID != guidOf(f, "hca2") {
		t.Fatalf("0 hops then LID routed from sw1: %+v", ni)
	}
}

func TestDRRules(t *testing.T) {
	// Outgoing at an intermediate switch: return path gets the in port,
	// the hop pointer moves on and names the next out port.
	b := smpDR(1, 0x11, 0, LIDPermissive, LIDPermissive, 1, 7, 2)
	b[6] = 1
	act, arg := drRules(true, 8, 5, b)
	if act != drPort || arg != 7 || b[6] != 2 || b[193] != 5 {
		t.Fatalf("C14-9:2: act %d arg %d hp %d rp %d", act, arg, b[6], b[193])
	}
	// Returning at an intermediate switch: hop pointer down, out of the
	// recorded return port.
	b[4] |= 0x80
	b[6] = 3
	b[194] = 6
	act, arg = drRules(true, 8, 1, b)
	if act != drPort || arg != 6 || b[6] != 2 {
		t.Fatalf("C14-13:2: act %d arg %d hp %d", act, arg, b[6])
	}
	// Returning at the start with a DrSLID: LID routed to it.
	b = smpDR(1, 0x11, 0, 42, LIDPermissive, 1)
	b[4] |= 0x80
	b[6] = 1
	if act, arg = drRules(true, 8, 1, b); act != drLID || arg != 42 || b[6] != 0 {
		t.Fatalf("C14-13:3: act %d arg %d", act, arg)
	}
	b[6] = 1
	if act, _ = drRules(false, 1, 1, b); act != drDrop {
		t.Fatalf("C14-13:3 at a CA with a DrSLID: act %d, want drop", act)
	}
	// A hop pointer past hop count + 1 is dropped (C14-9:5, C14-13:5).
	b = smpDR(1, 0x11, 0, LIDPermissive, LIDPermissive, 1)
	b[6] = 3
	if act, _ = drRules(true, 8, 1, b); act != drDrop {
		t.Fatalf("C14-9:5: act %d", act)
	}
}
