package iba

import (
	"bytes"
	"testing"
)

// TestVendorRegistry checks the formats of the vendor classes and where
// the attributes of ibping, ibsysstat and vendstat are found.
func TestVendorRegistry(t *testing.T) {
	for c, want := range map[Class]string{
		ClassVendor: "VendFormat", 0x0f: "VendFormat", ClassMellanox: "MlxFormat",
		ClassVendorOUI: "VendOUIFormat", 0x4f: "VendOUIFormat",
		ClassOpenIBPing: "OpenIBPingFormat", ClassOpenIBSysStat: "OpenIBSysStatFormat",
	} {
		if f, ok := FormatOf(c); !ok || f.Name != want {
			t.Errorf("FormatOf(%#x) = %v, want %s", uint8(c), f, want)
		}
	}
	expectAttr(t, ClassOpenIBPing, 0x00, "OpenIBPing")
	expectAttr(t, ClassOpenIBSysStat, 0x10, "OpenIBSysStatPing")
	expectAttr(t, ClassOpenIBSysStat, 0x11, "OpenIBSysStatHostInfo")
	expectAttr(t, ClassOpenIBSysStat, 0x12, "OpenIBSysStatCPUInfo")
	expectAttr(t, ClassMellanox, 0x17, "MlxGeneralInfo")
	expectAttr(t, ClassMellanox, 0x50, "MlxConfigSpaceAccess")
	expectAttr(t, ClassMellanox, 0x90, "MlxCounterGroupInfo")
	expectAttr(t, ClassMellanox, 0x91, "MlxConfigCounterGroup")
	// The Mellanox attributes belong to class 0x0A only.
	expectAttr(t, ClassVendor, 0x17, "")
	for _, n := range []string{"OFASysStatPing", "OFASysStatHostInfo", "OFASysStatCPUInfo"} {
		if _, ok := StructByName(n); !ok {
			t.Errorf("python-rdma's name %s is not known", n)
		}
	}
	// libibmad: the OUI of vendor range 2 is bytes 37 to 39, data from 40.
	s := (&OpenIBSysStatFormat{}).Desc()
	expect(t, "OUI offset", fieldNamed(t, s, "OUI").Off, 37*8)
	expect(t, "Data offset", fieldNamed(t, s, "data").Off, 40*8)
	expect(t, "VendFormat data offset", fieldNamed(t, (&VendFormat{}).Desc(), "data").Off, 24*8)
}

// TestOpenIBSysStatMAD decodes a whole sysstat host-info reply: the OUI
// after the RMPP header, then the host name.
func TestOpenIBSysStatMAD(t *testing.T) {
	m := make([]byte, 256)
	copy(m, hexBytes(t, "01 33 01 81", "00 00 00 00", "00 00 00 00 00 00 00 2a", "00 11 00 00", "00 00 00 00"))
	copy(m[36:], hexBytes(t, "00 00 14 05"))
	copy(m[40:], "node1.example\x00")
	var f OpenIBSysStatFormat
	if err := f.Unmarshal(m); err != nil {
		t.Fatal(err)
	}
	expect(t, "MgmtClass", f.MgmtClass, uint8(ClassOpenIBSysStat))
	expect(t, "AttributeID", f.AttributeID, 0x11)
	expect(t, "OUI", f.OUI, OUIOpenIB)
	var h OpenIBSysStatHostInfo
	if err := h.Unmarshal(f.Data[:]); err != nil {
		t.Fatal(err)
	}
	name, _, _ := bytes.Cut(h.HostName[:], []byte{0})
	expect(t, "HostName", string(name), "node1.example")
}

// TestMlxGeneralInfoLayouts checks the two general-info layouts against
// vendstat's is3_general_info_t and is4_general_info_t.
func TestMlxGeneralInfoLayouts(t *testing.T) {
	b := make([]byte, 136)
	copy(b[8:], hexBytes(t, "00 a1 | b9 24"))                     // hw_revision, device_id
	copy(b[36:], hexBytes(t, "00 01 2c 00"))                      // uptime
	copy(b[40:], hexBytes(t, "00 | 07 | 0a | 03", "00 00 00 05")) // fw major.minor.sub, build_id
	copy(b[48:], hexBytes(t, "12 | 31 | 20 09 | 00 00 | 13 45"))  // month, day, year, reserved, hour
	copy(b[56:], "MT_0C20110003")
	copy(b[72:], hexBytes(t, "00 00 00 02", "00 | 01 | 02 | 03"))
	var g MlxGeneralInfo
	if err := g.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "HWRevision", g.HWRevision, 0xa1)
	expect(t, "DeviceID", g.DeviceID, 0xb924)
	expect(t, "Uptime", g.Uptime, 0x12c00)
	expect(t, "FW", [3]uint8{g.FWMajor, g.FWMinor, g.FWSubMinor}, [3]uint8{7, 10, 3})
	expect(t, "FWBuildID", g.FWBuildID, 5)
	expect(t, "FW date", [3]uint16{uint16(g.FWMonth), uint16(g.FWDay), g.FWYear}, [3]uint16{0x12, 0x31, 0x2009})
	expect(t, "FWHour", g.FWHour, 0x1345)
	expect(t, "FWPSID", string(bytes.TrimRight(g.FWPSID[:], "\x00")), "MT_0C20110003")
	expect(t, "FWINIFileVersion", g.FWINIFileVersion, 2)
	expect(t, "SW", [3]uint8{g.SWMajor, g.SWMinor, g.SWSubMinor}, [3]uint8{1, 2, 3})

	copy(b[76:], hexBytes(t, "00 00 00 10 | 00 00 00 1c | 00 00 03 e8"))
	copy(b[104:], hexBytes(t, "00 | 04 | 05 | 06"))
	var x MlxGeneralInfoExt
	if err := x.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "ext FWPSID", x.FWPSID, g.FWPSID)
	expect(t, "FWExt", [3]uint32{x.FWExtMajor, x.FWExtMinor, x.FWExtSubMinor}, [3]uint32{16, 28, 1000})
	expect(t, "ext SW", [3]uint8{x.SWMajor, x.SWMinor, x.SWSubMinor}, [3]uint8{4, 5, 6})
}

// TestMlxCounterGroups checks vendstat's counter-group and config-space
// records.
func TestMlxCounterGroups(t *testing.T) {
	var ci MlxCounterGroupInfo
	if err := ci.Unmarshal(hexBytes(t, "00 00 00 00 00 00 00 00", "00 00 00 02", "00 00 00 0f", "00 00 01 00")); err != nil {
		t.Fatal(err)
	}
	expect(t, "NumOfCounterGroups", ci.NumOfCounterGroups, 2)
	expect(t, "GroupMasks", ci.GroupMasks, [2]uint32{0xf, 0x100})
	var cg MlxConfigCounterGroup
	if err := cg.Unmarshal(hexBytes(t, "00 00 00 00 00 00 00 00", "00 00 00 00", "00 00 00 01", "00 00 00 08")); err != nil {
		t.Fatal(err)
	}
	expect(t, "GroupSelect 0", cg.GroupSelects[0].GroupSelect, 1)
	expect(t, "GroupSelect 1", cg.GroupSelects[1].GroupSelect, 8)
	b := make([]byte, 224)
	copy(b[8+17*12:], hexBytes(t, "00 10 01 3c | 12 34 56 78 | ff ff ff ff"))
	var cs MlxConfigSpaceAccess
	if err := cs.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "Records[17]", cs.Records[17], MlxConfigSpaceRecord{Address: 0x10013c, Data: 0x12345678, Mask: 0xffffffff})
}
