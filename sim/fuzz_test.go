package sim

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/rdmakit/rdmakit/mad"
)

// FuzzSend feeds arbitrary MADs and addressing to the fabric: nothing may
// panic or hang, whatever the headers, paths and attributes say.
func FuzzSend(f *testing.F) {
	good := smpDR(1, 0x11, 0, LIDPermissive, LIDPermissive, 1, 3)
	f.Add(good, uint16(LIDPermissive), uint16(0))
	set := smpDR(2, 0x15, 3, LIDPermissive, LIDPermissive, 1)
	set[64+32] = 0x33
	f.Add(set, uint16(LIDPermissive), uint16(0))
	pm := smpLID(1, 0x12, 0)
	pm[1] = 0x04
	pm[64+1] = 0xFF
	f.Add(pm, uint16(1), uint16(0))
	lft := smpLID(2, 0x19, 1)
	f.Add(lft, uint16(2), uint16(1))
	fab := lineFabric(f, true)
	tr, err := fab.Attach("hca1", 1)
	if err != nil {
		f.Fatal(err)
	}
	agents := map[uint8]int{}
	f.Fuzz(func(t *testing.T, b []byte, lid uint16, pkeyIndex uint16) {
		if len(b) < 24 || len(b) > 256 {
			return
		}
		class := b[1]
		ag, ok := agents[class]
		if !ok {
			if class == 0 {
				return
			}
			ag, err = tr.Register(mad.AgentSpec{Class: class, ClassVersion: b[2]})
			if err != nil {
				t.Fatal(err)
			}
			agents[class] = ag
		}
		if binary.BigEndian.Uint16(b[16:]) == 0x15 && b[3] == 2 {
			return // keep the fabric's links up for the next inputs
		}
		p := &mad.Packet{Agent: ag, Addr: mad.Addr{LID: lid, PKeyIndex: pkeyIndex, QPN: 1}, MAD: b}
		if err := tr.Send(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		for {
			select {
			case <-tr.(*Attachment).q:
				continue
			default:
			}
			break
		}
	})
}
