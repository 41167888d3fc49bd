package health

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

var _ = register(&Check{
	Name: "discovery", Severity: Warning, Default: true,
	Doc: `Nodes the discovery could not reach — a LinkUp port whose far side did
not answer NodeInfo (IBA 14.2.5.3) — and nodes that answered NodeInfo but
not the rest (NodeDescription, SwitchInfo, PortInfo), as ibdiagnet
reports nodes that fail to respond. One finding per unreachable path,
one per node for the rest.`,
	run: func(d *Data) []Finding {
		if d.Discovery == nil {
			return nil
		}
		var out []Finding
		for _, f := range d.Discovery.Unreachable() {
			fd := Finding{Message: fmt.Sprintf("no node answers at directed route %v: %v", f.Path, f.Err)}
			if f.Via != nil {
				fd.Port = RefOf(f.Via)
				fd.Message = fmt.Sprintf("no node answers behind this port (directed route %v): %v", f.Path, f.Err)
			}
			out = append(out, fd)
		}
		seen := map[iba.GUID]bool{}
		for _, f := range d.Discovery.Failures {
			if f.Probe || seen[f.Node] {
				continue
			}
			seen[f.Node] = true
			fd := Finding{GUID: f.Node, Message: fmt.Sprintf("the node does not answer: %v", f)}
			if n := d.Subnet.Node(f.Node); n != nil {
				fd.Port = NodeRef(n)
			}
			out = append(out, fd)
		}
		return out
	},
})

var _ = register(&Check{
	Name: "duplicate-node-guids", Severity: Error, Default: true,
	Doc: `Two devices with one node GUID (IBA 14.2.5.3: NodeGUID is unique).
The discovery merges them as libibnetdisc does, so they are told by what
the second one's NodeInfo reply contradicts: its type or port count, its
port GUID, the cabling of its entry port (subnet.Conflict). ibdiagnet's
duplicate node GUID check, -skip dup_guids. One finding per duplicated
GUID.`,
	run: func(d *Data) []Finding {
		if d.Discovery == nil {
			return nil
		}
		byGUID := map[iba.GUID][]*subnet.Conflict{}
		var order []iba.GUID
		for _, c := range d.Discovery.Conflicts {
			if byGUID[c.Node.GUID] == nil {
				order = append(order, c.Node.GUID)
			}
			byGUID[c.Node.GUID] = append(byGUID[c.Node.GUID], c)
		}
		var out []Finding
		for _, g := range order {
			cs := byGUID[g]
			n := cs[0].Node
			fd := Finding{GUID: g, Port: NodeRef(n)}
			var at []string
			for _, c := range cs {
				at = append(at, fmt.Sprintf("directed route %v (%s)", c.Path, c.Reason))
				if c.Via != nil {
					fd.Ports = append(fd.Ports, RefOf(c.Via))
				}
			}
			fd.Message = fmt.Sprintf("node GUID %v of %q is also the GUID of another device, found at %s", g, n.Description(), strings.Join(at, "; "))
			out = append(out, fd)
		}
		return out
	},
})

var _ = register(&Check{
	Name: "duplicate-port-guids", Severity: Error, Default: true,
	Doc: `Two ports with one port GUID (IBA 14.2.5.3: PortGUID is unique; a
switch's ports share its port 0 GUID). ibdiagnet's duplicate port GUID
check, -skip dup_guids. One finding per duplicated GUID.`,
	run: func(d *Data) []Finding {
		holders := map[iba.GUID][]*subnet.Port{}
		var order []iba.GUID
		for _, n := range d.Subnet.Nodes() {
			for _, p := range n.Ports {
				if p == nil || p.GUID == 0 || (n.Type == iba.NodeTypeSwitch && p.Num != 0) {
					continue
				}
				if holders[p.GUID] == nil {
					order = append(order, p.GUID)
				}
				holders[p.GUID] = append(holders[p.GUID], p)
			}
		}
		var out []Finding
		for _, g := range order {
			ps := holders[g]
			if len(ps) < 2 {
				continue
			}
			fd := Finding{GUID: g, Port: RefOf(ps[0]), Peer: RefOf(ps[1])}
			var names []string
			for _, p := range ps {
				fd.Ports = append(fd.Ports, RefOf(p))
				names = append(names, fmt.Sprintf("%q port %d", p.Node.Description(), p.Num))
			}
			fd.Message = fmt.Sprintf("port GUID %v is held by %d ports: %s", g, len(ps), strings.Join(names, ", "))
			out = append(out, fd)
		}
		return out
	},
})

// endPorts lists the ports that carry LIDs: CA and router ports with
// PortInfo, switch port 0 (IBA 18.2.4.1).
func endPorts(s *subnet.Subnet) []*subnet.Port {
	var out []*subnet.Port
	for _, n := range s.Nodes() {
		for _, p := range n.Ports {
			if p == nil || !p.HasInfo || (n.Type == iba.NodeTypeSwitch && p.Num != 0) {
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

var _ = register(&Check{
	Name: "duplicate-lids", Severity: Error, Default: true,
	Doc: `LIDs assigned to more than one end port, counting every LID of an
LMC range (IBA 7.11.1: a LID identifies one port within the subnet).
ibdiagnet's duplicate LID check. One finding per set of ports that share
LIDs, naming the LIDs.`,
	run: func(d *Data) []Finding {
		byLID := map[uint16][]*subnet.Port{}
		for _, p := range endPorts(d.Subnet) {
			first, last := p.LIDs()
			if first == 0 {
				continue
			}
			for l := uint32(first); l <= uint32(last) && l <= 0xbfff; l++ {
				byLID[uint16(l)] = append(byLID[uint16(l)], p)
			}
		}
		type group struct {
			ports []*subnet.Port
			lids  []uint16
		}
		groups := map[string]*group{}
		var keys []string
		for l, ps := range byLID {
			if len(ps) < 2 {
				continue
			}
			var k strings.Builder
			for _, p := range ps {
				fmt.Fprintf(&k, "%d/%d,", p.Node.Index(), p.Num)
			}
			g := groups[k.String()]
			if g == nil {
				g = &group{ports: ps}
				groups[k.String()] = g
				keys = append(keys, k.String())
			}
			g.lids = append(g.lids, l)
		}
		sort.Strings(keys)
		var out []Finding
		for _, k := range keys {
			g := groups[k]
			sort.Slice(g.lids, func(i, j int) bool { return g.lids[i] < g.lids[j] })
			fd := Finding{LID: g.lids[0], Port: RefOf(g.ports[0]), Peer: RefOf(g.ports[1])}
			var names []string
			for _, p := range g.ports {
				fd.Ports = append(fd.Ports, RefOf(p))
				names = append(names, fmt.Sprintf("%q port %d", p.Node.Description(), p.Num))
			}
			fd.Message = fmt.Sprintf("LID %s is assigned to %d ports: %s", lidList(g.lids), len(g.ports), strings.Join(names, ", "))
			out = append(out, fd)
		}
		return out
	},
})

// lidList prints LIDs, ranges folded: "5", "4-7".
func lidList(l []uint16) string {
	var parts []string
	for i := 0; i < len(l); {
		j := i
		for j+1 < len(l) && l[j+1] == l[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(l[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", l[i], l[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

var _ = register(&Check{
	Name: "zero-lids", Severity: Error, Default: true,
	Doc: `End ports whose PortInfo:LID is 0, an invalid unicast LID (IBA
4.1.3): the SM did not configure them. ibdiagnet's zero LID check. One
finding per port.`,
	run: func(d *Data) []Finding {
		var out []Finding
		for _, p := range endPorts(d.Subnet) {
			if p.BaseLID == 0 {
				out = append(out, Finding{Port: RefOf(p), Message: "the port has LID 0: no SM has configured it"})
			}
		}
		return out
	},
})

var _ = register(&Check{
	Name: "zero-system-guids", Severity: Warning, Default: true,
	Doc: `Nodes whose NodeInfo:SystemImageGUID is 0 (IBA 14.2.5.3: the GUID of
the system the node belongs to; ibdiagnet's zero system GUID check,
-skip zero_guids, which then shows the node GUID in its place). One
finding per node.`,
	run: func(d *Data) []Finding {
		var out []Finding
		for _, n := range d.Subnet.Nodes() {
			if n.NodeInfo().SystemImageGUID == 0 {
				out = append(out, Finding{Port: NodeRef(n), GUID: n.GUID, Message: "the node's system image GUID is 0"})
			}
		}
		return out
	},
})
