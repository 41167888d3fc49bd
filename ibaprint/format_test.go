package ibaprint

import (
	"testing"
)

// The libibmad formatters, quirks included (libibmad/dump.c).
func TestExtSpeed(t *testing.T) {
	for v, want := range map[uint64]string{0: "No Extended Speed", 1: "14.0625 Gbps", 8: "106.25 Gbps", 16: "undefined (16)", 32: "212.5 Gbps", 33: "undefined (33)"} {
		if got := ExtSpeed(v); got != want {
			t.Errorf("ExtSpeed(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestDiagFormatters(t *testing.T) {
	f := func(fm Formatter, v uint64, bits int) string {
		b := make([]byte, 8)
		for i := 0; i < 8; i++ {
			b[i] = byte(v >> (56 - 8*i))
		}
		return fm(b, 64-bits, bits)
	}
	tests := []struct {
		name string
		fm   Formatter
		v    uint64
		bits int
		want string
	}{
		{"hex 4 bits", diagHex, 0xa, 4, "0x0a"},
		{"hex 24 bits", diagHex, 0x2c9, 24, "0x0002c9"},
		{"hex 64 bits", diagHex, 0x2c90300001491, 64, "0x0002c90300001491"},
		{"width 2x", diagLinkWidth, 16, 8, "2X"},
		{"width bad", diagLinkWidth, 3, 8, "undefined (3)"},
		{"width sup 1x4x", diagLinkWidthSup, 3, 8, "1X or 4X"},
		{"width sup 4x", diagLinkWidthSup, 2, 8, "4X (IBA extension)"},
		{"width sup 0", diagLinkWidthSup, 0, 8, "undefined (0) (IBA extension)"},
		{"width en over", diagLinkWidthEn, 0x21, 8, "1X or undefined (33)"},
		{"speed active 0", diagLinkSpeed, 0, 4, "Extended speed"},
		{"speed sup all", diagLinkSpeedList, 7, 4, "2.5 Gbps or 5.0 Gbps or 10.0 Gbps"},
		{"speed sup ddr", diagLinkSpeedList, 2, 4, "5.0 Gbps (IBA extension)"},
		{"speed sup 0", diagLinkSpeedList, 0, 4, "undefined (0) (IBA extension)"},
		{"speed sup 9", diagLinkSpeedList, 9, 4, "2.5 Gbps or undefined (9)"},
		{"ext active edr", diagLinkSpeedExt, 2, 4, "25.78125 Gbps"},
		{"ext active ndr", diagLinkSpeedExt, 8, 4, "106.25 Gbps"},
		{"ext sup 0", diagLinkSpeedExtSup, 0, 4, "0"},
		{"ext en 30", diagLinkSpeedExtEn, 30, 5, "Extended link speeds disabled"},
		{"ext en 17", diagLinkSpeedExtEn, 17, 5, "14.0625 Gbps or undefined (17)"},
		{"ext2 active 0", diagLinkSpeedExt2, 0, 2, "No Extended Speed 2"},
		{"ext2 active xdr", diagLinkSpeedExt2, 1, 2, "212.5 Gbps"},
		{"ext2 active 2", diagLinkSpeedExt2, 2, 2, "undefined (2)"},
		{"ext2 sup 0", diagLinkSpeedExt2List, 0, 2, "0"},
		{"ext2 sup xdr", diagLinkSpeedExt2List, 1, 2, "212.5 Gbps"},
		// libibmad writes the undefined bits over the speed, blank first.
		{"ext2 sup 3", diagLinkSpeedExt2List, 3, 2, " undefined (3)"},
		{"ext2 en 4", diagLinkSpeedExt2List, 4, 3, " undefined (4)"},
		{"state", diagPortState, 2, 4, "Initialize"},
		{"state bad", diagPortState, 5, 4, "?(5)"},
		{"phys", diagPhysPortState, 5, 4, "LinkUp"},
		{"mtu", diagMTU, 5, 4, "4096"},
		{"mtu 0", diagMTU, 0, 4, "?(0)"},
		{"opervls 0", diagOperVLs, 0, 4, "No change"},
		{"node type", diagNodeType, 9, 8, "?(9)?"},
		{"capmask", diagPortCapMask, 0x2, 32, "0x2\n\t\t\t\tIsSM"},
		{"capmask 13", diagPortCapMask, 1 << 13, 32, "0x2000"},
		{"sa node type", saNodeType, 7, 8, "UNKNOWN"},
		{"sa hex", saHexUp, 0xabc, 16, "0xABC"},
	}
	for _, tc := range tests {
		if got := f(tc.fm, tc.v, tc.bits); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
