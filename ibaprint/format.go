package ibaprint

import (
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
)

// Generation is a per-lane signalling generation of InfiniBand.
type Generation struct {
	// Name is the marketing name: SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR.
	Name string
	// LaneGbps is the signalling rate of one lane in Gb/s, as
	// infiniband-diags prints link speeds (14.0625 for FDR).
	LaneGbps float64
	// DataGbps is the nominal data rate of one lane that the static rate
	// codes of PathRecord use (14 for FDR, 50 for HDR).
	DataGbps float64
}

// Generations lists every generation, oldest first (IBA 14.2.5.6
// LinkSpeedActive, LinkSpeedExtActive and LinkSpeedExtActive2; FDR10 is the
// Mellanox extension reported in its extended port info).
var Generations = []Generation{
	{"SDR", 2.5, 2.5},
	{"DDR", 5, 5},
	{"QDR", 10, 10},
	{"FDR10", 10.3125, 10},
	{"FDR", 14.0625, 14},
	{"EDR", 25.78125, 25},
	{"HDR", 53.125, 50},
	{"NDR", 106.25, 100},
	{"XDR", 212.5, 200},
}

// GenerationByName finds a generation (SDR ... XDR), case-insensitively.
func GenerationByName(name string) (Generation, bool) {
	for _, g := range Generations {
		if strings.EqualFold(g.Name, name) {
			return g, true
		}
	}
	return Generation{}, false
}

// ActiveGeneration works out the generation a port runs at from PortInfo's
// LinkSpeedActive, LinkSpeedExtActive and LinkSpeedExtActive2 (0 where the
// port has none) and the FDR10 bit of the Mellanox extended port info: the
// newest active one wins (IBA 14.2.5.6: "LinkSpeedExtActive 0: no extended
// speed active").
func ActiveGeneration(speedActive, speedExtActive, speedExt2Active uint8, fdr10 bool) (Generation, bool) {
	name := ""
	switch {
	case speedExt2Active&0x1 != 0:
		name = "XDR"
	case speedExtActive&0x8 != 0:
		name = "NDR"
	case speedExtActive&0x4 != 0:
		name = "HDR"
	case speedExtActive&0x2 != 0:
		name = "EDR"
	case speedExtActive&0x1 != 0:
		name = "FDR"
	case fdr10:
		name = "FDR10"
	case speedActive&0x4 != 0:
		name = "QDR"
	case speedActive&0x2 != 0:
		name = "DDR"
	case speedActive&0x1 != 0:
		name = "SDR"
	}
	return GenerationByName(name)
}

// WidthLanes gives the lanes of one PortInfo link width bit (IBA 14.2.5.6:
// 1 = 1x, 2 = 4x, 4 = 8x, 8 = 12x, 16 = 2x), 0 for anything else.
func WidthLanes(width uint8) int {
	switch width {
	case 1:
		return 1
	case 2:
		return 4
	case 4:
		return 8
	case 8:
		return 12
	case 16:
		return 2
	}
	return 0
}

// WidthString spells one link width bit as 1X, 2X, 4X, 8X or 12X.
func WidthString(width uint8) string {
	if n := WidthLanes(width); n > 0 {
		return strconv.Itoa(n) + "X"
	}
	return "undefined (" + strconv.Itoa(int(width)) + ")"
}

// LinkRate spells the signalling rate of a link: "4X EDR 103.125 Gb/s".
func LinkRate(lanes int, g Generation) string {
	return strconv.Itoa(lanes) + "X " + g.Name + " " + formatGbps(float64(lanes)*g.LaneGbps) + " Gb/s"
}

// rateCodes are the static rate codes of PathRecord and MCMemberRecord
// (IBA 15.2.5.16, table 205, and the codes added for FDR to XDR), as the
// nominal data rate in Gb/s.
var rateCodes = map[uint8]float64{
	2: 2.5, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60, 9: 80, 10: 120,
	11: 14, 12: 56, 13: 112, 14: 168, 15: 25, 16: 100, 17: 200, 18: 300,
	19: 28, 20: 50, 21: 400, 22: 600, 23: 800, 24: 1200,
}

// RateGbps gives the data rate of a static rate code in Gb/s (3 is 10 Gb/s,
// 4x SDR or 1x QDR); false for a code the IBA does not define.
func RateGbps(code uint8) (float64, bool) {
	v, ok := rateCodes[code]
	return v, ok
}

// RateString spells a static rate code: "2.5 Gb/s", "56 Gb/s", or
// "unknown rate code 1".
func RateString(code uint8) string {
	if v, ok := rateCodes[code]; ok {
		return formatGbps(v) + " Gb/s"
	}
	return "unknown rate code " + strconv.Itoa(int(code))
}

// RateCode gives the static rate code of a link of lanes at a generation's
// nominal data rate (4x EDR, 100 Gb/s, is 16); false when no code exists
// (12x XDR).
func RateCode(lanes int, g Generation) (uint8, bool) {
	want := float64(lanes) * g.DataGbps
	for c, v := range rateCodes {
		if v == want {
			return c, true
		}
	}
	return 0, false
}

func formatGbps(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// GUIDColon spells a GUID as python-rdma does, 0002:c903:0000:1491.
func GUIDColon(g iba.GUID) string { return g.Colon() }
