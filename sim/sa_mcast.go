package sim

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// Multicast groups (IBA 15.2.5.17): an MCMemberRecord Set joins a port to
// a group, creating it (and its MGID and MLID) when needed; a Delete
// leaves. After every change the SA computes the group's spanning tree
// over the switches (breadth first from the switch of the first member)
// and programs the multicast forwarding tables that changed with SMPs.

const (
	mlidBase      = 0xC000
	broadcastMLID = 0xC000
)

type mcGroup struct {
	rec     iba.MCMemberRecord // the group's parameters; PortGID and JoinState zero
	order   []iba.GID          // members in join order
	members map[iba.GID]uint8  // port GID -> JoinState
	masks   map[int32][]uint16 // switch (smView node) -> port mask by position, as programmed
}

// broadcastGroup is the IPoIB broadcast group of the default partition,
// which OpenSM creates at start (MGID ff12:401b:ffff::ffff:ffff).
func broadcastGroup() *mcGroup {
	g := &mcGroup{members: map[iba.GID]uint8{}, masks: map[int32][]uint16{}}
	g.rec = iba.MCMemberRecord{QKey: 0x0B1B, MLID: broadcastMLID, MTUSelector: 2, MTU: iba.MTU2048,
		PKey: 0xFFFF, RateSelector: 2, Rate: iba.Rate10Gbps, PacketLifeTimeSelector: 2, PacketLifeTime: 18, Scope: 2}
	g.rec.MGID = iba.GID{0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}
	return g
}

func (a *saServer) mcRecords() [][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out [][]byte
	for _, g := range a.groups {
		if len(g.order) == 0 {
			b := make([]byte, 52)
			g.rec.MarshalTo(b)
			out = append(out, b)
			continue
		}
		for _, pg := range g.order {
			r := g.rec
			r.PortGID, r.JoinState = pg, g.members[pg]
			b := make([]byte, 52)
			r.MarshalTo(b)
			out = append(out, b)
		}
	}
	return out
}

func (a *saServer) findGroup(mgid iba.GID) *mcGroup {
	for _, g := range a.groups {
		if g.rec.MGID == mgid {
			return g
		}
	}
	return nil
}

func (a *saServer) mcJoin(ctx context.Context, v *smView, req *mad.ServerRequest, q []byte, mask uint64, d *iba.Struct) (*mad.ServerReply, error) {
	m := newMatcher(d, q, mask)
	var r iba.MCMemberRecord
	if err := r.Unmarshal(q); err != nil {
		return nil, errSAInvalid
	}
	if !m.has("portGID") || !m.has("joinState") {
		return nil, errSA(mad.SAReqInsufficientComponents)
	}
	if binary.BigEndian.Uint64(r.PortGID[:8]) != 0xfe80000000000000 {
		return nil, errSA(mad.SAReqInvalidGID)
	}
	if _, ok := v.byGUID[iba.GUID(binary.BigEndian.Uint64(r.PortGID[8:]))]; !ok {
		return nil, errSA(mad.SAReqInvalidGID)
	}
	if r.JoinState == 0 {
		return nil, errSAInvalid
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	g := a.findGroup(r.MGID)
	if r.MGID != (iba.GID{}) && g == nil && r.MGID[0] != 0xff {
		return nil, errSA(mad.SAReqInvalidGID) // not a multicast GID
	}
	if g == nil {
		// Creating a group takes its parameters (IBA 15.4.2, C15-0.1.19).
		for _, c := range []string{"QKey", "PKey", "SL", "flowLabel", "TClass"} {
			if !m.has(c) {
				return nil, errSA(mad.SAReqInsufficientComponents)
			}
		}
		mlid, ok := a.freeMLID()
		if !ok {
			return nil, errSA(mad.SANoResources)
		}
		g = &mcGroup{members: map[iba.GID]uint8{}, masks: map[int32][]uint16{}}
		g.rec = iba.MCMemberRecord{MGID: r.MGID, QKey: r.QKey, MLID: mlid, MTUSelector: 2, MTU: iba.MTU2048,
			TClass: r.TClass, PKey: r.PKey, RateSelector: 2, Rate: iba.Rate10Gbps, PacketLifeTimeSelector: 2,
			PacketLifeTime: 18, SL: r.SL, FlowLabel: r.FlowLabel, HopLimit: r.HopLimit, Scope: r.Scope}
		if m.has("MTU") && sel(m, "MTUSelector", r.MTUSelector) == 2 {
			g.rec.MTU = r.MTU
		}
		if m.has("rate") && sel(m, "rateSelector", r.RateSelector) == 2 {
			g.rec.Rate = r.Rate
		}
		if g.rec.MGID == (iba.GID{}) {
			// An SA-assigned MGID: ff1<scope>:a01b:<P_Key>::<n> (IBA
			// 4.1.1's signature 0xA01B).
			a.nextMGID++
			scope := g.rec.Scope
			if scope == 0 {
				scope, g.rec.Scope = 2, 2
			}
			g.rec.MGID = iba.GID{0xff, 0x10 | scope, 0xa0, 0x1b}
			binary.BigEndian.PutUint16(g.rec.MGID[4:], g.rec.PKey)
			binary.BigEndian.PutUint32(g.rec.MGID[12:], a.nextMGID)
		}
		a.groups = append(a.groups, g)
	} else {
		if (m.has("QKey") && r.QKey != g.rec.QKey) || (m.has("PKey") && r.PKey != g.rec.PKey) ||
			(m.has("MLID") && r.MLID != g.rec.MLID) {
			return nil, errSAInvalid
		}
	}
	if _, in := g.members[r.PortGID]; !in {
		g.order = append(g.order, r.PortGID)
	}
	g.members[r.PortGID] |= r.JoinState
	if err := a.program(ctx, v, g); err != nil {
		return nil, fmt.Errorf("%w: %v", mad.ErrSANoResources, err)
	}
	out := g.rec
	out.PortGID, out.JoinState = r.PortGID, g.members[r.PortGID]
	b := make([]byte, d.Size)
	out.MarshalTo(b)
	return &mad.ServerReply{Data: b, AttrOffset: saRecordSize(d)}, nil
}

func (a *saServer) freeMLID() (uint16, bool) {
	used := map[uint16]bool{}
	for _, g := range a.groups {
		used[g.rec.MLID] = true
	}
	for l := uint16(mlidBase + 1); l < mlidBase+MulticastFDBCap; l++ {
		if !used[l] {
			return l, true
		}
	}
	return 0, false
}

func (a *saServer) mcLeave(ctx context.Context, v *smView, q []byte, mask uint64, d *iba.Struct) (*mad.ServerReply, error) {
	m := newMatcher(d, q, mask)
	var r iba.MCMemberRecord
	if err := r.Unmarshal(q); err != nil {
		return nil, errSAInvalid
	}
	if !m.has("MGID") || !m.has("portGID") {
		return nil, errSA(mad.SAReqInsufficientComponents)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	g := a.findGroup(r.MGID)
	if g == nil {
		return nil, errSAInvalid
	}
	st, in := g.members[r.PortGID]
	if !in {
		return nil, errSAInvalid
	}
	leave := uint8(0xF)
	if m.has("joinState") {
		leave = r.JoinState
	}
	st &^= leave
	if st == 0 {
		delete(g.members, r.PortGID)
		g.order = slices.DeleteFunc(g.order, func(x iba.GID) bool { return x == r.PortGID })
	} else {
		g.members[r.PortGID] = st
	}
	if err := a.program(ctx, v, g); err != nil {
		return nil, fmt.Errorf("%w: %v", mad.ErrSANoResources, err)
	}
	if len(g.order) == 0 && g.rec.MLID != broadcastMLID {
		a.groups = slices.DeleteFunc(a.groups, func(x *mcGroup) bool { return x == g })
	}
	out := g.rec
	out.PortGID, out.JoinState = r.PortGID, st
	b := make([]byte, d.Size)
	out.MarshalTo(b)
	return &mad.ServerReply{Data: b, AttrOffset: saRecordSize(d)}, nil
}

// tree computes the port masks of a group's spanning tree: every switch on
// the paths from the root switch to the members' switches, the ports
// towards the members, and port 0 of member switches.
func (a *saServer) tree(v *smView, g *mcGroup) map[int32][]uint16 {
	type attach struct {
		sw   int32
		port uint8
	}
	var at []attach
	for _, pg := range g.order {
		i, ok := v.byGUID[iba.GUID(binary.BigEndian.Uint64(pg[8:]))]
		if !ok {
			continue
		}
		p := &v.ports[i]
		n := &v.nodes[p.node]
		if n.typ == iba.NodeTypeSwitch {
			at = append(at, attach{p.node, 0})
			continue
		}
		if l := n.links[p.port]; l.node >= 0 && v.nodes[l.node].typ == iba.NodeTypeSwitch {
			at = append(at, attach{l.node, l.port})
		}
	}
	masks := map[int32][]uint16{}
	if len(at) == 0 {
		return masks
	}
	set := func(sw int32, q uint8) {
		mk := masks[sw]
		if mk == nil {
			mk = make([]uint16, int(v.nodes[sw].nports)/16+1)
			masks[sw] = mk
		}
		mk[q/16] |= 1 << (q % 16)
	}
	type up struct {
		parent       int32
		pPort, xPort uint8
	}
	root := at[0].sw
	parent := map[int32]up{root: {parent: -1}}
	queue := []int32{root}
	for qi := 0; qi < len(queue); qi++ {
		x := queue[qi]
		n := &v.nodes[x]
		for q := 1; q <= int(n.nports); q++ {
			l := n.links[q]
			if l.node < 0 || v.nodes[l.node].typ != iba.NodeTypeSwitch {
				continue
			}
			if _, seen := parent[l.node]; !seen {
				parent[l.node] = up{x, uint8(q), l.port}
				queue = append(queue, l.node)
			}
		}
	}
	climbed := map[int32]bool{}
	for _, e := range at {
		if _, ok := parent[e.sw]; !ok {
			continue // not connected to the root
		}
		set(e.sw, e.port)
		for x := e.sw; x != root && !climbed[x]; {
			climbed[x] = true
			u := parent[x]
			set(x, u.xPort)
			set(u.parent, u.pPort)
			x = u.parent
		}
	}
	return masks
}

// program writes the group's tree into the switches whose entries for its
// MLID changed (SubnGet and SubnSet of MulticastForwardingTable blocks,
// IBA 14.2.5.11). Caller holds a.mu.
func (a *saServer) program(ctx context.Context, v *smView, g *mcGroup) error {
	masks := a.tree(v, g)
	if len(g.order) == 0 {
		masks = map[int32][]uint16{}
	}
	s := a.s
	m := new(msg)
	off := int(g.rec.MLID) - mlidBase
	if off < 0 || off >= MulticastFDBCap {
		return fmt.Errorf("MLID 0x%04x out of the multicast table", g.rec.MLID)
	}
	block, entry := uint32(off/32), off%32
	sws := map[int32]bool{}
	for x := range masks {
		sws[x] = true
	}
	for x := range g.masks {
		sws[x] = true
	}
	for x := range sws {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if int(x) >= len(v.nodes) {
			continue
		}
		n := &v.nodes[x]
		positions := int(n.nports)/16 + 1
		for pos := 0; pos < positions; pos++ {
			var want, had uint16
			if mk := masks[x]; mk != nil {
				want = mk[pos]
			}
			if mk := g.masks[x]; mk != nil && pos < len(mk) {
				had = mk[pos]
			}
			if want == had {
				continue
			}
			mod := uint32(pos)<<28 | block
			st, err := s.smp(m, n.path, methodGet, attrMFT, mod)
			if err != nil || st != 0 {
				return fmt.Errorf("reading MFT block %d of %v: status %#x %v", block, n.path, st, err)
			}
			binary.BigEndian.PutUint16(m.buf[offSMPData+2*entry:], want)
			st, err = s.smp(m, n.path, methodSet, attrMFT, mod)
			if err != nil || st != 0 {
				return fmt.Errorf("writing MFT block %d of %v: status %#x %v", block, n.path, st, err)
			}
		}
	}
	g.masks = masks
	return nil
}
