package subnet

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/namemap"
)

// ErrNotFound is matched by the errors of Find: the subnet has no port
// the target names.
var ErrNotFound = errors.New("not in the subnet")

// Find gives the port a target names in the subnet, as the commands that
// work on a discovered subnet take targets: a directed route (the port it
// arrives at; port 0 of a switch), a LID (the end port owning it, any LID
// of its LMC range), a port GID or GUID, else the node of that GUID (a
// node GUID given where a port GUID is expected), and a path spec's node
// GUID. A directed route with a LID-routed part is not looked up: the
// subnet keeps directed routes from its start node only.
func (s *Subnet) Find(p ibpath.Path) (*Port, error) {
	var port *Port
	switch v := p.(type) {
	case *ibpath.DRPath:
		if v.DrSLID != mad.LIDPermissive && v.DrSLID != 0 || v.DrDLID != mad.LIDPermissive && v.DrDLID != 0 {
			return nil, fmt.Errorf("%v: a directed route with LID-routed parts: %w", p, ErrNotFound)
		}
		if len(v.DrPath) > 0 {
			port = s.PortAt(DRPath(v.DrPath[1:]))
		}
	case *ibpath.IBPath:
		switch {
		case v.Has("DGID"):
			g := iba.GUID(binary.BigEndian.Uint64(v.DGID[8:]))
			if port = s.PortByGUID(g); port == nil {
				if n := s.Node(g); n != nil {
					port = n.EndPort()
				}
			}
		case v.Has("DLID"):
			port = s.PortByLID(v.DLID)
		case v.Has("nodeGUID"):
			if n := s.Node(v.NodeGUID); n != nil {
				port = n.EndPort()
			}
		}
	}
	if port == nil || port.Node == nil {
		return nil, fmt.Errorf("%v: %w", p, ErrNotFound)
	}
	return port, nil
}

// PortAt follows a directed route from the start node over the known links
// and gives the port it arrives at: the start node's own port for the
// empty route, and port 0 of a switch it ends at (the port SMPs address).
func (s *Subnet) PortAt(path DRPath) *Port {
	s.mu.RLock()
	n, num := s.from, s.fromPort
	s.mu.RUnlock()
	if n == nil {
		return nil
	}
	var at *Port
	if len(path) == 0 {
		at = n.Port(num)
	} else {
		prev := s.NodeAt(path[:len(path)-1])
		if prev == nil {
			return nil
		}
		p := prev.Port(int(path[len(path)-1]))
		if p == nil || p.Remote == nil {
			return nil
		}
		at = p.Remote
	}
	switch {
	case at == nil && len(path) == 0:
		return n.EndPort() // a subnet loaded from a file knows no start port
	case at == nil:
		return nil
	case at.Node.Type == iba.NodeTypeSwitch:
		return at.Node.EndPort()
	}
	return at
}

// NodesNamed are the nodes a name names: those the node name map gives
// that name, then those whose description (as Description gives it) is
// it, once each, in that order.
func (s *Subnet) NodesNamed(name string, names *namemap.Map) []*Node {
	var nodes []*Node
	seen := map[*Node]bool{}
	for _, g := range names.GUIDs(name) {
		if n := s.Node(g); n != nil && !seen[n] {
			seen[n] = true
			nodes = append(nodes, n)
		}
	}
	for _, n := range s.NodesByName(name) {
		if !seen[n] {
			seen[n] = true
			nodes = append(nodes, n)
		}
	}
	return nodes
}
