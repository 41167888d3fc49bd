package ibaprint

import (
	"io"
	"strings"
)

// The saquery renderers print one record as saquery (infiniband-diags
// saquery.c, rdma-core 44) does with no selection option: the
// "<Record> dump:" line, then two tabs, the label, dots to the value column
// and the value in saquery's printf format.

func saTable(st string, width int, rows ...Row) *Table {
	return &Table{Struct: st, Lead: "\t\t", Width: width, Rows: rows}
}

// lit is a literal line of a saquery dump ("\t\tRID").
func lit(s string) Row { return Row{Label: s} }

var saNodeRecord = saTable("NodeRecord", 24,
	lit("NodeRecord dump:"),
	Row{"lid", "LID", saUint, 0},
	Row{"reserved", "reserved_16", saHexUp, 0},
	Row{"base_version", "nodeInfo.baseVersion", saHexUp, 0},
	Row{"class_version", "nodeInfo.classVersion", saHexUp, 0},
	Row{"node_type", "nodeInfo.nodeType", saNodeType, 0},
	Row{"num_ports", "nodeInfo.numPorts", saUint, 0},
	Row{"sys_guid", "nodeInfo.systemImageGUID", saGUID, 0},
	Row{"node_guid", "nodeInfo.nodeGUID", saGUID, 0},
	Row{"port_guid", "nodeInfo.portGUID", saGUID, 0},
	Row{"partition_cap", "nodeInfo.partitionCap", saHexUp, 0},
	Row{"device_id", "nodeInfo.deviceID", saHexUp, 0},
	Row{"revision", "nodeInfo.revision", saHexUp, 0},
	Row{"port_num", "nodeInfo.localPortNum", saUint, 0},
	Row{"vendor_id", "nodeInfo.vendorID", saHexUp, 0},
	Row{"NodeDescription", "nodeDescription.nodeString", saNodeDesc, 0},
)

// saquery prints some PathRecord bytes whole: hop_flow_raw is the word of
// RawTraffic, FlowLabel and HopLimit, num_path_revers the byte of Reversible
// and NumbPath, mtu, rate and pkt_life carry their selectors, and resv2 is
// the last six bytes.
var saPathRecord = saTable("PathRecord", 24,
	lit("PathRecord dump:"),
	Row{"service_id", "serviceID", saGUID, 0},
	Row{"dgid", "DGID", saGID, 0},
	Row{"sgid", "SGID", saGID, 0},
	Row{"dlid", "DLID", saUint, 0},
	Row{"slid", "SLID", saUint, 0},
	Row{"hop_flow_raw", "rawTraffic", saHexUp, 32},
	Row{"tclass", "TClass", saHexUp, 0},
	Row{"num_path_revers", "reversible", saHexUp, 8},
	Row{"pkey", "PKey", saHexUp, 0},
	Row{"qos_class", "QOSClass", saHexUp, 0},
	Row{"sl", "SL", saHexUp, 0},
	Row{"mtu", "MTUSelector", saHexUp, 8},
	Row{"rate", "rateSelector", saHexUp, 8},
	Row{"pkt_life", "packetLifeTimeSelector", saHexUp, 8},
	Row{"preference", "preference", saHexUp, 0},
	Row{"resv2", "reversePathPKeyMemberBit", saHexBytes, 48},
)

// PortInfoRecord: the RID in saquery's columns, then PortInfo exactly as
// smpquery prints it, indented by two tabs. Options is the byte IBA 1.3
// gave to PortInfoRecord after PortNum.
var (
	saPortInfoRID = &Table{Struct: "PortInfoRecord", Lead: "\t\t", Width: 24, Rows: []Row{
		lit("PortInfoRecord dump:"),
		lit("\tRID"),
		{"EndPortLid", "endportLID", saUint, 0},
		{"PortNum", "portNum", saUint, 0},
		{"Options", "reserved_24", saHexLo, 0},
		lit("\tPortInfo dump:"),
	}}
	saPortInfoBody = &Table{Struct: "PortInfoRecord", Lead: "\t\t", Colon: true, Width: 33, Rows: prefixRows("portInfo.", portInfoRows(diagNotDisplayed))}
)

func prefixRows(prefix string, rows []Row) []Row {
	out := make([]Row, len(rows))
	for i, r := range rows {
		r.Path = prefix + r.Path
		out[i] = r
	}
	return out
}

var saLinkRecord = saTable("LinkRecord", 27,
	lit("LinkRecord dump:"),
	Row{"FromLID", "fromLID", saUint, 0},
	Row{"FromPort", "fromPort", saUint, 0},
	Row{"ToPort", "toPort", saUint, 0},
	Row{"ToLID", "toLID", saUint, 0},
)

var saSMInfoRecord = saTable("SMInfoRecord", 22,
	lit("SMInfoRecord dump:"),
	lit("\t\tRID"),
	Row{"LID", "LID", saUint, 0},
	lit("\t\tSMInfo dump:"),
	Row{"GUID", "SMInfo.GUID", saGUID, 0},
	Row{"SM_Key", "SMInfo.SMKey", saGUID, 0},
	Row{"ActCount", "SMInfo.actCount", saUint, 0},
	Row{"Priority", "SMInfo.priority", saUint, 0},
	Row{"SMState", "SMInfo.SMState", saUint, 0},
)

// SwitchInfoRecord prints some SwitchInfo bytes whole, as saquery does.
var saSwitchInfoRecord = saTable("SwitchInfoRecord", 40,
	lit("SwitchInfoRecord dump:"),
	lit("\t\tRID"),
	Row{"LID", "LID", saUint, 0},
	lit("\t\tSwitchInfo dump:"),
	Row{"LinearFDBCap", "switchInfo.linearFDBCap", saHexUp, 0},
	Row{"RandomFDBCap", "switchInfo.randomFDBCap", saHexUp, 0},
	Row{"MulticastFDBCap", "switchInfo.multicastFDBCap", saHexUp, 0},
	Row{"LinearFDBTop", "switchInfo.linearFDBTop", saHexUp, 0},
	Row{"DefaultPort", "switchInfo.defaultPort", saUint, 0},
	Row{"DefaultMulticastPrimaryPort", "switchInfo.defaultMulticastPrimaryPort", saUint, 0},
	Row{"DefaultMulticastNotPrimaryPort", "switchInfo.defaultMulticastNotPrimaryPort", saUint, 0},
	Row{"LifeTimeValue/PortStateChange/OpSL2VL", "switchInfo.lifeTimeValue", saHexUp, 8},
	Row{"LIDsPerPort", "switchInfo.LIDsPerPort", saHexUp, 0},
	Row{"PartitionEnforcementCap", "switchInfo.partitionEnforcementCap", saHexUp, 0},
	Row{"flags", "switchInfo.inboundEnforcementCap", saHexUp, 8},
)

var saSwitchInfoMcastTop = saTable("SwitchInfoRecord", 40,
	Row{"MulticastFDBTop", "switchInfo.multicastFDBTop", saHexUp, 0},
)

var saGUIDInfoRecord = saTable("GUIDInfoRecord", 27, append([]Row{
	lit("GUIDInfo Record dump:"),
	{"LID", "LID", saUint, 0},
	{"Block", "blockNum", saUint, 0},
}, guidRows()...)...)

func guidRows() []Row {
	rows := make([]Row, 8)
	for i := range rows {
		rows[i] = Row{"GUID " + string(rune('0'+i)), "GUIDInfo.GUIDBlock[" + string(rune('0'+i)) + "]", saGUID, 0}
	}
	return rows
}

// SANodeRecord prints a NodeRecord (IBA 15.2.5.2) as `saquery` does.
func SANodeRecord(w io.Writer, b []byte) error { return saNodeRecord.Render(w, b) }

// SAPathRecord prints a PathRecord (IBA 15.2.5.16) as `saquery -p` does.
func SAPathRecord(w io.Writer, b []byte) error { return saPathRecord.Render(w, b) }

// SAPortInfoRecord prints a PortInfoRecord (IBA 15.2.5.3) as
// `saquery PortInfoRecord` does.
func SAPortInfoRecord(w io.Writer, b []byte) error {
	var sb strings.Builder
	if err := saPortInfoRID.Render(&sb, b); err != nil {
		return err
	}
	if err := saPortInfoBody.Render(&sb, b); err != nil {
		return err
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// SALinkRecord prints a LinkRecord (IBA 15.2.5.13) as `saquery -o` does.
func SALinkRecord(w io.Writer, b []byte) error { return saLinkRecord.Render(w, b) }

// SASMInfoRecord prints an SMInfoRecord (IBA 15.2.5.10) as
// `saquery SMInfoRecord` does.
func SASMInfoRecord(w io.Writer, b []byte) error { return saSMInfoRecord.Render(w, b) }

// SASwitchInfoRecord prints a SwitchInfoRecord (IBA 15.2.5.5) as
// `saquery SWIR` does; mcastTop says whether the SA's ClassPortInfo
// CapabilityMask2 has IsMulticastFDBTopSupported, which adds a line.
func SASwitchInfoRecord(w io.Writer, b []byte, mcastTop bool) error {
	var sb strings.Builder
	if err := saSwitchInfoRecord.Render(&sb, b); err != nil {
		return err
	}
	if mcastTop {
		if err := saSwitchInfoMcastTop.Render(&sb, b); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// SAGUIDInfoRecord prints a GUIDInfoRecord (IBA 15.2.5.18) as
// `saquery GUIDInfoRecord` does.
func SAGUIDInfoRecord(w io.Writer, b []byte) error { return saGUIDInfoRecord.Render(w, b) }
