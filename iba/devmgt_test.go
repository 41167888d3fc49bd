package iba

import "testing"

func TestDevMgtRegistry(t *testing.T) {
	for id, name := range map[uint16]string{
		0x10: "IOUnitInfo", 0x11: "IOControllerProfile", 0x12: "ServiceEntries",
		0x20: "DiagnosticTimeout", 0x21: "PrepareToTest", 0x22: "TestDeviceOnce",
		0x23: "TestDeviceLoop", 0x24: "DiagCode",
	} {
		expectAttr(t, ClassDevMgt, id, name)
	}
	for _, s := range allowing("DevMgtGet", "DevMgtSet") {
		if s.Size > 192 {
			t.Errorf("%s: %d bytes do not fit the DevMgt data", s.Name, s.Size)
		}
	}
}

// TestIOUnitInfoControllerList checks the 4-bit slots, slot 1 in the high
// nibble of byte 4 (srp_daemon reads them so).
func TestIOUnitInfoControllerList(t *testing.T) {
	b := make([]byte, 132)
	copy(b, hexBytes(t, "00 03 | 02 | 01", "1f"))
	var u IOUnitInfo
	if err := u.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "ChangeID", u.ChangeID, 3)
	expect(t, "MaxControllers", u.MaxControllers, 2)
	expect(t, "OptionROM", u.OptionROM, 1)
	expect(t, "DiagDeviceID", u.DiagDeviceID, 0)
	expect(t, "slot 1", u.ControllerList[0], 1)
	expect(t, "slot 2", u.ControllerList[1], 0xf)
	expect(t, "slot 3", u.ControllerList[2], 0)
}

// TestIOControllerProfileLayout checks the profile against the field
// offsets of srp_daemon's ib_ioc_profile_t.
func TestIOControllerProfileLayout(t *testing.T) {
	b := make([]byte, 128)
	copy(b, hexBytes(t,
		"00 02 c9 03 00 00 00 01",       // GUID
		"00 02 c9 | 00",                 // VendorID, reserved
		"00 00 62 82",                   // DeviceID
		"00 a0 | 00 00",                 // DeviceVersion
		"00 02 c9 | 00 | 00 00 00 01",   // SubsystemVendorID, SubsystemID
		"01 00 | 00 00 | 01 08 | 00 01", // IOClass, IOSubclass, Protocol, ProtocolVersion
		"00 00 00 00 | 00 40 | 00 | 04", // reserved, SendMessageDepth, reserved, RDMAReadDepth
		"00 00 10 00 | 00 80 00 00",     // SendMessageSize, RDMATransferSize
		"ff | 00 | 01",                  // ControllerOperationsMask, reserved, ServiceEntries
	))
	copy(b[64:], "SRP target")
	var p IOControllerProfile
	if err := p.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "GUID", p.GUID, GUID(0x0002c90300000001))
	expect(t, "VendorID", p.VendorID, 0x2c9)
	expect(t, "DeviceID", p.DeviceID, 0x6282)
	expect(t, "DeviceVersion", p.DeviceVersion, 0xa0)
	expect(t, "SubsystemID", p.SubsystemID, 1)
	expect(t, "IOClass", p.IOClass, 0x100)
	expect(t, "Protocol", p.Protocol, 0x108)
	expect(t, "SendMessageDepth", p.SendMessageDepth, 0x40)
	expect(t, "RDMAReadDepth", p.RDMAReadDepth, 4)
	expect(t, "RDMATransferSize", p.RDMATransferSize, 0x800000)
	expect(t, "ControllerOperationsMask", p.ControllerOperationsMask, 0xff)
	expect(t, "ServiceEntries", p.ServiceEntries, 1)
	expect(t, "IDString", string(p.IDString[:10]), "SRP target")
}
