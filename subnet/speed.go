package subnet

import "github.com/rdmakit/rdmakit/iba"

// PortInfo:CapabilityMask and CapabilityMask2 bits that say the extended
// speed fields are valid (IBA 14.2.5.6, tables 159 and 160).
const (
	capHasExtSpeeds = iba.PortCapIsExtendedSpeedsSupported
	capHasCapMask2  = iba.PortCapIsCapabilityMask2Supported
	cap2ExtSpeeds2  = iba.PortCap2IsExtendedSpeeds2Supported
	mlnxSpeedFDR10  = 0x01 // MlnxExtPortInfo:LinkSpeedActive bit 0
	speedQDR        = 4    // PortInfo:LinkSpeedActive for 10 Gb/s lanes
)

// aggExtSpeed is the extended active speed of info as libibnetdisc works it
// out (ibnd_get_agg_linkspeedext, iba.PortInfo.ExtSpeeds): XDR is bit 5. A
// switch takes capInfo from its port 0, a CA from the port itself.
func aggExtSpeed(capInfo, info *iba.PortInfo) int {
	active, _, _ := info.ExtSpeeds(capInfo)
	return int(active)
}

// widthString is ibnetdiscover's spelling of PortInfo:LinkWidthActive.
func widthString(w uint8) string {
	switch w {
	case 1:
		return "1x"
	case 2:
		return "4x"
	case 4:
		return "8x"
	case 8:
		return "12x"
	case 16:
		return "2x"
	}
	return "??"
}

func legacySpeedString(s uint8) string {
	switch s {
	case 1:
		return "SDR"
	case 2:
		return "DDR"
	case 4:
		return "QDR"
	}
	return "???"
}

// speedString is ibnetdiscover's spelling of a port's active speed: the
// extended speed when there is one or when the legacy speed is QDR (which
// may be FDR10 by the Mellanox attribute), else the legacy one.
func speedString(ispeed uint8, espeed int, fdr10 uint8) string {
	if ispeed != speedQDR && espeed == 0 {
		return legacySpeedString(ispeed)
	}
	switch espeed {
	case 0:
		if fdr10&mlnxSpeedFDR10 != 0 {
			return "FDR10"
		}
		return legacySpeedString(ispeed)
	case 1:
		return "FDR"
	case 2:
		return "EDR"
	case 4:
		return "HDR"
	case 8:
		return "NDR"
	case 32:
		return "XDR"
	}
	return "???"
}

// linkRate is what ibnetdiscover prints for a port's link: width, speed,
// and the raw values behind them for --full.
type linkRate struct {
	width, ispeed, vlcap uint8
	text                 string
}

// rateOf works a port's rate out as ibnetdiscover's out_switch_port and
// out_ca_port do.
func rateOf(p *Port) linkRate {
	pi := p.PortInfo()
	r := linkRate{width: pi.LinkWidthActive, ispeed: pi.LinkSpeedActive, vlcap: pi.VLCap}
	var espeed int
	if p.Node.Type == iba.NodeTypeSwitch {
		p0 := p.Node.Port(0)
		if p0 == nil {
			r.ispeed = 0
		} else {
			c := p0.PortInfo()
			espeed = aggExtSpeed(&c, &pi)
		}
	} else {
		espeed = aggExtSpeed(&pi, &pi)
	}
	var fdr10 uint8
	if p.HasExtInfo {
		var x iba.MlnxExtPortInfo
		_ = x.Unmarshal(p.ExtInfo[:])
		fdr10 = x.LinkSpeedActive
	}
	r.text = widthString(r.width) + speedString(r.ispeed, espeed, fdr10)
	return r
}

// Rate is the active width and speed of a port's link as PortInfo and the
// Mellanox extension report it (0 when unknown).
func (p *Port) Rate() (lanes int, speed iba.Speed) {
	if !p.HasInfo {
		return 0, 0
	}
	pi := p.PortInfo()
	var mlnx uint8
	if p.HasExtInfo {
		var x iba.MlnxExtPortInfo
		_ = x.Unmarshal(p.ExtInfo[:])
		mlnx = x.LinkSpeedActive
	}
	return iba.LinkWidthLanes(pi.LinkWidthActive), iba.ActiveSpeed(&pi, mlnx)
}
