package diags

import (
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
)

// Node types (IBA 14.2.5.3 NodeInfo:NodeType) as the tools name them.

// madNodeType is libibmad's mad_dump_node_type.
func madNodeType(t iba.NodeType) string {
	switch t {
	case iba.NodeTypeCA:
		return "Channel Adapter"
	case iba.NodeTypeSwitch:
		return "Switch"
	case iba.NodeTypeRouter:
		return "Router"
	}
	return fmt.Sprintf("?(%d)?", int(t))
}
