package iba

import (
	"strings"
	"testing"
)

// The vectors below are replies captured from ibsim 0.10 and OpenSM 3.3.23
// (Debian bookworm) on ibsim's net.2sw2path4hca example fabric, through the C
// smpquery, perfquery and saquery (their -dddd packet dumps) and smpdump.
// Each asserted value was also checked against what the C tool printed for
// it. SA replies are cut after the first record (ibsim carries 256-byte MADs
// only); trailing zero bytes are left out and restored by vector().

// vector decodes hex lines into a MAD, zero padded to 256 bytes.
func vector(t *testing.T, lines ...string) []byte {
	t.Helper()
	b := hexBytes(t, lines...)
	return append(b, make([]byte, 256-len(b))...)
}

func TestVectorNodeInfoCA(t *testing.T) {
	m := vector(t,
		"01 01 01 81 00 00 00 00 00 01 00 00 4b a9 d6 4d",
		"00 11 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"01 01 01 02 00 00 00 00 00 10 00 00 00 00 00 00",
		"00 10 00 00 00 00 00 00 00 10 00 01 00 40 00 00",
		"00 00 00 a1 01 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 25 00 00 00 00 00 00 00",
		"00 40 6b f2 07 00 00 00 00 00 00 00 00 00 00 00",
	)
	var ni NodeInfo
	if err := ni.Unmarshal(m[64:]); err != nil {
		t.Fatal(err)
	}
	expect(t, "BaseVersion", ni.BaseVersion, 1)
	expect(t, "ClassVersion", ni.ClassVersion, 1)
	expect(t, "NodeType", ni.NodeType, NodeTypeCA)
	expect(t, "NumPorts", ni.NumPorts, 2)
	expect(t, "SystemImageGUID", ni.SystemImageGUID, GUID(0x100000))
	expect(t, "NodeGUID", ni.NodeGUID, GUID(0x100000))
	expect(t, "PortGUID", ni.PortGUID, GUID(0x100001))
	expect(t, "PartitionCap", ni.PartitionCap, 64)
	expect(t, "DeviceID", ni.DeviceID, 0)
	expect(t, "Revision", ni.Revision, 0xa1)
	expect(t, "LocalPortNum", ni.LocalPortNum, 1)
	expect(t, "VendorID", ni.VendorID, 0)
}

func TestVectorNodeInfoSwitchDR(t *testing.T) {
	m := vector(t,
		"01 81 01 81 80 00 00 01 00 01 00 01 1c d0 55 17",
		"00 11 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"ff ff ff ff 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"01 01 02 08 00 00 00 00 00 20 00 01 00 00 00 00",
		"00 20 00 01 00 00 00 00 00 20 00 01 00 08 00 00",
		"00 00 00 a1 01 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"01 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 25 00 00 00 00 00 00 00",
		"00 80 d0 fd 07 00 00 00 00 00 00 00 00 00 00 00",
	)
	var h MADHeaderDirected
	if err := h.Unmarshal(m); err != nil {
		t.Fatal(err)
	}
	expect(t, "MgmtClass", h.MgmtClass, 0x81)
	expect(t, "Method", h.Method, 0x81)
	expect(t, "D", h.D, 1)
	expect(t, "HopPointer", h.HopPointer, 0)
	expect(t, "HopCount", h.HopCount, 1)
	expect(t, "AttributeID", h.AttributeID, 0x11)
	var dr SMPFormatDirected
	if err := dr.Unmarshal(m); err != nil {
		t.Fatal(err)
	}
	expect(t, "DrSLID", dr.DrSLID, 0xffff)
	expect(t, "DrDLID", dr.DrDLID, 0xffff)
	expect(t, "InitialPath[1]", dr.InitialPath[1], 1)
	var ni NodeInfo
	if err := ni.Unmarshal(dr.Data[:]); err != nil {
		t.Fatal(err)
	}
	expect(t, "NodeType", ni.NodeType, NodeTypeSwitch)
	expect(t, "NumPorts", ni.NumPorts, 8)
	expect(t, "NodeGUID", ni.NodeGUID, GUID(0x200001))
	expect(t, "PartitionCap", ni.PartitionCap, 8)
	expect(t, "LocalPortNum", ni.LocalPortNum, 1)
}

func TestVectorPortInfo(t *testing.T) {
	m := vector(t,
		"01 81 01 81 80 00 00 00 00 01 00 01 62 64 52 b9",
		"00 15 00 00 00 00 00 01 00 00 00 00 00 00 00 00",
		"ff ff ff ff 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 fe 80 00 00 00 00 00 00",
		"00 04 00 01 00 50 c0 48 00 00 0f f9 01 02 1f 02",
		"74 52 00 11 40 40 00 08 08 04 e0 40 00 00 00 00",
		"00 00 20 1f 00 00 00 00 00 00 00 00 00 30 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 25 00 00 00 00 00 00 00",
		"00 80 04 f3 07 00 00 00 00 00 00 00 00 00 00 00",
	)
	var pi PortInfo
	if err := pi.Unmarshal(m[64:]); err != nil {
		t.Fatal(err)
	}
	expect(t, "GIDPrefix", pi.GIDPrefix, 0xfe80000000000000)
	expect(t, "LID", pi.LID, 4)
	expect(t, "MasterSMLID", pi.MasterSMLID, 1)
	expect(t, "CapabilityMask", pi.CapabilityMask, 0x50c048)
	expect(t, "MKeyLeasePeriod", pi.MKeyLeasePeriod, 4089)
	expect(t, "LocalPortNum", pi.LocalPortNum, 1)
	expect(t, "LinkWidthEnabled", pi.LinkWidthEnabled, LinkWidth4X)
	expect(t, "LinkWidthSupported", pi.LinkWidthSupported, LinkWidth1X|LinkWidth4X|LinkWidth8X|LinkWidth12X|LinkWidth2X)
	expect(t, "LinkWidthActive", pi.LinkWidthActive, LinkWidth4X)
	expect(t, "LinkSpeedSupported", pi.LinkSpeedSupported, LinkSpeedSDR|LinkSpeedDDR|LinkSpeedQDR)
	expect(t, "PortState", pi.PortState, PortStateActive)
	expect(t, "PortPhysicalState", pi.PortPhysicalState, PhysPortStateLinkUp)
	expect(t, "LinkDownDefaultState", pi.LinkDownDefaultState, 2)
	expect(t, "LMC", pi.LMC, 0)
	expect(t, "LinkSpeedActive", pi.LinkSpeedActive, LinkSpeedSDR)
	expect(t, "LinkSpeedEnabled", pi.LinkSpeedEnabled, LinkSpeedSDR)
	expect(t, "NeighborMTU", pi.NeighborMTU, MTU2048)
	expect(t, "VLCap", pi.VLCap, 4)
	expect(t, "VLArbitrationHighCap", pi.VLArbitrationHighCap, 8)
	expect(t, "VLArbitrationLowCap", pi.VLArbitrationLowCap, 8)
	expect(t, "MTUCap", pi.MTUCap, MTU2048)
	expect(t, "VLStallCount", pi.VLStallCount, 7)
	expect(t, "OperationalVLs", pi.OperationalVLs, 4)
	expect(t, "ActiveSpeed", ActiveSpeed(&pi, 0), SpeedSDR)
}

func TestVectorSwitchInfo(t *testing.T) {
	m := vector(t,
		"01 81 01 81 80 00 00 01 00 01 00 01 29 74 9e 62",
		"00 12 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"ff ff ff ff 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"78 00 00 00 04 00 00 06 00 00 00 90 00 00 00 40",
		"30 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"01 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 25 00 00 00 00 00 00 00",
		"00 40 05 fb 07 00 00 00 00 00 00 00 00 00 00 00",
	)
	var si SwitchInfo
	if err := si.Unmarshal(m[64:]); err != nil {
		t.Fatal(err)
	}
	expect(t, "LinearFDBCap", si.LinearFDBCap, 30720)
	expect(t, "RandomFDBCap", si.RandomFDBCap, 0)
	expect(t, "MulticastFDBCap", si.MulticastFDBCap, 1024)
	expect(t, "LinearFDBTop", si.LinearFDBTop, 6)
	expect(t, "LifeTimeValue", si.LifeTimeValue, 18)
	expect(t, "PartitionEnforcementCap", si.PartitionEnforcementCap, 64)
	expect(t, "FilterRawInboundCap", si.FilterRawInboundCap, 1)
	expect(t, "FilterRawOutboundCap", si.FilterRawOutboundCap, 1)
	expect(t, "EnhancedPort0", si.EnhancedPort0, 0)
	expect(t, "MulticastFDBTop", si.MulticastFDBTop, 0)
}

func TestVectorPortCounters(t *testing.T) {
	m := vector(t,
		"01 04 01 81 00 00 00 00 00 01 00 02 1a 11 6b e4",
		"00 12 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 23 70 00 00 23 b8",
		"00 00 00 7e 00 00 00 7f 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 01 02 02 00 00 00 00 00",
	)
	var h MADHeader
	if err := h.Unmarshal(m); err != nil {
		t.Fatal(err)
	}
	expect(t, "MgmtClass", h.MgmtClass, uint8(ClassPerfMgt))
	expect(t, "AttributeID", h.AttributeID, 0x12)
	var pc PortCounters
	if err := pc.Unmarshal(m[64:]); err != nil {
		t.Fatal(err)
	}
	expect(t, "PortSelect", pc.PortSelect, 1)
	expect(t, "SymbolErrorCounter", pc.SymbolErrorCounter, 0)
	expect(t, "PortXmitData", pc.PortXmitData, 9072)
	expect(t, "PortRcvData", pc.PortRcvData, 9144)
	expect(t, "PortXmitPkts", pc.PortXmitPkts, 126)
	expect(t, "PortRcvPkts", pc.PortRcvPkts, 127)
}

func TestVectorPortCountersExtended(t *testing.T) {
	m := vector(t,
		"01 04 01 81 00 00 00 00 00 01 00 02 64 57 23 2f",
		"00 1d 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 01 00 00 00 00 00 00 00 00 00 00 00 00 24 00",
		"00 00 00 00 00 00 24 48 00 00 00 00 00 00 00 80",
		"00 00 00 00 00 00 00 81 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 01 02 02 00 00 00 00 00",
	)
	var pc PortCountersExtended
	if err := pc.Unmarshal(m[64:]); err != nil {
		t.Fatal(err)
	}
	expect(t, "PortSelect", pc.PortSelect, 1)
	expect(t, "PortXmitData", pc.PortXmitData, 9216)
	expect(t, "PortRcvData", pc.PortRcvData, 9288)
	expect(t, "PortXmitPkts", pc.PortXmitPkts, 128)
	expect(t, "PortRcvPkts", pc.PortRcvPkts, 129)
	expect(t, "PortUnicastXmitPkts", pc.PortUnicastXmitPkts, 0)
}

func TestVectorNodeRecord(t *testing.T) {
	m := vector(t,
		"01 03 02 92 00 00 00 00 00 01 00 00 43 b9 6f ef",
		"00 11 00 00 00 00 00 00 00 00 01 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 0e 00 00",
		"00 00 00 00 00 00 00 01 00 01 00 00 01 01 01 02",
		"00 00 00 00 00 10 00 00 00 00 00 00 00 10 00 00",
		"00 00 00 00 00 10 00 01 00 40 00 00 00 00 00 a1",
		"01 00 00 00 48 63 61 31 00 00 00 00 00 00 00 00",
	)
	var sa SAFormat
	if err := sa.Unmarshal(m); err != nil {
		t.Fatal(err)
	}
	expect(t, "MgmtClass", sa.MgmtClass, uint8(ClassSubnAdm))
	expect(t, "ClassVersion", sa.ClassVersion, 2)
	expect(t, "Method", sa.Method, uint8(MethodGetTableResp))
	expect(t, "AttributeID", sa.AttributeID, 0x11)
	// OpenSM set the RMPP Active flag without an RMPP version: ibsim
	// passes the first segment through as it is.
	expect(t, "RMPPVersion", sa.RMPPVersion, 0)
	expect(t, "RMPPFlags", sa.RMPPFlags, 1)
	expect(t, "AttributeOffset", sa.AttributeOffset, 14)
	expect(t, "ComponentMask", sa.ComponentMask, 1)
	var nr NodeRecord
	if err := nr.Unmarshal(sa.Data[:]); err != nil {
		t.Fatal(err)
	}
	expect(t, "LID", nr.LID, 1)
	expect(t, "NodeType", nr.NodeInfo.NodeType, NodeTypeCA)
	expect(t, "NodeGUID", nr.NodeInfo.NodeGUID, GUID(0x100000))
	expect(t, "PortGUID", nr.NodeInfo.PortGUID, GUID(0x100001))
	expect(t, "NodeString", strings.TrimRight(string(nr.NodeDescription.NodeString[:]), "\x00"), "Hca1")
}

func TestVectorPathRecord(t *testing.T) {
	m := vector(t,
		"01 03 02 92 00 00 00 00 00 01 00 00 1d a4 f3 a9",
		"00 35 00 00 00 00 00 00 00 00 01 00 00 00 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 08 00 00",
		"00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"fe 80 00 00 00 00 00 00 00 00 00 00 00 20 00 00",
		"fe 80 00 00 00 00 00 00 00 00 00 00 00 20 00 00",
		"00 02 00 02 00 00 00 00 00 80 ff ff 00 00 83 83",
		"80 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"fe 80 00 00 00 00 00 00 00 00 00 00 00 20 00 00",
		"fe 80 00 00 00 00 00 00 00 00 00 00 00 10 00 01",
		"00 02 00 01 00 00 00 00 00 80 ff ff 00 00 83 83",
		"92 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
		"fe 80 00 00 00 00 00 00 00 00 00 00 00 20 00 00",
		"fe 80 00 00 00 00 00 00 00 00 00 00 00 20 00 01",
		"00 00 00 00 00 00 00 00 25 00 00 00 00 00 00 00",
		"00 80 89 ff 07 00 00 00 00 00 00 00 00 00 00 00",
	)
	var pr PathRecord
	if err := pr.Unmarshal(m[56:]); err != nil {
		t.Fatal(err)
	}
	g, _ := ParseGID("fe80::20:0")
	expect(t, "DGID", pr.DGID, g)
	expect(t, "SGID", pr.SGID, g)
	expect(t, "DLID", pr.DLID, 2)
	expect(t, "SLID", pr.SLID, 2)
	expect(t, "Reversible", pr.Reversible, 1)
	expect(t, "PKey", pr.PKey, 0xffff)
	expect(t, "SL", pr.SL, 0)
	expect(t, "MTUSelector", pr.MTUSelector, 2)
	expect(t, "MTU", pr.MTU, MTU1024)
	expect(t, "RateSelector", pr.RateSelector, 2)
	expect(t, "Rate", pr.Rate, Rate10Gbps)
	expect(t, "Rate.Gbps", pr.Rate.Gbps(), 10.0)
	expect(t, "PacketLifeTimeSelector", pr.PacketLifeTimeSelector, 2)
}

func TestVectorPKeyTable(t *testing.T) {
	// smpdump -D 0 0x16 from Hca2: P_Key 0xffff in entry 0.
	b := vector(t, "ffff")
	var pk PKeyTable
	if err := pk.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "PKeyBlock[0]", pk.PKeyBlock[0], 0xffff)
	for i := 1; i < 32; i++ {
		expect(t, "PKeyBlock[i]", pk.PKeyBlock[i], 0)
	}
}

func TestVectorLinearForwardingTable(t *testing.T) {
	// smpdump -D 0,1 0x19 0 on Switch2 after OpenSM's sweep: LIDs 1-6.
	b := vector(t,
		"ff03 0300 0105 02ff ffff ffff ffff ffff",
		"ffff ffff ffff ffff ffff ffff ffff ffff",
		"ffff ffff ffff ffff ffff ffff ffff ffff",
		"ffff ffff ffff ffff ffff ffff ffff ffff",
	)
	var lft LinearForwardingTable
	if err := lft.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	want := []uint8{0xff, 3, 3, 0, 1, 5, 2, 0xff}
	for lid, port := range want {
		expect(t, "PortBlock[lid]", lft.PortBlock[lid], port)
	}
}
