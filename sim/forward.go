package sim

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/rdmakit/rdmakit/iba"
)

// Offsets in a MAD (IBA 13.4.3, 14.2.1.2).
const (
	offClass      = 1
	offMethod     = 3
	offStatus     = 4
	offHopPointer = 6
	offHopCount   = 7
	offTID        = 8
	offAttrID     = 16
	offAttrMod    = 20
	offMKey       = 24
	offDrSLID     = 32
	offDrDLID     = 34
	offSMPData    = 64
	offInitPath   = 128
	offRetPath    = 192

	classSMP   = uint8(iba.ClassSubnMgt)
	classDR    = uint8(iba.ClassSubnMgtDirected)
	classPerf  = uint8(iba.ClassPerfMgt)
	methodGet  = uint8(iba.MethodGet)
	methodSet  = uint8(iba.MethodSet)
	methodResp = uint8(iba.MethodGetResp)
	methodRep  = uint8(iba.MethodTrapRepress)

	// MAD status codes (IBA 13.4.7, table 106).
	statusBadVersion      = 1 << 2
	statusMethodUnsupp    = 2 << 2
	statusMethodAttrUnsup = 3 << 2
	statusInvalidField    = 7 << 2

	// dwords counted per MAD on a link: LRH, BTH, DETH, 256-byte MAD, ICRC
	// and VCRC, as ibsim counts them.
	madDwords = 72
)

// msg is one MAD in flight with its LRH/BTH/DETH addressing.
type msg struct {
	buf        [256]byte
	slid, dlid uint16
	sl         uint8
	srcQP      uint32
	dstQP      uint32
	qkey       uint32
	pkey       uint16
	// For the latency model: links crossed, those before the request
	// was served, and the node whose agent served it (-1 for none).
	hops, hopsOut int32
	agentNode     int32
	agentKind     uint8
}

// What transact did with a MAD.
type outcome uint8

const (
	dropped  outcome = iota
	response         // m is a response (or TrapRepress) for an agent at the port
	request          // m is a request for a server agent at the port
)

// Which agent answered a request, for the latency model.
const (
	agentNone = iota
	agentSMA
	agentGS // PMA, congestion control, vendor classes
)

func isResponse(method uint8) bool { return method&0x80 != 0 || method == methodRep }

// transact carries m from port `from` to its destination and, for a
// request the destination's SMA or PMA answers, carries the answer back.
// It returns the port index where m ends up and what it is then.
func (f *Fabric) transact(from int32, m *msg) (int32, outcome) {
	m.hops, m.hopsOut, m.agentNode, m.agentKind = 0, 0, -1, agentNone
	if f.nodes[f.ports[from].node].dead.Load() {
		return -1, dropped
	}
	class := m.buf[offClass]
	smp := class == classSMP || class == classDR
	if m.buf[0] != 1 {
		return -1, dropped // base version: the MAD layer drops it (IBA 13.4.3)
	}
	var to int32
	var inPort uint8
	var viaLID, ok bool
	if class == classDR {
		if (m.buf[offStatus]&0x80 != 0) != isResponse(m.buf[offMethod]) {
			return -1, dropped // the D bit must say which way it goes (IBA 14.2.1.2)
		}
		to, inPort, viaLID, ok = f.drRoute(from, m)
	} else {
		to, inPort, ok = f.lidRoute(m, from, m.dlid, smp)
	}
	if !ok {
		return -1, dropped
	}
	if !smp && !f.pkeyAccept(to, m.pkey) {
		return -1, dropped
	}
	if isResponse(m.buf[offMethod]) {
		return to, response
	}
	m.hopsOut = m.hops
	m.agentNode = f.ports[to].node
	if smp {
		m.agentKind = agentSMA
	} else {
		m.agentKind = agentGS
	}
	switch f.serve(to, inPort, m) {
	case served:
	case toAgent:
		m.agentKind = agentNone
		return to, request
	default:
		return -1, dropped
	}
	if class == classDR {
		to, ok = f.drReturn(to, inPort, viaLID, m)
	} else {
		p := &f.ports[to]
		nd := &f.nodes[p.node]
		nd.mu.RLock()
		lid := p.lid
		nd.mu.RUnlock()
		m.dlid, m.slid = m.slid, lid
		m.srcQP, m.dstQP = m.dstQP, m.srcQP
		to, _, ok = f.lidRoute(m, to, m.dlid, smp)
	}
	if !ok {
		return -1, dropped
	}
	return to, response
}

// linkOK says whether a packet may cross port p: the link must be up, and
// for anything but SMPs (which travel on VL15 in Init and Armed too) the
// port must be Active (IBA 7.2). Caller holds p's node lock.
func linkOK(p *port, smp bool) bool {
	if p.phys != iba.PhysPortStateLinkUp || p.peer < 0 {
		return false
	}
	if smp {
		return p.state >= iba.PortStateInit
	}
	return p.state == iba.PortStateActive
}

// cross moves a packet over the link from port out to its peer, counting
// it on both ends; the peer may drop it (error injection), which counts as
// a receive error there.
func (f *Fabric) cross(out, in int32) bool {
	po, pi := &f.ports[out], &f.ports[in]
	po.pc.xmitPkts.Add(1)
	po.pc.xmitData.Add(madDwords)
	if r := pi.drop.Load(); r != 0 && rand.Uint32N(100) < r {
		pi.pc.rcvErrors.Add(1)
		return false
	}
	pi.pc.rcvPkts.Add(1)
	pi.pc.rcvData.Add(madDwords)
	// A dead node's management processor takes nothing in: it neither
	// answers nor forwards (the links stay up, as with a hung switch).
	return !f.nodes[pi.node].dead.Load()
}

// hop checks both ends of the link out of port idx and crosses it; it
// returns the peer port index.
func (f *Fabric) hop(m *msg, idx int32, smp bool, dr bool) (int32, bool) {
	p := &f.ports[idx]
	nd := &f.nodes[p.node]
	nd.mu.RLock()
	ok := p.phys == iba.PhysPortStateLinkUp && p.peer >= 0 && (dr || linkOK(p, smp))
	peer := p.peer
	nd.mu.RUnlock()
	if !ok {
		p.pc.xmitDiscards.Add(1)
		return -1, false
	}
	pp := &f.ports[peer]
	pn := &f.nodes[pp.node]
	pn.mu.RLock()
	ok = pp.phys == iba.PhysPortStateLinkUp && (dr || linkOK(pp, smp))
	pn.mu.RUnlock()
	if !ok {
		p.pc.xmitDiscards.Add(1)
		return -1, false
	}
	if !f.cross(idx, peer) {
		return -1, false
	}
	m.hops++
	return peer, true
}

// lidRoute carries a packet from port `from` to the port that owns dlid
// through the switches' linear forwarding tables. It returns the
// destination port (a switch's port 0 when the LID is a switch's) and the
// number of the port the packet came in on.
func (f *Fabric) lidRoute(m *msg, from int32, dlid uint16, smp bool) (int32, uint8, bool) {
	if dlid == 0 || dlid > MaxUnicastLID {
		return -1, 0, false
	}
	cur := from
	arr := f.ports[from].num
	for h := 0; h < maxHops; h++ {
		p := &f.ports[cur]
		nd := &f.nodes[p.node]
		var out int32
		nd.mu.RLock()
		if sw := nd.sw; sw != nil {
			if f.owns(&f.ports[nd.base], dlid) {
				nd.mu.RUnlock()
				// Delivered to the management port: that is the port the
				// SMA reports it came in on, as ibsim does.
				return nd.base, 0, true
			}
			o := uint8(0xFF)
			if int(dlid) < len(sw.lft) && dlid <= sw.lftTop {
				o = sw.lft[dlid]
			}
			if o == 0 || o > nd.numPorts {
				nd.mu.RUnlock()
				p.pc.rcvSwitchRelayErrors.Add(1)
				return -1, 0, false
			}
			out = nd.base + int32(o)
		} else {
			if f.owns(p, dlid) {
				nd.mu.RUnlock()
				return cur, arr, true
			}
			if h > 0 {
				nd.mu.RUnlock()
				return -1, 0, false // a CA does not forward
			}
			out = cur
		}
		nd.mu.RUnlock()
		peer, ok := f.hop(m, out, smp, false)
		if !ok {
			return -1, 0, false
		}
		cur, arr = peer, f.ports[peer].num
	}
	return -1, 0, false
}

// drRoute carries a directed-route SMP to where its outgoing path ends:
// first LID routed when the LRH DLID is not permissive (a DrSLID part),
// then by the IBA 14.2.2 rules. It returns the destination port (port 0 of
// a switch), the number of the port the SMP came in on, and whether it
// arrived through a LID-routed last part (a DrDLID part).
func (f *Fabric) drRoute(from int32, m *msg) (int32, uint8, bool, bool) {
	cur, arr := from, f.ports[from].num
	if m.dlid != LIDPermissive {
		var ok bool
		cur, arr, ok = f.lidRoute(m, from, m.dlid, true)
		if !ok {
			return -1, 0, false, false
		}
	}
	return f.drRun(f.ports[cur].node, arr, m)
}

// drReturn starts the response of a directed-route SMP at the responder
// at port `to`, which received the request on port inPort.
func (f *Fabric) drReturn(to int32, inPort uint8, viaLID bool, m *msg) (int32, bool) {
	n := f.ports[to].node
	if viaLID {
		// The request came LID routed from the switch that ended the
		// directed part; the response goes back to it the same way.
		p := &f.ports[to]
		nd := &f.nodes[n]
		nd.mu.RLock()
		lid := p.lid
		nd.mu.RUnlock()
		m.dlid, m.slid = m.slid, lid
		cur, arr, ok := f.lidRoute(m, to, m.dlid, true)
		if !ok {
			return -1, false
		}
		n, inPort = f.ports[cur].node, arr
	}
	to, _, _, ok := f.drRun(n, inPort, m)
	return to, ok
}

// DR actions.
const (
	drDrop = iota
	drDeliver
	drPort
	drLID
)

// drRules applies IBA 14.2.2.2 (outgoing, C14-9) or 14.2.2.4 (returning,
// C14-13) at a node that received the SMP on inPort, updating the hop
// pointer and return path in b. It says what to do next: deliver here,
// send out of a port, send LID routed to a LID, or drop.
func drRules(isSwitch bool, numPorts, inPort uint8, b []byte) (int, uint16) {
	hc, hp := b[offHopCount], b[offHopPointer]
	if hc >= 64 {
		return drDrop, 0 // C14-6: hop counts 0 to 63
	}
	out := func(q uint8) (int, uint16) {
		if q == 0 || q > numPorts {
			return drDrop, 0 // port 0 is not a link; no such port
		}
		return drPort, uint16(q)
	}
	if b[offStatus]&0x80 == 0 { // D = 0: outgoing
		switch {
		case hc != 0 && hp == 0: // C14-9:1, start of the directed part
			b[offHopPointer] = 1
			if !isSwitch && b[offInitPath+1] != inPort {
				return drDrop, 0 // a CA sends out of the port it is on
			}
			return out(b[offInitPath+1])
		case hp != 0 && hp < hc: // C14-9:2, intermediate hop
			if !isSwitch {
				return drDrop, 0
			}
			b[offRetPath+int(hp)] = inPort
			hp++
			b[offHopPointer] = hp
			return out(b[offInitPath+int(hp)])
		case hp == hc: // C14-9:3, end of the directed part
			if hc != 0 {
				b[offRetPath+int(hp)] = inPort
			}
			b[offHopPointer] = hp + 1
			if dlid := binary.BigEndian.Uint16(b[offDrDLID:]); dlid != LIDPermissive {
				if !isSwitch {
					return drDrop, 0
				}
				return drLID, dlid
			}
			return drDeliver, 0
		case hp == hc+1: // C14-9:4, end of a LID-routed last part
			return drDeliver, 0
		}
		return drDrop, 0 // C14-9:5
	}
	switch { // D = 1: returning
	case hc != 0 && hp == hc+1: // C14-13:1, start of the return
		hp--
		b[offHopPointer] = hp
		return out(b[offRetPath+int(hp)])
	case hp >= 2 && hp <= hc: // C14-13:2, intermediate hop
		if !isSwitch {
			return drDrop, 0
		}
		hp--
		b[offHopPointer] = hp
		return out(b[offRetPath+int(hp)])
	case hp == 1: // C14-13:3, end of the directed part
		b[offHopPointer] = 0
		if slid := binary.BigEndian.Uint16(b[offDrSLID:]); slid != LIDPermissive {
			if !isSwitch {
				return drDrop, 0
			}
			return drLID, slid
		}
		return drDeliver, 0
	case hp == 0: // C14-13:4, end of a LID-routed first part
		return drDeliver, 0
	}
	return drDrop, 0 // C14-13:5
}

// drRun walks a directed-route SMP from node n (received on inPort) until
// the rules deliver or drop it.
func (f *Fabric) drRun(n int32, inPort uint8, m *msg) (int32, uint8, bool, bool) {
	viaLID := false
	for steps := 0; steps < 2*maxHops+4; steps++ {
		nd := &f.nodes[n]
		act, arg := drRules(nd.sw != nil, nd.numPorts, inPort, m.buf[:])
		switch act {
		case drDeliver:
			if nd.sw != nil {
				return nd.base, inPort, viaLID, true
			}
			return nd.base + int32(inPort), inPort, viaLID, true
		case drPort:
			peer, ok := f.hop(m, nd.base+int32(arg), true, true)
			if !ok {
				return -1, 0, false, false
			}
			n, inPort = f.ports[peer].node, f.ports[peer].num
			viaLID = false
		case drLID:
			p0 := &f.ports[nd.base]
			nd.mu.RLock()
			m.slid = p0.lid
			nd.mu.RUnlock()
			m.dlid = arg
			to, arr, ok := f.lidRoute(m, nd.base, arg, true)
			if !ok {
				return -1, 0, false, false
			}
			n, inPort = f.ports[to].node, arr
			viaLID = true
		default:
			return -1, 0, false, false
		}
	}
	return -1, 0, false, false
}

// pkeyMatch compares two P_Keys (IBA 10.9.3): equal low 15 bits, not both
// limited members, and never the invalid key.
func pkeyMatch(a, b uint16) bool {
	if a&0x7FFF == 0 || a&0x7FFF != b&0x7FFF {
		return false
	}
	return a&0x8000 != 0 || b&0x8000 != 0
}

// pkeyAccept checks a GMP's P_Key against the destination port's table and
// counts a violation when nothing matches.
func (f *Fabric) pkeyAccept(to int32, key uint16) bool {
	p := &f.ports[to]
	nd := &f.nodes[p.node]
	nd.mu.RLock()
	ok := false
	if p.pkeys == nil {
		ok = pkeyMatch(key, 0xFFFF)
	} else {
		for _, k := range p.pkeys {
			if pkeyMatch(key, k) {
				ok = true
				break
			}
		}
	}
	nd.mu.RUnlock()
	if !ok {
		nd.mu.Lock()
		p.pkeyViolations++
		nd.mu.Unlock()
	}
	return ok
}

// pkeyAt gives the P_Key at index i of port idx's table (0 if none).
func (f *Fabric) pkeyAt(idx int32, i uint16) uint16 {
	p := &f.ports[idx]
	nd := &f.nodes[p.node]
	nd.mu.RLock()
	defer nd.mu.RUnlock()
	if p.pkeys == nil {
		if i == 0 {
			return 0xFFFF
		}
		return 0
	}
	if int(i) < len(p.pkeys) {
		return p.pkeys[i]
	}
	return 0
}

// setResponse turns the request in b into its response with a status:
// the R bit, GetResp for Get and Set, and for a directed-route SMP the D
// bit beside the 15-bit status (IBA 13.4.3, 14.2.1.2).
func setResponse(b []byte, status uint16) {
	m := b[offMethod]
	if m == methodGet || m == methodSet {
		b[offMethod] = methodResp
	} else {
		b[offMethod] = m | 0x80
	}
	if b[offClass] == classDR {
		status |= 0x8000
	}
	binary.BigEndian.PutUint16(b[offStatus:], status)
}
