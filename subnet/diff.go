package subnet

import (
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
)

// ChangeKind says what a Change is about.
type ChangeKind int

// The kinds of difference Diff reports, in the terms of python-rdma's
// subnet_diff: nodes, end ports, links, link rates, LIDs.
const (
	NodeMissing    ChangeKind = iota + 1 // in the reference only
	NodeAdded                            // in the current subnet only
	NodeChanged                          // type, port count or description differ
	EndPortMissing                       // an end port GUID in the reference only
	EndPortAdded                         // an end port GUID in the current only
	LinkMissing                          // a link in the reference only
	LinkAdded                            // a link in the current only
	LinkMoved                            // a port linked to a different peer
	RateChanged                          // same link, different width or speed
	LIDChanged                           // an end port's LID or LMC differ
)

var changeNames = map[ChangeKind]string{
	NodeMissing: "node missing", NodeAdded: "node added", NodeChanged: "node changed",
	EndPortMissing: "end port missing", EndPortAdded: "end port added",
	LinkMissing: "link missing", LinkAdded: "link added", LinkMoved: "link moved",
	RateChanged: "rate changed", LIDChanged: "LID changed",
}

func (k ChangeKind) String() string {
	if s, ok := changeNames[k]; ok {
		return s
	}
	return fmt.Sprintf("ChangeKind(%d)", int(k))
}

// PortRef names a port independent of any database.
type PortRef struct {
	Node iba.GUID
	Desc string
	Port int
}

func (r PortRef) String() string { return fmt.Sprintf("%v[%d] %q", r.Node, r.Port, r.Desc) }

// Change is one difference between a reference subnet and a current one.
// Old and New describe the value on each side ("" when absent).
type Change struct {
	Kind     ChangeKind
	At       PortRef // the node (Port 0 for a whole node) or port concerned
	Old, New string
}

func (c Change) String() string {
	return fmt.Sprintf("%v: %v: %q -> %q", c.Kind, c.At, c.Old, c.New)
}

func portRef(p *Port) PortRef {
	return PortRef{Node: p.Node.GUID, Desc: p.Node.Description(), Port: p.Num}
}

func peerString(p *Port) string {
	if p == nil || p.Remote == nil {
		return ""
	}
	return portRef(p.Remote).String()
}

func rateString(p *Port) string {
	if !p.HasInfo {
		return ""
	}
	lanes, speed := p.Rate()
	return fmt.Sprintf("%dx%v", lanes, speed)
}

func lidString(p *Port) string {
	if !p.HasInfo {
		return ""
	}
	return fmt.Sprintf("lid %d lmc %d", p.BaseLID, p.LMC)
}

// isEndPort: a CA or router port, or a switch's port 0 (IBA 18.2.4.1).
func isEndPort(p *Port) bool { return p.Node.Type != iba.NodeTypeSwitch || p.Num == 0 }

// Diff compares cur against ref: nodes present on one side only or
// changed, end ports by GUID, links (each reported once, from the end
// listed first), link rates, and end port LIDs. Changes come in ref's
// discovery order, then cur's for what ref lacks.
func Diff(ref, cur *Subnet) []Change {
	ref.mu.RLock()
	defer ref.mu.RUnlock()
	if cur != ref {
		cur.mu.RLock()
		defer cur.mu.RUnlock()
	}
	var out []Change
	add := func(k ChangeKind, at PortRef, old, new string) {
		out = append(out, Change{Kind: k, At: at, Old: old, New: new})
	}
	nodeSummary := func(n *Node) string {
		return fmt.Sprintf("type %d, %d ports, %q", n.Type, n.NumPorts, n.Description())
	}
	// A link is reported from its lower end, so each appears once.
	lower := func(p *Port) bool {
		r := p.Remote
		return p.Node.GUID < r.Node.GUID || (p.Node.GUID == r.Node.GUID && p.Num < r.Num)
	}
	sameRef := func(a, b *Port) bool {
		return a.Node.GUID == b.Node.GUID && a.Num == b.Num
	}
	for _, a := range ref.nodes {
		b := cur.byNodeGUID[a.GUID]
		at := PortRef{Node: a.GUID, Desc: a.Description()}
		if b == nil {
			add(NodeMissing, at, nodeSummary(a), "")
			// A link to a node that is still there is reported from
			// that node's side; between two missing nodes, once.
			for _, p := range a.Ports {
				if p != nil && p.Remote != nil && lower(p) && cur.byNodeGUID[p.Remote.Node.GUID] == nil {
					add(LinkMissing, portRef(p), peerString(p), "")
				}
			}
			continue
		}
		if a.Type != b.Type || a.NumPorts != b.NumPorts || a.Description() != b.Description() {
			add(NodeChanged, at, nodeSummary(a), nodeSummary(b))
		}
		for num := 0; num < max(len(a.Ports), len(b.Ports)); num++ {
			pa, pb := a.Port(num), b.Port(num)
			if pa != nil && pb == nil && pa.HasInfo && isEndPort(pa) {
				if cur.byPortGUID[pa.GUID] == nil {
					add(EndPortMissing, portRef(pa), pa.GUID.String(), "")
				}
			}
			if pb != nil && pa == nil && pb.HasInfo && isEndPort(pb) {
				if ref.byPortGUID[pb.GUID] == nil {
					add(EndPortAdded, portRef(pb), "", pb.GUID.String())
				}
			}
			var ra, rb *Port
			if pa != nil {
				ra = pa.Remote
			}
			if pb != nil {
				rb = pb.Remote
			}
			switch {
			case ra != nil && rb == nil:
				if lower(pa) || cur.byNodeGUID[ra.Node.GUID] == nil {
					add(LinkMissing, portRef(pa), peerString(pa), "")
				}
			case ra == nil && rb != nil:
				if lower(pb) || ref.byNodeGUID[rb.Node.GUID] == nil {
					add(LinkAdded, portRef(pb), "", peerString(pb))
				}
			case ra != nil && rb != nil && !sameRef(ra, rb):
				add(LinkMoved, portRef(pa), peerString(pa), peerString(pb))
			case ra != nil && rb != nil && lower(pa):
				if x, y := rateString(pa), rateString(pb); x != y && x != "" && y != "" {
					add(RateChanged, portRef(pa), x, y)
				}
			}
			if pa != nil && pb != nil && isEndPort(pa) && pa.HasInfo && pb.HasInfo {
				if pa.GUID != pb.GUID {
					add(EndPortMissing, portRef(pa), pa.GUID.String(), "")
					add(EndPortAdded, portRef(pb), "", pb.GUID.String())
				}
				if x, y := lidString(pa), lidString(pb); x != y {
					add(LIDChanged, portRef(pa), x, y)
				}
			}
		}
	}
	for _, b := range cur.nodes {
		if ref.byNodeGUID[b.GUID] != nil {
			continue
		}
		add(NodeAdded, PortRef{Node: b.GUID, Desc: b.Description()}, "", nodeSummary(b))
		for _, p := range b.Ports {
			if p != nil && p.Remote != nil && lower(p) && ref.byNodeGUID[p.Remote.Node.GUID] == nil {
				add(LinkAdded, portRef(p), "", peerString(p))
			}
		}
	}
	return out
}
