package ibpath_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/mad/madtest"
)

// fabric serves an SA (PathRecord, NodeRecord) and an SMA over directed
// routes: the route 0,1 ends at a switch with LID 10, 0,1,3 at a CA with
// LID 30 entered by its port 2.
func simFabric(t *testing.T) *mad.Client {
	t.Helper()
	ta, tb := madtest.Pipe(
		[]madtest.Option{madtest.WithPort(mad.LocalPort{Name: "a/1", LID: 1, SMLID: 2, PortGUID: 0x101, GIDPrefix: 0xfe80 << 48})},
		[]madtest.Option{madtest.WithPort(mad.LocalPort{Name: "sm/1", LID: 2})})
	cli := mad.NewClient(ta, mad.WithTimeout(500*time.Millisecond))
	srv := mad.NewClient(tb)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		_ = srv.Serve(ctx, iba.ClassSubnAdm, 2, []iba.Method{iba.MethodGet, iba.MethodGetTable}, func(ctx context.Context, req *mad.ServerRequest) (*mad.ServerReply, error) {
			switch req.AttrID {
			case 0x35:
				var q iba.PathRecord
				_ = q.Unmarshal(req.Data())
				if q.SGID != iba.MakeGID(0xfe80<<48, 0x101) || q.Reversible != 1 {
					return nil, mad.ErrSAReqInvalid
				}
				switch {
				case q.DLID == 30 || q.DGID.GUID() == 0x300:
					q.DLID, q.DGID = 30, iba.MakeGID(0xfe80<<48, 0x300)
				case q.DLID != 0 || q.DGID != (iba.GID{}):
					return nil, mad.ErrSANoRecords
				}
				q.SLID, q.SL, q.PKey, q.MTU = 1, 5, 0x8001, 4
				b := make([]byte, 64)
				_ = q.MarshalTo(b)
				return &mad.ServerReply{Data: b, AttrOffset: 64}, nil
			case 0x11:
				var q iba.NodeRecord
				_ = q.Unmarshal(req.Data())
				if q.NodeInfo.NodeGUID != 0x3000 {
					return &mad.ServerReply{}, nil
				}
				q.LID = 30
				b := make([]byte, 112)
				_ = q.MarshalTo(b)
				return &mad.ServerReply{Data: b, AttrOffset: 112}, nil
			}
			return nil, mad.ErrMethodAttrUnsupported
		})
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		_ = srv.Serve(ctx, iba.ClassSubnMgtDirected, 1, []iba.Method{iba.MethodGet}, func(ctx context.Context, req *mad.ServerRequest) (*mad.ServerReply, error) {
			var f iba.SMPFormatDirected
			_ = f.Unmarshal(req.MAD)
			path := f.InitialPath[:f.HopCount+1]
			ni := iba.NodeInfo{NodeType: iba.NodeTypeSwitch, LocalPortNum: 1}
			lid := uint16(10)
			if len(path) == 3 {
				ni, lid = iba.NodeInfo{NodeType: iba.NodeTypeCA, LocalPortNum: 2}, 30
			}
			b := make([]byte, 64)
			switch req.AttrID {
			case 0x11:
				_ = ni.MarshalTo(b)
			case 0x15:
				want := uint32(ni.LocalPortNum)
				if ni.NodeType == iba.NodeTypeSwitch {
					want = 0
				}
				if req.AttrMod != want {
					return nil, mad.ErrInvalidField
				}
				_ = (&iba.PortInfo{LID: lid}).MarshalTo(b)
			}
			return &mad.ServerReply{Data: b}, nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done; <-done; cli.Close(); srv.Close() })
	time.Sleep(10 * time.Millisecond)
	return cli
}

func TestResolve(t *testing.T) {
	mc := simFabric(t)
	r := &ibpath.Resolver{MAD: mc}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	parse := func(s string, m ibpath.Mode) ibpath.Path {
		p, err := ibpath.Parse(s, ibpath.Options{Mode: m})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	g, err := r.GMP(ctx, parse("30", ibpath.Any))
	if err != nil {
		t.Fatal(err)
	}
	if g.DLID != 30 || g.SLID != 1 || g.SL != 5 || g.PKey != 0x8001 || g.MTU != 4 {
		t.Errorf("GMP path %v", g)
	}
	if rt := g.Route(); rt.Addr.LID != 30 || rt.Addr.SL != 5 {
		t.Errorf("route %+v", rt.Addr)
	}
	if q, err := ibpath.Parse(g.String(), ibpath.Options{}); err != nil || q.String() != g.String() {
		t.Errorf("resolved path %v does not round trip: %v", g, err)
	}

	g, err = r.GMP(ctx, parse("0:0:0:300", ibpath.Any))
	if err != nil || g.DLID != 30 {
		t.Errorf("by GUID: %v %v", g, err)
	}
	g, err = r.GMP(ctx, parse("0,1,3", ibpath.Any))
	if err != nil || g.DLID != 30 || g.SL != 5 {
		t.Errorf("DR for a GMP: %v %v", g, err)
	}
	lid, err := r.LID(ctx, parse("0,1", ibpath.Any))
	if err != nil || lid != 10 {
		t.Errorf("DR to a switch: %d %v", lid, err)
	}
	lid, err = r.LID(ctx, parse("0x3000", ibpath.NodeGUID))
	if err != nil || lid != 30 {
		t.Errorf("node GUID: %d %v", lid, err)
	}
	s, err := r.SMP(ctx, parse("fe80::300", ibpath.Any))
	if err != nil || s.Route().Addr.LID != 30 {
		t.Errorf("SMP path by GID: %v %v", s, err)
	}
	s, err = r.SMP(ctx, parse("0,1", ibpath.Any))
	if err != nil || s.Route().DR == nil {
		t.Errorf("SMP path by DR: %v %v", s, err)
	}
	complete := parse("IBPath(SLID=1, DLID=9, dqpn=1)", ibpath.Any)
	if g, err := r.GMP(ctx, complete); err != nil || g != complete {
		t.Errorf("a complete path was resolved again: %v %v", g, err)
	}
	_, err = r.GMP(ctx, parse("44", ibpath.Any))
	if !errors.Is(err, ibpath.ErrNotFound) || !errors.Is(err, mad.ErrSANoRecords) {
		t.Errorf("unknown LID: %v", err)
	}
	if _, err := r.LID(ctx, parse("0x4000", ibpath.NodeGUID)); !errors.Is(err, ibpath.ErrNotFound) {
		t.Errorf("unknown node: %v", err)
	}
}
