package iba

import "testing"

// TestBMRegistry checks the attribute IDs of libibmad's mad.h
// (IB_BM_ATTR_*) and that the commands go by BMSend, BKeyInfo by Get/Set.
func TestBMRegistry(t *testing.T) {
	ids := map[string]uint16{
		"BKeyInfo": 0x10, "WriteVPD": 0x20, "ReadVPD": 0x21, "ResetIBML": 0x22,
		"SetModulePMControl": 0x23, "GetModulePMControl": 0x24,
		"SetUnitPMControl": 0x25, "GetUnitPMControl": 0x26,
		"SetIOCPMControl": 0x27, "GetIOCPMControl": 0x28,
		"SetModuleState": 0x29, "SetModuleAttention": 0x2A,
		"GetModuleStatus": 0x2B, "IB2IBML": 0x2C, "IB2CME": 0x2D,
		"IB2MME": 0x2E, "IB2OEM": 0x2F,
	}
	for name, id := range ids {
		expectAttr(t, ClassBM, id, name)
		s, _ := StructByName(name)
		if want := name != "BKeyInfo"; s.Allows("BMSend") != want || s.Allows("BMGet") == want {
			t.Errorf("%s methods %v", name, s.Methods)
		}
	}
	if f, ok := FormatOf(ClassBM); !ok || f.Name != "BMFormat" {
		t.Errorf("FormatOf(BM) = %v", f)
	}
	// libibmad bm.c: B_Key at byte 24, BM data at byte 64.
	s := (&BMFormat{}).Desc()
	expect(t, "BKey offset", fieldNamed(t, s, "BKey").Off, 24*8)
	expect(t, "Data offset", fieldNamed(t, s, "data").Off, 64*8)
}

func TestBMLayouts(t *testing.T) {
	var k BKeyInfo
	if err := k.Unmarshal(hexBytes(t, "00 00 00 00 00 00 ab cd", "80 00 | 00 10", "ff ff")); err != nil {
		t.Fatal(err)
	}
	expect(t, "BKey", k.BKey, 0xabcd)
	expect(t, "BKeyProtectBit", k.BKeyProtectBit, 1)
	expect(t, "BKeyLeasePeriod", k.BKeyLeasePeriod, 16)
	expect(t, "BKeyViolations", k.BKeyViolations, 0xffff)

	b := make([]byte, 192)
	copy(b, hexBytes(t, "00 07 | e0 | 05", "01 00 10 00 04"))
	var r ReadVPD
	if err := r.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "Sequence", r.Sequence, 7)
	expect(t, "SourceDevice", r.SourceDevice, 0xe0)
	expect(t, "ParamCount", r.ParamCount, 5)
	expect(t, "BMParameters[2]", r.BMParameters[2], 0x10)
	expect(t, "BMParameters[4]", r.BMParameters[4], 0x04)
}
