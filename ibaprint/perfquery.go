package ibaprint

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
)

// The perfquery renderers print what perfquery prints below its "# Port
// counters: Lid 2 port 1 (CapMask: 0x1400)"-style header, which is the
// caller's (libibmad mad_dump_perfcounters*, rdma-core 44).

func shortBlock(t *Table, b []byte) error {
	return &iba.DecodeError{Struct: t.s.Name, Offset: len(b), Reason: fmt.Sprintf("buffer has %d bytes, need %d", len(b), t.need)}
}

// PerfMgt ClassPortInfo:CapabilityMask and CapabilityMask2 bits perfquery
// looks at (IBA 16.1.2, table 230; libibmad iba_types.h).
const (
	PMCapExtWidth        = 1 << 9  // PortCountersExtended has the unicast and multicast counters
	PMCapExtWidthNoIETF  = 1 << 10 // PortCountersExtended without the IETF counters
	PMCapXmitWait        = 1 << 12 // PortCounters:PortXmitWait is counted
	PMCap2AddlPortCtrExt = 1 << 1  // PortCountersExtended has the error counters too
)

// The PortCounters rows, as mad_dump_perfcounters orders them. libibmad's
// QP1Dropped field is declared at bit 160 without the BITSOFFS conversion
// its neighbours get, so it reads bytes 22-23: perfquery prints
// VL15Dropped's value under the QP1Dropped label. The path says so.
var perfPortCounters = libibmad("PortCounters",
	Row{"PortSelect", "portSelect", diagUint, 0},
	Row{"CounterSelect", "counterSelect", diagHex, 0},
	Row{"SymbolErrorCounter", "symbolErrorCounter", diagUint, 0},
	Row{"LinkErrorRecoveryCounter", "linkErrorRecoveryCounter", diagUint, 0},
	Row{"LinkDownedCounter", "linkDownedCounter", diagUint, 0},
	Row{"PortRcvErrors", "portRcvErrors", diagUint, 0},
	Row{"PortRcvRemotePhysicalErrors", "portRcvRemotePhysicalErrors", diagUint, 0},
	Row{"PortRcvSwitchRelayErrors", "portRcvSwitchRelayErrors", diagUint, 0},
	Row{"PortXmitDiscards", "portXmitDiscards", diagUint, 0},
	Row{"PortXmitConstraintErrors", "portXmitConstraintErrors", diagUint, 0},
	Row{"PortRcvConstraintErrors", "portRcvConstraintErrors", diagUint, 0},
	Row{"CounterSelect2", "counterSelect2", diagHex, 0},
	Row{"LocalLinkIntegrityErrors", "localLinkIntegrityErrors", diagUint, 0},
	Row{"ExcessiveBufferOverrunErrors", "excessiveBufferOverrunErrors", diagUint, 0},
	Row{"QP1Dropped", "VL15Dropped", diagUint, 0},
	Row{"VL15Dropped", "VL15Dropped", diagUint, 0},
	Row{"PortXmitData", "portXmitData", diagUint, 0},
	Row{"PortRcvData", "portRcvData", diagUint, 0},
	Row{"PortXmitPkts", "portXmitPkts", diagUint, 0},
	Row{"PortRcvPkts", "portRcvPkts", diagUint, 0},
	Row{"PortXmitWait", "portXmitWait", diagUint, 0},
)

// PortCounters prints PortCounters (IBA 16.1.3.5) as `perfquery` does.
// capMask is the PerfMgt ClassPortInfo:CapabilityMask: without
// PMCapXmitWait perfquery shows PortXmitWait as 0.
func PortCounters(w io.Writer, b []byte, capMask uint16) error {
	if capMask&PMCapXmitWait == 0 {
		if err := perfPortCounters.resolve(); err != nil {
			return err
		}
		if len(b) >= perfPortCounters.need {
			c := append([]byte(nil), b...)
			ref := perfPortCounters.refs[len(perfPortCounters.refs)-1]
			for i := 0; i < ref.Bits(); i++ {
				c[(ref.Off+i)/8] &^= 0x80 >> ((ref.Off + i) % 8)
			}
			b = c
		}
	}
	return perfPortCounters.Render(w, b)
}

var (
	perfExtBase = libibmad("PortCountersExtended",
		Row{"PortSelect", "portSelect", diagUint, 0},
		Row{"CounterSelect", "counterSelect", diagHex, 0},
		Row{"PortXmitData", "portXmitData", diagUint, 0},
		Row{"PortRcvData", "portRcvData", diagUint, 0},
		Row{"PortXmitPkts", "portXmitPkts", diagUint, 0},
		Row{"PortRcvPkts", "portRcvPkts", diagUint, 0},
	)
	perfExtWidth = libibmad("PortCountersExtended",
		Row{"PortUnicastXmitPkts", "portUnicastXmitPkts", diagUint, 0},
		Row{"PortUnicastRcvPkts", "portUnicastRcvPkts", diagUint, 0},
		Row{"PortMulticastXmitPkts", "portMulticastXmitPkts", diagUint, 0},
		Row{"PortMulticastRcvPkts", "portMulticastRcvPkts", diagUint, 0},
	)
	// perfExtAddl are the error counters IBA 1.3 added to
	// PortCountersExtended (IBA 16.1.4.11).
	perfExtAddl = libibmad("PortCountersExtended",
		Row{"CounterSelect2", "counterSelect2", diagHex, 0},
		Row{"SymbolErrorCounter", "symbolErrorCounter", diagUint, 0},
		Row{"LinkErrorRecoveryCounter", "linkErrorRecoveryCounter", diagUint, 0},
		Row{"LinkDownedCounter", "linkDownedCounter", diagUint, 0},
		Row{"PortRcvErrors", "portRcvErrors", diagUint, 0},
		Row{"PortRcvRemotePhysicalErrors", "portRcvRemotePhysicalErrors", diagUint, 0},
		Row{"PortRcvSwitchRelayErrors", "portRcvSwitchRelayErrors", diagUint, 0},
		Row{"PortXmitDiscards", "portXmitDiscards", diagUint, 0},
		Row{"PortXmitConstraintErrors", "portXmitConstraintErrors", diagUint, 0},
		Row{"PortRcvConstraintErrors", "portRcvConstraintErrors", diagUint, 0},
		Row{"LocalLinkIntegrityErrors", "localLinkIntegrityErrors", diagUint, 0},
		Row{"ExcessiveBufferOverrunErrors", "excessiveBufferOverrunErrors", diagUint, 0},
		Row{"VL15Dropped", "VL15Dropped", diagUint, 0},
		Row{"PortXmitWait", "portXmitWait", diagUint, 0},
		Row{"QP1Dropped", "QP1Dropped", diagUint, 0},
	)
)

// PortCountersExtended prints PortCountersExtended (IBA 16.1.4.11) as
// `perfquery -x` does: the unicast and multicast counters only when capMask
// has PMCapExtWidth, the error counters only when capMask2 has
// PMCap2AddlPortCtrExt.
func PortCountersExtended(w io.Writer, b []byte, capMask uint16, capMask2 uint32) error {
	var sb strings.Builder
	if err := perfExtBase.Render(&sb, b); err != nil {
		return err
	}
	if capMask&PMCapExtWidth != 0 {
		if err := perfExtWidth.Render(&sb, b); err != nil {
			return err
		}
	}
	if capMask2&PMCap2AddlPortCtrExt != 0 {
		if err := perfExtAddl.Render(&sb, b); err != nil {
			return fmt.Errorf("the error counters of PortCountersExtended: %w", err)
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// perfSelect is the PortSelect and CounterSelect pair every per-attribute
// perfquery dump starts with (IB_PC_EXT_PORT_SELECT_F, COUNTER_SELECT_F).
var perfSelect = []Row{
	{"PortSelect", "portSelect", diagUint, 0},
	{"CounterSelect", "counterSelect", diagHex, 0},
}

func perfTable(st string, rows ...Row) *Table {
	return libibmad(st, append(append([]Row{}, perfSelect...), rows...)...)
}

// arrayRows gives one row per element, labelled like libibmad's
// XmtDataSL0 ... XmtDataSL15.
func arrayRows(label, path string, n int) []Row {
	rows := make([]Row, n)
	for i := range rows {
		rows[i] = Row{fmt.Sprintf("%s%d", label, i), fmt.Sprintf("%s[%d]", path, i), diagUint, 0}
	}
	return rows
}

// perfQueries are the per-attribute perfquery forms, by the name perfquery
// prints in their header ("# PortXmitDataSL counters: ...").
var perfQueries = map[string]*Table{
	// perfquery -X
	"PortXmitDataSL": perfTable("PortXmitDataSL", arrayRows("XmtDataSL", "portXmitDataSL", 16)...),
	// perfquery -S
	"PortRcvDataSL": perfTable("PortRcvDataSL", arrayRows("RcvDataSL", "portRcvDataSL", 16)...),
	// perfquery -D
	"PortXmitDiscardDetails": perfTable("PortXmitDiscardDetails",
		Row{"PortInactiveDiscards", "portInactiveDiscards", diagUint, 0},
		Row{"PortNeighborMTUDiscards", "portNeighborMTUDiscards", diagUint, 0},
		Row{"PortSwLifetimeLimitDiscards", "portSwLifetimeLimitDiscards", diagUint, 0},
		Row{"PortSwHOQLifetimeLimitDiscards", "portSwHOQLifetimeLimitDiscards", diagUint, 0},
	),
	// perfquery -E
	"PortRcvErrorDetails": perfTable("PortRcvErrorDetails",
		Row{"PortLocalPhysicalErrors", "portLocalPhysicalErrors", diagUint, 0},
		Row{"PortMalformedPktErrors", "portMalformedPacketErrors", diagUint, 0},
		Row{"PortBufferOverrunErrors", "portBufferOverrunErrors", diagUint, 0},
		Row{"PortDLIDMappingErrors", "portDLIDMappingErrors", diagUint, 0},
		Row{"PortVLMappingErrors", "portVLMappingErrors", diagUint, 0},
		Row{"PortLoopingErrors", "portLoopingErrors", diagUint, 0},
	),
	// perfquery --oprcvcounters
	"PortOpRcvCounters": perfTable("PortOpRcvCounters",
		Row{"PortOpRcvPkts", "portOpRcvPkts", diagUint, 0},
		Row{"PortOpRcvData", "portOpRcvData", diagUint, 0},
	),
	// perfquery --flowctlcounters
	"PortFlowCtlCounters": perfTable("PortFlowCtlCounters",
		Row{"PortXmitFlowPkts", "portXmitFlowPkts", diagUint, 0},
		Row{"PortRcvFlowPkts", "portRcvFlowPkts", diagUint, 0},
	),
	// perfquery --vloppackets, --vlopdata, --vlxmitflowctlerrors,
	// --vlxmitcounters, --swportvlcong
	"PortVLOpPackets":               perfTable("PortVLOpPackets", arrayRows("PortVLOpPackets", "portVLOpPackets", 16)...),
	"PortVLOpData":                  perfTable("PortVLOpData", arrayRows("PortVLOpData", "portVLOpData", 16)...),
	"PortVLXmitFlowCtlUpdateErrors": perfTable("PortVLXmitFlowCtlUpdateErrors", arrayRows("PortVLXmitFlowCtlUpdateErrors", "portVLXmitFlowCtlUpdateErrors", 16)...),
	"PortVLXmitWaitCounters":        perfTable("PortVLXmitWaitCounters", arrayRows("PortVLXmitWait", "portVLXmitWait", 16)...),
	"SwPortVLCongestion":            perfTable("SwPortVLCongestion", arrayRows("SWPortVLCongestion", "swPortVLCongestion", 16)...),
}

// PerfQueryNames lists the attributes PerfQuery renders.
func PerfQueryNames() []string {
	var n []string
	for k := range perfQueries {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// PerfQuery prints a PerfMgt attribute as perfquery's per-attribute options
// do (-X PortXmitDataSL, -S PortRcvDataSL, -D PortXmitDiscardDetails, -E
// PortRcvErrorDetails, --oprcvcounters, --flowctlcounters, --vloppackets,
// --vlopdata, --vlxmitflowctlerrors, --vlxmitcounters, --swportvlcong).
func PerfQuery(w io.Writer, attr string, b []byte) error {
	for k, t := range perfQueries {
		if strings.EqualFold(k, attr) {
			return t.Render(w, b)
		}
	}
	return fmt.Errorf("perfquery has no dump of %q; it has %s", attr, strings.Join(PerfQueryNames(), ", "))
}
