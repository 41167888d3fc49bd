package iba

import (
	"strings"
	"testing"
)

// Every static rate code of IBA 15.2.5.16 (table 205 and the codes added
// with FDR to XDR) gives its data rate, not python-rdma's tenth of it.
func TestRateCodes(t *testing.T) {
	want := map[Rate]float64{
		2: 2.5, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60, 9: 80, 10: 120, 11: 14,
		12: 56, 13: 112, 14: 168, 15: 25, 16: 100, 17: 200, 18: 300, 19: 28, 20: 50,
		21: 400, 22: 600, 23: 800, 24: 1200,
	}
	for c := 0; c < 64; c++ {
		r := Rate(c)
		w, known := want[r]
		if got := r.Gbps(); got != w {
			t.Errorf("rate code %d = %v Gb/s, want %v", c, got, w)
		}
		if known != !strings.HasPrefix(r.String(), "unknown") {
			t.Errorf("rate code %d: String %q", c, r.String())
		}
	}
}

func TestSpeeds(t *testing.T) {
	lane := map[Speed]float64{SpeedSDR: 2.5, SpeedDDR: 5, SpeedQDR: 10, SpeedFDR10: 10.3125, SpeedFDR: 14.0625,
		SpeedEDR: 25.78125, SpeedHDR: 53.125, SpeedNDR: 106.25, SpeedXDR: 212.5}
	for s, w := range lane {
		if s.LaneGbps() != w {
			t.Errorf("%v lane %v Gb/s, want %v", s, s.LaneGbps(), w)
		}
	}
	for _, c := range []struct {
		lanes int
		s     Speed
		code  Rate
		ok    bool
	}{
		{1, SpeedSDR, 2, true}, {4, SpeedSDR, 3, true}, {12, SpeedSDR, 4, true}, {2, SpeedSDR, 5, true},
		{4, SpeedDDR, 6, true}, {4, SpeedQDR, 7, true}, {1, SpeedQDR, 3, true}, {12, SpeedQDR, 10, true},
		{8, SpeedQDR, 9, true}, {4, SpeedFDR10, 7, true}, {1, SpeedFDR, 11, true}, {4, SpeedFDR, 12, true},
		{8, SpeedFDR, 13, true}, {12, SpeedFDR, 14, true}, {2, SpeedFDR, 19, true}, {1, SpeedEDR, 15, true},
		{4, SpeedEDR, 16, true}, {12, SpeedEDR, 18, true}, {2, SpeedEDR, 20, true}, {4, SpeedHDR, 17, true},
		{8, SpeedHDR, 21, true}, {12, SpeedHDR, 22, true}, {4, SpeedNDR, 21, true}, {8, SpeedNDR, 23, true},
		{12, SpeedNDR, 24, true}, {4, SpeedXDR, 23, true}, {1, SpeedXDR, 17, true}, {12, SpeedXDR, 0, false},
		{0, SpeedSDR, 0, false},
	} {
		code, ok := RateFor(c.lanes, c.s)
		if code != c.code || ok != c.ok {
			t.Errorf("%dx %v: code %d %v, want %d %v", c.lanes, c.s, code, ok, c.code, c.ok)
		}
	}
}

func TestExtSpeeds(t *testing.T) {
	const ext, ext2 = PortCapIsExtendedSpeedsSupported, PortCapIsCapabilityMask2Supported
	xdr := &PortInfo{LinkSpeedExtActive: LinkSpeedExtNDR, LinkSpeedExtSupported: 0xF, LinkSpeedExtEnabled: 0xF,
		LinkSpeedExtActive2: 1, LinkSpeedExtSupported2: 1, LinkSpeedExtEnabled2: 1}
	for _, c := range []struct {
		name                       string
		pi, capInfo                *PortInfo
		active, supported, enabled uint8
	}{
		{"no capability port", xdr, nil, 0, 0, 0},
		{"no extended speeds", xdr, &PortInfo{CapabilityMask: ext2, CapabilityMask2: PortCap2IsExtendedSpeeds2Supported}, 0, 0, 0},
		{"first group only", xdr, &PortInfo{CapabilityMask: ext}, LinkSpeedExtNDR, 0xF, 0xF},
		{"CapabilityMask2 not valid", xdr, &PortInfo{CapabilityMask: ext, CapabilityMask2: PortCap2IsExtendedSpeeds2Supported}, LinkSpeedExtNDR, 0xF, 0xF},
		{"both groups", xdr, &PortInfo{CapabilityMask: ext | ext2, CapabilityMask2: PortCap2IsExtendedSpeeds2Supported}, LinkSpeedExtXDR, 0x2F, 0x2F},
		{"XDR not active", &PortInfo{LinkSpeedExtActive: LinkSpeedExtHDR, LinkSpeedExtSupported2: 1}, &PortInfo{CapabilityMask: ext | ext2, CapabilityMask2: PortCap2IsExtendedSpeeds2Supported}, LinkSpeedExtHDR, 0x20, 0},
		{"disabled", &PortInfo{LinkSpeedExtEnabled: 30, LinkSpeedExtEnabled2: 5}, &PortInfo{CapabilityMask: ext | ext2, CapabilityMask2: PortCap2IsExtendedSpeeds2Supported}, 0, 0, 0xA0},
	} {
		a, s, e := c.pi.ExtSpeeds(c.capInfo)
		if a != c.active || s != c.supported || e != c.enabled {
			t.Errorf("%s: %#x %#x %#x, want %#x %#x %#x", c.name, a, s, e, c.active, c.supported, c.enabled)
		}
	}
}

func TestActiveSpeed(t *testing.T) {
	for _, c := range []struct {
		sa, ext, ext2, mlnx uint8
		want                Speed
	}{
		{LinkSpeedSDR, 0, 0, 0, SpeedSDR}, {LinkSpeedQDR, 0, 0, 0, SpeedQDR}, {LinkSpeedQDR, 0, 0, 1, SpeedFDR10},
		{LinkSpeedSDR, LinkSpeedExtFDR, 0, 0, SpeedFDR}, {LinkSpeedSDR, LinkSpeedExtEDR, 0, 0, SpeedEDR},
		{LinkSpeedSDR, LinkSpeedExtHDR, 0, 0, SpeedHDR}, {LinkSpeedSDR, LinkSpeedExtNDR, 0, 0, SpeedNDR},
		{LinkSpeedSDR, 0, LinkSpeedExt2XDR, 0, SpeedXDR}, {0, 0, 0, 0, 0},
	} {
		pi := PortInfo{LinkSpeedActive: c.sa, LinkSpeedExtActive: c.ext, LinkSpeedExtActive2: c.ext2}
		if got := ActiveSpeed(&pi, c.mlnx); got != c.want {
			t.Errorf("%+v: %v, want %v", c, got, c.want)
		}
	}
	for w, n := range map[uint8]int{LinkWidth1X: 1, LinkWidth2X: 2, LinkWidth4X: 4, LinkWidth8X: 8, LinkWidth12X: 12, 3: 0} {
		if LinkWidthLanes(w) != n {
			t.Errorf("LinkWidthLanes(%d) = %d, want %d", w, LinkWidthLanes(w), n)
		}
	}
}

func TestWidestLanesAndFastestSpeed(t *testing.T) {
	for mask, want := range map[uint8]int{0: 0, LinkWidth1X: 1, LinkWidth1X | LinkWidth4X: 4, LinkWidth1X | LinkWidth4X | LinkWidth12X: 12, LinkWidth2X | LinkWidth1X: 2, LinkWidth8X | LinkWidth4X: 8} {
		if got := WidestLanes(mask); got != want {
			t.Errorf("WidestLanes(%#x) = %d, want %d", mask, got, want)
		}
	}
	for _, c := range []struct {
		classic, ext, ext2, mlnx uint8
		want                     Speed
	}{
		{0, 0, 0, 0, 0},
		{LinkSpeedSDR, 0, 0, 0, SpeedSDR},
		{LinkSpeedSDR | LinkSpeedDDR | LinkSpeedQDR, 0, 0, 0, SpeedQDR},
		{LinkSpeedSDR | LinkSpeedQDR, 0, 0, 1, SpeedFDR10},
		{LinkSpeedSDR | LinkSpeedQDR, LinkSpeedExtFDR | LinkSpeedExtEDR, 0, 0, SpeedEDR},
		{LinkSpeedQDR, 0x1e, 0, 0, SpeedQDR}, // extended speeds disabled
		{LinkSpeedQDR, LinkSpeedExtHDR | LinkSpeedExtNDR, LinkSpeedExt2XDR, 0, SpeedXDR},
		{0xf, 0, 0, 0, 0}, // "set to supported" is no speed
	} {
		if got := FastestSpeed(c.classic, c.ext, c.ext2, c.mlnx); got != c.want {
			t.Errorf("FastestSpeed(%#x, %#x, %#x, %#x) = %v, want %v", c.classic, c.ext, c.ext2, c.mlnx, got, c.want)
		}
	}
}
