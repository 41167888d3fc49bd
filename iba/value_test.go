package iba

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// testColor is an enumeration for the synthetic structure below.
func testColor(v uint64) string {
	switch v {
	case 1:
		return "Red"
	case 2:
		return "Green"
	}
	return "unknown(" + string(rune('0'+v%10)) + ")"
}

// testStruct exercises every kind at awkward offsets, independent of the
// declarations other people edit.
var testStruct = &Struct{
	Name: "TestThing",
	Size: 52,
	Fields: []Field{
		{Name: "flag", Off: 0, Bits: 1, Count: 1},
		{Name: "color", Off: 1, Bits: 3, Count: 1, Enum: testColor},
		{Name: "mask", Off: 4, Bits: 12, Count: 1, Hint: HintHex},
		{Name: "lid", Off: 16, Bits: 16, Count: 1},
		{Name: "guid", Off: 32, Bits: 64, Count: 1, Kind: KindGUID},
		{Name: "gid", Off: 100, Bits: 128, Count: 1, Kind: KindGID}, // not byte aligned
		{Name: "reserved_228", Off: 228, Bits: 4, Count: 1, Reserved: true},
		{Name: "prefix", Off: 232, Bits: 64, Count: 1, Hint: HintGIDPrefix},
		{Name: "name", Off: 296, Bits: 8, Count: 8, Kind: KindString, Array: true},
		{Name: "blob", Off: 360, Bits: 8, Count: 4, Kind: KindBytes, Array: true},
		{Name: "nibbles", Off: 392, Bits: 4, Count: 4, Array: true},
	},
}

func TestSetTextGetText(t *testing.T) {
	tests := []struct {
		path, in, out string
	}{
		{"flag", "1", "1"},
		{"color", "2", "Green"},
		{"color", "red", "Red"},
		{"color", "0x1", "Red"},
		{"color", "5", "5"}, // no name: the number
		{"mask", "0xabc", "0xabc"},
		{"mask", "17", "0x011"},
		{"lid", "65535", "65535"},
		{"lid", " 0x10 ", "16"},
		{"guid", "0x0002c90300001491", "0x0002c90300001491"},
		{"guid", "0002:c903:0000:1491", "0x0002c90300001491"},
		{"guid", "2:c903:0:1491", "0x0002c90300001491"},
		{"guid", "0002c90300001491", "0x0002c90300001491"},
		{"gid", "fe80::2:c903:0:1491", "fe80::2:c903:0:1491"},
		{"gid", "FE80:0000:0000:0000:0002:C903:0000:1491", "fe80::2:c903:0:1491"},
		{"prefix", "fe80::/64", "fe80::/64"},
		{"prefix", "0xfe80000000000000", "fe80::/64"},
		{"name", "abc", "abc"},
		{"name", "12345678", "12345678"},
		{"blob", "0xdeadbeef", "deadbeef"},
		{"blob", "ab", "ab000000"},
		{"nibbles[2]", "15", "15"},
		{"nibbles_3", "7", "7"},
		{"reserved_228", "3", "3"},
	}
	for _, tc := range tests {
		t.Run(tc.path+"="+tc.in, func(t *testing.T) {
			b := make([]byte, testStruct.Size)
			r, err := testStruct.Lookup(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.SetText(b, tc.in); err != nil {
				t.Fatal(err)
			}
			got, err := r.Text(b)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.out {
				t.Errorf("Text = %q, want %q", got, tc.out)
			}
			// Nothing outside the component moved.
			c := make([]byte, len(b))
			for i := 0; i < r.Bits(); i++ {
				putBits(c, r.Off+i, 1, 1)
			}
			for i := range b {
				if b[i]&^c[i] != 0 {
					t.Fatalf("byte %d = %#02x: bits outside the component were set", i, b[i])
				}
			}
		})
	}
}

func TestSetTextErrors(t *testing.T) {
	tests := []struct {
		path, in, want string
	}{
		{"flag", "2", "flag: value 2 does not fit in 1 bits (0 to 1)"},
		{"lid", "65536", "lid: value 65536 does not fit in 16 bits (0 to 65535)"},
		{"lid", "-1", `lid: "-1" is not a decimal or 0x-hex integer`},
		{"lid", "ten", `"ten" is not a decimal or 0x-hex integer`},
		{"color", "Blue", `color: "Blue" is not a decimal or 0x-hex integer or a name such as "Red"`},
		{"guid", "0002:c903:1491", "want 4 colon-separated groups"},
		{"guid", "xyz", "GUID \"xyz\""},
		{"gid", "10.0.0.1", "not an IPv6 address"},
		{"name", "123456789", `name: "123456789" is 9 bytes, the field holds 8`},
		{"blob", "0x0102030405", "5 bytes do not fit in 4"},
		{"blob", "zz", "is not hex bytes"},
		{"nibbles", "1", "is a array of 4; give nibbles[i]"},
	}
	for _, tc := range tests {
		t.Run(tc.path+"="+tc.in, func(t *testing.T) {
			b := make([]byte, testStruct.Size)
			r, err := testStruct.Lookup(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			err = r.SetText(b, tc.in)
			if err == nil {
				t.Fatal("no error")
			}
			var pe *PathError
			if !errors.As(err, &pe) {
				t.Errorf("%T is not a *PathError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			if !bytes.Equal(b, make([]byte, len(b))) {
				t.Errorf("a refused value changed the buffer: %x", b)
			}
		})
	}
}

func TestRefShortBuffer(t *testing.T) {
	r, err := testStruct.Lookup("gid")
	if err != nil {
		t.Fatal(err)
	}
	short := make([]byte, 20)
	if g := r.GID(short); g != (GID{}) {
		t.Errorf("GID of a short buffer = %v", g)
	}
	if err := r.SetText(short, "::1"); err == nil || !strings.Contains(err.Error(), "buffer of 20 bytes ends before the component (bits 100 to 227)") {
		t.Errorf("SetText on a short buffer: %v", err)
	}
	if _, err := r.Text(short); err == nil {
		t.Error("Text on a short buffer: no error")
	}
	lid, _ := testStruct.Lookup("lid")
	if v := lid.Uint(nil); v != 0 {
		t.Errorf("Uint(nil) = %d", v)
	}
	if _, err := lid.Read(make([]byte, 3)); err == nil {
		t.Error("Read of a short buffer: no error")
	}
	if lid.Bytes(make([]byte, 3)) != nil {
		t.Error("Bytes of a short buffer is not nil")
	}
}

func TestRefTypes(t *testing.T) {
	b := make([]byte, testStruct.Size)
	name, _ := testStruct.Lookup("name")
	if _, err := name.Read(b); err == nil || !strings.Contains(err.Error(), "is a 64-bit array of 8, not an integer") {
		t.Errorf("Read of a string: %v", err)
	}
	gid, _ := testStruct.Lookup("gid")
	if err := gid.SetUint(b, 1); err == nil {
		t.Error("SetUint on a GID: no error")
	}
	if err := gid.SetGUID(b, 1); err == nil {
		t.Error("SetGUID on a GID: no error")
	}
	lid, _ := testStruct.Lookup("lid")
	if err := lid.SetGID(b, GID{}); err == nil {
		t.Error("SetGID on a LID: no error")
	}
	if err := lid.SetUint(b, 0xbeef); err != nil || lid.Uint(b) != 0xbeef || b[2] != 0xbe || b[3] != 0xef {
		t.Errorf("SetUint(0xbeef): %v, bytes %x", err, b[:4])
	}
}

// The GID component sits at bit 100: check the bytes land where the IBA
// numbering puts them.
func TestUnalignedGID(t *testing.T) {
	b := make([]byte, testStruct.Size)
	r, _ := testStruct.Lookup("gid")
	g, _ := ParseGID("fe80::2:c903:0:1491")
	if err := r.SetGID(b, g); err != nil {
		t.Fatal(err)
	}
	// 100 bits are 25 hex digits; the GID's 32 follow, then the low nibble
	// of byte 28.
	want := strings.Repeat("0", 25) + "fe800000000000000002c90300001491" + "0"
	if got := hex.EncodeToString(b[:29]); got != want {
		t.Errorf("bytes %s, want prefix %s", got, want)
	}
	if r.GID(b) != g {
		t.Errorf("read back %v", r.GID(b))
	}
}

// Real declarations: set the fields ibtool query sets and read them back
// through the generated codec.
func TestRefAgainstCodec(t *testing.T) {
	nr := mustStruct(t, "NodeRecord")
	b := make([]byte, nr.Size)
	set := map[string]string{
		"LID":                      "0x12",
		"nodeInfo.systemImageGUID": "0017:77ff:fef9:6e79",
		"nodeInfo.numPorts":        "36",
		"nodeInfo.vendorID":        "0x2c9",
	}
	for p, v := range set {
		r, err := nr.Lookup(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.SetText(b, v); err != nil {
			t.Fatal(err)
		}
	}
	var rec NodeRecord
	if err := rec.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	if rec.LID != 0x12 || rec.NodeInfo.SystemImageGUID != 0x001777fffef96e79 || rec.NodeInfo.NumPorts != 36 || rec.NodeInfo.VendorID != 0x2c9 {
		t.Errorf("decoded %+v", rec)
	}
	r, _ := nr.Lookup("nodeInfo.systemImageGUID")
	if r.GUID(b) != 0x001777fffef96e79 {
		t.Errorf("GUID = %v", r.GUID(b))
	}
	r, _ = nr.Lookup("nodeInfo.numPorts")
	if err := r.SetText(b, "256"); err == nil {
		t.Error("numPorts=256 accepted")
	}
}
