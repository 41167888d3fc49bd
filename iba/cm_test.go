package iba

import "testing"

// TestCMRegistry checks the attribute IDs and that every message fills the
// 232 bytes of the CM data (IBA 12.6, the kernel's CM_STRUCT sizes).
func TestCMRegistry(t *testing.T) {
	for id, name := range map[uint16]string{
		0x10: "CMREQ", 0x11: "CMMRA", 0x12: "CMREJ", 0x13: "CMREP", 0x14: "CMRTU",
		0x15: "CMDREQ", 0x16: "CMDREP", 0x17: "CMSIDRReq", 0x18: "CMSIDRRep",
		0x19: "CMLAP", 0x1A: "CMAPR",
	} {
		expectAttr(t, ClassComMgt, id, name)
		if s, _ := LookupAttr(ClassComMgt, id); s != nil && s.Size != 232 {
			t.Errorf("%s: %d bytes, want 232", name, s.Size)
		}
	}
	for alias, name := range map[string]string{
		"ConnectRequest": "CMREQ", "CMSIDR_REQ": "CMSIDRReq", "ServiceIDResReqResp": "CMSIDRRep",
	} {
		if s, ok := StructByName(alias); !ok || s.Name != name {
			t.Errorf("StructByName(%q) = %v", alias, s)
		}
	}
}

// TestCMREQLayout checks the REQ components the kernel's table 106
// declarations place inside bytes: SRQ and the extended transport type
// after MaxCMRetries, the packet rate in the low bits of byte 91 and
// SAPSupported after the alternate ACK timeout.
func TestCMREQLayout(t *testing.T) {
	b := make([]byte, 232)
	copy(b, hexBytes(t, "00 00 10 01", "00 00 00 00", "00 00 00 00 00 00 00 2a"))
	copy(b[32:], hexBytes(t, "00 00 48 | 04", "00 00 00 | 02", "00 00 00 | 8b", "00 00 07 | 9e"))
	copy(b[48:], hexBytes(t, "ff ff | 45 | 7a", "00 01 | 00 02"))
	copy(b[88:], hexBytes(t, "12 34 50 | 3f | 00 | 40 | 35 | a8"))
	b[139] = 0xac
	var r CMREQ
	if err := r.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "LocalCommunicationID", r.LocalCommunicationID, 0x1001)
	expect(t, "ServiceID", r.ServiceID, 0x2a)
	expect(t, "LocalQPN", r.LocalQPN, 0x48)
	expect(t, "ResponderResources", r.ResponderResources, 4)
	expect(t, "InitiatorDepth", r.InitiatorDepth, 2)
	expect(t, "RemoteCMResponseTimeout", r.RemoteCMResponseTimeout, 0x11)
	expect(t, "TransportServiceType", r.TransportServiceType, 1)
	expect(t, "EndToEndFlowControl", r.EndToEndFlowControl, 1)
	expect(t, "StartingPSN", r.StartingPSN, 7)
	expect(t, "LocalCMResponseTimeout", r.LocalCMResponseTimeout, 0x13)
	expect(t, "RetryCount", r.RetryCount, 6)
	expect(t, "PartitionKey", r.PartitionKey, 0xffff)
	expect(t, "PathPacketPayloadMTU", r.PathPacketPayloadMTU, 4)
	expect(t, "RDCExists", r.RDCExists, 0)
	expect(t, "RNRRetryCount", r.RNRRetryCount, 5)
	expect(t, "MaxCMRetries", r.MaxCMRetries, 7)
	expect(t, "SRQ", r.SRQ, 1)
	expect(t, "ExtendedTransportType", r.ExtendedTransportType, 2)
	expect(t, "PrimaryLocalPortLID", r.PrimaryLocalPortLID, 1)
	expect(t, "PrimaryRemotePortLID", r.PrimaryRemotePortLID, 2)
	expect(t, "PrimaryFlowLabel", r.PrimaryFlowLabel, 0x12345)
	expect(t, "PrimaryPacketRate", r.PrimaryPacketRate, 0x3f)
	expect(t, "PrimaryHopLimit", r.PrimaryHopLimit, 0x40)
	expect(t, "PrimarySL", r.PrimarySL, 3)
	expect(t, "PrimarySubnetLocal", r.PrimarySubnetLocal, 0)
	expect(t, "PrimaryLocalACKTimeout", r.PrimaryLocalACKTimeout, 0x15)
	expect(t, "AlternateLocalACKTimeout", r.AlternateLocalACKTimeout, 0x15)
	expect(t, "SAPSupported", r.SAPSupported, 1)
}

// TestCMSIDRRepLayout checks SIDR_REP against the kernel's table 120
// declarations: status and additional-information length first, then the
// QPN, service ID and Q_Key.
func TestCMSIDRRepLayout(t *testing.T) {
	b := make([]byte, 232)
	copy(b, hexBytes(t, "00 00 00 09", "00 | 02 | 00 00", "00 00 51 | 00", "00 00 00 00 00 00 10 00", "80 01 00 00", "aa bb"))
	b[96] = 0xcc
	var r CMSIDRRep
	if err := r.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	expect(t, "RequestID", r.RequestID, 9)
	expect(t, "Status", r.Status, 0)
	expect(t, "AdditionalInformationLength", r.AdditionalInformationLength, 2)
	expect(t, "QPN", r.QPN, 0x51)
	expect(t, "ServiceID", r.ServiceID, 0x1000)
	expect(t, "QKey", r.QKey, 0x80010000)
	expect(t, "AdditionalInformation[1]", r.AdditionalInformation[1], 0xbb)
	expect(t, "PrivateData[0]", r.PrivateData[0], 0xcc)
}
