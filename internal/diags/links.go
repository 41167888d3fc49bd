package diags

import (
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/subnet"
)

// Links as iblinkinfo shows them (and ibqueryerrors -r, which prints the
// same port lines): the state, width and speed of a port, what the link
// could run at, and the far end's port and LID, in libibmad's words.

// linkCapInfo is the PortInfo whose CapabilityMask speaks for p: a switch's
// port 0, else the port itself; nil when not known.
func linkCapInfo(p *subnet.Port) *iba.PortInfo {
	if p.Node.Type == iba.NodeTypeSwitch {
		p0 := p.Node.Port(0)
		if p0 == nil {
			return nil
		}
		pi := p0.PortInfo()
		return &pi
	}
	pi := p.PortInfo()
	return &pi
}

func linkMlnxExt(p *subnet.Port) iba.MlnxExtPortInfo {
	var x iba.MlnxExtPortInfo
	_ = x.Unmarshal(p.ExtInfo[:]) // zero when not read, as libibnetdisc's ext_info
	return x
}

// The libibmad renderings (libibmad/dump.c) of the fields the link line
// shows; width and speeds are ibaprint's.
func linkWidth(w uint8) string    { return ibaprint.LinkWidth(uint64(w)) }
func linkSpeed(s uint8) string    { return ibaprint.LinkSpeed(uint64(s)) }
func linkSpeedExt(s uint8) string { return ibaprint.ExtSpeed(uint64(s)) }

// linkExtSpeeds is a port's extended speeds, both groups in one mask
// (iba.PortInfo.ExtSpeeds), as infiniband-diags 56 reads them.
func linkExtSpeeds(p *subnet.Port) (active, supported uint8) {
	pi := p.PortInfo()
	active, supported, _ = pi.ExtSpeeds(linkCapInfo(p))
	return active, supported
}

func linkPortState(s iba.PortState) string {
	switch s {
	case 0:
		return "NoChange"
	case 1:
		return "Down"
	case 2:
		return "Initialize"
	case 3:
		return "Armed"
	case 4:
		return "Active"
	}
	return fmt.Sprintf("?(%d)", uint8(s))
}

func linkPhysState(s iba.PhysPortState) string {
	names := []string{"NoChange", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest"}
	if int(s) < len(names) {
		return names[s]
	}
	return fmt.Sprintf("?(%d)", uint8(s))
}

// linkState is the "(4X 10.0 Gbps Active/LinkUp)" part of a port line,
// with the width and speed the JSON gets.
func linkState(p *subnet.Port) (text, width, speed string) {
	pi := p.PortInfo()
	espeed, _ := linkExtSpeeds(p)
	state, phys := linkPortState(pi.PortState), linkPhysState(pi.PortPhysicalState)
	if pi.PortState == iba.PortStateDown {
		return fmt.Sprintf("(              %6s/%8s)", state, phys), "", ""
	}
	iwidth, ispeed := pi.LinkWidthActive, pi.LinkSpeedActive
	if linkCapInfo(p) == nil {
		iwidth, ispeed = 0, 0
	}
	switch {
	case espeed != 0:
		speed = linkSpeedExt(espeed)
	case linkMlnxExt(p).LinkSpeedActive&1 != 0:
		speed = "10.0 Gbps (FDR10)"
	default:
		speed = linkSpeed(ispeed)
	}
	width = linkWidth(iwidth)
	return fmt.Sprintf("(%3s %18s %6s/%8s)", width, speed, state, phys), width, speed
}

// linkMaxWidth is ibdiag_common.c's get_max_width: the widest width in a
// LinkWidthSupported mask.
func linkMaxWidth(m uint8) uint8 {
	switch {
	case m&8 != 0:
		return 8
	case m&4 != 0:
		return 4
	case m&2 != 0:
		return 2
	case m&0x10 != 0:
		return 0x10
	}
	return 1
}

// linkHighBit is get_max: the highest bit set (1 for 0).
func linkHighBit(m uint8) uint8 {
	r := uint8(1)
	for m >>= 1; m != 0; m >>= 1 {
		r <<= 1
	}
	return r
}

// linkCouldBe is get_max_msg: what the link could run at given both ends'
// supported widths and speeds, when it does not.
func linkCouldBe(p *subnet.Port) (width, speed string) {
	r := p.Remote
	pi, ri := p.PortInfo(), r.PortInfo()
	mw := linkMaxWidth(pi.LinkWidthSupported & ri.LinkWidthSupported)
	if mw&pi.LinkWidthActive == 0 {
		width = "Could be " + linkWidth(mw)
	}
	capOf := func(q *subnet.Port) uint32 {
		if ci := linkCapInfo(q); ci != nil {
			return ci.CapabilityMask
		}
		return 0
	}
	active, supported := linkExtSpeeds(p)
	_, rSupported := linkExtSpeeds(r)
	if capOf(p)&iba.PortCapIsExtendedSpeedsSupported != 0 && capOf(r)&iba.PortCapIsExtendedSpeedsSupported != 0 &&
		supported != 0 && rSupported != 0 {
		ms := linkHighBit(supported & rSupported)
		if ms&active == 0 {
			speed = "Could be " + linkSpeedExt(ms)
		}
		return width, speed
	}
	if linkMlnxExt(p).LinkSpeedSupported&1 != 0 && linkMlnxExt(r).LinkSpeedSupported&1 != 0 {
		if linkMlnxExt(p).LinkSpeedActive&1 == 0 {
			if pi.LinkSpeedActive == 4 {
				speed = "Could be FDR10 (Found link at QDR but expected speed is FDR10)"
			} else {
				speed = "Could be FDR10"
			}
		}
		return width, speed
	}
	ms := linkHighBit(pi.LinkSpeedSupported & ri.LinkSpeedSupported)
	if ms&pi.LinkSpeedActive == 0 {
		speed = "Could be " + linkSpeed(ms)
	}
	return width, speed
}

// linkExtPort is a port's front-panel number as the port lines show it,
// blank when not known.
func linkExtPort(p *subnet.Port) string {
	if p.ExtNum != 0 {
		return fmt.Sprint(p.ExtNum)
	}
	return ""
}

// linkPeerLID is the LID printed for a link's far end: its base LID, else its
// switch's port 0 LID.
func linkPeerLID(r *subnet.Port) uint16 {
	if r.BaseLID != 0 {
		return r.BaseLID
	}
	return r.Node.SMALID
}
