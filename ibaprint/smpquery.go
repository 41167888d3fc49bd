package ibaprint

import (
	"fmt"
	"io"
	"strings"
)

// The smpquery renderers print what smpquery (infiniband-diags) prints below
// its "# Node info: Lid 2"-style header line, which names the target and is
// the caller's to print. Labels and value formats are libibmad's
// (libibmad/fields.c and dump.c, rdma-core 56 as Debian trixie ships it;
// 44, Debian bookworm's, prints the same but for PortInfo's XDR lines).

func libibmad(st string, rows ...Row) *Table {
	return &Table{Struct: st, Colon: true, Width: 33, Rows: rows}
}

var nodeInfoRows = []Row{
	{"BaseVers", "baseVersion", diagUint, 0},
	{"ClassVers", "classVersion", diagUint, 0},
	{"NodeType", "nodeType", diagNodeType, 0},
	{"NumPorts", "numPorts", diagUint, 0},
	{"SystemGuid", "systemImageGUID", diagHex, 0},
	{"Guid", "nodeGUID", diagHex, 0},
	{"PortGuid", "portGUID", diagHex, 0},
	{"PartCap", "partitionCap", diagUint, 0},
	{"DevId", "deviceID", diagHex, 0},
	{"Revision", "revision", diagHex, 0},
	{"LocalPort", "localPortNum", diagUint, 0},
	{"VendorId", "vendorID", diagHex, 0},
}

var smpNodeInfo = libibmad("NodeInfo", nodeInfoRows...)

// portInfoRows is dump_portinfo of infiniband-diags: IB_PORT_FIRST_F to
// IB_PORT_LAST_F, then CapabilityMask2 and the extended speeds, then the
// XDR speeds (LinkSpeedExtActive2 and the rest; rdma-core 47 and later).
// mkey is the formatter of the M_Key line (hidden unless smpquery -K).
func portInfoRows(mkey Formatter) []Row {
	return []Row{
		{"Mkey", "MKey", mkey, 0},
		{"GidPrefix", "GIDPrefix", diagHex, 0},
		{"Lid", "LID", diagUint, 0},
		{"SMLid", "masterSMLID", diagUint, 0},
		{"CapMask", "capabilityMask", diagPortCapMask, 0},
		{"DiagCode", "diagCode", diagHex, 0},
		{"MkeyLeasePeriod", "MKeyLeasePeriod", diagUint, 0},
		{"LocalPort", "localPortNum", diagUint, 0},
		{"LinkWidthEnabled", "linkWidthEnabled", diagLinkWidthEn, 0},
		{"LinkWidthSupported", "linkWidthSupported", diagLinkWidthSup, 0},
		{"LinkWidthActive", "linkWidthActive", diagLinkWidth, 0},
		{"LinkSpeedSupported", "linkSpeedSupported", diagLinkSpeedList, 0},
		{"LinkState", "portState", diagPortState, 0},
		{"PhysLinkState", "portPhysicalState", diagPhysPortState, 0},
		{"LinkDownDefState", "linkDownDefaultState", diagLinkDownDefState, 0},
		{"ProtectBits", "MKeyProtectBits", diagUint, 0},
		{"LMC", "LMC", diagUint, 0},
		{"LinkSpeedActive", "linkSpeedActive", diagLinkSpeed, 0},
		{"LinkSpeedEnabled", "linkSpeedEnabled", diagLinkSpeedList, 0},
		{"NeighborMTU", "neighborMTU", diagMTU, 0},
		{"SMSL", "masterSMSL", diagUint, 0},
		{"VLCap", "VLCap", diagVLCap, 0},
		{"InitType", "initType", diagHex, 0},
		{"VLHighLimit", "VLHighLimit", diagUint, 0},
		{"VLArbHighCap", "VLArbitrationHighCap", diagUint, 0},
		{"VLArbLowCap", "VLArbitrationLowCap", diagUint, 0},
		{"InitReply", "initTypeReply", diagHex, 0},
		{"MtuCap", "MTUCap", diagMTU, 0},
		{"VLStallCount", "VLStallCount", diagUint, 0},
		{"HoqLife", "HOQLife", diagUint, 0},
		{"OperVLs", "operationalVLs", diagOperVLs, 0},
		{"PartEnforceInb", "partitionEnforcementInbound", diagUint, 0},
		{"PartEnforceOutb", "partitionEnforcementOutbound", diagUint, 0},
		{"FilterRawInb", "filterRawInbound", diagUint, 0},
		{"FilterRawOutb", "filterRawOutbound", diagUint, 0},
		{"MkeyViolations", "MKeyViolations", diagUint, 0},
		{"PkeyViolations", "PKeyViolations", diagUint, 0},
		{"QkeyViolations", "QKeyViolations", diagUint, 0},
		{"GuidCap", "GUIDCap", diagUint, 0},
		{"ClientReregister", "clientReregister", diagUint, 0},
		{"McastPkeyTrapSuppressionEnabled", "multicastPKeyTrapSuppressionEnabled", diagUint, 0},
		{"SubnetTimeout", "subnetTimeOut", diagUint, 0},
		{"RespTimeVal", "respTimeValue", diagUint, 0},
		{"LocalPhysErr", "localPhyErrors", diagUint, 0},
		{"OverrunErr", "overrunErrors", diagUint, 0},
		{"MaxCreditHint", "maxCreditHint", diagUint, 0},
		{"RoundTrip", "linkRoundTripLatency", diagUint, 0},
		{"CapabilityMask2", "capabilityMask2", diagPortCapMask2, 0},
		{"LinkSpeedExtActive", "linkSpeedExtActive", diagLinkSpeedExt, 0},
		{"LinkSpeedExtSupported", "linkSpeedExtSupported", diagLinkSpeedExtSup, 0},
		{"LinkSpeedExtEnabled", "linkSpeedExtEnabled", diagLinkSpeedExtEn, 0},
		{"LinkSpeedExtActive2", "linkSpeedExtActive2", diagLinkSpeedExt2, 0},
		{"LinkSpeedExtSupported2", "linkSpeedExtSupported2", diagLinkSpeedExt2List, 0},
		{"LinkSpeedExtEnabled2", "linkSpeedExtEnabled2", diagLinkSpeedExt2List, 0},
	}
}

var (
	smpPortInfo     = libibmad("PortInfo", portInfoRows(diagNotDisplayed)...)
	smpPortInfoKeys = libibmad("PortInfo", portInfoRows(diagHex)...)
)

var smpSwitchInfo = libibmad("SwitchInfo",
	Row{"LinearFdbCap", "linearFDBCap", diagUint, 0},
	Row{"RandomFdbCap", "randomFDBCap", diagUint, 0},
	Row{"McastFdbCap", "multicastFDBCap", diagUint, 0},
	Row{"LinearFdbTop", "linearFDBTop", diagUint, 0},
	Row{"DefPort", "defaultPort", diagUint, 0},
	Row{"DefMcastPrimPort", "defaultMulticastPrimaryPort", diagUint, 0},
	Row{"DefMcastNotPrimPort", "defaultMulticastNotPrimaryPort", diagUint, 0},
	Row{"LifeTime", "lifeTimeValue", diagUint, 0},
	Row{"StateChange", "portStateChange", diagUint, 0},
	Row{"OptSLtoVLMapping", "optimizedSLtoVLMappingProgramming", diagUint, 0},
	Row{"LidsPerPort", "LIDsPerPort", diagUint, 0},
	Row{"PartEnforceCap", "partitionEnforcementCap", diagUint, 0},
	Row{"InboundPartEnf", "inboundEnforcementCap", diagUint, 0},
	Row{"OutboundPartEnf", "outboundEnforcementCap", diagUint, 0},
	Row{"FilterRawInbound", "filterRawInboundCap", diagUint, 0},
	Row{"FilterRawOutbound", "filterRawOutboundCap", diagUint, 0},
	Row{"EnhancedPort0", "enhancedPort0", diagUint, 0},
	Row{"MulticastFDBTop", "multicastFDBTop", diagHex, 0},
)

// SMPNodeInfo prints NodeInfo (IBA 14.2.5.3) as `smpquery nodeinfo` does.
func SMPNodeInfo(w io.Writer, b []byte) error { return smpNodeInfo.Render(w, b) }

// SMPPortInfo prints PortInfo (IBA 14.2.5.6) as `smpquery portinfo` does,
// the M_Key hidden.
func SMPPortInfo(w io.Writer, b []byte) error { return smpPortInfo.Render(w, b) }

// SMPPortInfoKeys prints PortInfo with the M_Key, as `smpquery -K portinfo`.
func SMPPortInfoKeys(w io.Writer, b []byte) error { return smpPortInfoKeys.Render(w, b) }

// SMPSwitchInfo prints SwitchInfo (IBA 14.2.5.4) as `smpquery switchinfo`.
func SMPSwitchInfo(w io.Writer, b []byte) error { return smpSwitchInfo.Render(w, b) }

var smpNodeDesc = &Table{Struct: "NodeDescription", Rows: []Row{{"", "nodeString", saNodeDesc, 0}}}

// SMPNodeDesc prints NodeDescription (IBA 14.2.5.2) as `smpquery nodedesc`
// does: there the dots pad the description, not the label, to 32
// characters, and at least one dot is printed.
func SMPNodeDesc(w io.Writer, b []byte) error {
	var sb strings.Builder
	if err := smpNodeDesc.Render(&sb, b); err != nil {
		return err
	}
	desc := strings.TrimSuffix(sb.String(), "\n")
	dots := "."
	if len(desc) < 32 {
		dots = strings.Repeat(".", 32-len(desc))
	}
	_, err := fmt.Fprintf(w, "Node Description:%s%s\n", dots, desc)
	return err
}

var (
	pkeyBlock = &Table{Struct: "PKeyTable", Rows: []Row{{"", "PKeyBlock", nil, 0}}}
	guidBlock = &Table{Struct: "GUIDInfo", Rows: []Row{{"", "GUIDBlock", nil, 0}}}
	slvlBlock = &Table{Struct: "SLtoVLMappingTable", Rows: []Row{{"", "SLtoVL", nil, 0}}}
	vlaBlock  = &Table{Struct: "VLArbitrationTable", Rows: []Row{{"", "VLWeightBlock", nil, 0}}}
)

// elements reads every element of the one array a block table names,
// checking that each block holds the structure.
func elements(t *Table, blocks [][]byte) ([][]uint64, error) {
	if err := t.resolve(); err != nil {
		return nil, err
	}
	ref := t.refs[0]
	f := ref.Field
	out := make([][]uint64, len(blocks))
	for i, b := range blocks {
		if len(b) < t.need {
			return nil, fmt.Errorf("block %d: %w", i, shortBlock(t, b))
		}
		for k := 0; k < f.Count; k++ {
			out[i] = append(out[i], getBits(b, ref.Off+k*f.Bits, f.Bits))
		}
	}
	return out, nil
}

// PKeys prints P_KeyTable blocks (IBA 14.2.5.7) as `smpquery pkeys` does:
// capacity is the partition capacity smpquery reads from NodeInfo (or
// SwitchInfo for a switch's external port) and blocks are the
// (capacity+31)/32 tables in order.
func PKeys(w io.Writer, blocks [][]byte, capacity int) error {
	els, err := elements(pkeyBlock, blocks)
	if err != nil {
		return err
	}
	nb := (capacity + 31) / 32
	if len(els) < nb {
		return fmt.Errorf("P_Key capacity %d needs %d blocks, have %d", capacity, nb, len(els))
	}
	var sb strings.Builder
	for i := 0; i < nb; i++ {
		k := 32
		if i+1 == nb {
			k = ((capacity + 7 - i*32) / 8) * 8
		}
		for j := 0; j < k && j+8 <= len(els[i]); j += 8 {
			fmt.Fprintf(&sb, "%4d:", i*32+j)
			for _, v := range els[i][j : j+8] {
				fmt.Fprintf(&sb, " 0x%04x", v)
			}
			sb.WriteByte('\n')
		}
	}
	fmt.Fprintf(&sb, "%d pkeys capacity for this port\n", capacity)
	_, err = io.WriteString(w, sb.String())
	return err
}

// GUIDInfo prints GUIDInfo blocks (IBA 14.2.5.5) as `smpquery guids` does;
// capacity is PortInfo:GUIDCap.
func GUIDInfo(w io.Writer, blocks [][]byte, capacity int) error {
	els, err := elements(guidBlock, blocks)
	if err != nil {
		return err
	}
	nb := (capacity + 7) / 8
	if len(els) < nb {
		return fmt.Errorf("GUID capacity %d needs %d blocks, have %d", capacity, nb, len(els))
	}
	var sb strings.Builder
	for i := 0; i < nb; i++ {
		k := 8
		if i+1 == nb {
			k = ((capacity + 1 - i*8) / 2) * 2
		}
		for j := 0; j < k && j+2 <= len(els[i]); j += 2 {
			fmt.Fprintf(&sb, "%4d: 0x%016x 0x%016x\n", i*8+j, els[i][j], els[i][j+1])
		}
	}
	fmt.Fprintf(&sb, "%d guids capacity for this port\n", capacity)
	_, err = io.WriteString(w, sb.String())
	return err
}

// SL2VLEntry is one SLtoVLMappingTable (IBA 14.2.5.8) of a switch's input
// and output port pair (0, 0 on a channel adapter).
type SL2VLEntry struct {
	In, Out int
	Table   []byte
}

// SL2VL prints SLtoVLMappingTables as `smpquery sl2vl` does, below its
// "# SL2VL table: <target>" line.
func SL2VL(w io.Writer, entries []SL2VLEntry) error {
	blocks := make([][]byte, len(entries))
	for i, e := range entries {
		blocks[i] = e.Table
	}
	els, err := elements(slvlBlock, blocks)
	if err != nil {
		return err
	}
	var sb strings.Builder
	sb.WriteString("#                 SL: |")
	for i := 0; i < 16; i++ {
		fmt.Fprintf(&sb, "%2d|", i)
	}
	sb.WriteByte('\n')
	for i, e := range entries {
		fmt.Fprintf(&sb, "ports: in %2d, out %2d: |", e.In, e.Out)
		for _, v := range els[i] {
			fmt.Fprintf(&sb, "%2d|", v)
		}
		sb.WriteByte('\n')
	}
	_, err = io.WriteString(w, sb.String())
	return err
}

// VLArb prints one priority's VLArbitrationTable blocks (IBA 14.2.5.9) as
// `smpquery vlarb` does: name is "Low" or "High", capacity is
// PortInfo:VLArbitrationLowCap or HighCap, blocks the one or two tables.
func VLArb(w io.Writer, name string, blocks [][]byte, capacity int) error {
	els, err := elements(vlaBlock, blocks)
	if err != nil {
		return err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s priority VL Arbitration Table:", name)
	for i, n := 0, capacity; n > 0 && i < 2; i, n = i+1, n-32 {
		if i >= len(els) {
			return fmt.Errorf("VL arbitration capacity %d needs %d blocks, have %d", capacity, i+1, len(els))
		}
		k := min(n, 32, len(els[i]))
		// Each entry is a 16-bit element: VL in the low nibble of the
		// first byte, weight in the second.
		sb.WriteString("\nVL    : |")
		for _, v := range els[i][:k] {
			fmt.Fprintf(&sb, "0x%-2X|", (v>>8)&0xf)
		}
		sb.WriteString("\nWEIGHT: |")
		for _, v := range els[i][:k] {
			fmt.Fprintf(&sb, "0x%-2X|", v&0xff)
		}
		sb.WriteByte('\n')
	}
	_, err = io.WriteString(w, sb.String())
	return err
}
