package mad_test

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/mad/madtest"
)

// fuzzReplies cuts data into up to 8 MADs answering req: a length byte
// then that many bytes for each, laid over a copy of the request. The
// TID's low 32 bits are the request's, so that every MAD reaches the
// RPC's exchange (that is what the fuzz is about); bit 0 of the length
// byte keeps the request's class and a response method, so that the
// exchange reads the rest.
func fuzzReplies(req *mad.Packet, data []byte) []*mad.Packet {
	var out []*mad.Packet
	for len(data) > 0 && len(out) < 8 {
		n := int(data[0])
		data = data[1:]
		keep := n&1 != 0
		n = min(n, len(data), mad.Size)
		m := make([]byte, mad.Size)
		copy(m, req.MAD)
		copy(m, data[:n])
		data = data[n:]
		if keep {
			m[1] = req.MAD[1]
			m[3] = req.MAD[3] | 0x80
			if req.MAD[3] == byte(iba.MethodGetTable) {
				m[3] = byte(iba.MethodGetTableResp)
			}
		}
		copy(m[12:16], req.MAD[12:16])
		out = append(out, &mad.Packet{Agent: req.Agent, Addr: req.Addr, MAD: m})
	}
	return out
}

// FuzzReceive runs an RPC whose answers are arbitrary MADs: the header
// reader, status decoding, RMPP reassembly (segments, ACK windows,
// STOP/ABORT, lengths) and the splitting of an SA table into records. No
// answer may panic or keep the RPC past its timeout; a table that is
// returned has records of the record's size.
func FuzzReceive(f *testing.F) {
	seg := func(segNum uint32, flags byte, payload uint32, data byte) []byte {
		b := make([]byte, 256)
		b[0], b[1], b[2], b[3] = 1, 0x03, 2, 0x92
		b[24], b[25], b[26] = 1, 1, flags // RMPP version 1, DATA
		binary.BigEndian.PutUint32(b[28:], segNum)
		binary.BigEndian.PutUint32(b[32:], payload)
		binary.BigEndian.PutUint16(b[44:], 112/8) // AttributeOffset
		for i := 56; i < 256; i++ {
			b[i] = data
		}
		return b
	}
	one := func(b []byte) []byte { return append([]byte{255}, b[:255]...) }
	f.Add(byte(0), one(seg(1, 0x07, 200+20, 1)))
	f.Add(byte(1), append(one(seg(1, 0x03, 400, 2)), one(seg(2, 0x05, 220, 3))...))
	f.Add(byte(1), one(seg(1, 0x01, 0, 0)))
	f.Add(byte(2), []byte{255, 1, 0x81, 1, 0x81})
	f.Add(byte(3), []byte{3, 1, 4, 1})
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		tr := madtest.New(func(req *mad.Packet) []*mad.Packet {
			if req.MAD[3]&0x80 != 0 || (req.MAD[24] == 1 && req.MAD[25] != 1) {
				return nil // an ACK or ABORT of ours
			}
			return fuzzReplies(req, data)
		})
		c := mad.NewClient(tr, mad.WithTimeout(2*time.Millisecond), mad.WithRetries(1))
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		dr := &mad.DirectedRoute{Path: []uint8{0, 1}}
		switch which % 4 {
		case 0, 1:
			tb, err := c.SubnAdmGetTable(ctx, mad.Route{Addr: mad.Addr{LID: 1}}, &iba.NodeRecord{}, 0)
			if err == nil {
				for i, r := range tb.Records {
					if len(r) != (&iba.NodeRecord{}).Desc().Size {
						t.Fatalf("record %d of %d bytes", i, len(r))
					}
				}
			}
		case 2:
			_ = c.SubnGet(ctx, mad.Route{DR: dr}, &iba.NodeInfo{}, 0)
		case 3:
			_ = c.PerformanceGet(ctx, mad.Route{Addr: mad.Addr{LID: 2}}, &iba.PortCounters{}, 0)
		}
		if ctx.Err() != nil {
			t.Fatal("the RPC outlived its timeout by seconds")
		}
	})
}
