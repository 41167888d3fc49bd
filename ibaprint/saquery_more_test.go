package ibaprint

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func sb(n int, set map[int]byte) []byte {
	b := make([]byte, n)
	for i, v := range set {
		b[i] = v
	}
	return b
}

// TestSAQueryMore checks the record dumps that OpenSM on ibsim has no
// records for (InformInfo, Service, MFT entries) or only zeros for, on bytes
// whose fields are distinct, against saquery.c's printf formats written out
// by hand. The others are compared live with the C saquery by
// internal/diags' TestSAQueryLive.
func TestSAQueryMore(t *testing.T) {
	gid := map[int]byte{0: 0xfe, 1: 0x80, 15: 0x01}
	iir := func(generic byte) []byte {
		b := sb(80, gid)
		b[17] = 0x05 // Enumeration
		copy(b[24:], []byte{0xff, 0x12, 14: 0, 15: 0x16})
		b[40], b[41], b[42], b[43] = 0x00, 0x02, 0x00, 0x09 // LID range
		b[46], b[47] = generic, 1                           // IsGeneric, Subscribe
		b[48], b[49] = 0x00, 0x04                           // Type
		b[50], b[51] = 0x00, 0x40                           // TrapNumber / DeviceID
		b[52], b[53], b[54], b[55] = 0x00, 0x00, 0x12, 0x13 // QPN 0x12, RespTimeValue 0x13
		b[57], b[58], b[59] = 0x00, 0x14, 0x05              // ProducerType / VendorID
		return b
	}
	tail := "\t\tgid.....................ff12::16\n\t\tlid_range_begin.........2\n\t\tlid_range_end...........9\n"
	for _, tc := range []struct {
		name string
		f    func(io.Writer) error
		want string
	}{
		{"IIR generic", func(w io.Writer) error { return SAInformInfoRecord(w, iir(1), false) },
			"InformInfoRecord dump:\n\t\tRID\n\t\tSubscriberGID...........fe80::1\n\t\tSubscriberEnum..........0x5\n\t\tInformInfo dump:\n" + tail +
				"\t\tis_generic..............0x1\n\t\tsubscribe...............0x1\n\t\ttrap_type...............0x4\n\t\ttrap_num................64\n" +
				"\t\tqpn.....................<not displayed>\n\t\tresp_time_val...........0x13\n\t\tnode_type...............0x001405\n"},
		{"IIR vendor keys", func(w io.Writer) error { return SAInformInfoRecord(w, iir(0), true) },
			"InformInfoRecord dump:\n\t\tRID\n\t\tSubscriberGID...........fe80::1\n\t\tSubscriberEnum..........0x5\n\t\tInformInfo dump:\n" + tail +
				"\t\tis_generic..............0x0\n\t\tsubscribe...............0x1\n\t\ttrap_type...............0x4\n\t\tdev_id..................0x40\n" +
				"\t\tqpn.....................0x000012\n\t\tresp_time_val...........0x13\n\t\tvendor_id...............0x001405\n"},
		{"MFT", func(w io.Writer) error {
			b := sb(72, map[int]byte{0: 0xc0, 1: 0x01, 2: 0x20, 3: 0x02, 8: 0x00, 9: 0x06, 70: 0x80, 71: 0x01})
			return SAMFTRecord(w, b)
		}, "MFT Record dump:\n\t\tLID........................49153\n\t\tPosition...................2\n\t\tBlock......................2\n\t\tMFT:\n\t\tMLID\tPort Mask\n" +
			"\t\t0xc040\t0x0006\n" + strings.Repeat("", 0)},
		{"ClassPortInfo", func(w io.Writer) error {
			b := sb(72, map[int]byte{0: 1, 1: 2, 2: 0x26, 3: 0x02, 4: 0x00, 5: 0x01, 6: 0x60, 7: 0x12, 24: 0x12, 25: 0x34, 26: 0x56, 27: 0x78,
				28: 0, 29: 7, 33: 0, 34: 0, 35: 1, 36: 0x80, 37: 0x01, 64: 0xaa, 67: 0x02})
			return SAClassPortInfo(w, b)
		}, "SA ClassPortInfo:\n\t\tBase version.............1\n\t\tClass version............2\n\t\tCapability mask..........0x2602\n" +
			"\t\tCapability mask 2........0x00000B00\n\t\tResponse time value......0x12\n\t\tRedirect GID.............::\n" +
			"\t\tRedirect TC/SL/FL........0x12345678\n\t\tRedirect LID.............7\n\t\tRedirect PKey............0x0000\n" +
			"\t\tRedirect QP..............0x00000001\n\t\tRedirect QKey............0x80010000\n\t\tTrap GID.................::\n" +
			"\t\tTrap TC/SL/FL............0x00000000\n\t\tTrap LID.................0\n\t\tTrap PKey................0x0000\n" +
			"\t\tTrap HL/QP...............0xAA000002\n\t\tTrap QKey................0x00000000\n"},
		{"MCMember proxy join", func(w io.Writer) error {
			// The low bit of byte 49 is what saquery shows; the IBA's
			// ProxyJoin bit (the high one) is not.
			return SAMCMember(w, sb(52, map[int]byte{36: 0xc0, 48: 0x21, 49: 0x81}), "n")
		}, "MCMemberRecord member dump:\n\t\tMGID....................::\n\t\tMlid....................0xC000\n\t\tPortGid.................::\n" +
			"\t\tScopeState..............0x21\n\t\tProxyJoin...............0x1\n\t\tNodeDescription.........n\n"},
		{"PortInfoRecord brief", func(w io.Writer) error {
			return SAPortInfoRecordBrief(w, sb(68, map[int]byte{1: 1, 2: 1, 4 + 16: 0, 4 + 17: 5, 4 + 19: 1, 4 + 22: 0x0a, 4 + 23: 0x4a}))
		}, "PortInfoRecord dump:\n\t\tEndPortLid..............1\n\t\tPortNum.................1\n\t\tbase_lid................5\n" +
			"\t\tmaster_sm_base_lid......1\n\t\tcapability_mask.........0xA4A\n"},
		{"NodeRecord named", func(w io.Writer) error {
			b := sb(108, map[int]byte{1: 3, 6: 1})
			copy(b[44:], "raw description")
			return SANodeRecordNamed(w, b, "mapped name")
		}, ""},
	} {
		var out bytes.Buffer
		if err := tc.f(&out); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := out.String()
		switch tc.name {
		case "MFT":
			if !strings.HasPrefix(got, tc.want) || strings.Count(got, "\t\t0xc0") != 32 || !strings.HasSuffix(got, "\t\t0xc05f\t0x8001\n\n") {
				t.Errorf("%s:\n%s", tc.name, got)
			}
		case "NodeRecord named":
			if !strings.HasSuffix(got, "\t\tNodeDescription.........mapped name\n") || strings.Contains(got, "raw") || !strings.HasPrefix(got, "NodeRecord dump:\n\t\tlid.....................3\n") {
				t.Errorf("%s:\n%s", tc.name, got)
			}
		default:
			if got != tc.want {
				t.Errorf("%s:\n--- got\n%s--- want\n%s", tc.name, got, tc.want)
			}
		}
	}
}

func TestSAServiceRecord(t *testing.T) {
	b := make([]byte, 176)
	b[7] = 0x42                       // ServiceID
	b[8], b[9], b[23] = 0xfe, 0x80, 2 // ServiceGID
	b[24], b[25] = 0xff, 0xff         // ServiceP_Key
	b[28], b[31] = 0xff, 0xff         // ServiceLease
	b[32], b[47] = 0x01, 0x0f         // ServiceKey
	copy(b[48:], "svc")
	b[112], b[127] = 1, 16 // ServiceData8
	b[128], b[129] = 0x12, 0x34
	b[144], b[147] = 0x80, 0x01
	b[160], b[175] = 0x01, 0xff
	var out bytes.Buffer
	if err := SAServiceRecord(&out, b, false); err != nil {
		t.Fatal(err)
	}
	golden(t, "service", out.String())
	for _, want := range []string{"\t\tServiceID...............0x0000000000000042\n", "\t\tServiceGID..............fe80::2\n",
		"\t\tServiceP_Key............0xFFFF\n", "\t\tServiceLease............0xFF0000FF\n", "\t\tServiceKey..............<not displayed>\n",
		"\t\tServiceName.............svc\n", "\t\tServiceData8.1..........0x1\n", "\t\tServiceData8.16.........0x10\n",
		"\t\tServiceData16.1.........0x1234\n", "\t\tServiceData32.1.........0x80000001\n",
		"\t\tServiceData64.1.........0x0100000000000000\n", "\t\tServiceData64.2.........0x00000000000000ff\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lacks %q", want)
		}
	}
	out.Reset()
	if err := SAServiceRecord(&out, b, true); err != nil || !strings.Contains(out.String(), "\t\tServiceKey..............0x0100000000000000000000000000000f\n") {
		t.Errorf("-K: %v\n%s", err, out.String())
	}
}

// FuzzSAQueryMore: every record dump of this file takes any bytes without
// panicking, and prints nothing when it fails.
func FuzzSAQueryMore(f *testing.F) {
	f.Add(make([]byte, 176))
	f.Add(make([]byte, 52))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, r := range []func(io.Writer) error{
			func(w io.Writer) error { return SAClassPortInfo(w, b) },
			func(w io.Writer) error { return SAPortInfoRecordBrief(w, b) },
			func(w io.Writer) error { return SAMCMemberRecord(w, b) },
			func(w io.Writer) error { return SAMCGroupRecord(w, b) },
			func(w io.Writer) error { return SAMCMember(w, b, "x") },
			func(w io.Writer) error { return SAMCMemberGID(w, b, "x") },
			func(w io.Writer) error { return SANodeRecordNamed(w, b, "x") },
			func(w io.Writer) error { return SASL2VLRecord(w, b) },
			func(w io.Writer) error { return SAVLArbRecord(w, b) },
			func(w io.Writer) error { return SAPKeyTableRecord(w, b) },
			func(w io.Writer) error { return SALFTRecord(w, b) },
			func(w io.Writer) error { return SAMFTRecord(w, b) },
			func(w io.Writer) error { return SAInformInfoRecord(w, b, true) },
			func(w io.Writer) error { return SAServiceRecord(w, b, true) },
		} {
			var out bytes.Buffer
			if err := r(&out); err != nil && out.Len() != 0 {
				t.Fatalf("printed and failed: %v", err)
			}
		}
	})
}
