package ibpath_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
)

func gid(s string) iba.GID {
	g, err := iba.ParseGID(s)
	if err != nil {
		panic(err)
	}
	return g
}

// record is a PathRecord as an SA answers it: LID 1 to LID 30 across a
// router (hop limit 4), SL 5, P_Key 0x8001, 2048-byte MTU, 100 Gb/s,
// packet lifetime 16.
func record() *iba.PathRecord {
	return &iba.PathRecord{
		SGID: gid("fe80::101"), DGID: gid("fec0::300"), SLID: 1, DLID: 30,
		FlowLabel: 0x12345, HopLimit: 4, TClass: 0x20, Reversible: 1, PKey: 0x8001, SL: 5,
		MTU: iba.MTU2048, Rate: iba.Rate100Gbps, PacketLifeTime: 16,
	}
}

func TestFromPathRecord(t *testing.T) {
	p := ibpath.FromPathRecord(record())
	if p.SLID != 1 || p.DLID != 30 || p.SL != 5 || p.PKey != 0x8001 || p.MTU != uint8(iba.MTU2048) || p.Rate != uint8(iba.Rate100Gbps) ||
		!p.HasGRH || p.HopLimit != 4 || p.TrafficClass != 0x20 || p.FlowLabel != 0x12345 || p.PacketLifeTime != 16 ||
		p.SGID != gid("fe80::101") || p.DGID != gid("fec0::300") {
		t.Fatalf("FromPathRecord = %+v", p)
	}
	// The spec prints what the record gave and parses back to the same path.
	q, err := ibpath.Parse(p.String(), ibpath.Options{})
	if err != nil || q.String() != p.String() {
		t.Errorf("spec %s parses to %v, %v", p, q, err)
	}
	// Its MAD timeout is python-rdma's: 4.096 µs × (2^17 + 2^20).
	if r := p.Route(); r.Timeout != p.MADTimeout() || r.Timeout.Round(time.Millisecond) != 4832*time.Millisecond {
		t.Errorf("Route timeout %v, MADTimeout %v", r.Timeout, p.MADTimeout())
	}
	// Inside the subnet (hop limit 0 or 1) there is no GRH.
	pr := record()
	pr.HopLimit = 1
	if p := ibpath.FromPathRecord(pr); p.HasGRH || p.Has("has_grh") {
		t.Errorf("hop limit 1: GRH %v", p.HasGRH)
	}
}

func TestReverse(t *testing.T) {
	p := ibpath.FromPathRecord(record())
	p.DQPN, p.SQPN, p.QKey = 0x48, 0x11, 0x11111111
	p.Mark("dqpn")
	p.Mark("sqpn")
	p.Mark("qkey")
	r := p.Reverse(true)
	if r.SLID != 30 || r.DLID != 1 || r.SGID != p.DGID || r.DGID != p.SGID || r.DQPN != 0x11 || r.SQPN != 0x48 ||
		r.HopLimit != 0xff || r.SL != 5 || r.PKey != 0x8001 || r.QKey != 0x11111111 || r.FlowLabel != 0x12345 {
		t.Errorf("Reverse(true) = %+v", r)
	}
	if p.SLID != 1 || p.HopLimit != 4 {
		t.Errorf("Reverse changed its path: %+v", p)
	}
	if !r.Has("DLID") || !r.Has("SLID") || !r.Has("dqpn") || !r.Has("sqpn") {
		t.Errorf("marks after Reverse: %s", r)
	}
	// Only the destination was given: after Reverse only the source is.
	d := ibpath.NewLID(7)
	d.DQPN = 1
	d.Mark("dqpn")
	if rd := d.Reverse(false); rd.Has("DLID") || !rd.Has("SLID") || rd.SLID != 7 || rd.Has("dqpn") || !rd.Has("sqpn") || rd.SQPN != 1 {
		t.Errorf("NewLID(7).Reverse = %s", rd)
	}
	// Twice turned round without forReply is the same path.
	if rr := p.Reverse(false).Reverse(false); rr.String() != p.String() || *rr != *p {
		t.Errorf("Reverse twice = %s, want %s", rr, p)
	}
	if rf := p.Reverse(false); rf.HopLimit != 4 {
		t.Errorf("Reverse(false) hop limit %d", rf.HopLimit)
	}
}

func TestComplete(t *testing.T) {
	p := ibpath.FromPathRecord(record())
	if p.Complete() {
		t.Error("a path without a destination QP is complete")
	}
	p.DQPN = 1
	p.Mark("dqpn")
	if !p.Complete() {
		t.Errorf("%s is not complete", p)
	}
	for name, f := range map[string]func(q *ibpath.IBPath){
		"multicast DLID": func(q *ibpath.IBPath) { q.DLID = 0xc001 },
		"no SLID":        func(q *ibpath.IBPath) { q.SLID = 0 },
		"no SGID":        func(q *ibpath.IBPath) { q.SGID = iba.GID{} },
	} {
		q := *p
		f(&q)
		if q.Complete() {
			t.Errorf("%s: complete", name)
		}
	}
}

func TestTimeouts(t *testing.T) {
	p := ibpath.NewLID(5)
	// Nothing given: Route leaves the client's default; MADTimeout is
	// python-rdma's 4.096 µs × (2^19 + 2^20) = 6.44 s.
	if r := p.Route(); r.Timeout != 0 {
		t.Errorf("Route timeout %v, want 0", r.Timeout)
	}
	if d := p.MADTimeout().Round(10 * time.Millisecond); d != 6440*time.Millisecond {
		t.Errorf("MADTimeout %v", d)
	}
	for _, c := range []struct {
		plt      int // -1: not given
		ackDelay uint8
		want     uint8
	}{
		{-1, 15, 20}, // 2^19 + 2^15 -> 2^20
		{16, 15, 18}, // 2^17 + 2^15 -> 2^18
		{0, 0, 2},    // 2 + 1 -> 4
		{14, 15, 16}, // 2^15 + 2^15 = 2^16 exactly
		{40, 3, 31},
		{3, 31, 31},
	} {
		q := ibpath.NewLID(5)
		if c.plt >= 0 {
			if err := q.Set("packet_life_time", fmt.Sprint(c.plt)); err != nil {
				t.Fatal(err)
			}
		}
		if got := q.ACKTimeout(c.ackDelay); got != c.want {
			t.Errorf("packet lifetime %d, ACK delay %d: ACKTimeout %d, want %d", c.plt, c.ackDelay, got, c.want)
		}
	}
}

// A path from the SA's PathRecord, completed with the destination QP and
// Q_Key of a datagram service, and the path its reply takes.
func ExampleFromPathRecord() {
	pr := &iba.PathRecord{
		SGID: iba.MakeGID(0xfe80<<48, 0x0002c90300001491), DGID: iba.MakeGID(0xfe80<<48, 0x0002c9030000a1b2),
		SLID: 4, DLID: 9, HopLimit: 0, PKey: 0xffff, SL: 2, MTU: iba.MTU4096, Rate: iba.Rate56Gbps, PacketLifeTime: 18,
	}
	p := ibpath.FromPathRecord(pr)
	p.DQPN, p.QKey = 0x1a2b, 0x11111111
	p.Mark("dqpn")
	p.Mark("qkey")
	fmt.Println(p)
	fmt.Println("complete:", p.Complete(), "MAD timeout:", p.MADTimeout().Round(time.Millisecond))
	fmt.Println("reply:", p.Reverse(true))
	// Output:
	// IBPath(DGID=fe80::2:c903:0:a1b2, DLID=9, MTU=5, SGID=fe80::2:c903:0:1491, SL=2, SLID=4, dqpn=6699, packet_life_time=18, pkey=0xffff, qkey=0x11111111, rate=12)
	// complete: true MAD timeout: 6.442s
	// reply: IBPath(DGID=fe80::2:c903:0:1491, DLID=4, MTU=5, SGID=fe80::2:c903:0:a1b2, SL=2, SLID=9, packet_life_time=18, pkey=0xffff, qkey=0x11111111, rate=12, sqpn=6699)
}

// The local ACK timeout of an RC QP on a path: twice the path's packet
// lifetime plus the responder's ACK delay, rounded up to a power of two.
func ExampleIBPath_ACKTimeout() {
	p := ibpath.FromPathRecord(&iba.PathRecord{SLID: 1, DLID: 2, PacketLifeTime: 16})
	t := p.ACKTimeout(15) // the responder's verbs.DeviceAttr.LocalCAAckDelay
	fmt.Printf("timeout %d: %v\n", t, time.Duration(4096<<t)*time.Nanosecond)
	// Output:
	// timeout 18: 1.073741824s
}
