package health

import (
	"fmt"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

// McastReach follows a multicast packet for mlid from port src through
// the switches' multicast forwarding tables (IBA 14.2.5.12, 18.2.4.4: out
// of every port of the MLID's mask but the one it came in by) and returns
// the end ports it reaches and whether it came back to a switch it had
// left (a loop in the tree).
func McastReach(src *subnet.Port, mlid uint16) (reached map[*subnet.Port]bool, loop bool) {
	reached = map[*subnet.Port]bool{}
	type arrival struct {
		n  *subnet.Node
		in int
	}
	visited := map[*subnet.Node]bool{}
	var queue []arrival
	if src.Node.Type == iba.NodeTypeSwitch {
		queue = append(queue, arrival{src.Node, 0})
	} else if r := src.Remote; r != nil {
		if r.Node.Type == iba.NodeTypeSwitch {
			queue = append(queue, arrival{r.Node, r.Num})
		} else {
			reached[r] = true
		}
	}
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		if visited[a.n] {
			loop = true
			continue
		}
		visited[a.n] = true
		for _, pn := range a.n.MFTPorts(mlid) {
			if pn == a.in {
				continue
			}
			if pn == 0 {
				reached[a.n.Port(0)] = true
				continue
			}
			p := a.n.Port(pn)
			if p == nil || p.Remote == nil {
				continue
			}
			if r := p.Remote; r.Node.Type == iba.NodeTypeSwitch {
				queue = append(queue, arrival{r.Node, r.Num})
			} else {
				reached[r] = true
			}
		}
	}
	delete(reached, nil)
	return reached, loop
}

var _ = register(&Check{
	Name: "multicast", Severity: Error, Default: true,
	Needs: NeedGroups | NeedMFT,
	Doc: `Multicast groups whose forwarding tables miss members: for every group
the SA knows (MCMemberRecord, IBA 15.2.5.17) a packet from each member
is followed through the switches' multicast forwarding tables (IBA
14.2.5.12, 18.2.4.4) and must reach every other member, without
arriving twice at a switch. ibdiagnet's multicast routing check (the
mgid-mlid-HCA report, ibdmchk -M). One finding per group.`,
	run: func(d *Data) []Finding {
		var out []Finding
		if d.GroupsErr != nil {
			return []Finding{{Message: fmt.Sprintf("the multicast groups cannot be read from the SA: %v", d.GroupsErr)}}
		}
		for _, f := range d.failures("MulticastForwardingTable") {
			out = append(out, Finding{Port: NodeRef(f.Node), Message: fmt.Sprintf("the multicast forwarding table cannot be read: %v", f.Err)})
		}
		for _, g := range d.Groups {
			if len(g.Members) < 2 {
				continue
			}
			var missing []string
			loops := 0
			var first *subnet.Port
			for _, src := range g.Members {
				reached, loop := McastReach(src, g.MLID)
				if loop {
					loops++
				}
				for _, m := range g.Members {
					if m != src && !reached[m] {
						if first == nil {
							first = src
						}
						missing = append(missing, fmt.Sprintf("%q port %d to %q port %d", src.Node.Description(), src.Num, m.Node.Description(), m.Num))
					}
				}
			}
			if len(missing) == 0 && loops == 0 {
				continue
			}
			msg := fmt.Sprintf("multicast group %v (MLID %#04x, %d members):", g.MGID, g.MLID, len(g.Members))
			if len(missing) > 0 {
				shown := missing
				if len(shown) > 8 {
					shown = append(shown[:8:8], "...")
				}
				msg += fmt.Sprintf(" %d member pairs not connected by the forwarding tables (%s)", len(missing), strings.Join(shown, ", "))
			}
			if loops > 0 {
				msg += fmt.Sprintf(" packets from %d members come back to a switch (a loop in the tree)", loops)
			}
			if first == nil {
				first = g.Members[0]
			}
			out = append(out, Finding{Port: RefOf(first), LID: g.MLID, Message: msg})
		}
		return out
	},
})

// summary counts the fabric.
func (d *Data) summary() Summary {
	var s Summary
	if d.Subnet == nil {
		return s
	}
	for _, n := range d.Subnet.Nodes() {
		s.Nodes++
		switch n.Type {
		case iba.NodeTypeSwitch:
			s.Switches++
		case iba.NodeTypeCA:
			s.CAs++
		default:
			s.Routers++
		}
		for _, p := range n.Ports {
			if p != nil && p.Num != 0 {
				s.Ports++
			}
		}
	}
	s.Links = len(Links(d.Subnet))
	for _, sm := range d.SMs {
		switch sm.Last.SMState {
		case iba.SMStateMaster:
			s.Masters++
		case iba.SMStateStandby:
			s.Standbys++
		}
	}
	return s
}
