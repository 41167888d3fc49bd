package sim

import (
	"github.com/rdmakit/rdmakit/iba"
)

// Supported values the simulated ports report (ibsim's).
const (
	widthSupported    = 0x1F // 1x, 4x, 8x, 12x, 2x
	speedSupported    = 0x7  // SDR, DDR, QDR
	speedExtSupported = 0xF  // FDR, EDR, HDR, NDR
)

// portInfoPre is what a PortInfo Set needs from the peer port, read
// before the node's own lock is taken (the forwarding path never holds two
// node locks, and neither does the SMA).
type portInfoPre struct {
	peerState iba.PortState
	peerPhys  iba.PhysPortState
}

func (f *Fabric) portInfoPre(nd *node, inPort uint8, mod uint32) portInfoPre {
	var pre portInfoPre
	idx, ok := modPort(nd, inPort, mod&0x7FFFFFFF)
	if !ok {
		return pre
	}
	peer := f.ports[idx].peer // cabling never changes
	if peer < 0 {
		return pre
	}
	pn := &f.nodes[f.ports[peer].node]
	pn.mu.RLock()
	pre.peerState, pre.peerPhys = f.ports[peer].state, f.ports[peer].phys
	pn.mu.RUnlock()
	return pre
}

// Link changes a PortInfo Set causes beyond its own port.
const (
	postNone = iota
	postRetrain
	postDisable
	postEnable
	postRenegotiate
)

type postAction struct {
	kind int
	port int32
}

func (a postAction) run(f *Fabric) {
	switch a.kind {
	case postRetrain:
		f.retrain(a.port)
	case postDisable:
		f.disable(a.port)
	case postEnable:
		f.enable(a.port)
	case postRenegotiate:
		f.renegotiate(a.port)
	}
}

// portInfoGet fills PortInfo for port p; localPort is the port the SMP
// came in on, and showKey says whether the M_Key may be shown.
func (f *Fabric) portInfoGet(nd *node, p *port, localPort uint8, showKey bool) iba.PortInfo {
	pi := iba.PortInfo{
		GIDPrefix: p.gidPrefix, LID: p.lid, MasterSMLID: p.smLID, CapabilityMask: p.capMask,
		MKeyLeasePeriod: p.mkeyLease, LocalPortNum: localPort,
		LinkWidthEnabled: p.widthEn, LinkWidthSupported: widthSupported, LinkWidthActive: p.widthAct,
		LinkSpeedSupported: speedSupported, PortState: p.state, PortPhysicalState: p.phys,
		LinkDownDefaultState: p.linkDownDefault, MKeyProtectBits: p.mkeyProtect, LMC: p.lmc,
		LinkSpeedActive: p.speedAct, LinkSpeedEnabled: p.speedEn, NeighborMTU: p.neighborMTU,
		MasterSMSL: p.smSL, VLCap: vlCap, VLHighLimit: p.vlHighLimit,
		VLArbitrationHighCap: vlArbCap, VLArbitrationLowCap: vlArbCap, MTUCap: iba.MTU2048,
		VLStallCount: p.vlStall, HOQLife: p.hoqLife, OperationalVLs: p.opVLs,
		MKeyViolations: p.mkeyViolations, PKeyViolations: p.pkeyViolations, QKeyViolations: p.qkeyViolations,
		GUIDCap: uint8(guidCap(nd, p)), SubnetTimeOut: p.subnetTimeOut, RespTimeValue: p.respTime,
		CapabilityMask2: p.capMask2, LocalPhyErrors: p.localPhyErrors,
		PartitionEnforcementInbound: p.enfIn, PartitionEnforcementOutbound: p.enfOut,
	}
	if showKey {
		pi.MKey = p.mkey
	}
	if nd.sw != nil && p.num == 0 {
		pi.MTUCap = iba.MTU1024
	}
	if p.extAct != 0 || p.extEn != 0 {
		pi.LinkSpeedExtEnabled, pi.LinkSpeedExtSupported, pi.LinkSpeedExtActive = p.extEn, speedExtSupported, p.extAct
	}
	if p.ext2En != 0 {
		pi.LinkSpeedExtEnabled2, pi.LinkSpeedExtSupported2, pi.LinkSpeedExtActive2 = p.ext2En, iba.LinkSpeedExt2XDR, p.ext2Act
	}
	return pi
}

// portInfoAttr is Get and Set of PortInfo (IBA 14.2.5.6). A Set is checked
// whole before anything changes: one invalid component leaves the port as
// it was and answers status 0x1C with the current values.
func (f *Fabric) portInfoAttr(nd *node, inPort uint8, set bool, mod uint32, data []byte, showKey bool, pre *portInfoPre) (uint16, postAction) {
	idx, ok := modPort(nd, inPort, mod&0x7FFFFFFF)
	if !ok {
		return statusInvalidField, postAction{}
	}
	p := &f.ports[idx]
	var post postAction
	if set {
		var status uint16
		status, post = f.portInfoSet(nd, inPort, idx, p, data, pre)
		if status != 0 {
			pi := f.portInfoGet(nd, p, inPort, showKey)
			pi.MarshalTo(data)
			return status, postAction{}
		}
	}
	pi := f.portInfoGet(nd, p, inPort, showKey)
	if post.kind == postDisable {
		pi.PortPhysicalState, pi.PortState = iba.PhysPortStateDisabled, iba.PortStateDown
	}
	pi.MarshalTo(data)
	return 0, post
}

func (f *Fabric) portInfoSet(nd *node, inPort uint8, idx int32, p *port, data []byte, pre *portInfoPre) (uint16, postAction) {
	var pi iba.PortInfo
	pi.Unmarshal(data)
	endPort := nd.sw == nil || p.num == 0
	if nd.sw == nil && p.num != inPort {
		return statusInvalidField, postAction{} // a CA sets only the port it is asked on
	}
	if endPort && pi.LID > MaxUnicastLID {
		return statusInvalidField, postAction{}
	}
	if pi.OperationalVLs > vlCap || (pi.NeighborMTU != 0 && (pi.NeighborMTU > iba.MTU2048 || pi.NeighborMTU < iba.MTU256)) {
		return statusInvalidField, postAction{}
	}
	if pi.LinkWidthEnabled != 0xFF && pi.LinkWidthEnabled&^widthSupported != 0 {
		return statusInvalidField, postAction{}
	}
	if pi.LinkSpeedEnabled != 0xF && pi.LinkSpeedEnabled&^speedSupported != 0 {
		return statusInvalidField, postAction{}
	}
	post := postAction{port: idx}
	newState := p.state
	isMgmt := nd.sw != nil && p.num == 0
	switch pi.PortState {
	case iba.PortStateNoChange:
	case iba.PortStateDown:
		if !isMgmt && p.phys == iba.PhysPortStateLinkUp {
			post.kind = postRetrain // the link goes down and trains again
		}
	case iba.PortStateArmed:
		if !isMgmt {
			if p.state != iba.PortStateInit && p.state != iba.PortStateArmed {
				return statusInvalidField, postAction{}
			}
			newState = iba.PortStateArmed
		}
	case iba.PortStateActive:
		if !isMgmt {
			if p.state != iba.PortStateArmed && p.state != iba.PortStateActive {
				return statusInvalidField, postAction{}
			}
			if pre.peerState != iba.PortStateArmed && pre.peerState != iba.PortStateActive {
				return statusInvalidField, postAction{} // the neighbor is not ready
			}
			newState = iba.PortStateActive
		}
	default:
		return statusInvalidField, postAction{}
	}
	switch pi.PortPhysicalState {
	case iba.PhysPortStateNoChange, p.phys:
		// A read-modify-write that leaves the state as it is.
	case iba.PhysPortStateDisabled:
		if !isMgmt {
			post.kind = postDisable
		}
	case iba.PhysPortStatePolling:
		if !isMgmt && p.phys == iba.PhysPortStateDisabled {
			post.kind = postEnable
		}
	default:
		return statusInvalidField, postAction{}
	}
	// Everything is valid: apply.
	if endPort {
		p.lid, p.lmc = pi.LID, pi.LMC
	} else {
		p.lid = pi.LID // stored and reported, as ibsim does; switches route by port 0
	}
	// The components applied are those ibsim applies, so that the C tools
	// print the same after an OpenSM sweep, plus the M_Key ones (checked
	// here, not in ibsim); the rest (lease period, subnet timeout, stall
	// count, MTU, ...) keep the device's values, as in ibsim. "Set to
	// supported" (width 255, speed 15, extended speed 30) leaves the
	// enables alone, as in ibsim.
	p.smLID = pi.MasterSMLID
	if nd.sw != nil && p.num != 0 {
		// Stored and reported; the simulated switches do not filter by
		// P_Key (the destination port does, IBA 10.9.3).
		p.enfIn, p.enfOut = pi.PartitionEnforcementInbound, pi.PartitionEnforcementOutbound
	}
	p.mkey, p.mkeyProtect = pi.MKey, pi.MKeyProtectBits
	p.gidPrefix = pi.GIDPrefix
	p.hoqLife = pi.HOQLife
	if pi.OperationalVLs != 0 {
		p.opVLs = pi.OperationalVLs
	}
	p.state = newState
	changed := false
	if w := pi.LinkWidthEnabled; w != 0 && w != 0xFF {
		changed, p.widthEn = p.widthEn != w, w
	}
	if s := pi.LinkSpeedEnabled; s != 0 && s != 0xF {
		changed, p.speedEn = changed || p.speedEn != s, s
	}
	// Extended speeds 0 and 31 leave it too (OpenSM writes 0 to ports it
	// thinks lack extended speeds).
	if e := pi.LinkSpeedExtEnabled; e >= 1 && e <= 15 {
		changed, p.extEn = changed || p.extEn != e, e
	}
	// The second group: XDR on a port that has it; 0 (what OpenSM and
	// ibportstate write) and anything else leave it.
	if e2 := pi.LinkSpeedExtEnabled2; e2 == iba.LinkSpeedExt2XDR && p.ext2En != 0 {
		changed, p.ext2En = changed || p.ext2En != e2, e2
	}
	if changed && post.kind == postNone && !isMgmt {
		post.kind = postRenegotiate
	}
	return 0, post
}

// lock2 locks the nodes of two ports in node order and returns the unlock.
func (f *Fabric) lock2(a, b int32) func() {
	na, nb := f.ports[a].node, f.ports[b].node
	if nb < na {
		na, nb = nb, na
	}
	f.nodes[na].mu.Lock()
	if nb != na {
		f.nodes[nb].mu.Lock()
	}
	return func() {
		if nb != na {
			f.nodes[nb].mu.Unlock()
		}
		f.nodes[na].mu.Unlock()
	}
}

// retrain takes the link at port idx down and up again: both ends return
// to Init (IBA 7.2: a port set Down retrains through Polling).
func (f *Fabric) retrain(idx int32) {
	p := &f.ports[idx]
	if p.peer < 0 {
		return
	}
	unlock := f.lock2(idx, p.peer)
	q := &f.ports[p.peer]
	up := p.phys != iba.PhysPortStateDisabled && q.phys != iba.PhysPortStateDisabled && !p.cut
	for _, x := range []*port{p, q} {
		x.pc.linkDowned.Add(1)
		if up {
			x.state, x.phys = iba.PortStateInit, iba.PhysPortStateLinkUp
		}
	}
	f.markChange(p, q)
	unlock()
}

func (f *Fabric) markChange(ps ...*port) {
	for _, x := range ps {
		if sw := f.nodes[x.node].sw; sw != nil {
			sw.portStateChange = true
		}
	}
}

// disable turns port idx off: it goes Disabled, its peer loses the link.
func (f *Fabric) disable(idx int32) {
	p := &f.ports[idx]
	if p.peer < 0 {
		nd := &f.nodes[p.node]
		nd.mu.Lock()
		p.state, p.phys = iba.PortStateDown, iba.PhysPortStateDisabled
		nd.mu.Unlock()
		return
	}
	unlock := f.lock2(idx, p.peer)
	q := &f.ports[p.peer]
	if p.phys == iba.PhysPortStateLinkUp {
		p.pc.linkDowned.Add(1)
		q.pc.linkDowned.Add(1)
	}
	p.state, p.phys = iba.PortStateDown, iba.PhysPortStateDisabled
	if q.phys != iba.PhysPortStateDisabled {
		q.state, q.phys = iba.PortStateDown, iba.PhysPortStatePolling
	}
	f.markChange(p, q)
	unlock()
}

// enable turns a disabled port back on; the link trains when the peer is
// not disabled itself.
func (f *Fabric) enable(idx int32) {
	p := &f.ports[idx]
	if p.peer < 0 {
		nd := &f.nodes[p.node]
		nd.mu.Lock()
		p.state, p.phys = iba.PortStateDown, iba.PhysPortStatePolling
		nd.mu.Unlock()
		return
	}
	unlock := f.lock2(idx, p.peer)
	q := &f.ports[p.peer]
	p.state, p.phys = iba.PortStateDown, iba.PhysPortStatePolling
	up := q.phys != iba.PhysPortStateDisabled && !p.cut
	unlock()
	if up {
		f.linkUp(idx, p.peer)
	}
}

// renegotiate recomputes the active width and speed of the link at port
// idx from both ends' enabled sets, as a real link retrains after an
// enable change (without leaving its state).
func (f *Fabric) renegotiate(idx int32) {
	p := &f.ports[idx]
	if p.peer < 0 {
		return
	}
	unlock := f.lock2(idx, p.peer)
	defer unlock()
	q := &f.ports[p.peer]
	if w := highestBit(p.widthEn&q.widthEn&cableWidths(p), []uint8{iba.LinkWidth12X, iba.LinkWidth8X, iba.LinkWidth4X, iba.LinkWidth2X, iba.LinkWidth1X}); w != 0 {
		p.widthAct, q.widthAct = w, w
	}
	s, e, e2 := linkSpeeds(p, q)
	if s != 0 {
		p.speedAct, q.speedAct = s, s
	}
	p.extAct, q.extAct = e, e
	p.ext2Act, q.ext2Act = e2, e2
}
