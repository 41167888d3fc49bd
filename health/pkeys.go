package health

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

// PKeyBase is a P_Key without its membership bit (IBA 10.9.1).
func PKeyBase(k uint16) uint16 { return k & 0x7fff }

// fullMember says whether a P_Key is a full membership one.
func fullMember(k uint16) bool { return k&0x8000 != 0 }

// validKeys maps the valid P_Keys of a table (base not 0) by base, with
// full membership winning.
func validKeys(t []uint16) map[uint16]uint16 {
	m := map[uint16]uint16{}
	for _, k := range t {
		if PKeyBase(k) == 0 {
			continue
		}
		if old, ok := m[PKeyBase(k)]; !ok || (!fullMember(old) && fullMember(k)) {
			m[PKeyBase(k)] = k
		}
	}
	return m
}

// enforces says whether a switch port checks P_Keys (IBA 14.2.5.6:
// PartitionEnforcementInbound, Outbound).
func enforces(p *subnet.Port) (in, out bool) {
	if p.Node.Type != iba.NodeTypeSwitch || !p.HasInfo {
		return false, false
	}
	pi := p.PortInfo()
	return pi.PartitionEnforcementInbound != 0, pi.PartitionEnforcementOutbound != 0
}

var _ = register(&Check{
	Name: "pkeys", Severity: Warning, Default: true,
	Needs: NeedPKeys,
	Doc: `P_Key tables consistent across each link (IBA 10.9: a packet passes
only where its P_Key matches). Across a link between a CA port and a
switch port that enforces partitions, every P_Key of the CA must be in
the switch port's table, and a full member on the CA must not be only a
limited member on the switch: ibdiagnet's partition check
(PKeys.switch.missing.pkey, PKeys.switch.part.pkey), which also warns
when a switch port enforces one direction only. Across a link between
two CA ports the two tables must share their keys. One finding per link.`,
	run: func(d *Data) []Finding {
		var out []Finding
		for _, l := range Links(d.Subnet) {
			a, b := l[0], l[1]
			if a.Node.Type == iba.NodeTypeSwitch && b.Node.Type != iba.NodeTypeSwitch {
				a, b = b, a
			}
			var problems []string
			switch {
			case a.Node.Type != iba.NodeTypeSwitch && b.Node.Type == iba.NodeTypeSwitch:
				in, outE := enforces(b)
				if !in && !outE {
					continue
				}
				if in != outE {
					problems = append(problems, fmt.Sprintf("the switch port enforces partitions %s only", map[bool]string{true: "inbound", false: "outbound"}[in]))
				}
				ca, okA := d.PKeys[a]
				sw, okB := d.PKeys[b]
				if !okA || !okB {
					break
				}
				swKeys := validKeys(sw)
				for _, k := range sortedKeys(validKeys(ca)) {
					s, ok := swKeys[PKeyBase(k)]
					switch {
					case !ok:
						problems = append(problems, fmt.Sprintf("P_Key %#04x of the CA port is missing at the switch port", k))
					case fullMember(k) && !fullMember(s):
						problems = append(problems, fmt.Sprintf("P_Key %#04x is a full member at the CA port, limited (%#04x) at the switch port", k, s))
					}
				}
			case a.Node.Type != iba.NodeTypeSwitch && b.Node.Type != iba.NodeTypeSwitch:
				ka, okA := d.PKeys[a]
				kb, okB := d.PKeys[b]
				if !okA || !okB {
					continue
				}
				ma, mb := validKeys(ka), validKeys(kb)
				for _, k := range sortedKeys(ma) {
					if _, ok := mb[PKeyBase(k)]; !ok {
						problems = append(problems, fmt.Sprintf("P_Key %#04x is at this end only", k))
					}
				}
				for _, k := range sortedKeys(mb) {
					if _, ok := ma[PKeyBase(k)]; !ok {
						problems = append(problems, fmt.Sprintf("P_Key %#04x is at the other end only", k))
					}
				}
			}
			if len(problems) > 0 {
				out = append(out, Finding{Port: RefOf(a), Peer: RefOf(b), Message: "P_Key tables disagree: " + strings.Join(problems, "; ")})
			}
		}
		return out
	},
})

func sortedKeys(m map[uint16]uint16) []uint16 {
	out := make([]uint16, 0, len(m))
	for _, k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return PKeyBase(out[i]) < PKeyBase(out[j]) })
	return out
}
