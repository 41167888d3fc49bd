package ibaprint

import (
	"testing"
)

// Every static rate code of IBA 15.2.5.16 (table 205 and the codes added
// with FDR, EDR, HDR, NDR and XDR) gives its data rate, not python-rdma's
// tenth of it.
func TestRateCodes(t *testing.T) {
	want := map[uint8]string{
		2: "2.5 Gb/s", 3: "10 Gb/s", 4: "30 Gb/s", 5: "5 Gb/s", 6: "20 Gb/s",
		7: "40 Gb/s", 8: "60 Gb/s", 9: "80 Gb/s", 10: "120 Gb/s", 11: "14 Gb/s",
		12: "56 Gb/s", 13: "112 Gb/s", 14: "168 Gb/s", 15: "25 Gb/s", 16: "100 Gb/s",
		17: "200 Gb/s", 18: "300 Gb/s", 19: "28 Gb/s", 20: "50 Gb/s", 21: "400 Gb/s",
		22: "600 Gb/s", 23: "800 Gb/s", 24: "1200 Gb/s",
	}
	for c := 0; c < 256; c++ {
		got := RateString(uint8(c))
		if w, ok := want[uint8(c)]; ok {
			if got != w {
				t.Errorf("rate code %d = %q, want %q", c, got, w)
			}
			continue
		}
		if _, ok := RateGbps(uint8(c)); ok || got != "unknown rate code "+itoa(c) {
			t.Errorf("rate code %d should be unknown, got %q", c, got)
		}
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	s := ""
	for ; i > 0; i /= 10 {
		s = string(rune('0'+i%10)) + s
	}
	return s
}

func TestGenerations(t *testing.T) {
	lane := map[string]float64{"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR10": 10.3125, "FDR": 14.0625,
		"EDR": 25.78125, "HDR": 53.125, "NDR": 106.25, "XDR": 212.5}
	if len(Generations) != len(lane) {
		t.Fatalf("%d generations, want %d", len(Generations), len(lane))
	}
	for _, g := range Generations {
		if lane[g.Name] != g.LaneGbps {
			t.Errorf("%s lane %v Gb/s, want %v", g.Name, g.LaneGbps, lane[g.Name])
		}
	}
	// Width x generation to rate code, for the widths of IBA 14.2.5.6.
	codes := []struct {
		lanes int
		gen   string
		code  uint8
		ok    bool
	}{
		{1, "SDR", 2, true}, {4, "SDR", 3, true}, {12, "SDR", 4, true}, {2, "SDR", 5, true},
		{4, "DDR", 6, true}, {4, "QDR", 7, true}, {1, "QDR", 3, true}, {12, "QDR", 10, true},
		{8, "QDR", 9, true}, {4, "FDR10", 7, true}, {1, "FDR", 11, true}, {4, "FDR", 12, true},
		{8, "FDR", 13, true}, {12, "FDR", 14, true}, {2, "FDR", 19, true}, {1, "EDR", 15, true},
		{4, "EDR", 16, true}, {12, "EDR", 18, true}, {2, "EDR", 20, true}, {4, "HDR", 17, true},
		{8, "HDR", 21, true}, {12, "HDR", 22, true}, {4, "NDR", 21, true}, {8, "NDR", 23, true},
		{12, "NDR", 24, true}, {4, "XDR", 23, true}, {1, "XDR", 17, true}, {12, "XDR", 0, false},
	}
	for _, c := range codes {
		g, ok := GenerationByName(c.gen)
		if !ok {
			t.Fatalf("no generation %s", c.gen)
		}
		code, ok := RateCode(c.lanes, g)
		if code != c.code || ok != c.ok {
			t.Errorf("%dx %s: code %d %v, want %d %v", c.lanes, c.gen, code, ok, c.code, c.ok)
		}
	}
	if s := LinkRate(4, Generations[5]); s != "4X EDR 103.125 Gb/s" {
		t.Errorf("LinkRate = %q", s)
	}
	for _, tc := range []struct {
		sa, sea, se2 uint8
		fdr10        bool
		want         string
	}{
		{1, 0, 0, false, "SDR"}, {2, 0, 0, false, "DDR"}, {4, 0, 0, false, "QDR"},
		{4, 0, 0, true, "FDR10"}, {4, 1, 0, false, "FDR"}, {4, 2, 0, false, "EDR"},
		{4, 4, 0, false, "HDR"}, {4, 8, 0, false, "NDR"}, {4, 8, 1, false, "XDR"},
	} {
		g, ok := ActiveGeneration(tc.sa, tc.sea, tc.se2, tc.fdr10)
		if !ok || g.Name != tc.want {
			t.Errorf("ActiveGeneration(%d,%d,%d,%v) = %s", tc.sa, tc.sea, tc.se2, tc.fdr10, g.Name)
		}
	}
	if _, ok := ActiveGeneration(0, 0, 0, false); ok {
		t.Error("no speed active gave a generation")
	}
	for w, s := range map[uint8]string{1: "1X", 2: "4X", 4: "8X", 8: "12X", 16: "2X", 3: "undefined (3)"} {
		if WidthString(w) != s {
			t.Errorf("WidthString(%d) = %q, want %q", w, WidthString(w), s)
		}
	}
}

// The libibmad formatters, quirks included (libibmad/dump.c).
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
