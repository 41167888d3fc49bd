package diags

import (
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

// Lists of the subnet's nodes of some types, as ibhosts, ibswitches,
// ibrouters and ibnodes give them in JSON, and ibprintca, ibprintswitch
// and ibprintrt with -l.

// NodeLineJSON is one node of ibhosts/ibswitches/ibrouters/ibnodes --json.
type NodeLineJSON struct {
	Type        string `json:"type"`
	GUID        string `json:"guid"`
	Ports       int    `json:"ports"`
	Description string `json:"description"`
	LID         uint16 `json:"lid,omitempty"`
	LMC         uint8  `json:"lmc,omitempty"`
	Enhanced    bool   `json:"enhanced_port0,omitempty"`
}

// nodeLinesJSON lists the nodes of each type in turn, each type in
// libibnetdisc's order.
func nodeLinesJSON(s *subnet.Subnet, types ...iba.NodeType) []NodeLineJSON {
	out := []NodeLineJSON{}
	for _, t := range types {
		for _, n := range s.IBNDOrder(func(n *subnet.Node) bool { return n.Type == t }) {
			j := NodeLineJSON{Type: nodeTypeName(n.Type), GUID: n.GUID.String(), Ports: n.NumPorts, Description: n.Description()}
			if n.Type == iba.NodeTypeSwitch {
				j.LID, j.LMC, j.Enhanced = n.SMALID, n.SMALMC, n.EnhancedSP0
			}
			out = append(out, j)
		}
	}
	return out
}
