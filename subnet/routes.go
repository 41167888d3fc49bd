package subnet

import "github.com/rdmakit/rdmakit/iba"

// PortKey names a port by its node's GUID and its number, a map key
// that holds however the Port values of a subnet were made.
type PortKey struct {
	Node iba.GUID
	Num  int
}

// Key is the port's PortKey.
func (p *Port) Key() PortKey { return PortKey{p.Node.GUID, p.Num} }

// DRRoutes are directed routes (IBA 14.2.2) from the node discovery started
// at to the nodes it reaches over the subnet's links, leaving some links
// out: python-rdma's DRCacher, by which set_port_state reaches ports around
// the links it is about to disable.
type DRRoutes struct {
	to    map[iba.GUID]DRPath
	avoid map[PortKey]bool
	start iba.GUID
	port  int // the start port
}

// RoutesAvoiding finds, breadth first from the node discovery started at
// (From), a directed route to every node that crosses no link with an end
// in avoid. A directed route passes through switches only, and a CA or
// router sends it out of the port it starts on whatever the route says
// (IBA 14.2.2), so the routes leave the start node by its start port:
// From's, or localPort when From does not know it (a subnet loaded from a
// file). Routes longer than MaxHops are not taken.
func (s *Subnet) RoutesAvoiding(avoid map[PortKey]bool, localPort int) *DRRoutes {
	start, startPort := s.From()
	if startPort == 0 {
		startPort = localPort
	}
	r := &DRRoutes{to: map[iba.GUID]DRPath{}, avoid: avoid, port: startPort}
	if start == nil {
		return r
	}
	r.start = start.GUID
	r.to[start.GUID] = DRPath{}
	queue := []*Node{start}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.GUID != r.start && n.Type != iba.NodeTypeSwitch {
			continue
		}
		for i := 1; i <= n.NumPorts; i++ {
			if n.GUID == r.start && n.Type != iba.NodeTypeSwitch && i != startPort {
				continue
			}
			p := n.Port(i)
			if !r.crosses(p) {
				continue
			}
			peer := s.Node(p.Remote.Node.GUID)
			if peer == nil {
				continue
			}
			if _, seen := r.to[peer.GUID]; seen {
				continue
			}
			route := r.to[n.GUID].Extend(uint8(i))
			if len(route) > MaxHops {
				continue
			}
			r.to[peer.GUID] = route
			queue = append(queue, peer)
		}
	}
	return r
}

// crosses reports whether a route may leave through p: p has a link, and
// neither of its ends is avoided.
func (r *DRRoutes) crosses(p *Port) bool {
	return p != nil && p.Remote != nil && p.Remote.Node != nil && !r.avoid[p.Key()] && !r.avoid[p.Remote.Key()]
}

// Node is the route to node n; ok is false when there is none.
func (r *DRRoutes) Node(n *Node) (route DRPath, ok bool) {
	route, ok = r.to[n.GUID]
	return route, ok
}

// Port is the route by which SMPs reach port num of node n. For a switch
// it is the switch's route (its SMA answers for every port). A CA's or
// router's SMA answers for the port an SMP arrives on, so for them it is
// the route to the switch at the other end of that port's link and out
// through it, or the empty route for the start port itself; ok is false
// when that link is avoided or leads to no routed switch.
func (r *DRRoutes) Port(n *Node, num int) (route DRPath, ok bool) {
	if n.Type == iba.NodeTypeSwitch {
		return r.Node(n)
	}
	if n.GUID == r.start && num == r.port {
		return DRPath{}, true
	}
	p := n.Port(num)
	if !r.crosses(p) || p.Remote.Node.Type != iba.NodeTypeSwitch {
		return nil, false
	}
	route, ok = r.to[p.Remote.Node.GUID]
	if !ok || len(route) >= MaxHops {
		return nil, false
	}
	return route.Extend(uint8(p.Remote.Num)), true
}
