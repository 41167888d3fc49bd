package sim

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rdmakit/rdmakit/iba"
)

// counters are a port's PMA counters, kept 64 bits wide; PortCounters
// shows them saturated to its narrower fields (IBA 16.1.3.5: counters stop
// at their maximum). PortCounters and PortCountersExtended read the same
// counters, so clearing one clears the other.
type counters struct {
	xmitData, rcvData, xmitPkts, rcvPkts             atomic.Uint64
	mcXmitPkts, mcRcvPkts                            atomic.Uint64
	uniXmitPkts, uniRcvPkts                          atomic.Uint64 // the traffic model's packets only
	symbolErrors, linkErrorRecovery, linkDowned      atomic.Uint64
	rcvErrors, rcvRemotePhysErrors                   atomic.Uint64
	rcvSwitchRelayErrors, xmitDiscards               atomic.Uint64
	xmitConstraintErrors, rcvConstraintErrors        atomic.Uint64
	localLinkIntegrityErrors, excessiveBufferOverrun atomic.Uint64
	vl15Dropped, xmitWait, qp1Dropped                atomic.Uint64

	// det holds the error-detail, per-VL and per-SL counters and, at a
	// node's first port slot, the node's sampling state. It is allocated
	// on first use, so a port nobody injects into, sends traffic across or
	// samples costs one pointer.
	det atomic.Pointer[detail]
}

// PortErrors are counts to add to a port's error counters (InjectErrors).
type PortErrors struct {
	SymbolErrors, LinkErrorRecovery, LinkDowned, RcvErrors, RcvRemotePhysErrors   uint64
	RcvSwitchRelayErrors, XmitDiscards, XmitConstraintErrors, RcvConstraintErrors uint64
	LocalLinkIntegrityErrors, ExcessiveBufferOverrun, VL15Dropped, XmitWait       uint64

	// Receive error details (PortRcvErrorDetails, IBA 16.1.4.1); each
	// also counts in RcvErrors, which totals them.
	LocalPhysicalErrors, MalformedPacketErrors, BufferOverrunErrors uint64
	DLIDMappingErrors, VLMappingErrors, LoopingErrors               uint64
	// Transmit discard details (PortXmitDiscardDetails, IBA 16.1.4.2);
	// each also counts in XmitDiscards.
	InactiveDiscards, NeighborMTUDiscards               uint64
	SwLifetimeLimitDiscards, SwHOQLifetimeLimitDiscards uint64
	// Per-VL flow control update errors (IBA 16.1.4.7) and ticks waiting
	// to transmit (IBA 16.1.4.8, also counted in PortXmitWait).
	FlowCtlUpdateErrorsVL, XmitWaitVL [16]uint64
}

// InjectErrors adds to the error counters of a port (port 0 is a switch's
// management port), as a faulty cable or device would.
func (f *Fabric) InjectErrors(nodeName string, portNum int, e PortErrors) error {
	i, err := f.portIndex(nodeName, portNum)
	if err != nil {
		return fmt.Errorf("injecting errors: %w", err)
	}
	c := &f.ports[i].pc
	c.symbolErrors.Add(e.SymbolErrors)
	c.linkErrorRecovery.Add(e.LinkErrorRecovery)
	c.linkDowned.Add(e.LinkDowned)
	c.rcvErrors.Add(e.RcvErrors)
	c.rcvRemotePhysErrors.Add(e.RcvRemotePhysErrors)
	c.rcvSwitchRelayErrors.Add(e.RcvSwitchRelayErrors)
	c.xmitDiscards.Add(e.XmitDiscards)
	c.xmitConstraintErrors.Add(e.XmitConstraintErrors)
	c.rcvConstraintErrors.Add(e.RcvConstraintErrors)
	c.localLinkIntegrityErrors.Add(e.LocalLinkIntegrityErrors)
	c.excessiveBufferOverrun.Add(e.ExcessiveBufferOverrun)
	c.vl15Dropped.Add(e.VL15Dropped)
	c.xmitWait.Add(e.XmitWait)
	c.addDetailErrors(&e)
	return nil
}

// SetDropRate makes a port drop that percentage of the packets it
// receives, counting each as a PortRcvErrors (ibsim's Error command).
func (f *Fabric) SetDropRate(nodeName string, portNum int, percent int) error {
	i, err := f.portIndex(nodeName, portNum)
	if err != nil {
		return fmt.Errorf("setting a drop rate: %w", err)
	}
	if percent < 0 || percent > 100 {
		return fmt.Errorf("setting a drop rate: %d%% is not 0 to 100", percent)
	}
	f.ports[i].drop.Store(uint32(percent))
	return nil
}

// Traffic is the traffic model: it sends `packets` data packets carrying
// `bytes` in all from a port to a LID through the forwarding tables (all
// links must be Active), adding them to the transmit and receive counters
// of every port on the way. It fails when the LID cannot be reached. The
// packets are RC SEND Only packets on SL 0 (TrafficFlow chooses).
func (f *Fabric) Traffic(nodeName string, portNum int, dlid uint16, packets, bytes uint64) error {
	return f.TrafficFlow(nodeName, portNum, dlid, Flow{OpCode: OpRCSendOnly}, packets, bytes)
}

// OpRCSendOnly is the BTH opcode of an RC SEND Only packet (IBA 9.2), the
// traffic model's default.
const OpRCSendOnly = 0x04

// Flow is what the traffic model's packets carry besides their count and
// size: the SL each hop maps to a VL through its SL2VL table (IBA 7.6.6),
// and the BTH opcode that PortOpRcvCounters and PortVLOp* select on.
type Flow struct {
	SL     uint8
	OpCode uint8
}

// TrafficFlow is Traffic with the SL and opcode of the packets. Besides
// the PortCounters it moves, on each link, the per-SL data counters
// (PortXmitDataSL at the sender, PortRcvDataSL at the receiver), the
// receiver's opcode and per-VL opcode counters, and the flow control
// packets of the link (one credit update per data packet, from receiver to
// sender). A packet that cannot go on is discarded and counted where a
// real switch counts it: no LFT entry is a DLID mapping error and an SL
// mapped to VL 15 a VL mapping error at the port it came in on, a link
// not Active an inactive discard at the output port, a route longer than
// 64 hops a looping error. Each hop is a tick of the sampling clock of
// the nodes it joins (see AdvanceSamples).
func (f *Fabric) TrafficFlow(nodeName string, portNum int, dlid uint16, fl Flow, packets, bytes uint64) error {
	i, err := f.portIndex(nodeName, portNum)
	if err != nil {
		return fmt.Errorf("traffic: %w", err)
	}
	if fl.SL > 15 {
		return fmt.Errorf("traffic: SL %d is not 0 to 15", fl.SL)
	}
	dw := bytes / 4
	cur := i
	// The hop ticks the sampling clocks once its counters have moved, so
	// a sample that a tick starts leaves that tick's traffic out and one
	// that a tick ends takes it in.
	var crossed [maxHops]int32
	nc := 0
	defer func() {
		for _, n := range crossed[:nc] {
			f.sampleTick(&f.nodes[n], 1)
		}
	}()
	for h := 0; h < maxHops; h++ {
		p := &f.ports[cur]
		nd := &f.nodes[p.node]
		crossed[nc] = p.node
		nc++
		nd.mu.RLock()
		out := int32(-1)
		var tbl []byte
		if sw := nd.sw; sw != nil {
			if f.owns(&f.ports[nd.base], dlid) {
				nd.mu.RUnlock()
				return nil
			}
			if int(dlid) < len(sw.lft) && dlid <= sw.lftTop && sw.lft[dlid] != 0 && sw.lft[dlid] <= nd.numPorts {
				out = nd.base + int32(sw.lft[dlid])
				if sw.sl2vl != nil {
					n := int(nd.numPorts) + 1
					k := (int(p.num)*n + int(sw.lft[dlid])) * 8
					tbl = sw.sl2vl[k : k+8]
				}
			}
		} else if f.owns(p, dlid) {
			nd.mu.RUnlock()
			return nil
		} else if h == 0 {
			out = cur
			tbl = p.sl2vl[:]
		}
		vl := defaultSL2VL[fl.SL/2]
		if tbl != nil {
			vl = tbl[fl.SL/2]
		}
		if fl.SL%2 == 0 {
			vl >>= 4
		}
		vl &= 0xF
		ok := out >= 0 && linkOK(&f.ports[out], false)
		nd.mu.RUnlock()
		switch {
		case out < 0:
			p.pc.rcvErrors.Add(packets)
			p.pc.detail().dlidMapping.Add(packets)
			return fmt.Errorf("traffic from %s/%d: LID %d is unreachable", nodeName, portNum, dlid)
		case vl == 15:
			p.pc.rcvErrors.Add(packets)
			p.pc.detail().vlMapping.Add(packets)
			return fmt.Errorf("traffic from %s/%d: SL %d maps to VL 15", nodeName, portNum, fl.SL)
		case !ok:
			o := &f.ports[out]
			o.pc.xmitDiscards.Add(packets)
			o.pc.detail().inactive.Add(packets)
			return fmt.Errorf("traffic from %s/%d: LID %d is unreachable", nodeName, portNum, dlid)
		}
		o := &f.ports[out]
		q := &f.ports[o.peer]
		o.pc.xmitPkts.Add(packets)
		o.pc.xmitData.Add(dw)
		o.pc.uniXmitPkts.Add(packets)
		q.pc.rcvPkts.Add(packets)
		q.pc.rcvData.Add(dw)
		q.pc.uniRcvPkts.Add(packets)
		od, qd := o.pc.detail(), q.pc.detail()
		od.xmitDataSL[fl.SL].Add(dw)
		od.rcvFlowPkts.Add(packets)
		qd.rcvDataSL[fl.SL].Add(dw)
		qd.xmitFlowPkts.Add(packets)
		if uint32(fl.OpCode) == qd.opRcvOp.Load() {
			qd.opRcvPkts.Add(packets)
			qd.opRcvData.Add(dw)
		}
		if uint32(fl.OpCode) == qd.vlOpPktsOp.Load() {
			qd.vlOpPkts[vl].Add(packets)
		}
		if uint32(fl.OpCode) == qd.vlOpDataOp.Load() {
			qd.vlOpData[vl].Add(dw)
		}
		cur = o.peer
	}
	f.ports[cur].pc.rcvErrors.Add(packets)
	f.ports[cur].pc.detail().looping.Add(packets)
	return fmt.Errorf("traffic from %s/%d: LID %d: routing loop", nodeName, portNum, dlid)
}

// PMA ClassPortInfo values, as ibsim reports them.
const (
	pmaRespTime = 0x12
	pmaCapCA    = iba.PMCapExtendedWidth | iba.PMCapPortCountersXmitWait
	pmaCapSW    = pmaCapCA | iba.PMCapAllPortSelect
)

// PerfMgt attribute IDs (IBA 16.1.2, table 180).
const (
	pmAttrClassPortInfo = 0x0001
	pmAttrSamplesCtl    = 0x0010
	pmAttrSamplesRes    = 0x0011
	pmAttrPortCounters  = 0x0012
	pmAttrRcvErrDetails = 0x0015
	pmAttrXmitDiscDet   = 0x0016
	pmAttrOpRcv         = 0x0017
	pmAttrFlowCtl       = 0x0018
	pmAttrVLOpPackets   = 0x0019
	pmAttrVLOpData      = 0x001A
	pmAttrVLFlowCtlErr  = 0x001B
	pmAttrVLXmitWait    = 0x001C
	pmAttrCountersExt   = 0x001D
	pmAttrSamplesResExt = 0x001E
	pmAttrXmitDataSL    = 0x0036
	pmAttrRcvDataSL     = 0x0037
	offPMData           = 64
)

// pma is the performance management agent at port `to` (IBA 16.1).
func (f *Fabric) pma(to int32, m *msg) int {
	b := m.buf[:]
	nd := &f.nodes[f.ports[to].node]
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
	data := b[offPMData:]
	var status uint16
	switch binary.BigEndian.Uint16(b[offAttrID:]) {
	case pmAttrClassPortInfo:
		if set {
			status = statusMethodAttrUnsup
			break
		}
		cpi := iba.ClassPortInfo{BaseVersion: 1, ClassVersion: 1, CapabilityMask: pmaCapCA, RespTimeValue: pmaRespTime}
		if nd.sw != nil {
			cpi.CapabilityMask = pmaCapSW
		}
		clear(data)
		cpi.MarshalTo(data)
	case pmAttrPortCounters:
		status = f.portCounters(nd, set, data)
	case pmAttrCountersExt:
		status = f.portCountersExt(nd, set, data)
	case pmAttrSamplesCtl:
		status = f.samplesControl(nd, set, data)
	case pmAttrSamplesRes, pmAttrSamplesResExt:
		if set {
			status = statusMethodAttrUnsup
			break
		}
		f.samplesResult(nd, binary.BigEndian.Uint16(b[offAttrID:]) == pmAttrSamplesResExt, data)
	case pmAttrRcvErrDetails, pmAttrXmitDiscDet, pmAttrOpRcv, pmAttrFlowCtl, pmAttrVLOpPackets,
		pmAttrVLOpData, pmAttrVLFlowCtlErr, pmAttrVLXmitWait, pmAttrXmitDataSL, pmAttrRcvDataSL:
		status = f.detailCounters(nd, binary.BigEndian.Uint16(b[offAttrID:]), set, data)
	default:
		status = statusMethodAttrUnsup
	}
	setResponse(b, status)
	return served
}

// pmaPorts gives the ports a PortSelect names: one port, or with 0xFF all
// of a switch's (AllPortSelect is a switch capability here, as in ibsim).
func (f *Fabric) pmaPorts(nd *node, sel uint8) ([2]int32, bool) {
	if sel == 0xFF {
		if nd.sw == nil {
			return [2]int32{}, false
		}
		return [2]int32{nd.base, nd.base + int32(nd.numPorts) + 1}, true
	}
	if sel > nd.numPorts || (sel == 0 && nd.sw == nil) {
		return [2]int32{}, false
	}
	i := nd.base + int32(sel)
	return [2]int32{i, i + 1}, true
}

func sat(v uint64, bits uint) uint64 {
	if m := uint64(1)<<bits - 1; v > m {
		return m
	}
	return v
}

// PortCounters CounterSelect bits (IBA 16.1.3.5).
const (
	csSymbolErrors = 1 << iota
	csLinkErrorRecovery
	csLinkDowned
	csRcvErrors
	csRcvRemotePhys
	csRcvSwitchRelay
	csXmitDiscards
	csXmitConstraint
	csRcvConstraint
	csLocalLinkIntegrity
	csExcessiveBufferOverrun
	csVL15Dropped
	csXmitData
	csRcvData
	csXmitPkts
	csRcvPkts
)

func (f *Fabric) portCounters(nd *node, set bool, data []byte) uint16 {
	var pc iba.PortCounters
	pc.Unmarshal(data)
	rng, ok := f.pmaPorts(nd, pc.PortSelect)
	if !ok {
		return statusInvalidField
	}
	if set {
		mask := pc.CounterSelect
		for i := rng[0]; i < rng[1]; i++ {
			c := &f.ports[i].pc
			for _, x := range []struct {
				bit uint16
				c   *atomic.Uint64
			}{
				{csSymbolErrors, &c.symbolErrors}, {csLinkErrorRecovery, &c.linkErrorRecovery},
				{csLinkDowned, &c.linkDowned}, {csRcvErrors, &c.rcvErrors},
				{csRcvRemotePhys, &c.rcvRemotePhysErrors}, {csRcvSwitchRelay, &c.rcvSwitchRelayErrors},
				{csXmitDiscards, &c.xmitDiscards}, {csXmitConstraint, &c.xmitConstraintErrors},
				{csRcvConstraint, &c.rcvConstraintErrors}, {csLocalLinkIntegrity, &c.localLinkIntegrityErrors},
				{csExcessiveBufferOverrun, &c.excessiveBufferOverrun}, {csVL15Dropped, &c.vl15Dropped},
				{csXmitData, &c.xmitData}, {csRcvData, &c.rcvData}, {csXmitPkts, &c.xmitPkts}, {csRcvPkts, &c.rcvPkts},
			} {
				if mask&x.bit != 0 {
					x.c.Store(0)
				}
			}
			if pc.CounterSelect2 != 0 {
				c.xmitWait.Store(0)
				c.qp1Dropped.Store(0)
			}
		}
	}
	var s [17]uint64
	for i := rng[0]; i < rng[1]; i++ {
		c := &f.ports[i].pc
		for k, v := range [...]uint64{
			c.symbolErrors.Load(), c.linkErrorRecovery.Load(), c.linkDowned.Load(), c.rcvErrors.Load(),
			c.rcvRemotePhysErrors.Load(), c.rcvSwitchRelayErrors.Load(), c.xmitDiscards.Load(),
			c.xmitConstraintErrors.Load(), c.rcvConstraintErrors.Load(), c.localLinkIntegrityErrors.Load(),
			c.excessiveBufferOverrun.Load(), c.vl15Dropped.Load(), c.xmitData.Load(), c.rcvData.Load(),
			c.xmitPkts.Load(), c.rcvPkts.Load(), c.xmitWait.Load(),
		} {
			s[k] += v
		}
	}
	out := iba.PortCounters{
		PortSelect: pc.PortSelect, CounterSelect: pc.CounterSelect, CounterSelect2: pc.CounterSelect2,
		SymbolErrorCounter:           uint16(sat(s[0], 16)),
		LinkErrorRecoveryCounter:     uint8(sat(s[1], 8)),
		LinkDownedCounter:            uint8(sat(s[2], 8)),
		PortRcvErrors:                uint16(sat(s[3], 16)),
		PortRcvRemotePhysicalErrors:  uint16(sat(s[4], 16)),
		PortRcvSwitchRelayErrors:     uint16(sat(s[5], 16)),
		PortXmitDiscards:             uint16(sat(s[6], 16)),
		PortXmitConstraintErrors:     uint8(sat(s[7], 8)),
		PortRcvConstraintErrors:      uint8(sat(s[8], 8)),
		LocalLinkIntegrityErrors:     uint8(sat(s[9], 4)),
		ExcessiveBufferOverrunErrors: uint8(sat(s[10], 4)),
		VL15Dropped:                  uint16(sat(s[11], 16)),
		PortXmitData:                 uint32(sat(s[12], 32)),
		PortRcvData:                  uint32(sat(s[13], 32)),
		PortXmitPkts:                 uint32(sat(s[14], 32)),
		PortRcvPkts:                  uint32(sat(s[15], 32)),
		PortXmitWait:                 uint32(sat(s[16], 32)),
	}
	clear(data)
	out.MarshalTo(data)
	return 0
}

// PortCountersExtended CounterSelect bits (IBA 16.1.4.11).
const (
	cxXmitData = 1 << iota
	cxRcvData
	cxXmitPkts
	cxRcvPkts
	cxUniXmitPkts
	cxUniRcvPkts
	cxMcXmitPkts
	cxMcRcvPkts
)

func (f *Fabric) portCountersExt(nd *node, set bool, data []byte) uint16 {
	var pc iba.PortCountersExtended
	pc.Unmarshal(data)
	rng, ok := f.pmaPorts(nd, pc.PortSelect)
	if !ok {
		return statusInvalidField
	}
	if set {
		for i := rng[0]; i < rng[1]; i++ {
			c := &f.ports[i].pc
			if pc.CounterSelect&(cxXmitData) != 0 {
				c.xmitData.Store(0)
			}
			if pc.CounterSelect&(cxRcvData) != 0 {
				c.rcvData.Store(0)
			}
			if pc.CounterSelect&cxXmitPkts != 0 {
				c.xmitPkts.Store(0)
			}
			if pc.CounterSelect&cxRcvPkts != 0 {
				c.rcvPkts.Store(0)
			}
			if pc.CounterSelect&cxUniXmitPkts != 0 {
				c.uniXmitPkts.Store(0)
			}
			if pc.CounterSelect&cxUniRcvPkts != 0 {
				c.uniRcvPkts.Store(0)
			}
			if pc.CounterSelect&cxMcXmitPkts != 0 {
				c.mcXmitPkts.Store(0)
			}
			if pc.CounterSelect&cxMcRcvPkts != 0 {
				c.mcRcvPkts.Store(0)
			}
		}
	}
	out := iba.PortCountersExtended{PortSelect: pc.PortSelect, CounterSelect: pc.CounterSelect}
	for i := rng[0]; i < rng[1]; i++ {
		c := &f.ports[i].pc
		out.PortXmitData += c.xmitData.Load()
		out.PortRcvData += c.rcvData.Load()
		out.PortXmitPkts += c.xmitPkts.Load()
		out.PortRcvPkts += c.rcvPkts.Load()
		out.PortMulticastXmitPkts += c.mcXmitPkts.Load()
		out.PortMulticastRcvPkts += c.mcRcvPkts.Load()
		out.PortUnicastXmitPkts += c.uniXmitPkts.Load()
		out.PortUnicastRcvPkts += c.uniRcvPkts.Load()
	}
	out.MarshalTo(data)
	return 0
}

// detail are a port's error-detail (IBA 16.1.4.1-16.1.4.8) and per-SL
// (IBA A13.6.5) counters. The opcode counters count the packets of the
// opcode the last Set of their attribute named (0 until then), as the
// IBA has a PMA count one opcode at a time.
type detail struct {
	localPhys, malformed, bufOverrun, dlidMapping, vlMapping, looping atomic.Uint64
	inactive, neighborMTU, swLifetime, swHOQLifetime                  atomic.Uint64
	xmitFlowPkts, rcvFlowPkts                                         atomic.Uint64
	opRcvPkts, opRcvData                                              atomic.Uint64
	opRcvOp, vlOpPktsOp, vlOpDataOp                                   atomic.Uint32
	vlOpPkts, vlOpData, vlFlowCtlErr, vlXmitWait                      [16]atomic.Uint64
	xmitDataSL, rcvDataSL                                             [16]atomic.Uint64

	samp atomic.Pointer[sampler] // at a node's first port slot only
}

// zeroDetail stands in for the counters of a port that has none yet.
var zeroDetail detail

// detail gives the port's detail counters, allocating them on first use.
func (c *counters) detail() *detail {
	if d := c.det.Load(); d != nil {
		return d
	}
	c.det.CompareAndSwap(nil, new(detail))
	return c.det.Load()
}

func (c *counters) addDetailErrors(e *PortErrors) {
	rcv := e.LocalPhysicalErrors + e.MalformedPacketErrors + e.BufferOverrunErrors +
		e.DLIDMappingErrors + e.VLMappingErrors + e.LoopingErrors
	disc := e.InactiveDiscards + e.NeighborMTUDiscards + e.SwLifetimeLimitDiscards + e.SwHOQLifetimeLimitDiscards
	var vl uint64
	for k := range e.XmitWaitVL {
		vl |= e.XmitWaitVL[k] | e.FlowCtlUpdateErrorsVL[k]
	}
	if rcv == 0 && disc == 0 && vl == 0 {
		return
	}
	c.rcvErrors.Add(rcv)
	c.xmitDiscards.Add(disc)
	d := c.detail()
	d.localPhys.Add(e.LocalPhysicalErrors)
	d.malformed.Add(e.MalformedPacketErrors)
	d.bufOverrun.Add(e.BufferOverrunErrors)
	d.dlidMapping.Add(e.DLIDMappingErrors)
	d.vlMapping.Add(e.VLMappingErrors)
	d.looping.Add(e.LoopingErrors)
	d.inactive.Add(e.InactiveDiscards)
	d.neighborMTU.Add(e.NeighborMTUDiscards)
	d.swLifetime.Add(e.SwLifetimeLimitDiscards)
	d.swHOQLifetime.Add(e.SwHOQLifetimeLimitDiscards)
	for k := range e.XmitWaitVL {
		d.vlXmitWait[k].Add(e.XmitWaitVL[k])
		c.xmitWait.Add(e.XmitWaitVL[k])
		d.vlFlowCtlErr[k].Add(e.FlowCtlUpdateErrorsVL[k])
	}
}

// fields lists an attribute's counters in CounterSelect bit order (bit k
// selects the k-th; for the per-VL and per-SL attributes bit k is VL or SL
// k) with the width of their fields, which all start at bit 32.
func (d *detail) fields(attr uint16) ([]*atomic.Uint64, uint) {
	vl := func(a *[16]atomic.Uint64) []*atomic.Uint64 {
		r := make([]*atomic.Uint64, 16)
		for k := range a {
			r[k] = &a[k]
		}
		return r
	}
	switch attr {
	case pmAttrRcvErrDetails:
		return []*atomic.Uint64{&d.localPhys, &d.malformed, &d.bufOverrun, &d.dlidMapping, &d.vlMapping, &d.looping}, 16
	case pmAttrXmitDiscDet:
		return []*atomic.Uint64{&d.inactive, &d.neighborMTU, &d.swLifetime, &d.swHOQLifetime}, 16
	case pmAttrOpRcv:
		return []*atomic.Uint64{&d.opRcvPkts, &d.opRcvData}, 32
	case pmAttrFlowCtl:
		return []*atomic.Uint64{&d.xmitFlowPkts, &d.rcvFlowPkts}, 32
	case pmAttrVLOpPackets:
		return vl(&d.vlOpPkts), 16
	case pmAttrVLOpData:
		return vl(&d.vlOpData), 32
	case pmAttrVLFlowCtlErr:
		return vl(&d.vlFlowCtlErr), 2
	case pmAttrVLXmitWait:
		return vl(&d.vlXmitWait), 16
	case pmAttrXmitDataSL:
		return vl(&d.xmitDataSL), 32
	default: // pmAttrRcvDataSL
		return vl(&d.rcvDataSL), 32
	}
}

// opCode is the opcode register an attribute selects on, nil if none.
func (d *detail) opCode(attr uint16) *atomic.Uint32 {
	switch attr {
	case pmAttrOpRcv:
		return &d.opRcvOp
	case pmAttrVLOpPackets:
		return &d.vlOpPktsOp
	case pmAttrVLOpData:
		return &d.vlOpDataOp
	}
	return nil
}

// detailCounters answers the error-detail, per-VL and per-SL attributes
// (IBA 16.1.4.1-16.1.4.8, A13.6.5). A Set clears the counters its
// CounterSelect names and, for the opcode attributes, makes the port count
// the request's OpCode from then on; the reply is a Get's. The counters
// stop at the maximum of their fields, as PortCounters' do.
func (f *Fabric) detailCounters(nd *node, attr uint16, set bool, data []byte) uint16 {
	op, sel, cs := data[0], data[1], binary.BigEndian.Uint16(data[2:])
	rng, ok := f.pmaPorts(nd, sel)
	if !ok {
		return statusInvalidField
	}
	if set {
		for i := rng[0]; i < rng[1]; i++ {
			c := &f.ports[i].pc
			d := c.det.Load()
			if d == nil {
				if zeroDetail.opCode(attr) == nil || op == 0 {
					continue
				}
				d = c.detail()
			}
			fs, _ := d.fields(attr)
			for k, x := range fs {
				if cs&(1<<k) != 0 {
					x.Store(0)
				}
			}
			if r := d.opCode(attr); r != nil {
				r.Store(uint32(op))
			}
		}
	}
	var sum [16]uint64
	fs, width := zeroDetail.fields(attr)
	n := len(fs)
	op = 0
	for i := rng[0]; i < rng[1]; i++ {
		d := f.ports[i].pc.det.Load()
		if d == nil {
			d = &zeroDetail
		}
		if r := d.opCode(attr); r != nil && i == rng[0] {
			op = uint8(r.Load())
		}
		fs, _ := d.fields(attr)
		for k, x := range fs {
			sum[k] += x.Load()
		}
	}
	clear(data)
	data[0], data[1] = op, sel
	binary.BigEndian.PutUint16(data[2:], cs)
	for k := 0; k < n; k++ {
		v := sat(sum[k], width)
		switch width {
		case 2:
			data[4+k/4] |= byte(v) << (6 - 2*(k%4))
		case 16:
			binary.BigEndian.PutUint16(data[4+2*k:], uint16(v))
		default:
			binary.BigEndian.PutUint32(data[4+4*k:], uint32(v))
		}
	}
	return 0
}

// SampleStatus values (IBA 16.1.3.2, as the Linux qib/hfi1 PMAs name
// them): a sample waits SampleStart ticks, then runs SampleInterval ticks.
const (
	sampleDone    = 0
	sampleStarted = 1
	sampleRunning = 2
)

// Sampling CounterSelect values (IBA 16.1.3.3, the five mandatory ones);
// 0 samples nothing.
const (
	selXmitData = 1 + iota
	selRcvData
	selXmitPkts
	selRcvPkts
	selXmitWait
)

// sampler is a node's PortSamplesControl state (IBA 16.1.3.2): one sample
// at a time, of the ports its PortSelect names.
type sampler struct {
	mu                      sync.Mutex
	active                  atomic.Bool // status is not done: ticks matter
	ctl                     iba.PortSamplesControl
	status                  uint8
	startLeft, intervalLeft uint32
	lo, hi                  int32
	base, result            [15]uint64
}

// samplerOf gives the node's sampler, nil if it never sampled and !create.
func (f *Fabric) samplerOf(nd *node, create bool) *sampler {
	c := &f.ports[nd.base].pc
	d := c.det.Load()
	if d == nil {
		if !create {
			return nil
		}
		d = c.detail()
	}
	if s := d.samp.Load(); s != nil || !create {
		return s
	}
	d.samp.CompareAndSwap(nil, new(sampler))
	return d.samp.Load()
}

// read gives the sampled counters' values now; called with s.mu held.
func (s *sampler) read(f *Fabric, v *[15]uint64) {
	*v = [15]uint64{}
	for i := s.lo; i < s.hi; i++ {
		c := &f.ports[i].pc
		for k, cs := range s.ctl.CounterSelect {
			switch cs {
			case selXmitData:
				v[k] += c.xmitData.Load()
			case selRcvData:
				v[k] += c.rcvData.Load()
			case selXmitPkts:
				v[k] += c.xmitPkts.Load()
			case selRcvPkts:
				v[k] += c.rcvPkts.Load()
			case selXmitWait:
				v[k] += c.xmitWait.Load()
			}
		}
	}
}

// advance moves the sample n ticks on; called with s.mu held.
func (s *sampler) advance(f *Fabric, n uint32) {
	for s.status != sampleDone {
		switch s.status {
		case sampleStarted:
			if s.startLeft > 0 {
				if n == 0 {
					return
				}
				k := min(n, s.startLeft)
				s.startLeft -= k
				n -= k
			}
			if s.startLeft == 0 {
				s.status = sampleRunning
				s.read(f, &s.base)
			}
		case sampleRunning:
			if s.intervalLeft > 0 {
				if n == 0 {
					return
				}
				k := min(n, s.intervalLeft)
				s.intervalLeft -= k
				n -= k
			}
			if s.intervalLeft == 0 {
				var now [15]uint64
				s.read(f, &now)
				for k := range now {
					s.result[k] = now[k] - s.base[k]
				}
				s.status = sampleDone
				s.active.Store(false)
			}
		}
	}
}

func (f *Fabric) sampleTick(nd *node, n uint32) {
	s := f.samplerOf(nd, false)
	if s == nil || !s.active.Load() {
		return
	}
	s.mu.Lock()
	s.advance(f, n)
	s.mu.Unlock()
}

// AdvanceSamples moves the sampling clock of every node n ticks on. The
// simulator's sampling clock is the traffic model's, so samples are
// deterministic: every hop of a Traffic call is one tick of the nodes at
// both its ends, and on an idle fabric this is how a sample's
// SampleStart and SampleInterval (counted in ticks) pass.
func (f *Fabric) AdvanceSamples(n uint32) {
	for i := range f.nodes {
		f.sampleTick(&f.nodes[i], n)
	}
}

// samplesMasks: every one of the fifteen counters can sample every
// CounterSelect value (CounterMask 1, IBA 16.1.3.2); 32-bit counters.
const (
	samplesWidth32  = 4
	samplesMask0    = 1
	samplesMasks1_9 = 0o111111111
	samplesMasks10  = 0o11111
)

// samplesControl answers PortSamplesControl (IBA 16.1.3.2). A Set starts
// a sample unless one is under way (then it changes nothing, as the Linux
// PMAs do); SampleStart 0 starts it running at once, and SampleInterval 0
// ends it at once.
func (f *Fabric) samplesControl(nd *node, set bool, data []byte) uint16 {
	var req iba.PortSamplesControl
	req.Unmarshal(data)
	if set {
		rng, ok := f.pmaPorts(nd, req.PortSelect)
		if !ok {
			return statusInvalidField
		}
		for _, cs := range req.CounterSelect {
			if cs > selXmitWait {
				return statusInvalidField
			}
		}
		s := f.samplerOf(nd, true)
		s.mu.Lock()
		if s.status == sampleDone {
			s.ctl = req
			s.lo, s.hi = rng[0], rng[1]
			s.startLeft, s.intervalLeft = req.SampleStart, req.SampleInterval
			s.result = [15]uint64{}
			s.status = sampleStarted
			s.active.Store(true)
			s.advance(f, 0)
		}
		s.mu.Unlock()
	}
	var out iba.PortSamplesControl
	if s := f.samplerOf(nd, false); s != nil {
		s.mu.Lock()
		out = s.ctl
		out.SampleStatus = s.status
		s.mu.Unlock()
	} else {
		out.PortSelect = req.PortSelect
	}
	out.OpCode = 0
	out.CounterWidth = samplesWidth32
	out.CounterMask0, out.CounterMasks1to9, out.CounterMasks10to14 = samplesMask0, samplesMasks1_9, samplesMasks10
	out.SampleMechanisms = 0
	out.OptionMask, out.VendorMask, out.SamplesOnlyOptionMask = 0, 0, 0
	clear(data)
	out.MarshalTo(data)
	return 0
}

// samplesResult answers PortSamplesResult (IBA 16.1.3.4, 32-bit counters
// that stop at their maximum) and PortSamplesResultExtended (IBA
// 16.1.4.10, 64-bit): the Tag and status of the sample, and its counters
// once it is done (zero while it runs).
func (f *Fabric) samplesResult(nd *node, ext bool, data []byte) {
	var tag uint16
	var status uint8
	var res [15]uint64
	if s := f.samplerOf(nd, false); s != nil {
		s.mu.Lock()
		tag, status = s.ctl.Tag, s.status
		if status == sampleDone {
			res = s.result
		}
		s.mu.Unlock()
	}
	clear(data)
	if ext {
		out := iba.PortSamplesResultExtended{Tag: tag, SampleStatus: status, ExtendedWidth: 1, Counter: res}
		out.MarshalTo(data)
		return
	}
	out := iba.PortSamplesResult{Tag: tag, SampleStatus: status}
	for k, v := range res {
		out.Counter[k] = uint32(sat(v, 32))
	}
	out.MarshalTo(data)
}
