package ibsim

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/mad"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCtlConnectBytes checks CONNECT against the bytes libumad2sim sends
// (seen with strace: pid 9881, no node, no SM).
func TestCtlConnectBytes(t *testing.T) {
	var m ctlMsg
	m.typ, m.length = ctlConnect, clientInfoSize
	clientInfo{id: 9881}.put(&m.data)
	got := m.marshal()
	want := unhex(t, "efbeadde 00000000 01000000 2c000000 99260000 00000000 00000000")
	want = append(want, make([]byte, ctlSize-len(want))...)
	if !bytes.Equal(got, want) {
		t.Errorf("CONNECT\n got %x\nwant %x", got, want)
	}

	// The reply: slot 3 on "Switch1".
	reply := append([]byte(nil), want...)
	binary.LittleEndian.PutUint32(reply[16:], 3)
	copy(reply[28:], "Switch1")
	r, err := unmarshalCtl(reply)
	if err != nil {
		t.Fatal(err)
	}
	info := getClientInfo(&r.data)
	if r.typ != ctlConnect || info.id != 3 || info.nodeID != "Switch1" {
		t.Errorf("reply decoded as type %d %+v", r.typ, info)
	}

	long := clientInfo{nodeID: strings.Repeat("n", 40)}
	var d [ctlMaxData]byte
	long.put(&d)
	if got := getClientInfo(&d).nodeID; len(got) != maxNodeID {
		t.Errorf("a 40-byte node name became %d bytes, want %d and a NUL", len(got), maxNodeID)
	}
}

func TestUnmarshalCtlRejects(t *testing.T) {
	good := (&ctlMsg{typ: ctlGetPort}).marshal()
	bad := append([]byte(nil), good...)
	bad[0] = 0
	for name, b := range map[string][]byte{"short": good[:79], "long": append(good, 0), "magic": bad} {
		if _, err := unmarshalCtl(b); !errors.Is(err, errBadCtl) {
			t.Errorf("%s: err %v", name, err)
		}
	}
}

// TestRequestBytes checks a DR NodeInfo request against the bytes OpenSM
// sends through libumad2sim: LIDs in the first two bytes of their slots,
// length 256 as a big-endian u64, the MAD from byte 32.
func TestRequestBytes(t *testing.T) {
	m := unhex(t, "01810101 00000000 0000000000001234 0011 0000 00000000")
	m = append(m, make([]byte, madSize-len(m))...)
	r := simRequest{dlid: 0xffff, slid: 0xffff, length: madSize, mad: m}
	b := make([]byte, requestSize)
	r.marshal(b)
	want := unhex(t, "ffff0000 ffff0000 00000000 00000000 00000000 00000000 0000000000000100")
	want = append(want, m...)
	if !bytes.Equal(b, want) {
		t.Errorf("request\n got %x\nwant %x", b, want)
	}
	back, err := unmarshalRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.dlid != 0xffff || back.slid != 0xffff || back.length != madSize || !bytes.Equal(back.mad, m) {
		t.Errorf("round trip: %+v", back)
	}
	b[19] = statusDropped
	if back, _ := unmarshalRequest(b); back.status != statusDropped {
		t.Errorf("status %d", back.status)
	}
	if _, err := unmarshalRequest(b[:287]); !errors.Is(err, errBadRequest) {
		t.Errorf("287 bytes: %v", err)
	}
}

// TestDeliver checks which agent gets what without a simulator.
func TestDeliver(t *testing.T) {
	tr := &Transport{pending: map[pendKey]pendEntry{}}
	smp, _ := tr.Register(mad.AgentSpec{Class: 0x81})
	pmaClient, _ := tr.Register(mad.AgentSpec{Class: 0x04})
	vendorServer, _ := tr.Register(mad.AgentSpec{Class: 0x09, Methods: []uint8{0x01}})
	second81, _ := tr.Register(mad.AgentSpec{Class: 0x81})

	packet := func(class, method uint8, tid uint64, status uint32) simRequest {
		m := make([]byte, madSize)
		m[0], m[1], m[2], m[3] = 1, class, 1, method
		binary.BigEndian.PutUint64(m[8:], tid)
		return simRequest{dlid: 5, slid: 7, sqp: 1, status: status, mad: m}
	}

	// A reply goes to the agent that sent the request, matched on
	// TID[31:0] (the simulator rewrote the top bits). Only a request of
	// an agent other than the first of its class needs remembering.
	if req := packet(0x81, 0x01, 1, 0).mad; tr.replyStrays(req, smp) || !tr.replyStrays(req, second81) {
		t.Errorf("replies stray: of the first agent %v, of the second %v", tr.replyStrays(req, smp), tr.replyStrays(req, second81))
	}
	tr.remember(0x81, 0x00ff_0000_1111_2222, second81, 1e9)
	if p := deliverOne(tr, packet(0x81, 0x81, 0x0003_0000_1111_2222, 0)); p == nil || p.Agent != second81 || p.Err != nil {
		t.Errorf("reply to second81: %+v", p)
	}
	// Unknown TID: the first agent of the class.
	if p := deliverOne(tr, packet(0x81, 0x81, 99, 0)); p == nil || p.Agent != smp {
		t.Errorf("unmatched reply: %+v", p)
	}
	// A bounce carries a DroppedError and the original destination.
	if p := deliverOne(tr, packet(0x04, 0x01, 5, statusDropped)); p == nil || p.Agent != pmaClient || !errors.Is(p.Err, ErrDropped) || p.Addr.LID != 5 {
		t.Errorf("bounce: %+v", p)
	}
	// Requests only to an agent that listed the method.
	if p := deliverOne(tr, packet(0x04, 0x01, 5, 0)); p != nil {
		t.Errorf("PMA request delivered to a client agent: %+v", p)
	}
	if p := deliverOne(tr, packet(0x09, 0x01, 5, 0)); p == nil || p.Agent != vendorServer || p.Addr.LID != 7 || p.Addr.QKey != mad.QP1QKey {
		t.Errorf("vendor request: %+v", p)
	}
	if p := deliverOne(tr, packet(0x09, 0x02, 5, 0)); p != nil {
		t.Errorf("vendor Set delivered to a Get server: %+v", p)
	}
	if p := deliverOne(tr, packet(0x03, 0x81, 5, 0)); p != nil {
		t.Errorf("SA reply with no SA agent delivered: %+v", p)
	}
}

func TestRegisterRejects(t *testing.T) {
	tr := &Transport{}
	if _, err := tr.Register(mad.AgentSpec{}); err == nil {
		t.Error("class 0 accepted")
	}
	if _, err := tr.Register(mad.AgentSpec{Class: 0x32}); err == nil {
		t.Error("vendor OUI class without OUI accepted")
	}
}

func TestLocalPortFrom(t *testing.T) {
	var ni, pi [ctlMaxData]byte
	ni[2] = 1 // CA
	binary.BigEndian.PutUint64(ni[12:], 0x0002c90300c00010)
	binary.BigEndian.PutUint64(pi[8:], 0xfe80000000000000)
	binary.BigEndian.PutUint16(pi[16:], 7)
	binary.BigEndian.PutUint16(pi[18:], 1)
	pi[28], pi[34], pi[36] = 1, 0x02, 0x43
	lp := localPortFrom("H-1", &ni, &pi)
	want := mad.LocalPort{Name: "ibsim:H-1/1", NodeGUID: 0x0002c90300c00010, PortGUID: 0x0002c90300c00011, PortNum: 1,
		GIDPrefix: 0xfe80000000000000, LID: 7, LMC: 2, SMLID: 1, SMSL: 3}
	if lp != want {
		t.Errorf("got %+v\nwant %+v", lp, want)
	}
}

// FuzzDecode feeds arbitrary datagrams through what the reader does with
// them: decode, then pick an agent. Nothing may panic.
func FuzzDecode(f *testing.F) {
	m := make([]byte, requestSize)
	(&simRequest{dlid: 0xffff, slid: 0xffff, length: madSize, mad: []byte{1, 0x81, 1, 0x81}}).marshal(m)
	f.Add(m)
	short := append([]byte(nil), m...)
	binary.BigEndian.PutUint64(short[24:], 3)
	f.Add(short)
	bounced := append([]byte(nil), m...)
	bounced[19] = statusDropped
	f.Add(bounced)
	f.Add((&ctlMsg{typ: ctlConnect}).marshal())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		tr := &Transport{pending: map[pendKey]pendEntry{}}
		tr.Register(mad.AgentSpec{Class: 0x81})
		tr.Register(mad.AgentSpec{Class: 0x32, OUI: 0x1405, Methods: []uint8{1}})
		if r, err := unmarshalRequest(b); err == nil {
			if p := deliverOne(tr, r); p != nil && len(p.MAD) < madHeaderSize {
				t.Fatalf("delivered a %d-byte MAD", len(p.MAD))
			}
		}
		if c, err := unmarshalCtl(b); err == nil {
			_ = getClientInfo(&c.data)
			_ = localPortFrom("x", &c.data, &c.data)
		}
	})
}

// deliverOne runs deliver on a fresh Packet: nil when no agent wants r.
func deliverOne(tr *Transport, r simRequest) *mad.Packet {
	p := &mad.Packet{Agent: -1, Err: errBadRequest} // deliver must overwrite all of it
	if !tr.deliver(p, r) {
		return nil
	}
	return p
}

func TestRefusal(t *testing.T) {
	var m ctlMsg
	if got := refusal(&m); got != "refused (the simulator gives no reason)" {
		t.Errorf("no reason: %q", got)
	}
	copy(m.data[:], "refused: all 64 client slots are in use\x00junk")
	if got := refusal(&m); got != "refused: all 64 client slots are in use" {
		t.Errorf("a reason: %q", got)
	}
	copy(m.data[:], "refused: \x01\x02")
	if got := refusal(&m); got != "refused (the simulator gives no reason)" {
		t.Errorf("binary after the prefix: %q", got)
	}
}

// FuzzRecvBatch runs the reader's batching on arbitrary datagrams: a
// batch of up to rxBatch (a length byte, then that many bytes, each) is
// decoded, the wanted packets queued, taken off in order and recycled,
// twice over so recycled memory holds the second batch. No input may
// panic; what comes out is what decodeBatch kept, each with a registered
// agent and a whole MAD header.
func FuzzRecvBatch(f *testing.F) {
	m := make([]byte, requestSize)
	(&simRequest{dlid: 0xffff, slid: 0xffff, length: madSize, mad: []byte{1, 0x81, 1, 0x81}}).marshal(m)
	bounced := append([]byte(nil), m...)
	bounced[19] = statusDropped
	one := func(b []byte) []byte { return append([]byte{byte(len(b))}, b...) }
	f.Add(append(one(m[:255]), one(bounced[:200])...))
	f.Add(one(m[:255]))
	f.Add([]byte{0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := &Transport{pending: map[pendKey]pendEntry{}, rxQueue: newRxQueue()}
		tr.Register(mad.AgentSpec{Class: 0x81})
		tr.Register(mad.AgentSpec{Class: 0x32, OUI: 0x1405, Methods: []uint8{1}})
		for round := range 2 {
			var slots []*rxSlot
			var sizes []int
			rest := data
			for len(rest) > 0 && len(slots) < rxBatch {
				n := min(int(rest[0]), len(rest)-1)
				s := tr.freeSlot()
				// A datagram as recvmmsg leaves it: its bytes, after them
				// whatever an earlier one left.
				copy(s.raw[:], rest[1:1+n])
				if round == 1 && n > 0 {
					s.raw[0] ^= 0x80 // the second batch differs
				}
				slots = append(slots, s)
				sizes = append(sizes, n)
				rest = rest[1+n:]
			}
			kept := tr.decodeBatch(slots, sizes)
			if kept > len(slots) {
				t.Fatalf("kept %d of %d", kept, len(slots))
			}
			if sent := tr.push(slots[:kept:kept]); sent != kept && kept > 0 {
				t.Fatalf("pushed %d of %d into an empty queue", sent, kept)
			}
			got := 0
			var b []*rxSlot
			select {
			case b = <-tr.rx:
			default:
			}
			for p := tr.pop(b); p != nil; p = tr.pop(nil) {
				got++
				if p.Err == nil && (len(p.MAD) < madHeaderSize || p.Agent < 0 || p.Agent >= 2) {
					t.Fatalf("delivered agent %d, a %d-byte MAD", p.Agent, len(p.MAD))
				}
				tr.Recycle(p)
			}
			if got != kept {
				t.Fatalf("took %d packets off the queue, %d were kept", got, kept)
			}
			if tr.queued.Load() != 0 {
				t.Fatalf("%d packets still counted as queued", tr.queued.Load())
			}
		}
	})
}
