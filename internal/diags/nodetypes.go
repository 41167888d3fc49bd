package diags

import (
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
)

// Node types (IBA 14.2.5.3 NodeInfo:NodeType) as the tools name them.

// typeName is the name of a CA, switch or router, other for any other
// type.
func typeName(t iba.NodeType, ca, sw, rt, other string) string {
	switch t {
	case iba.NodeTypeCA:
		return ca
	case iba.NodeTypeSwitch:
		return sw
	case iba.NodeTypeRouter:
		return rt
	}
	return other
}

// madNodeType is libibmad's mad_dump_node_type.
func madNodeType(t iba.NodeType) string {
	return typeName(t, "Channel Adapter", "Switch", "Router", fmt.Sprintf("?(%d)?", int(t)))
}

// pyNodeType is python-rdma's IBA_describe.node_type.
func pyNodeType(t iba.NodeType) string {
	return typeName(t, "Channel Adapter", "Switch", "Router", fmt.Sprintf("?? %d", t))
}

// nodeTypeName is the type in ibnetdiscover's and ibhosts' JSON.
func nodeTypeName(t iba.NodeType) string {
	return typeName(t, "CA", "Switch", "Router", fmt.Sprintf("type %d", t))
}

// liNodeType is iblinkinfo's node type (and ibqueryerrors').
func liNodeType(t iba.NodeType) string { return typeName(t, "CA", "Switch", "Router", "??") }
