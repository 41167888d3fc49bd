package sim

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
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
	for _, c := range []struct {
		class, version uint8
		attr           uint16
	}{{0x03, 2, 0x11}, {0x21, 2, 0x11}, {0x21, 2, 0x17}, {0x32, 1, 0}, {0x33, 1, 0x11}} {
		g := make([]byte, 256)
		g[0], g[1], g[2], g[3] = 1, c.class, c.version, 1
		binary.BigEndian.PutUint16(g[16:], c.attr)
		g[37], g[38], g[39] = 0x00, 0x14, 0x05
		f.Add(g, uint16(2), uint16(0))
	}
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

// FuzzSAHandle gives the SA arbitrary queries of every method, attribute
// and component mask: nothing may panic, and every answer is a record
// table, a status, or nothing.
func FuzzSAHandle(f *testing.F) {
	for _, attr := range []uint16{0x01, 0x03, 0x11, 0x12, 0x13, 0x14, 0x15, 0x17, 0x18, 0x20, 0x30, 0x31, 0x33, 0x35, 0x36, 0x38, 0xF3} {
		for _, m := range []uint8{1, 2, 0x12, 0x15} {
			b := make([]byte, 256)
			b[0], b[1], b[2], b[3] = 1, 3, 2, m
			binary.BigEndian.PutUint16(b[16:], attr)
			f.Add(b, uint64(0x3))
		}
	}
	fab := lineFabric(f, true)
	s := fab.sm.Load()
	a := s.sa.Load()
	if a == nil {
		f.Fatal("no SA")
	}
	f.Fuzz(func(t *testing.T, b []byte, mask uint64) {
		if len(b) < 56 || len(b) > 256 {
			return
		}
		binary.BigEndian.PutUint64(b[48:], mask)
		req := &mad.ServerRequest{
			Addr: mad.Addr{LID: 1, QPN: 1}, MAD: b, Class: 3, Version: 2, Method: iba.Method(b[3]),
			AttrID: binary.BigEndian.Uint16(b[16:]), AttrMod: binary.BigEndian.Uint32(b[20:]),
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rep, err := a.handle(ctx, req)
		if err == nil && rep != nil && rep.AttrOffset%8 != 0 {
			t.Fatalf("AttributeOffset %d", rep.AttrOffset)
		}
	})
}
