package sa_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/mad/madtest"
	"github.com/rdmakit/rdmakit/sa"
)

func TestComponentMask(t *testing.T) {
	ni := iba.NodeRecord{}
	ni.NodeInfo.NodeGUID = 0x1234
	pr := iba.PathRecord{ServiceID: 1, DLID: 4}
	cases := []struct {
		name  string
		rec   iba.Attribute
		comps []string
		want  uint64
	}{
		{"nothing set", &iba.NodeRecord{}, nil, 0},
		{"LID", &iba.NodeRecord{LID: 5}, nil, 1},
		{"nested GUID", &ni, nil, 1 << 7},
		{"zero port named", &iba.PortInfoRecord{EndportLID: 3}, []string{"PortNum"}, 3},
		{"IBA name", &iba.PortInfoRecord{}, []string{"portNum"}, 2},
		{"dotted Go name", &iba.NodeRecord{}, []string{"NodeInfo.NodeType"}, 1 << 4},
		{"a whole structure", &iba.NodeRecord{}, []string{"nodeInfo"}, 0xfff << 2},
		{"two-bit ServiceID", &pr, nil, 1<<0 | 1<<1 | 1<<4},
		{"array element", &iba.ServiceRecord{ServiceData8: [16]uint8{3: 9}}, []string{"serviceData16_1"}, 1<<10 | 1<<24},
		{"bits inside a byte", &iba.PathRecord{Reversible: 1, NumbPath: 0}, nil, 1 << 11},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sa.ComponentMask(tc.rec, tc.comps...)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("mask %#x, want %#x", got, tc.want)
			}
		})
	}
	if _, err := sa.ComponentMask(&iba.NodeRecord{}, "noSuchThing"); err == nil {
		t.Error("an unknown component was accepted")
	}
	if _, err := sa.ComponentMask(&iba.NodeInfo{}); err == nil {
		t.Error("a structure without component mask was accepted")
	}
}

// fakeSA is an SA served over a madtest pipe that records each query.
type fakeSA struct {
	mu      sync.Mutex
	queries []query
	ports   map[uint16][]iba.PortInfoRecord
	nodes   map[uint16]iba.NodeRecord
	links   map[[2]uint16]uint16 // (fromLID, fromPort) -> toLID
}

type query struct {
	method iba.Method
	attr   uint16
	mask   uint64
	smKey  uint64
}

func (f *fakeSA) handle(ctx context.Context, req *mad.ServerRequest) (*mad.ServerReply, error) {
	f.mu.Lock()
	f.queries = append(f.queries, query{req.Method, req.AttrID, req.CompMask(), req.SMKey()})
	f.mu.Unlock()
	one := func(rec iba.Attribute, stride int) (*mad.ServerReply, error) {
		b := make([]byte, stride)
		_ = rec.MarshalTo(b)
		return &mad.ServerReply{Data: b, AttrOffset: stride}, nil
	}
	switch req.AttrID {
	case 0x11: // NodeRecord
		var q iba.NodeRecord
		_ = q.Unmarshal(req.Data())
		if req.CompMask()&1 != 0 {
			if n, ok := f.nodes[q.LID]; ok {
				return one(&n, 112)
			}
			return nil, mad.ErrSANoRecords
		}
		for _, n := range f.nodes {
			if req.CompMask() == 1<<7 && n.NodeInfo.NodeGUID == q.NodeInfo.NodeGUID {
				return one(&n, 112)
			}
		}
		return nil, mad.ErrSANoRecords
	case 0x12: // PortInfoRecord
		var q iba.PortInfoRecord
		_ = q.Unmarshal(req.Data())
		recs := f.ports[q.EndportLID]
		if req.Method == iba.MethodGetTable {
			b := make([]byte, 72*len(recs))
			for i := range recs {
				_ = recs[i].MarshalTo(b[72*i:])
			}
			return &mad.ServerReply{Data: b, AttrOffset: 72}, nil
		}
		for _, r := range recs {
			if r.PortNum == q.PortNum && req.CompMask() == 3 {
				return one(&r, 72)
			}
		}
		return nil, mad.ErrSANoRecords
	case 0x20: // LinkRecord
		var q iba.LinkRecord
		_ = q.Unmarshal(req.Data())
		to, ok := f.links[[2]uint16{q.FromLID, uint16(q.FromPort)}]
		if !ok || req.CompMask() != 3 {
			return nil, mad.ErrSANoRecords
		}
		q.ToLID = to
		return one(&q, 8)
	case 0x35: // PathRecord
		var q iba.PathRecord
		_ = q.Unmarshal(req.Data())
		if q.DLID == 0 && q.DGID.GUID() == 0x77 {
			q.DLID = 77
		}
		if q.DLID == 0 {
			return nil, mad.ErrSANoRecords
		}
		q.SLID, q.SL, q.PKey, q.HopLimit = 1, 3, 0xffff, 0
		return one(&q, 64)
	case 0x33: // PKeyTableRecord: OpenSM has no such block
		return nil, mad.ErrSANoRecords
	}
	return nil, mad.ErrMethodAttrUnsupported
}

func (f *fakeSA) last() query {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queries[len(f.queries)-1]
}

func (f *fakeSA) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queries)
}

func newFakeSA(t *testing.T) (*fakeSA, *mad.Client) {
	t.Helper()
	f := &fakeSA{
		nodes: map[uint16]iba.NodeRecord{},
		ports: map[uint16][]iba.PortInfoRecord{},
		links: map[[2]uint16]uint16{{1, 1}: 10, {10, 5}: 20},
	}
	for _, lid := range []uint16{1, 10, 20} {
		r := iba.NodeRecord{LID: lid}
		r.NodeInfo.NodeGUID = iba.GUID(0x100 + uint64(lid))
		r.NodeInfo.NodeType = iba.NodeTypeCA
		if lid == 10 {
			r.NodeInfo.NodeType = iba.NodeTypeSwitch
		}
		copy(r.NodeDescription.NodeString[:], "node")
		f.nodes[lid] = r
	}
	f.ports[10] = []iba.PortInfoRecord{{EndportLID: 10, PortNum: 0}, {EndportLID: 10, PortNum: 1}}
	f.ports[10][0].PortInfo.LID = 10
	f.ports[10][1].PortInfo.LocalPortNum = 1
	f.ports[20] = []iba.PortInfoRecord{{EndportLID: 20, PortNum: 1}}
	f.ports[20][0].PortInfo.LID = 20
	f.ports[20][0].PortInfo.LocalPortNum = 1

	ta, tb := madtest.Pipe(
		[]madtest.Option{madtest.WithPort(mad.LocalPort{Name: "a/1", LID: 1, SMLID: 2, PortGUID: 0x101, GIDPrefix: 0xfe80 << 48})},
		[]madtest.Option{madtest.WithPort(mad.LocalPort{Name: "sm/1", LID: 2, SMLID: 2})})
	cli := mad.NewClient(ta, mad.WithTimeout(200*time.Millisecond))
	srv := mad.NewClient(tb)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ctx, iba.ClassSubnAdm, 2, []iba.Method{iba.MethodGet, iba.MethodGetTable}, f.handle)
	}()
	t.Cleanup(func() { cancel(); <-done; cli.Close(); srv.Close() })
	time.Sleep(10 * time.Millisecond)
	return f, cli
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestGetAndGetTable(t *testing.T) {
	f, mc := newFakeSA(t)
	c := sa.New(mc, sa.WithSMKey(0xabc))
	ctx := ctxFor(t)
	r := iba.NodeRecord{LID: 10}
	if err := c.Get(ctx, &r); err != nil {
		t.Fatal(err)
	}
	if r.NodeInfo.NodeGUID != 0x10a {
		t.Errorf("got %v", r.NodeInfo.NodeGUID)
	}
	if q := f.last(); q.mask != 1 || q.smKey != 0xabc || q.method != iba.MethodGet || q.attr != 0x11 {
		t.Errorf("query %+v", q)
	}
	recs, err := sa.GetTable(ctx, c, &iba.PortInfoRecord{EndportLID: 10})
	if err != nil || len(recs) != 2 || recs[1].PortNum != 1 {
		t.Fatalf("%v %+v", err, recs)
	}
	none, err := sa.GetTable(ctx, c, &iba.PKeyTableRecord{LID: 10})
	if err != nil || len(none) != 0 {
		t.Errorf("NO_RECORDS table: %v %v", none, err)
	}
	err = c.Get(ctx, &iba.NodeRecord{LID: 99})
	if !errors.Is(err, mad.ErrSANoRecords) {
		t.Errorf("missing record: %v", err)
	}
	var se *mad.StatusError
	if !errors.As(err, &se) || se.ClassCode() != mad.SANoRecords {
		t.Errorf("not a StatusError: %v", err)
	}
	pr, err := c.PathRecord(ctx, iba.MakeGID(0xfe80<<48, 0x101), iba.GID{}, 20)
	if err != nil || pr.DLID != 20 || pr.SL != 3 || pr.Reversible != 1 {
		t.Errorf("PathRecord %+v %v", pr, err)
	}
}

func TestSMPAdapter(t *testing.T) {
	f, mc := newFakeSA(t)
	a := sa.NewSMP(sa.New(mc))
	ctx := ctxFor(t)
	var getter mad.SubnGetter = a

	var ni iba.NodeInfo
	if err := getter.SubnGet(ctx, mad.Route{Addr: mad.Addr{LID: 20}}, &ni, 0); err != nil {
		t.Fatal(err)
	}
	if ni.NodeGUID != 0x114 || f.last().attr != 0x11 || f.last().mask != 1 {
		t.Errorf("NodeInfo %v via %+v", ni.NodeGUID, f.last())
	}
	var nd iba.NodeDescription
	if err := a.SubnGet(ctx, mad.Route{Addr: mad.Addr{LID: 20}}, &nd, 0); err != nil || string(nd.NodeString[:4]) != "node" {
		t.Errorf("NodeDescription %q %v", nd.NodeString[:4], err)
	}

	// PortInfo 0 of a node of unknown type: a table, port 0 chosen.
	var pi iba.PortInfo
	if err := a.SubnGet(ctx, mad.Route{Addr: mad.Addr{LID: 10}}, &pi, 0); err != nil {
		t.Fatal(err)
	}
	if pi.LID != 10 || f.last().method != iba.MethodGetTable {
		t.Errorf("PortInfo 0: LID %d via %+v", pi.LID, f.last())
	}
	// A given port: a Get with the port number in the mask even when 0.
	if err := a.SubnGet(ctx, mad.Route{Addr: mad.Addr{LID: 10}}, &pi, 1); err != nil {
		t.Fatal(err)
	}
	if pi.LocalPortNum != 1 || f.last().method != iba.MethodGet || f.last().mask != 3 {
		t.Errorf("PortInfo 1: %+v", f.last())
	}
	// NO_RECORDS for a table block gives zeros.
	pk := iba.PKeyTable{}
	pk.PKeyBlock[0] = 0x1234
	if err := a.SubnGet(ctx, mad.Route{Addr: mad.Addr{LID: 20}}, &pk, 0); err != nil || pk.PKeyBlock[0] != 0 {
		t.Errorf("PKeyTable: %v %v", pk.PKeyBlock[0], err)
	}
	// A directed route: LinkRecords from the local LID, hop by hop.
	n := f.count()
	dr := mad.Route{DR: &mad.DirectedRoute{Path: []byte{0, 1, 5}, DrSLID: mad.LIDPermissive, DrDLID: mad.LIDPermissive}}
	if err := a.SubnGet(ctx, dr, &ni, 0); err != nil {
		t.Fatal(err)
	}
	if ni.NodeGUID != 0x114 || f.count() != n+3 {
		t.Errorf("DR NodeInfo %v with %d queries", ni.NodeGUID, f.count()-n)
	}
	if err := a.SubnGet(ctx, dr, &ni, 0); err != nil || f.count() != n+4 {
		t.Errorf("the resolved route was not cached: %d queries, %v", f.count()-n, err)
	}
	lid, err := a.LID(ctx, dr)
	if err != nil || lid != 20 {
		t.Errorf("LID %d %v", lid, err)
	}
	// An attribute without a record goes out as an SMP, and times out here.
	if err := a.SubnGet(ctx, mad.Route{Addr: mad.Addr{LID: 20}, Timeout: 10 * time.Millisecond, Tries: 1}, &iba.LedInfo{}, 0); !errors.Is(err, mad.ErrTimeout) {
		t.Errorf("LedInfo: %v", err)
	}
}

func TestNoSMLID(t *testing.T) {
	tr := madtest.New(func(*mad.Packet) []*mad.Packet { return nil }, madtest.WithPort(mad.LocalPort{Name: "x/1", LID: 1}))
	mc := mad.NewClient(tr)
	defer mc.Close()
	err := sa.New(mc).Get(ctxFor(t), &iba.NodeRecord{LID: 1})
	if err == nil || tr.Sent() != 0 {
		t.Errorf("query without an SM: %v, %d sent", err, tr.Sent())
	}
}
