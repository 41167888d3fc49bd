package nldev

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
	"golang.org/x/sys/unix"
)

// FuzzUnmarshalAttributes feeds arbitrary bytes to the attribute decoder and
// every message decoder: none may panic, and whatever decodes re-encodes to
// the same attributes.
func FuzzUnmarshalAttributes(f *testing.F) {
	for _, m := range []interface{ MarshalBinary() ([]byte, error) }{
		&Device{Index: 1, Name: "rxe0", NumPorts: 1, NodeGUID: 0x505400fffe123456, CapFlags: 1 << 60},
		&Port{DevIndex: 1, DevName: "rxe0", Port: 1, NdevName: "eth0", State: 4},
		&Summary{DevIndex: 1, DevName: "rxe0", Entries: []SummaryEntry{{Name: "qp", Curr: 2}}},
		&QP{LQPN: 17, Type: 2, Entry: Entry{Driver: []DriverAttr{{Name: "x", Value: U32(AttrDriverU32, 1)}}}},
		&SRQ{SRQN: 1, QPs: []QPRange{{Min: 1, Max: 4, Range: true}}},
		&Counter{ID: 1, QPs: []uint32{3}, HWCounters: []HWCounter{{Name: "a", Value: 1}}},
	} {
		b, err := m.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range []interface{ UnmarshalBinary([]byte) error }{
			&Device{}, &Port{}, &Summary{}, &QP{}, &CMID{}, &CQ{}, &MR{}, &PD{}, &Ctx{}, &SRQ{},
			&Counter{}, &PortStats{}, &SysInfo{}, &Event{},
		} {
			_ = m.UnmarshalBinary(b)
		}
		attrs, err := UnmarshalAttributes(b)
		if err != nil {
			return
		}
		again, err := MarshalAttributes(attrs)
		if err != nil {
			return // an attribute too long to re-encode after padding
		}
		back, err := UnmarshalAttributes(again)
		if err != nil {
			t.Fatalf("re-encoded attributes do not decode: %v", err)
		}
		if diff := cmp.Diff(attrs, back, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(Attribute{}, "Data")); diff != "" {
			t.Fatalf("round trip changed the attributes:\n%s", diff)
		}
	})
}

// FuzzKernelReplies answers every request of a Conn with arbitrary
// netlink payloads, split into up to four messages as a dump comes (a
// length byte each; the last byte of the input picks the call and
// whether the answer is an error): the services' decoding of replies and
// of the kernel's errors must not panic.
func FuzzKernelReplies(f *testing.F) {
	dev, _ := (&Device{Index: 1, Name: "rxe0", NumPorts: 1}).MarshalBinary()
	qp, _ := (&QP{LQPN: 17, Type: 2}).MarshalBinary()
	one := func(b []byte) []byte { return append([]byte{byte(len(b))}, b...) }
	for call := range byte(8) {
		f.Add(append(one(dev), call))
		f.Add(append(append(one(qp), one(dev)...), call))
	}
	f.Add([]byte{4, 0xff, 0xff, 0xff, 0xff, 0x80})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		call := data[len(data)-1]
		data = data[:len(data)-1]
		var payloads [][]byte
		for len(data) > 0 && len(payloads) < 4 {
			n := min(int(data[0]), len(data)-1)
			payloads = append(payloads, data[1:1+n])
			data = data[1+n:]
		}
		h := func(req []netlink.Message) ([]netlink.Message, error) {
			if call&0x80 != 0 {
				return nil, unix.EOPNOTSUPP
			}
			rh := req[0].Header
			hdr := func(typ netlink.HeaderType) netlink.Header {
				return netlink.Header{Type: typ, Flags: netlink.Multi, Sequence: rh.Sequence, PID: rh.PID}
			}
			out := make([]netlink.Message, 0, len(payloads)+1)
			for _, p := range payloads {
				out = append(out, netlink.Message{Header: hdr(rh.Type), Data: p})
			}
			return append(out, netlink.Message{Header: hdr(unix.NLMSG_DONE), Data: make([]byte, 4)}), nil
		}
		c := NewConn(nltest.Dial(h))
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		switch call & 7 {
		case 0:
			_, _ = c.Dev.List(ctx)
		case 1:
			_, _ = c.Link.List(ctx)
		case 2:
			_, _ = c.Res.Summary(ctx)
		case 3:
			_, _ = c.Res.QPs(ctx, Query{})
		case 4:
			_, _ = c.Res.CMIDs(ctx, Query{})
		case 5:
			_, _ = c.Stat.Counters(ctx, 1, 1)
		case 6:
			_, _ = c.Stat.Port(ctx, 1, 1)
		case 7:
			_, _ = c.Res.SRQs(ctx, Query{})
		}
	})
}
