package ibsim

import (
	"testing"

	"github.com/rdmakit/rdmakit/mad"
)

// TestRequestAddress: a directed-route SMP directed from the start goes to
// the permissive LID from the permissive LID; one LID-routed to the start
// of its directed part (ibportstate's peer query) goes to that LID, as
// libumad2sim sends it; other MADs go to their LID from SLID 0.
func TestRequestAddress(t *testing.T) {
	mk := func(class uint8, lid uint16, qpn uint32) *mad.Packet {
		m := make([]byte, madSize)
		m[0], m[1], m[2], m[3] = 1, class, 1, 1
		return &mad.Packet{Addr: mad.Addr{LID: lid, QPN: qpn}, MAD: m}
	}
	for _, tc := range []struct {
		p               *mad.Packet
		dlid, slid, sqp uint16
	}{
		{mk(0x81, 0xffff, 0), 0xffff, 0xffff, 0},
		{mk(0x81, 0, 0), 0xffff, 0xffff, 0},
		{mk(0x81, 15, 0), 15, 0, 0},
		{mk(0x01, 7, 0), 7, 0, 0},
		{mk(0x04, 7, 1), 7, 0, 1},
	} {
		r := request(tc.p)
		if r.dlid != tc.dlid || r.slid != tc.slid || uint16(r.sqp) != tc.sqp {
			t.Errorf("class %#x to LID %#x: dlid %#x slid %#x sqp %d, want %#x %#x %d", tc.p.MAD[1], tc.p.Addr.LID, r.dlid, r.slid, r.sqp, tc.dlid, tc.slid, tc.sqp)
		}
	}
}
