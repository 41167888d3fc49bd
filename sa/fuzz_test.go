package sa_test

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/mad/madtest"
	"github.com/rdmakit/rdmakit/sa"
)

// FuzzComponentMask: no record and list of component names panics; the
// mask has bits only for the record's components.
func FuzzComponentMask(f *testing.F) {
	for _, s := range []string{"LID", "nodeInfo.nodeGUID,portNum", "NODEINFO", "", ",", "nodeInfo..x", "portInfo.lid,EndportLID"} {
		f.Add(byte(0), s)
		f.Add(byte(1), s)
	}
	recs := []func() iba.Attribute{
		func() iba.Attribute { return &iba.NodeRecord{LID: 3} },
		func() iba.Attribute { return &iba.PortInfoRecord{EndportLID: 4} },
		func() iba.Attribute { return &iba.PathRecord{Reversible: 1} },
		func() iba.Attribute { return &iba.LinkRecord{} },
		func() iba.Attribute { return &iba.MCMemberRecord{} },
		func() iba.Attribute { return &iba.ServiceRecord{} },
	}
	f.Fuzz(func(t *testing.T, which byte, names string) {
		rec := recs[int(which)%len(recs)]()
		mask, err := sa.ComponentMask(rec, strings.Split(names, ",")...)
		if err != nil {
			return
		}
		if n := len(rec.Desc().CompMask); n < 64 && mask>>n != 0 {
			t.Fatalf("%s %q: mask %#x beyond its %d components", rec.Desc().Name, names, mask, n)
		}
	})
}

// FuzzAnswers gives the SA client and its SMP adapter arbitrary SA
// answers (status, AttributeOffset, record data, in one MAD as ibsim
// carries them): record splitting, decoding and the adapter's
// translations must not panic, and fail or succeed within the timeout.
func FuzzAnswers(f *testing.F) {
	rec := make([]byte, 112)
	binary.BigEndian.PutUint16(rec, 7)
	rec[8+2] = 2 // a switch
	for which := range byte(8) {
		f.Add(which, uint16(0), uint16(112/8), rec)
		f.Add(which, uint16(0x0300), uint16(0), []byte{})
	}
	f.Add(byte(0), uint16(0), uint16(1), make([]byte, 200))
	f.Fuzz(func(t *testing.T, which byte, status, attrOffset uint16, data []byte) {
		tr := madtest.New(func(req *mad.Packet) []*mad.Packet {
			r := madtest.Reply(req, status, data)
			if len(r.MAD) >= 46 {
				binary.BigEndian.PutUint16(r.MAD[44:], attrOffset)
			}
			r.MAD = r.MAD[:mad.Size]
			return []*mad.Packet{r}
		}, madtest.WithPort(mad.LocalPort{Name: "a/1", LID: 1, SMLID: 2}))
		mc := mad.NewClient(tr, mad.WithTimeout(2*time.Millisecond), mad.WithRetries(1))
		defer mc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c := sa.New(mc)
		smp := sa.NewSMP(c)
		to := mad.Route{Addr: mad.Addr{LID: 7}}
		dr := mad.Route{DR: &mad.DirectedRoute{Path: []byte{0, 1, 2}}}
		switch which % 8 {
		case 0:
			_, _ = sa.GetTable(ctx, c, &iba.NodeRecord{})
		case 1:
			_, _ = sa.GetTable(ctx, c, &iba.PortInfoRecord{EndportLID: 7})
		case 2:
			_, _ = c.PathRecord(ctx, iba.GID{}, iba.GID{}, 7)
		case 3:
			_ = smp.SubnGet(ctx, to, &iba.NodeInfo{}, 0)
		case 4:
			_ = smp.SubnGet(ctx, dr, &iba.PortInfo{}, 1)
		case 5:
			_ = smp.SubnGet(ctx, to, &iba.LinearForwardingTable{}, 0)
		case 6:
			_ = smp.SubnGet(ctx, dr, &iba.NodeInfo{}, 0)
		case 7:
			_ = smp.SubnGet(ctx, to, &iba.SwitchInfo{}, 0)
		}
		if ctx.Err() != nil {
			t.Fatal("a query outlived its timeout by seconds")
		}
	})
}
