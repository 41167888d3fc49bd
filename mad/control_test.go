package mad

import "testing"

// An ACK carries the segment's class header: a vendor-OUI class's OUI and
// an SA's SM_Key, as the kernel formats ACKs (IBA 13.6.2.1).
func TestControlKeepsClassHeader(t *testing.T) {
	seg := make([]byte, Size)
	seg[0], seg[1], seg[2], seg[3] = 1, 0x33, 1, 0x81 // vendor-OUI class 0x33, GetResp
	seg[37], seg[38], seg[39] = 0x00, 0x14, 0x05      // OUI 0x001405
	seg[40] = 0xee                                    // data: not copied
	b := control(seg, RMPPTypeAck, 0, 1, 1)
	if b[37] != 0x00 || b[38] != 0x14 || b[39] != 0x05 {
		t.Errorf("ACK lost the OUI: % x", b[36:40])
	}
	if b[40] != 0 {
		t.Errorf("ACK copied data past the class header: %#x", b[40])
	}
	if b[3] != 0x01 {
		t.Errorf("ACK method %#x, want the response bit flipped (0x01)", b[3])
	}
	sa := make([]byte, Size)
	sa[0], sa[1], sa[2], sa[3] = 1, 0x03, 2, 0x92
	for i := 36; i < 44; i++ {
		sa[i] = byte(i) // SM_Key
	}
	b = control(sa, RMPPTypeAck, 0, 1, 1)
	for i := 36; i < 44; i++ {
		if b[i] != byte(i) {
			t.Fatalf("SA ACK lost the SM_Key: % x", b[36:44])
		}
	}
}
