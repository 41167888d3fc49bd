package sim

import (
	"bytes"
	"encoding/binary"
	"sync"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

// The general services every simulated node's agent answers besides the
// PMA: the OpenIB vendor classes of ibping (0x32) and ibsysstat (0x33),
// and congestion control (class 0x21, IBA annex A10). A server agent
// registered for the class at the port (a real ibping -S through package
// ibsimserver, say) takes precedence.

const (
	classCC      = uint8(iba.ClassCongestionCtl)
	classPing    = 0x32
	classSysStat = 0x33
	ouiOpenIB    = 0x001405
	offVendOUI   = 37
	offVendData  = 40
	offCCKey     = 24
	offCCData    = 64

	sysStatPing     = 0x10
	sysStatHostInfo = 0x11
	sysStatCPUInfo  = 0x12

	ccAttrClassPortInfo = 0x0001
	ccAttrInfo          = 0x0011
	ccAttrKeyInfo       = 0x0012
	ccAttrLog           = 0x0013
	ccAttrSwitchSetting = 0x0014
	ccAttrSwitchPort    = 0x0015
	ccAttrCASetting     = 0x0016
	ccAttrTable         = 0x0017
	ccAttrTimeStamp     = 0x0018
	ccTableBlocks       = 2 // CongestionInfo:ControlTableCap, blocks of 64 entries
)

// hostName is what a node's vendor agents call their host: its
// NodeDescription up to the first space ("hca1 HCA-1" is host hca1).
func (f *Fabric) hostName(nd *node) []byte {
	d := nd.desc[:]
	if i := bytes.IndexByte(d, 0); i >= 0 {
		d = d[:i]
	}
	if i := bytes.IndexByte(d, ' '); i > 0 {
		d = d[:i]
	}
	return d
}

// vendor answers the OpenIB ping and sysstat classes (the layouts of
// infiniband-diags' ibping.c and ibsysstat.c).
func (f *Fabric) vendor(to int32, m *msg) int {
	b := m.buf[:]
	nd := &f.nodes[f.ports[to].node]
	if b[2] != 1 {
		setResponse(b, statusBadVersion)
		return served
	}
	if b[offMethod] != methodGet {
		setResponse(b, statusMethodUnsupp)
		return served
	}
	oui := uint32(b[offVendOUI])<<16 | uint32(b[offVendOUI+1])<<8 | uint32(b[offVendOUI+2])
	if oui != ouiOpenIB {
		setResponse(b, statusMethodAttrUnsup)
		return served
	}
	clear(b[24:36]) // no RMPP in the reply
	data := b[offVendData:]
	attr := binary.BigEndian.Uint16(b[offAttrID:])
	switch {
	case b[offClass] == classPing:
		clear(data)
		copy(data[:len(data)-1], f.hostName(nd))
	case attr == sysStatPing:
		// The data comes back as it was.
	case attr == sysStatHostInfo:
		clear(data)
		copy(data[:len(data)-1], f.hostName(nd))
	case attr == sysStatCPUInfo:
		clear(data)
		copy(data, "cpu 0: model fabricsim MHZ 1000\n")
	default:
		setResponse(b, statusMethodAttrUnsup)
		return served
	}
	setResponse(b, 0)
	return served
}

// ccState is a node's congestion control state, made on its first Set.
type ccState struct {
	key      iba.CongestionKeyInfo
	sw       iba.SwitchCongestionSetting
	swPorts  []iba.SwitchPortCongestionSettingElement // by port
	ca       iba.CACongestionSetting
	table    [ccTableBlocks * 64]iba.CongestionControlTableEntry
	tableTop uint16
}

type ccStore struct {
	mu    sync.Mutex
	nodes map[int32]*ccState
	start time.Time
}

// cc is the congestion control agent (IBA A10.4): Get and Set of the
// settings, checked against the CC_Key (A10.4.1.1: a mismatch is dropped
// and counted, like an M_Key violation).
func (f *Fabric) cc(to int32, m *msg) int {
	b := m.buf[:]
	n := f.ports[to].node
	nd := &f.nodes[n]
	method := b[offMethod]
	if b[2] != 2 {
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
	data := b[offCCData:]
	s := &f.ccs
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.nodes[n]
	if st == nil {
		st = &ccState{}
		if nd.sw != nil {
			st.swPorts = make([]iba.SwitchPortCongestionSettingElement, int(nd.numPorts)+1)
		}
		if set {
			if s.nodes == nil {
				s.nodes = map[int32]*ccState{}
			}
			s.nodes[n] = st
		}
	}
	if st.key.CCKey != 0 && binary.BigEndian.Uint64(b[offCCKey:]) != st.key.CCKey && (set || st.key.CCKeyProtectBit == 1) {
		st.key.CCKeyViolations++
		return drop
	}
	var status uint16
	var a iba.Attribute
	switch attr {
	case ccAttrClassPortInfo:
		if set {
			status = statusMethodAttrUnsup
			break
		}
		a = &iba.ClassPortInfo{BaseVersion: 1, ClassVersion: 2, RespTimeValue: pmaRespTime}
	case ccAttrInfo:
		if set {
			status = statusMethodAttrUnsup
			break
		}
		info := &iba.CongestionInfo{ControlTableCap: ccTableBlocks}
		if nd.sw != nil {
			info.CongestionInfo = 1 // credit starvation supported
		}
		a = info
	case ccAttrKeyInfo:
		if set {
			st.key.Unmarshal(data)
		}
		a = &st.key
	case ccAttrLog:
		if set {
			status = statusMethodAttrUnsup
			break
		}
		// An empty log of the node's type (A10.4.3.5), in the log area.
		clear(b[32:])
		b[32] = 2
		if nd.sw != nil {
			b[32] = 1
		}
		setResponse(b, 0)
		return served
	case ccAttrSwitchSetting:
		if nd.sw == nil {
			status = statusMethodAttrUnsup
			break
		}
		if set {
			st.sw.Unmarshal(data)
		}
		a = &st.sw
	case ccAttrSwitchPort:
		if nd.sw == nil || int(mod)*32 > int(nd.numPorts) {
			status = statusInvalidField
			break
		}
		var blk iba.SwitchPortCongestionSetting
		if set {
			blk.Unmarshal(data)
		}
		for i := range blk.Block {
			p := int(mod)*32 + i
			if p >= len(st.swPorts) {
				break
			}
			if set {
				st.swPorts[p] = blk.Block[i]
			}
			blk.Block[i] = st.swPorts[p]
		}
		a = &blk
	case ccAttrCASetting:
		if nd.sw != nil {
			status = statusMethodAttrUnsup
			break
		}
		if set {
			var x iba.CACongestionSetting
			x.Unmarshal(data)
			st.ca.PortControl = x.PortControl
			for sl := range x.EntryList {
				if x.ControlMap&(1<<sl) != 0 {
					st.ca.EntryList[sl] = x.EntryList[sl]
				}
			}
		}
		a = &st.ca
	case ccAttrTable:
		if mod >= ccTableBlocks {
			status = statusInvalidField
			break
		}
		var t iba.CongestionControlTable
		if set {
			t.Unmarshal(data)
			st.tableTop = t.CCTILimit
			copy(st.table[mod*64:], t.EntryList[:])
		}
		t.CCTILimit = st.tableTop
		copy(t.EntryList[:], st.table[mod*64:(mod+1)*64])
		a = &t
	case ccAttrTimeStamp:
		if set {
			status = statusMethodAttrUnsup
			break
		}
		// Units of 1.024 microseconds since the fabric was built.
		a = &iba.TimeStamp{TimeStamp: uint32(time.Since(s.start).Nanoseconds() / 1024)}
	default:
		status = statusMethodAttrUnsup
	}
	if a != nil {
		clear(data)
		a.MarshalTo(data)
	}
	setResponse(b, status)
	return served
}
