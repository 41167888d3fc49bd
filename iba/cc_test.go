package iba

import "testing"

// TestCCFormat checks the class, the CC_Key at byte 24 and the two data
// areas (libibmad IB_CC_LOG_DATA_OFFS 32, IB_CC_DATA_OFFS 64).
func TestCCFormat(t *testing.T) {
	s := (&CCFormat{}).Desc()
	if s.Format == nil || s.Format.Class != 0x21 || s.Format.Version != 2 || s.Size != 256 {
		t.Fatalf("CCFormat: %+v, %d bytes", s.Format, s.Size)
	}
	expect(t, "CC_Key offset", fieldNamed(t, s, "CCKey").Off, 24*8)
	expect(t, "CC_Key label", fieldNamed(t, s, "CCKey").Label, "CC_Key")
	expect(t, "LogData offset", fieldNamed(t, s, "logData").Off, 32*8)
	expect(t, "Data offset", fieldNamed(t, s, "data").Off, 64*8)
	if f, ok := FormatOf(ClassCongestionCtl); !ok || f != s {
		t.Errorf("FormatOf(CongestionCtl) = %v", f)
	}
}

// TestCCRegistry checks the attribute IDs (libibmad mad.h IB_CC_ATTR_*)
// and that the two log layouts do not shadow CongestionLog.
func TestCCRegistry(t *testing.T) {
	for id, name := range map[uint16]string{
		0x11: "CongestionInfo", 0x12: "CongestionKeyInfo", 0x13: "CongestionLog",
		0x14: "SwitchCongestionSetting", 0x15: "SwitchPortCongestionSetting",
		0x16: "CACongestionSetting", 0x17: "CongestionControlTable", 0x18: "TimeStamp",
	} {
		expectAttr(t, ClassCongestionCtl, id, name)
	}
	for _, a := range []Attribute{new(CongestionLogSwitch), new(CongestionLogCA)} {
		if s := a.Desc(); s.AttrID != 0x13 || s.Size != (&CongestionLog{}).Desc().Size {
			t.Errorf("%s: attribute %#x, %d bytes", s.Name, s.AttrID, s.Size)
		}
	}
	s, _ := StructByName("Timestamp")
	if s == nil || s.Name != "TimeStamp" {
		t.Errorf("ibccquery's name Timestamp finds %v", s)
	}
	if !(&CongestionKeyInfo{}).Desc().Allows("CongestionSet") || (&CongestionInfo{}).Desc().Allows("CongestionSet") {
		t.Error("CongestionKeyInfo takes Set, CongestionInfo does not")
	}
}

// TestCongestionInfoLayout decodes a CongestionInfo assembled by hand from
// IBA A10.4.3.3.
func TestCongestionInfoLayout(t *testing.T) {
	var ci CongestionInfo
	if err := ci.Unmarshal(hexBytes(t, "80 01 | 04 | 00")); err != nil {
		t.Fatal(err)
	}
	expect(t, "CongestionInfo", ci.CongestionInfo, 0x8001)
	expect(t, "ControlTableCap", ci.ControlTableCap, 4)
	var ck CongestionKeyInfo
	if err := ck.Unmarshal(hexBytes(t,
		"01 23 45 67 89 ab cd ef", // CC_Key
		"80 00 | 00 3c",           // CC_KeyProtectBit, reserved, CC_KeyLeasePeriod
		"00 07",                   // CC_KeyViolations
	)); err != nil {
		t.Fatal(err)
	}
	expect(t, "CC_Key", ck.CCKey, 0x0123456789abcdef)
	expect(t, "CC_KeyProtectBit", ck.CCKeyProtectBit, 1)
	expect(t, "CC_KeyLeasePeriod", ck.CCKeyLeasePeriod, 60)
	expect(t, "CC_KeyViolations", ck.CCKeyViolations, 7)
}

// TestCongestionLogLayouts decodes a switch log and a CA log as ibccquery
// reads them: switch events from byte 40, 12 bytes each; CA events from
// byte 12, 16 bytes each.
func TestCongestionLogLayouts(t *testing.T) {
	sw := make([]byte, 220)
	copy(sw, hexBytes(t, "01 | 0f | 00 05", "00 01 00 00"))
	sw[8] = 0x40 // PortMap: port 1
	copy(sw[40:], hexBytes(t, "00 02 | 00 03", "a0 00 00 00", "00 00 12 34"))
	copy(sw[40+14*12:], hexBytes(t, "00 09"))
	var gen CongestionLog
	if err := gen.Unmarshal(sw); err != nil {
		t.Fatal(err)
	}
	expect(t, "LogType", gen.LogType, 1)
	expect(t, "CongestionFlags", gen.CongestionFlags, 0x0f)
	var s CongestionLogSwitch
	if err := s.Unmarshal(sw); err != nil {
		t.Fatal(err)
	}
	expect(t, "LogEventsCounter", s.LogEventsCounter, 5)
	expect(t, "CurrentTimeStamp", s.CurrentTimeStamp, 0x10000)
	expect(t, "PortMap[0]", s.PortMap[0], 0x40)
	expect(t, "EntryList[0].SLID", s.EntryList[0].SLID, 2)
	expect(t, "EntryList[0].DLID", s.EntryList[0].DLID, 3)
	expect(t, "EntryList[0].SL", s.EntryList[0].SL, 0xa)
	expect(t, "EntryList[0].Timestamp", s.EntryList[0].Timestamp, 0x1234)
	expect(t, "EntryList[14].SLID", s.EntryList[14].SLID, 9)

	ca := make([]byte, 220)
	copy(ca, hexBytes(t, "02 | 00 | 00 06", "80 01 | 00 00", "00 00 00 63"))
	copy(ca[12:], hexBytes(t,
		"00 00 48 | 3 | 2", // Local_QP_CN_Entry, SL_CN_Entry, Service_Type_CN_Entry
		"00 00 49 | 00",    // Remote_QP_Number_CN_Entry, reserved
		"00 0a | 00 0b",    // Local_LID_CN, Remote_LID_CN_Entry
		"00 00 00 64",      // Timestamp_CN_Entry
	))
	copy(ca[12+12*16:], hexBytes(t, "00 00 50"))
	var c CongestionLogCA
	if err := c.Unmarshal(ca); err != nil {
		t.Fatal(err)
	}
	expect(t, "LogType", c.LogType, 2)
	expect(t, "ThresholdEventCounter", c.ThresholdEventCounter, 6)
	expect(t, "ThresholdCongestionEventMap", c.ThresholdCongestionEventMap, 0x8001)
	expect(t, "CurrentTimeStamp", c.CurrentTimeStamp, 0x63)
	e := c.EntryList[0]
	expect(t, "LocalQPCNEntry", e.LocalQPCNEntry, 0x48)
	expect(t, "SLCNEntry", e.SLCNEntry, 3)
	expect(t, "ServiceTypeCNEntry", e.ServiceTypeCNEntry, 2)
	expect(t, "RemoteQPNumberCNEntry", e.RemoteQPNumberCNEntry, 0x49)
	expect(t, "LocalLIDCN", e.LocalLIDCN, 10)
	expect(t, "RemoteLIDCNEntry", e.RemoteLIDCNEntry, 11)
	expect(t, "TimestampCNEntry", e.TimestampCNEntry, 100)
	expect(t, "EntryList[12].LocalQPCNEntry", c.EntryList[12].LocalQPCNEntry, 0x50)
}

// TestCongestionSettingLayouts checks the settings against libibmad's
// offsets: SwitchCongestionSetting's fields after the two 32-byte masks,
// and the per-port, per-SL and per-index entries.
func TestCongestionSettingLayouts(t *testing.T) {
	b := make([]byte, 76)
	copy(b, hexBytes(t, "00 00 00 1f"))
	b[4], b[67] = 0x80, 0x01
	copy(b[68:], hexBytes(t, "a0 | 40 | c0 00", "01 00 | 00 10"))
	var s SwitchCongestionSetting
	if err := s.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "ControlMap", s.ControlMap, 0x1f)
	expect(t, "VictimMask[0]", s.VictimMask[0], 0x80)
	expect(t, "CreditMask[31]", s.CreditMask[31], 0x01)
	expect(t, "Threshold", s.Threshold, 0xa)
	expect(t, "PacketSize", s.PacketSize, 0x40)
	expect(t, "CSThreshold", s.CSThreshold, 0xc)
	expect(t, "CSReturnDelay", s.CSReturnDelay, 0x100)
	expect(t, "MarkingRate", s.MarkingRate, 0x10)

	var p SwitchPortCongestionSetting
	pb := make([]byte, 128)
	copy(pb[124:], hexBytes(t, "c9 | 20 | 00 07"))
	if err := p.Unmarshal(pb); err != nil {
		t.Fatal(err)
	}
	e := p.Block[31]
	expect(t, "Valid", e.Valid, 1)
	expect(t, "ControlType", e.ControlType, 1)
	expect(t, "Threshold", e.Threshold, 9)
	expect(t, "PacketSize", e.PacketSize, 0x20)
	expect(t, "CongParmMarkingRate", e.CongParmMarkingRate, 7)

	var ca CACongestionSetting
	cb := make([]byte, 132)
	copy(cb, hexBytes(t, "00 01 | ff ff"))
	copy(cb[4+15*8:], hexBytes(t, "00 0a | 02 | 03", "04 00 00 00"))
	if err := ca.Unmarshal(cb); err != nil {
		t.Fatal(err)
	}
	expect(t, "PortControl", ca.PortControl, 1)
	expect(t, "ControlMap", ca.ControlMap, 0xffff)
	expect(t, "CCTITimer", ca.EntryList[15].CCTITimer, 10)
	expect(t, "CCTIIncrease", ca.EntryList[15].CCTIIncrease, 2)
	expect(t, "TriggerThreshold", ca.EntryList[15].TriggerThreshold, 3)
	expect(t, "CCTIMin", ca.EntryList[15].CCTIMin, 4)

	var cct CongestionControlTable
	tb := make([]byte, 132)
	copy(tb, hexBytes(t, "00 7f | 00 00", "c0 01"))
	if err := cct.Unmarshal(tb); err != nil {
		t.Fatal(err)
	}
	expect(t, "CCTILimit", cct.CCTILimit, 127)
	expect(t, "CCTShift", cct.EntryList[0].CCTShift, 3)
	expect(t, "CCTMultiplier", cct.EntryList[0].CCTMultiplier, 1)
}
