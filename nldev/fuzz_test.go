package nldev

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
