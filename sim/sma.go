package sim

import (
	"encoding/binary"

	"github.com/rdmakit/rdmakit/iba"
)

// What serve did with a request.
const (
	served  = iota + 1 // answered in place
	toAgent            // for a server agent at the port
	drop               // discarded (M_Key violation, unsupported method without reply)
)

// SMP attribute IDs (IBA 14.2.5, table 145).
const (
	attrNodeDesc    = 0x0010
	attrNodeInfo    = 0x0011
	attrSwitchInfo  = 0x0012
	attrGUIDInfo    = 0x0014
	attrPortInfo    = 0x0015
	attrPKeyTable   = 0x0016
	attrSL2VL       = 0x0017
	attrVLArb       = 0x0018
	attrLFT         = 0x0019
	attrMFT         = 0x001B
	attrSMInfo      = 0x0020
	attrLedInfo     = 0x0031
	attrMlnxExtPort = 0xFF90
)

// serve answers a request that reached port `to` (received on inPort) or
// says which agent should.
func (f *Fabric) serve(to int32, inPort uint8, m *msg) int {
	class, method := m.buf[offClass], m.buf[offMethod]
	switch class {
	case classSMP, classDR:
		attr := binary.BigEndian.Uint16(m.buf[offAttrID:])
		if attr == attrSMInfo || method == uint8(iba.MethodTrap) {
			if sm := f.sm.Load(); sm != nil && sm.port == to {
				return sm.serve(m)
			}
			if attr == attrSMInfo && f.otherSM(to, m) {
				return served
			}
			if f.serverAgent(to, class, method) != nil {
				return toAgent
			}
			if method == uint8(iba.MethodTrap) {
				return drop
			}
			setResponse(m.buf[:], statusMethodAttrUnsup)
			return served
		}
		return f.sma(to, inPort, m)
	case classPerf:
		return f.pma(to, m)
	}
	if f.serverAgent(to, class, method) != nil {
		return toAgent
	}
	switch class {
	case classCC:
		return f.cc(to, m)
	case classPing, classSysStat:
		return f.vendor(to, m)
	}
	if method == methodGet || method == methodSet {
		// What the Linux MAD layer answers for a class nobody serves.
		setResponse(m.buf[:], statusMethodAttrUnsup)
		return served
	}
	return drop
}

// smaPort is the port whose M_Key and attributes an SMP received on inPort
// addresses by default: the CA port itself, or a switch's port 0.
func (f *Fabric) smaPort(nd *node, inPort uint8) int32 {
	if nd.sw != nil {
		return nd.base
	}
	return nd.base + int32(inPort)
}

// sma is the subnet management agent of the node at port `to` (IBA 14.2).
func (f *Fabric) sma(to int32, inPort uint8, m *msg) int {
	b := m.buf[:]
	n := f.ports[to].node
	nd := &f.nodes[n]
	method := b[offMethod]
	if b[2] != 1 {
		setResponse(b, statusBadVersion)
		return served
	}
	if method != methodGet && method != methodSet {
		setResponse(b, statusMethodUnsupp)
		return served
	}
	set := method == methodSet
	attr := binary.BigEndian.Uint16(b[offAttrID:])
	mod := binary.BigEndian.Uint32(b[offAttrMod:])
	data := b[offSMPData : offSMPData+64]

	// PortInfo and link-state changes may touch the peer: read what is
	// needed from it before taking this node's lock, and act on it after.
	var pre portInfoPre
	if set && attr == attrPortInfo {
		pre = f.portInfoPre(nd, inPort, mod)
	}
	if set {
		nd.mu.Lock()
	} else {
		nd.mu.RLock()
	}
	mp := &f.ports[f.smaPort(nd, inPort)]
	keyOK := true
	if mp.mkey != 0 && binary.BigEndian.Uint64(b[offMKey:]) != mp.mkey {
		// IBA 14.2.4: a Set, or a Get with protection 2 or 3, fails
		// silently; with protection 1 a Get succeeds but hides the key.
		if set || mp.mkeyProtect >= 2 {
			if set {
				mp.mkeyViolations++
				nd.mu.Unlock()
			} else {
				nd.mu.RUnlock()
				nd.mu.Lock()
				mp.mkeyViolations++
				nd.mu.Unlock()
			}
			return drop
		}
		keyOK = mp.mkeyProtect == 0
	}
	var status uint16
	var post postAction
	switch attr {
	case attrNodeDesc:
		if set {
			status = statusMethodAttrUnsup
			break
		}
		copy(data, nd.desc[:])
	case attrNodeInfo:
		if set {
			status = statusMethodAttrUnsup
			break
		}
		f.nodeInfo(nd, inPort, data)
	case attrSwitchInfo:
		status = f.switchInfo(nd, set, data)
	case attrGUIDInfo:
		status = f.guidInfo(nd, inPort, set, mod, data)
	case attrPortInfo:
		status, post = f.portInfoAttr(nd, inPort, set, mod, data, keyOK, &pre)
	case attrPKeyTable:
		status = f.pkeyTable(nd, inPort, set, mod, data)
	case attrSL2VL:
		status = f.sl2vlTable(nd, inPort, set, mod, data)
	case attrVLArb:
		status = f.vlArbTable(nd, inPort, set, mod, data)
	case attrLFT:
		status = f.lftBlock(nd, set, mod, data)
	case attrMFT:
		status = f.mftBlock(nd, set, mod, data)
	case attrLedInfo:
		status = f.ledInfo(nd, inPort, set, mod, data)
	case attrMlnxExtPort:
		status = f.mlnxExtPortInfo(nd, inPort, set, mod, data)
	default:
		status = statusMethodAttrUnsup
	}
	if set {
		nd.mu.Unlock()
	} else {
		nd.mu.RUnlock()
	}
	post.run(f)
	setResponse(b, status)
	return served
}

func (f *Fabric) nodeInfo(nd *node, inPort uint8, data []byte) {
	ni := iba.NodeInfo{
		BaseVersion: 1, ClassVersion: 1, NodeType: nd.typ, NumPorts: nd.numPorts,
		SystemImageGUID: nd.sysGUID, NodeGUID: nd.guid, PortGUID: nd.guid,
		PartitionCap: caPKeyCap, DeviceID: nd.deviceID, Revision: 0xA1,
		LocalPortNum: inPort, VendorID: nd.vendorID,
	}
	if nd.sw != nil {
		ni.PartitionCap = swPKeyCap
	} else {
		ni.PortGUID = f.ports[nd.base+int32(inPort)].guid
	}
	ni.MarshalTo(data)
}

func (f *Fabric) switchInfo(nd *node, set bool, data []byte) uint16 {
	sw := nd.sw
	if sw == nil {
		return statusMethodAttrUnsup
	}
	if set {
		var si iba.SwitchInfo
		si.Unmarshal(data)
		if int(si.LinearFDBTop) >= f.lftCap || (si.DefaultPort > nd.numPorts) {
			f.switchInfoGet(nd, data)
			return statusInvalidField
		}
		sw.lftTop = si.LinearFDBTop
		sw.defaultPort = si.DefaultPort
		sw.defMcastPrim = si.DefaultMulticastPrimaryPort
		sw.defMcastNotPrim = si.DefaultMulticastNotPrimaryPort
		sw.lifeTime = si.LifeTimeValue
		if si.PortStateChange != 0 {
			sw.portStateChange = false // writing 1 clears it (IBA 14.2.5.4)
		}
		if si.MulticastFDBTop != 0 && si.MulticastFDBTop < 0xC000+MulticastFDBCap {
			sw.mftTop = si.MulticastFDBTop
		}
	}
	f.switchInfoGet(nd, data)
	return 0
}

func (f *Fabric) switchInfoGet(nd *node, data []byte) {
	sw := nd.sw
	si := iba.SwitchInfo{
		LinearFDBCap: uint16(f.lftCap), MulticastFDBCap: MulticastFDBCap, LinearFDBTop: sw.lftTop,
		DefaultPort: sw.defaultPort, DefaultMulticastPrimaryPort: sw.defMcastPrim,
		DefaultMulticastNotPrimaryPort: sw.defMcastNotPrim, LifeTimeValue: sw.lifeTime,
		PartitionEnforcementCap: swEnfCap, FilterRawInboundCap: 1, FilterRawOutboundCap: 1,
		MulticastFDBTop: sw.mftTop,
	}
	if sw.portStateChange {
		si.PortStateChange = 1
	}
	if sw.enhancedPort0 {
		si.EnhancedPort0 = 1
	}
	si.MarshalTo(data)
}

// modPort picks the port an attribute modifier names: for a CA, 0 means
// the port the SMP came in on; for a switch, 0 is the management port.
func modPort(nd *node, inPort uint8, pn uint32) (int32, bool) {
	if pn > uint32(nd.numPorts) {
		return 0, false
	}
	if pn == 0 && nd.sw == nil {
		pn = uint32(inPort)
	}
	return nd.base + int32(pn), true
}

func guidCap(nd *node, p *port) int {
	switch {
	case nd.sw == nil:
		return caGUIDCap
	case p.num == 0:
		return 1
	}
	return 0
}

func (f *Fabric) guidInfo(nd *node, inPort uint8, set bool, mod uint32, data []byte) uint16 {
	p := &f.ports[f.smaPort(nd, inPort)]
	c := guidCap(nd, p)
	if mod >= uint32((c+7)/8) {
		return statusInvalidField
	}
	if set {
		if p.guids == nil {
			p.guids = make([]iba.GUID, c)
		}
		var gi iba.GUIDInfo
		gi.Unmarshal(data)
		for i, g := range gi.GUIDBlock {
			if k := int(mod)*8 + i; k > 0 && k < c {
				p.guids[k] = g // index 0 is the port GUID, read only
			}
		}
	}
	var gi iba.GUIDInfo
	for i := range gi.GUIDBlock {
		k := int(mod)*8 + i
		switch {
		case k == 0:
			gi.GUIDBlock[i] = p.guid
		case k < len(p.guids):
			gi.GUIDBlock[i] = p.guids[k]
		}
	}
	gi.MarshalTo(data)
	return 0
}

func (f *Fabric) pkeyTable(nd *node, inPort uint8, set bool, mod uint32, data []byte) uint16 {
	block := int(mod & 0xFFFF)
	idx := f.smaPort(nd, inPort)
	if nd.sw != nil {
		var ok bool
		if idx, ok = modPort(nd, inPort, (mod>>16)&0xFF); !ok {
			return statusInvalidField
		}
	}
	p := &f.ports[idx]
	c := caPKeyCap
	if nd.sw != nil {
		c = swEnfCap
		if p.num == 0 {
			c = swPKeyCap
		}
	}
	if block*32 >= c {
		return statusInvalidField
	}
	if set {
		if p.pkeys == nil {
			p.pkeys = make([]uint16, c)
			p.pkeys[0] = 0xFFFF
		}
		for i := 0; i < 32 && block*32+i < c; i++ {
			p.pkeys[block*32+i] = binary.BigEndian.Uint16(data[2*i:])
		}
	}
	clear(data)
	for i := 0; i < 32 && block*32+i < c; i++ {
		k := uint16(0)
		if p.pkeys != nil {
			k = p.pkeys[block*32+i]
		} else if block*32+i == 0 {
			k = 0xFFFF
		}
		binary.BigEndian.PutUint16(data[2*i:], k)
	}
	return 0
}

func (f *Fabric) sl2vlTable(nd *node, inPort uint8, set bool, mod uint32, data []byte) uint16 {
	var tbl []byte
	if sw := nd.sw; sw != nil {
		in, out := (mod>>8)&0xFF, mod&0xFF
		if in > uint32(nd.numPorts) || out > uint32(nd.numPorts) {
			return statusInvalidField
		}
		n := int(nd.numPorts) + 1
		if sw.sl2vl == nil {
			if !set {
				copy(data, defaultSL2VL[:])
				clear(data[8:])
				return 0
			}
			sw.sl2vl = make([]byte, n*n*8)
			for i := 0; i < n*n; i++ {
				copy(sw.sl2vl[i*8:], defaultSL2VL[:])
			}
		}
		k := (int(in)*n + int(out)) * 8
		tbl = sw.sl2vl[k : k+8]
	} else {
		tbl = f.ports[nd.base+int32(inPort)].sl2vl[:]
	}
	if set {
		copy(tbl, data[:8])
	}
	copy(data, tbl)
	clear(data[8:])
	return 0
}

// defaultVLArb: the high table gives VL0 weight 4, the low table VL1..7
// weight 4 (ibsim's tables, cut to the 8-entry capability).
var defaultVLArb = [2][16]byte{
	{0, 0, 1, 4, 2, 4, 3, 4, 4, 4, 5, 4, 6, 4, 7, 4},
	{0, 4, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0},
}

func (f *Fabric) vlArbTable(nd *node, inPort uint8, set bool, mod uint32, data []byte) uint16 {
	idx := f.smaPort(nd, inPort)
	if nd.sw != nil {
		var ok bool
		if idx, ok = modPort(nd, inPort, mod&0xFFFF); !ok {
			return statusInvalidField
		}
	}
	block := mod >> 16
	// Blocks 1 and 2 are the low-priority table, 3 and 4 the high one;
	// with 8 entries of each only the first block of each exists.
	if block != 1 && block != 3 {
		return statusInvalidField
	}
	t := 0
	if block == 3 {
		t = 1
	}
	p := &f.ports[idx]
	if set {
		if !p.vlarbS {
			p.vlarb, p.vlarbS = defaultVLArb, true
		}
		copy(p.vlarb[t][:], data[:16])
	}
	clear(data)
	if p.vlarbS {
		copy(data, p.vlarb[t][:])
	} else {
		copy(data, defaultVLArb[t][:])
	}
	return 0
}

func (f *Fabric) lftBlock(nd *node, set bool, mod uint32, data []byte) uint16 {
	sw := nd.sw
	if sw == nil {
		return statusMethodAttrUnsup
	}
	if int(mod) >= f.lftCap/64 {
		return statusInvalidField
	}
	lo := int(mod) * 64
	if set {
		if len(sw.lft) < lo+64 {
			// Grow geometrically: an SM writes the blocks in order.
			n := len(sw.lft)
			size := min(max(lo+64, 2*n), f.lftCap)
			grow := make([]uint8, size)
			copy(grow, sw.lft)
			for i := n; i < len(grow); i++ {
				grow[i] = 0xFF
			}
			sw.lft = grow
		}
		copy(sw.lft[lo:lo+64], data)
	}
	if len(sw.lft) >= lo+64 {
		copy(data, sw.lft[lo:lo+64])
	} else {
		for i := range data {
			data[i] = 0xFF
		}
	}
	return 0
}

func (f *Fabric) mftBlock(nd *node, set bool, mod uint32, data []byte) uint16 {
	sw := nd.sw
	if sw == nil {
		return statusMethodAttrUnsup
	}
	block, pos := int(mod&0x1FF), int(mod>>28)
	positions := int(nd.numPorts)/16 + 1
	if block >= MulticastFDBCap/32 || pos >= positions {
		return statusInvalidField
	}
	at := (block*positions + pos) * 32
	if set {
		if sw.mft == nil {
			sw.mft = make([]uint16, MulticastFDBCap*positions)
		}
		for i := 0; i < 32; i++ {
			sw.mft[at+i] = binary.BigEndian.Uint16(data[2*i:])
		}
	}
	for i := 0; i < 32; i++ {
		v := uint16(0)
		if sw.mft != nil {
			v = sw.mft[at+i]
		}
		binary.BigEndian.PutUint16(data[2*i:], v)
	}
	return 0
}

func (f *Fabric) ledInfo(nd *node, inPort uint8, set bool, mod uint32, data []byte) uint16 {
	idx := f.smaPort(nd, inPort)
	if nd.sw != nil {
		var ok bool
		if idx, ok = modPort(nd, inPort, mod&0xFF); !ok {
			return statusInvalidField
		}
	}
	p := &f.ports[idx]
	if set {
		p.led = data[0] >> 7
	}
	clear(data)
	data[0] = p.led << 7
	return 0
}

func (f *Fabric) mlnxExtPortInfo(nd *node, inPort uint8, set bool, mod uint32, data []byte) uint16 {
	idx, ok := modPort(nd, inPort, mod&0xFF)
	if !ok {
		return statusInvalidField
	}
	p := &f.ports[idx]
	if set {
		var x iba.MlnxExtPortInfo
		x.Unmarshal(data)
		p.mlnxStateChange = x.StateChangeEnable
		if x.LinkSpeedEnabled <= 1 {
			p.mlnxEn = x.LinkSpeedEnabled
		}
	}
	x := iba.MlnxExtPortInfo{StateChangeEnable: p.mlnxStateChange}
	if p.mlnxAct != 0 || p.mlnxEn != 0 {
		x.LinkSpeedSupported, x.LinkSpeedEnabled, x.LinkSpeedActive = 1, p.mlnxEn, p.mlnxAct
	}
	x.MarshalTo(data)
	return 0
}
