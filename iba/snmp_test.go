package iba

import "testing"

// TestSNMPFormatLayout checks the segmentation fields at bytes 56 to 63
// (IBA 16.4.1) and the registry.
func TestSNMPFormatLayout(t *testing.T) {
	m := make([]byte, 256)
	copy(m, hexBytes(t, "01 08 01 03"))
	copy(m[56:], hexBytes(t, "00 00 12 34 | c0 | 02 | 00 2a"))
	var f SNMPFormat
	if err := f.Unmarshal(m); err != nil {
		t.Fatal(err)
	}
	expect(t, "MgmtClass", f.MgmtClass, uint8(ClassSNMP))
	expect(t, "RAddress", f.RAddress, 0x1234)
	expect(t, "PayloadLength", f.PayloadLength, 0xc0)
	expect(t, "SegmentNumber", f.SegmentNumber, 2)
	expect(t, "SourceLID", f.SourceLID, 42)
	expectAttr(t, ClassSNMP, 0x10, "CommunityInfo")
	expectAttr(t, ClassSNMP, 0x11, "PDUInfo")
	if k := fieldNamed(t, (&CommunityInfo{}).Desc(), "communityName").Kind; k != KindString {
		t.Errorf("CommunityName kind %v, want a string", k)
	}
}
