package sim

import (
	"slices"

	"github.com/rdmakit/rdmakit/iba"
)

// smView is what one sweep of the SM found, as the SA and multicast
// routing need it: the nodes, the end ports with their LIDs, and indexes.
// It is immutable once published.
type smView struct {
	nodes  []smNode
	fab    []int32 // fabric node index of nodes[i]
	ports  []viewPort
	byLID  []int32 // LID -> ports index (every LID of an LMC range), -1
	byGUID map[iba.GUID]int32
	smLID  uint16
}

// viewPort is an end port with a LID: a CA or router port, or a switch's
// port 0 (which stands for all the switch's ports).
type viewPort struct {
	node  int32 // index in smView.nodes
	fnode int32 // fabric node index
	port  uint8
	lid   uint16
	lmc   uint8
	guid  iba.GUID
}

func (s *SM) portGUID(nodes []smNode, e smLink) iba.GUID {
	n := &nodes[e.node]
	fn, ok := s.f.byGUID[n.guid]
	if !ok {
		return n.guid
	}
	return s.f.ports[s.f.nodes[fn].base+int32(e.port)].guid
}

// publish makes the sweep's result the SA's view.
func (s *SM) publish(nodes []smNode, smLID uint16) {
	f := s.f
	v := &smView{nodes: nodes, fab: make([]int32, len(nodes)), byGUID: map[iba.GUID]int32{}, smLID: smLID}
	maxLID := uint16(0)
	for i := range nodes {
		n := &nodes[i]
		v.fab[i] = f.byGUID[n.guid]
		for q, l := range n.lid {
			if l == 0 || (n.typ == iba.NodeTypeSwitch && q != 0) {
				continue
			}
			lmc := s.cfg.LMC
			if n.typ == iba.NodeTypeSwitch {
				lmc = 0
			}
			vp := viewPort{node: int32(i), fnode: v.fab[i], port: uint8(q), lid: l, lmc: lmc}
			vp.guid = s.portGUID(nodes, smLink{int32(i), uint8(q)})
			v.ports = append(v.ports, vp)
			maxLID = max(maxLID, l+uint16(1)<<lmc-1)
		}
	}
	slices.SortFunc(v.ports, func(a, b viewPort) int { return int(a.lid) - int(b.lid) })
	v.byLID = make([]int32, int(maxLID)+1)
	for i := range v.byLID {
		v.byLID[i] = -1
	}
	for i, p := range v.ports {
		for k := uint16(0); k < 1<<p.lmc; k++ {
			v.byLID[p.lid+k] = int32(i)
		}
		v.byGUID[p.guid] = int32(i)
	}
	s.view.Store(v)
}

// port finds the end port that owns a LID.
func (v *smView) port(lid uint16) (*viewPort, bool) {
	if int(lid) >= len(v.byLID) || v.byLID[lid] < 0 {
		return nil, false
	}
	return &v.ports[v.byLID[lid]], true
}

// nodeLID is the LID a node's port answers to: the port's own for a CA,
// port 0's for a switch.
func (v *smView) nodeLID(i int32, port uint8) uint16 {
	n := &v.nodes[i]
	if n.typ == iba.NodeTypeSwitch {
		return n.lid[0]
	}
	if int(port) < len(n.lid) {
		return n.lid[port]
	}
	return 0
}
