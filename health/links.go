package health

import (
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

// Links lists every link once, as the pair of its ends, the end of the
// node found first as A.
func Links(s *subnet.Subnet) [][2]*subnet.Port {
	var out [][2]*subnet.Port
	for _, n := range s.Nodes() {
		for _, p := range n.Ports {
			if p == nil || p.Num == 0 || p.Remote == nil {
				continue
			}
			r := p.Remote
			if r.Node.Index() < n.Index() || (r.Node == n && r.Num < p.Num) {
				continue
			}
			out = append(out, [2]*subnet.Port{p, r})
		}
	}
	return out
}

var widthOrder = []uint8{iba.LinkWidth12X, iba.LinkWidth8X, iba.LinkWidth4X, iba.LinkWidth2X, iba.LinkWidth1X}

// widest is the widest width of a LinkWidth mask, in lanes (0 for none).
func widest(mask uint8) int {
	for _, w := range widthOrder {
		if mask&w != 0 {
			return iba.LinkWidthLanes(w)
		}
	}
	return 0
}

// enabledSpeeds are the speeds a port's PortInfo enables, classic and
// extended (IBA 14.2.5.6).
func enabledSpeeds(pi *iba.PortInfo) map[iba.Speed]bool {
	m := map[iba.Speed]bool{}
	for bit, s := range map[uint8]iba.Speed{iba.LinkSpeedSDR: iba.SpeedSDR, iba.LinkSpeedDDR: iba.SpeedDDR, iba.LinkSpeedQDR: iba.SpeedQDR} {
		if pi.LinkSpeedEnabled&bit != 0 {
			m[s] = true
		}
	}
	for bit, s := range map[uint8]iba.Speed{iba.LinkSpeedExtFDR: iba.SpeedFDR, iba.LinkSpeedExtEDR: iba.SpeedEDR, iba.LinkSpeedExtHDR: iba.SpeedHDR, iba.LinkSpeedExtNDR: iba.SpeedNDR} {
		if pi.LinkSpeedExtEnabled&bit != 0 && pi.LinkSpeedExtEnabled != 0x1e && pi.LinkSpeedExtEnabled != 0x1f {
			m[s] = true
		}
	}
	return m
}

// bestCommon is the fastest speed both enable, 0 for none.
func bestCommon(a, b map[iba.Speed]bool) iba.Speed {
	best := iba.Speed(0)
	for s := range a {
		if b[s] && s > best {
			best = s
		}
	}
	return best
}

func mlnxSpeed(p *subnet.Port) uint8 {
	if !p.HasExtInfo {
		return 0
	}
	var x iba.MlnxExtPortInfo
	_ = x.Unmarshal(p.ExtInfo[:])
	return x.LinkSpeedActive
}

// perLink runs f on every link whose two PortInfos are known, a at l[0]
// and b at l[1]; a message f returns is a finding on that link.
func perLink(d *Data, f func(l [2]*subnet.Port, a, b *iba.PortInfo) string) []Finding {
	var out []Finding
	for _, l := range Links(d.Subnet) {
		if !l[0].HasInfo || !l[1].HasInfo {
			continue
		}
		a, b := l[0].PortInfo(), l[1].PortInfo()
		if msg := f(l, &a, &b); msg != "" {
			out = append(out, Finding{Port: RefOf(l[0]), Peer: RefOf(l[1]), Message: msg})
		}
	}
	return out
}

// bothUp tells whether both ends of a link are physically up.
func bothUp(a, b *iba.PortInfo) bool {
	return a.PortPhysicalState == iba.PhysPortStateLinkUp && b.PortPhysicalState == iba.PhysPortStateLinkUp
}

var _ = register(&Check{
	Name: "port-state", Severity: Warning, Default: true,
	Doc: `Links that are physically up (PortPhysicalState LinkUp) but not Active
at both ends: a port in Init or Armed carries no data (IBA 7.2, 14.2.5.6).
ibdiagnet's "links in INIT state" check (-skip logical_state); ibdiagnet
2 adds Armed. One finding per link.`,
	run: func(d *Data) []Finding {
		return perLink(d, func(_ [2]*subnet.Port, a, b *iba.PortInfo) string {
			if a.PortState == iba.PortStateActive && b.PortState == iba.PortStateActive {
				return ""
			}
			if !bothUp(a, b) {
				return "" // link-ends tells a link up at one end only
			}
			return fmt.Sprintf("the link is up but not active: %s at this end, %s at the other", a.PortState, b.PortState)
		})
	},
})

var _ = register(&Check{
	Name: "link-ends", Severity: Warning, Default: true,
	Doc: `Links whose two ends disagree about the link: one physically up and
the other not, different logical states by more than a step of the Init,
Armed, Active sequence, different active widths or speeds (IBA 14.2.5.6:
both ends of a trained link share them). ibdiagnet 1.x's link settings
check compares PHY and SPD of both ends the same way. One finding per
link.`,
	run: func(d *Data) []Finding {
		return perLink(d, func(l [2]*subnet.Port, a, b *iba.PortInfo) string {
			const pre = "the ends disagree: "
			sa, sb := iba.ActiveSpeed(a, mlnxSpeed(l[0])), iba.ActiveSpeed(b, mlnxSpeed(l[1]))
			switch {
			case (a.PortPhysicalState == iba.PhysPortStateLinkUp) != (b.PortPhysicalState == iba.PhysPortStateLinkUp):
				return pre + fmt.Sprintf("physical state %s at this end, %s at the other", a.PortPhysicalState, b.PortPhysicalState)
			case a.PortPhysicalState != iba.PhysPortStateLinkUp:
				return ""
			case a.LinkWidthActive != b.LinkWidthActive:
				return pre + fmt.Sprintf("active width %dx at this end, %dx at the other", iba.LinkWidthLanes(a.LinkWidthActive), iba.LinkWidthLanes(b.LinkWidthActive))
			case sa != sb:
				return pre + fmt.Sprintf("active speed %v at this end, %v at the other", sa, sb)
			case stateGap(a.PortState, b.PortState) > 1:
				return pre + fmt.Sprintf("logical state %s at this end, %s at the other", a.PortState, b.PortState)
			}
			return ""
		})
	},
})

func stateGap(a, b iba.PortState) int {
	d := int(a) - int(b)
	if d < 0 {
		d = -d
	}
	return d
}

var _ = register(&Check{
	Name: "link-width", Severity: Warning, Default: true,
	Doc: `Links whose active width is narrower than the widest width both ends
enable — a link trains to that width (IBA 14.2.5.6, 5.4.2), so a
narrower one has lost lanes — or, with an expected width (ibdiagnet
-lw), any other width than that. ibdiagnet 2 compares with the widths
both ends support; rdmakit uses the enabled ones, which is what a
healthy link reaches, so that a fabric whose SM enables less than the
hardware supports is not reported. One finding per link.`,
	run: func(d *Data) []Finding {
		return perLink(d, func(_ [2]*subnet.Port, a, b *iba.PortInfo) string {
			if !bothUp(a, b) {
				return ""
			}
			act := iba.LinkWidthLanes(a.LinkWidthActive)
			best := widest(a.LinkWidthEnabled & b.LinkWidthEnabled)
			switch {
			case d.opts.ExpectedWidth != 0 && act != d.opts.ExpectedWidth:
				return fmt.Sprintf("the link runs at %dx, %dx expected", act, d.opts.ExpectedWidth)
			case best != 0 && act < best:
				return fmt.Sprintf("the link runs at %dx although both ends enable %dx", act, best)
			}
			return ""
		})
	},
})

var _ = register(&Check{
	Name: "link-speed", Severity: Warning, Default: true,
	Doc: `Links whose active speed is slower than the fastest speed both ends
enable (IBA 14.2.5.6, classic and extended speeds), or, with an
expected speed (ibdiagnet -ls), any other speed than that. Like
link-width it compares with the enabled speeds, where ibdiagnet 2 uses
the supported ones. One finding per link.`,
	run: func(d *Data) []Finding {
		return perLink(d, func(l [2]*subnet.Port, a, b *iba.PortInfo) string {
			if !bothUp(a, b) {
				return ""
			}
			act := iba.ActiveSpeed(a, mlnxSpeed(l[0]))
			best := bestCommon(enabledSpeeds(a), enabledSpeeds(b))
			switch {
			case d.opts.ExpectedSpeed != 0 && act != d.opts.ExpectedSpeed:
				return fmt.Sprintf("the link runs at %v, %v expected", act, d.opts.ExpectedSpeed)
			case best != 0 && act != iba.SpeedFDR10 && act < best:
				return fmt.Sprintf("the link runs at %v although both ends enable %v", act, best)
			}
			return ""
		})
	},
})
