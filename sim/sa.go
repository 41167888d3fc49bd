package sim

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// The subnet administrator (IBA 15) of the built-in SM. It runs as a
// mad.Client serving class SubnAdm on an attachment at the SM's port, so
// requests reach it at QP1 of the SM LID like any GMP (in process or
// through package ibsimserver), and mad's server side does the RMPP of
// table replies. Records of the subnet's objects are read through the SMA
// code itself (smaDo) for the end ports the last sweep found, so they
// always agree with SMP reads; services, multicast groups and event
// subscriptions are the SA's own state.

// SA attribute IDs handled besides the records (IBA 15.2.5, table 193).
const (
	saAttrClassPortInfo = 0x0001
	saAttrNotice        = 0x0002
	saAttrInformInfo    = 0x0003
)

// SA record attribute IDs.
const (
	saNodeRecord     = 0x11
	saPortInfoRecord = 0x12
	saSL2VLRecord    = 0x13
	saSwitchInfoRec  = 0x14
	saLFTRecord      = 0x15
	saMFTRecord      = 0x17
	saSMInfoRecord   = 0x18
	saLinkRecord     = 0x20
	saGUIDInfoRecord = 0x30
	saServiceRecord  = 0x31
	saPKeyRecord     = 0x33
	saPathRecord     = 0x35
	saVLArbRecord    = 0x36
	saMCMemberRecord = 0x38
	saInformInfoRec  = 0xF3
)

// saMaxWorld bounds a PathRecord query that names neither end: every pair
// of end ports is only answered on small subnets.
const saMaxWorld = 1024

// errSA makes an SA status error for the mad server.
func errSA(code uint8) error { return &mad.StatusError{Status: mad.SAStatus(code)} }

type saServer struct {
	f      *Fabric
	s      *SM
	mc     *mad.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	services []*service
	groups   []*mcGroup
	informs  []*inform
	nextMGID uint32
}

type service struct {
	rec     []byte // ServiceRecord, 176 bytes
	expires time.Time
}

type inform struct {
	gid  iba.GID
	lid  uint16
	qpn  uint32
	info iba.InformInfo
}

func (s *SM) startSA() error {
	s.f.smMu.Lock()
	defer s.f.smMu.Unlock()
	if s.sa.Load() != nil || s.ctx.Err() != nil {
		return nil
	}
	p := &s.f.ports[s.port]
	att, err := s.f.attach(s.f.topo.Nodes[p.node].ID, int(p.num))
	if err != nil {
		return fmt.Errorf("starting the SA: %w", err)
	}
	a := &saServer{f: s.f, s: s, mc: mad.NewClient(att, mad.WithTimeout(time.Second), mad.WithRetries(3)), done: make(chan struct{})}
	a.groups = append(a.groups, broadcastGroup())
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	// The first query after RunSM must find the SA serving: wait until
	// Serve has registered, or has failed to.
	ready := make(chan struct{})
	var once sync.Once
	signal := func() { once.Do(func() { close(ready) }) }
	go func() {
		defer close(a.done)
		defer signal()
		methods := []iba.Method{iba.MethodGet, iba.MethodSet, iba.MethodGetTable, iba.MethodDelete, iba.MethodGetMulti, iba.MethodGetTraceTable}
		_ = a.mc.Serve(ctx, iba.ClassSubnAdm, 2, methods, a.handle, mad.WithReady(signal))
	}()
	<-ready
	s.sa.Store(a)
	return nil
}

func (a *saServer) close() {
	a.cancel()
	<-a.done
	a.mc.Close()
}

// saRecordSize is a record's stride in a table: its size rounded up to 8
// bytes (IBA 15.2.1.1, AttributeOffset).
func saRecordSize(d *iba.Struct) int { return (d.Size + 7) &^ 7 }

func (a *saServer) handle(ctx context.Context, req *mad.ServerRequest) (*mad.ServerReply, error) {
	v := a.s.view.Load()
	if v == nil {
		return nil, errSA(mad.SANoResources)
	}
	switch req.AttrID {
	case saAttrClassPortInfo:
		if req.Method != iba.MethodGet {
			return nil, mad.ErrMethodAttrUnsupported
		}
		// IsSubnetOptionalRecordsSupported | IsUDMulticastSupported |
		// IsMultiPathSupported...: what the SA answers (IBA 15.2.5.1).
		cpi := iba.ClassPortInfo{BaseVersion: 1, ClassVersion: 2, CapabilityMask: 0x0602, RespTimeValue: 18}
		b := make([]byte, 72)
		cpi.MarshalTo(b)
		return &mad.ServerReply{Data: b}, nil
	case saAttrInformInfo:
		if req.Method != iba.MethodSet {
			return nil, mad.ErrMethodAttrUnsupported
		}
		return a.informInfo(v, req)
	}
	d, ok := iba.LookupAttr(iba.ClassSubnAdm, req.AttrID)
	if !ok {
		return nil, mad.ErrMethodAttrUnsupported
	}
	q := make([]byte, d.Size)
	copy(q, req.Data())
	mask := req.CompMask()
	switch req.Method {
	case iba.MethodGet, iba.MethodGetTable:
	case iba.MethodSet:
		switch req.AttrID {
		case saServiceRecord:
			return a.serviceSet(v, q, mask, d)
		case saMCMemberRecord:
			return a.mcJoin(ctx, v, req, q, mask, d)
		case saGUIDInfoRecord:
			return a.guidInfoSet(v, q, mask, d, false)
		}
		return nil, mad.ErrMethodAttrUnsupported
	case iba.MethodDelete:
		switch req.AttrID {
		case saServiceRecord:
			return a.serviceDelete(v, q, mask, d)
		case saMCMemberRecord:
			return a.mcLeave(ctx, v, q, mask, d)
		case saGUIDInfoRecord:
			return a.guidInfoSet(v, q, mask, d, true)
		}
		return nil, mad.ErrMethodAttrUnsupported
	default:
		return nil, mad.ErrMethodAttrUnsupported
	}
	m := newMatcher(d, q, mask)
	if req.AttrID == saPathRecord {
		m = newMatcher(d, q, 0) // paths filters by its own rules (selectors)
	}
	stride := saRecordSize(d)
	var out []byte
	n := 0
	emit := func(rec []byte) bool {
		if !m.match(rec) {
			return true
		}
		n++
		if req.Method == iba.MethodGet && n > 1 {
			return false
		}
		out = append(out, rec...)
		out = append(out, make([]byte, stride-len(rec))...)
		return true
	}
	if err := a.records(v, req, d, q, mask, emit); err != nil {
		return nil, err
	}
	if req.Method == iba.MethodGet {
		switch {
		case n == 0:
			return nil, errSA(mad.SANoRecords)
		case n > 1:
			return nil, errSA(mad.SATooManyRecords)
		}
		return &mad.ServerReply{Data: out[:d.Size], AttrOffset: stride}, nil
	}
	if n == 0 {
		return &mad.ServerReply{}, nil // no records, and no AttributeOffset (as OpenSM)
	}
	return &mad.ServerReply{Data: out, AttrOffset: stride}, nil
}

// matcher compares records with the query on the components the mask
// selects, through iba's component table (IBA 15.2.1.1).
type matcher struct {
	refs   []iba.Ref
	q      []byte
	mask   uint64
	subset int // the component compared as a bit subset, -1 for none
}

var refCache sync.Map // *iba.Struct -> []iba.Ref

func compRefs(d *iba.Struct) []iba.Ref {
	if r, ok := refCache.Load(d); ok {
		return r.([]iba.Ref)
	}
	refs := make([]iba.Ref, len(d.CompMask))
	for i, p := range d.CompMask {
		if r, err := d.Lookup(p); err == nil {
			refs[i] = r
		}
	}
	refCache.Store(d, refs)
	return refs
}

func newMatcher(d *iba.Struct, q []byte, mask uint64) *matcher {
	m := &matcher{refs: compRefs(d), q: q, mask: mask, subset: -1}
	if d.AttrID == saPortInfoRecord {
		for i, r := range m.refs {
			if r.Path == "portInfo.capabilityMask" {
				m.subset = i
			}
		}
	}
	return m
}

func (m *matcher) match(rec []byte) bool {
	for i, r := range m.refs {
		if m.mask&(1<<i) == 0 || r.Field == nil {
			continue
		}
		if m.subset == i {
			// PortInfoRecord's CapabilityMask matches the ports that
			// have at least the bits asked for (as OpenSM does, and as
			// saquery -s relies on to find the SMs).
			q, v := r.Uint(m.q), r.Uint(rec)
			if q&v != q {
				return false
			}
			continue
		}
		if !bitsEqual(m.q, rec, r.Off, r.Bits()) {
			return false
		}
	}
	return true
}

// has reports whether the mask selects the component at path.
func (m *matcher) has(path string) bool {
	for i, r := range m.refs {
		if m.mask&(1<<i) != 0 && r.Field != nil && r.Path == path {
			return true
		}
	}
	return false
}

func bitsEqual(a, b []byte, off, width int) bool {
	for i := off; i < off+width; {
		if i%8 == 0 && off+width-i >= 8 {
			if i/8 >= len(a) || i/8 >= len(b) || a[i/8] != b[i/8] {
				return false
			}
			i += 8
			continue
		}
		bit := byte(0x80 >> (i % 8))
		if i/8 >= len(a) || i/8 >= len(b) || a[i/8]&bit != b[i/8]&bit {
			return false
		}
		i++
	}
	return true
}

// lidQuery narrows an enumeration to one port when the query's first
// component (LID, EndportLID, FromLID) is in the mask.
func lidQuery(v *smView, q []byte, mask uint64) (lo, hi int) {
	if mask&1 == 0 {
		return 0, len(v.ports)
	}
	l := binary.BigEndian.Uint16(q)
	if p, ok := v.port(l); ok && p.lid == l {
		i := int(v.byLID[l])
		return i, i + 1
	}
	return 0, 0
}

// records enumerates the records of attribute d, calling emit for each
// (which filters by the mask) until it returns false.
func (a *saServer) records(v *smView, req *mad.ServerRequest, d *iba.Struct, q []byte, mask uint64, emit func([]byte) bool) error {
	f := a.f
	var data [64]byte
	rec := make([]byte, d.Size)
	lo, hi := lidQuery(v, q, mask)
	read := func(p *viewPort, inPort uint8, attr uint16, mod uint32) bool {
		clear(data[:])
		return f.smaDo(p.fnode, inPort, methodGet, attr, mod, data[:]) == 0
	}
	isSw := func(p *viewPort) bool { return v.nodes[p.node].typ == iba.NodeTypeSwitch }
	nports := func(p *viewPort) uint8 { return v.nodes[p.node].nports }
	switch req.AttrID {
	case saNodeRecord:
		for i := lo; i < hi; i++ {
			p := &v.ports[i]
			clear(rec)
			binary.BigEndian.PutUint16(rec, p.lid)
			if !read(p, p.port, attrNodeInfo, 0) {
				continue
			}
			copy(rec[4:44], data[:40])
			if !read(p, p.port, attrNodeDesc, 0) {
				continue
			}
			copy(rec[44:108], data[:])
			if !emit(rec) {
				return nil
			}
		}
	case saPortInfoRecord:
		for i := lo; i < hi; i++ {
			p := &v.ports[i]
			first, last := p.port, p.port
			if isSw(p) {
				first, last = 0, nports(p)
			}
			for q := int(first); q <= int(last); q++ {
				clear(rec)
				binary.BigEndian.PutUint16(rec, p.lid)
				rec[2] = uint8(q)
				mod := uint32(q)
				if !isSw(p) {
					mod = 0
				}
				if !read(p, p.port, attrPortInfo, mod) {
					continue
				}
				copy(rec[4:68], data[:])
				if !emit(rec) {
					return nil
				}
			}
		}
	case saSL2VLRecord:
		for i := lo; i < hi; i++ {
			p := &v.ports[i]
			type pair struct{ in, out uint8 }
			var pairs []pair
			if isSw(p) {
				for in := 0; in <= int(nports(p)); in++ {
					for out := 0; out <= int(nports(p)); out++ {
						pairs = append(pairs, pair{uint8(in), uint8(out)})
					}
				}
			} else {
				pairs = []pair{{0, p.port}}
			}
			for _, pr := range pairs {
				clear(rec)
				binary.BigEndian.PutUint16(rec, p.lid)
				rec[2], rec[3] = pr.in, pr.out
				if !read(p, p.port, attrSL2VL, uint32(pr.in)<<8|uint32(pr.out)) {
					continue
				}
				copy(rec[8:16], data[:8])
				if !emit(rec) {
					return nil
				}
			}
		}
	case saSwitchInfoRec:
		for i := lo; i < hi; i++ {
			p := &v.ports[i]
			if !isSw(p) || !read(p, 0, attrSwitchInfo, 0) {
				continue
			}
			clear(rec)
			binary.BigEndian.PutUint16(rec, p.lid)
			copy(rec[4:24], data[:20])
			if !emit(rec) {
				return nil
			}
		}
	case saLFTRecord:
		for i := lo; i < hi; i++ {
			p := &v.ports[i]
			if !isSw(p) || !read(p, 0, attrSwitchInfo, 0) {
				continue
			}
			var si iba.SwitchInfo
			si.Unmarshal(data[:])
			for b := 0; b <= int(si.LinearFDBTop)/64; b++ {
				if !read(p, 0, attrLFT, uint32(b)) {
					break
				}
				clear(rec)
				binary.BigEndian.PutUint16(rec, p.lid)
				binary.BigEndian.PutUint16(rec[2:], uint16(b))
				copy(rec[8:72], data[:])
				if !emit(rec) {
					return nil
				}
			}
		}
	case saMFTRecord:
		for i := lo; i < hi; i++ {
			p := &v.ports[i]
			if !isSw(p) {
				continue
			}
			positions := int(nports(p))/16 + 1
			for b := 0; b < MulticastFDBCap/32; b++ {
				for pos := 0; pos < positions; pos++ {
					if !read(p, 0, attrMFT, uint32(pos)<<28|uint32(b)) {
						continue
					}
					empty := true
					for _, x := range data {
						empty = empty && x == 0
					}
					if empty {
						continue
					}
					clear(rec)
					binary.BigEndian.PutUint16(rec, p.lid)
					binary.BigEndian.PutUint16(rec[2:], uint16(pos)<<10|uint16(b))
					copy(rec[8:72], data[:])
					if !emit(rec) {
						return nil
					}
				}
			}
		}
	case saVLArbRecord:
		for i := lo; i < hi; i++ {
			p := &v.ports[i]
			first, last := p.port, p.port
			if isSw(p) {
				first, last = 0, nports(p)
			}
			for q := int(first); q <= int(last); q++ {
				for blk := uint32(1); blk <= 4; blk++ {
					mod := blk << 16
					if isSw(p) {
						mod |= uint32(q)
					}
					if !read(p, p.port, attrVLArb, mod) {
						continue
					}
					clear(rec)
					binary.BigEndian.PutUint16(rec, p.lid)
					rec[2], rec[3] = uint8(q), uint8(blk)
					copy(rec[8:72], data[:])
					if !emit(rec) {
						return nil
					}
				}
			}
		}
	case saPKeyRecord:
		for i := lo; i < hi; i++ {
			p := &v.ports[i]
			first, last := p.port, p.port
			if isSw(p) {
				first, last = 0, nports(p)
			}
			for q := int(first); q <= int(last); q++ {
				c := caPKeyCap
				if isSw(p) {
					c = swEnfCap
					if q == 0 {
						c = swPKeyCap
					}
				}
				for blk := 0; blk*32 < c; blk++ {
					mod := uint32(blk)
					if isSw(p) {
						mod |= uint32(q) << 16
					}
					if !read(p, p.port, attrPKeyTable, mod) {
						continue
					}
					clear(rec)
					binary.BigEndian.PutUint16(rec, p.lid)
					binary.BigEndian.PutUint16(rec[2:], uint16(blk))
					rec[4] = uint8(q)
					copy(rec[8:72], data[:])
					if !emit(rec) {
						return nil
					}
				}
			}
		}
	case saGUIDInfoRecord:
		for i := lo; i < hi; i++ {
			p := &v.ports[i]
			c := caGUIDCap
			if isSw(p) {
				c = 1
			}
			for blk := 0; blk*8 < c; blk++ {
				if !read(p, p.port, attrGUIDInfo, uint32(blk)) {
					continue
				}
				clear(rec)
				binary.BigEndian.PutUint16(rec, p.lid)
				rec[2] = uint8(blk)
				copy(rec[8:72], data[:])
				if !emit(rec) {
					return nil
				}
			}
		}
	case saSMInfoRecord:
		s := a.s
		info := iba.SMInfo{GUID: s.guid, ActCount: s.actCount.Load(), Priority: s.priority, SMState: iba.SMState(s.state.Load())}
		clear(rec)
		binary.BigEndian.PutUint16(rec, v.smLID)
		info.MarshalTo(rec[4:])
		emit(rec)
	case saLinkRecord:
		for i := range v.nodes {
			n := &v.nodes[i]
			for q := 1; q <= int(n.nports); q++ {
				l := n.links[q]
				if l.node < 0 {
					continue
				}
				from, to := v.nodeLID(int32(i), uint8(q)), v.nodeLID(l.node, l.port)
				if from == 0 || to == 0 || !a.linkUp(v, int32(i), uint8(q)) {
					continue
				}
				clear(rec)
				binary.BigEndian.PutUint16(rec, from)
				rec[2], rec[3] = uint8(q), l.port
				binary.BigEndian.PutUint16(rec[4:], to)
				if !emit(rec) {
					return nil
				}
			}
		}
	case saServiceRecord:
		a.mu.Lock()
		a.expireServices()
		recs := make([][]byte, len(a.services))
		for i, s := range a.services {
			recs[i] = s.rec
		}
		a.mu.Unlock()
		for _, r := range recs {
			if !emit(r) {
				return nil
			}
		}
	case saMCMemberRecord:
		for _, r := range a.mcRecords() {
			if !emit(r) {
				return nil
			}
		}
	case saInformInfoRec:
		a.mu.Lock()
		var recs [][]byte
		for i, in := range a.informs {
			r := make([]byte, d.Size)
			copy(r, in.gid[:])
			binary.BigEndian.PutUint16(r[16:], uint16(i))
			in.info.MarshalTo(r[24:])
			recs = append(recs, r)
		}
		a.mu.Unlock()
		for _, r := range recs {
			if !emit(r) {
				return nil
			}
		}
	case saPathRecord:
		return a.paths(v, q, mask, d, emit)
	default:
		return mad.ErrMethodAttrUnsupported
	}
	return nil
}

// linkUp reads whether the link at node i's port q is up now.
func (a *saServer) linkUp(v *smView, i int32, q uint8) bool {
	f := a.f
	nd := &f.nodes[v.fab[i]]
	if q > nd.numPorts {
		return false
	}
	p := &f.ports[nd.base+int32(q)]
	nd.mu.RLock()
	defer nd.mu.RUnlock()
	return p.phys == iba.PhysPortStateLinkUp
}

var errSAInvalid = errSA(mad.SAReqInvalid)

// expireServices drops the services whose lease ran out; caller holds mu.
func (a *saServer) expireServices() {
	now := time.Now()
	keep := a.services[:0]
	for _, s := range a.services {
		if s.expires.IsZero() || now.Before(s.expires) {
			keep = append(keep, s)
		}
	}
	a.services = keep
}

// serviceKey is what identifies a service registration (IBA 15.2.5.14:
// ServiceID, ServiceGID and ServiceP_Key).
func serviceKey(rec []byte) string { return string(rec[0:26]) }

func (a *saServer) serviceSet(v *smView, q []byte, mask uint64, d *iba.Struct) (*mad.ServerReply, error) {
	m := newMatcher(d, q, mask)
	if !m.has("serviceID") || !m.has("serviceGID") {
		return nil, errSA(mad.SAReqInsufficientComponents)
	}
	var g iba.GID
	copy(g[:], q[8:24])
	if _, ok := v.byGUID[iba.GUID(binary.BigEndian.Uint64(g[8:]))]; !ok {
		return nil, errSA(mad.SAReqInvalidGID)
	}
	rec := append([]byte(nil), q...)
	if !m.has("servicePKey") {
		binary.BigEndian.PutUint16(rec[24:], 0xFFFF)
	}
	lease := binary.BigEndian.Uint32(rec[28:])
	s := &service{rec: rec}
	if lease != 0xFFFFFFFF {
		s.expires = time.Now().Add(time.Duration(lease) * time.Second)
	}
	a.mu.Lock()
	a.expireServices()
	for i, old := range a.services {
		if serviceKey(old.rec) == serviceKey(rec) {
			a.services = append(a.services[:i], a.services[i+1:]...)
			break
		}
	}
	a.services = append(a.services, s)
	a.mu.Unlock()
	return &mad.ServerReply{Data: rec, AttrOffset: saRecordSize(d)}, nil
}

func (a *saServer) serviceDelete(_ *smView, q []byte, mask uint64, d *iba.Struct) (*mad.ServerReply, error) {
	m := newMatcher(d, q, mask)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.expireServices()
	for i, s := range a.services {
		if m.match(s.rec) {
			a.services = append(a.services[:i], a.services[i+1:]...)
			return &mad.ServerReply{Data: s.rec, AttrOffset: saRecordSize(d)}, nil
		}
	}
	return nil, errSA(mad.SANoRecords)
}

// guidInfoSet adds (Set) or removes (Delete) alias GUIDs of a port
// through its SMA (IBA 15.2.5.18): the non-zero GUIDs of the query's
// block are written, or cleared.
func (a *saServer) guidInfoSet(v *smView, q []byte, mask uint64, d *iba.Struct, del bool) (*mad.ServerReply, error) {
	if mask&3 != 3 {
		return nil, errSA(mad.SAReqInsufficientComponents)
	}
	p, ok := v.port(binary.BigEndian.Uint16(q))
	if !ok {
		return nil, errSA(mad.SANoRecords)
	}
	blk := uint32(q[2])
	var data [64]byte
	if st := a.f.smaDo(p.fnode, p.port, methodGet, attrGUIDInfo, blk, data[:]); st != 0 {
		return nil, errSAInvalid
	}
	for i := 0; i < 8; i++ {
		g := q[8+8*i : 16+8*i]
		if binary.BigEndian.Uint64(g) == 0 || (blk == 0 && i == 0) {
			continue
		}
		if del {
			clear(data[8*i : 8*i+8])
		} else {
			copy(data[8*i:], g)
		}
	}
	if st := a.f.smaDo(p.fnode, p.port, methodSet, attrGUIDInfo, blk, data[:]); st != 0 {
		return nil, errSAInvalid
	}
	rec := make([]byte, d.Size)
	copy(rec, q[:8])
	copy(rec[8:], data[:])
	return &mad.ServerReply{Data: rec, AttrOffset: saRecordSize(d)}, nil
}

// informInfo subscribes a port to notices, or unsubscribes it (IBA
// 13.4.8.3, 15.4.4).
func (a *saServer) informInfo(v *smView, req *mad.ServerRequest) (*mad.ServerReply, error) {
	var in iba.InformInfo
	if err := in.Unmarshal(req.Data()); err != nil {
		return nil, errSAInvalid
	}
	p, ok := v.port(req.Addr.LID)
	if !ok {
		return nil, errSA(mad.SAReqInvalid)
	}
	var gid iba.GID
	binary.BigEndian.PutUint64(gid[:], 0xfe80000000000000)
	binary.BigEndian.PutUint64(gid[8:], uint64(p.guid))
	a.mu.Lock()
	defer a.mu.Unlock()
	same := func(x *inform) bool {
		return x.gid == gid && x.info.IsGeneric == in.IsGeneric && x.info.TrapNumber == in.TrapNumber &&
			x.info.Type == in.Type && x.info.ProducerType == in.ProducerType && x.qpn == in.QPN
	}
	if in.Subscribe == 1 {
		found := false
		for _, x := range a.informs {
			found = found || same(x)
		}
		if !found {
			qpn := in.QPN
			if qpn == 0 {
				qpn = req.Addr.QPN
			}
			a.informs = append(a.informs, &inform{gid: gid, lid: req.Addr.LID, qpn: qpn, info: in})
		}
	} else {
		keep := a.informs[:0]
		for _, x := range a.informs {
			if !same(x) {
				keep = append(keep, x)
			}
		}
		a.informs = keep
	}
	b := make([]byte, 36)
	in.MarshalTo(b)
	return &mad.ServerReply{Data: b}, nil
}

// report forwards a notice to the subscribers it concerns (IBA 13.4.8.2:
// SubnAdmReport), each on its own goroutine with the client's timeout.
func (a *saServer) report(notice []byte) {
	var n iba.Notice
	if err := n.Unmarshal(notice); err != nil {
		return
	}
	a.mu.Lock()
	var to []*inform
	for _, x := range a.informs {
		in := x.info
		if in.IsGeneric != n.IsGeneric {
			continue
		}
		if in.TrapNumber != 0xFFFF && in.TrapNumber != n.TrapNumber {
			continue
		}
		if in.Type != 0xFFFF && in.Type != uint16(n.Type) {
			continue
		}
		to = append(to, x)
	}
	a.mu.Unlock()
	for _, x := range to {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, _ = a.mc.Do(ctx, mad.Request{
				Target: mad.Route{Addr: mad.Addr{LID: x.lid, QPN: x.qpn, QKey: mad.QP1QKey}, Tries: 1},
				Class:  iba.ClassSubnAdm, Method: iba.MethodReport, AttrID: saAttrNotice, Data: notice, Unchecked: true,
			})
		}()
	}
}
