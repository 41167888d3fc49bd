package sim

import (
	"encoding/binary"
	"fmt"
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
}

// PortErrors are counts to add to a port's error counters (InjectErrors).
type PortErrors struct {
	SymbolErrors, LinkErrorRecovery, LinkDowned, RcvErrors, RcvRemotePhysErrors   uint64
	RcvSwitchRelayErrors, XmitDiscards, XmitConstraintErrors, RcvConstraintErrors uint64
	LocalLinkIntegrityErrors, ExcessiveBufferOverrun, VL15Dropped, XmitWait       uint64
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
// of every port on the way. It fails when the LID cannot be reached.
func (f *Fabric) Traffic(nodeName string, portNum int, dlid uint16, packets, bytes uint64) error {
	i, err := f.portIndex(nodeName, portNum)
	if err != nil {
		return fmt.Errorf("traffic: %w", err)
	}
	dw := bytes / 4
	cur := i
	for h := 0; h < maxHops; h++ {
		p := &f.ports[cur]
		nd := &f.nodes[p.node]
		nd.mu.RLock()
		out := int32(-1)
		if sw := nd.sw; sw != nil {
			if f.owns(&f.ports[nd.base], dlid) {
				nd.mu.RUnlock()
				return nil
			}
			if int(dlid) < len(sw.lft) && dlid <= sw.lftTop && sw.lft[dlid] != 0 && sw.lft[dlid] <= nd.numPorts {
				out = nd.base + int32(sw.lft[dlid])
			}
		} else if f.owns(p, dlid) {
			nd.mu.RUnlock()
			return nil
		} else if h == 0 {
			out = cur
		}
		ok := out >= 0 && linkOK(&f.ports[out], false)
		nd.mu.RUnlock()
		if !ok {
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
		cur = o.peer
	}
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
	case pmAttrRcvErrDetails, pmAttrXmitDiscDet, pmAttrOpRcv, pmAttrFlowCtl, pmAttrVLOpPackets,
		pmAttrVLOpData, pmAttrVLFlowCtlErr, pmAttrVLXmitWait:
		// The model keeps no per-VL or per-opcode counts: these read 0.
		if _, ok := f.pmaPorts(nd, data[1]); !ok {
			status = statusInvalidField
			break
		}
		clear(data[4:])
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
