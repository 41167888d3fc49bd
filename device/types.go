package device

import "strconv"

// NodeType is the kernel's RDMA node type (enum rdma_node_type in
// include/rdma/ib_verbs.h); 1 to 3 are the IBA node types of NodeInfo
// (IBA 14.2.5.3).
type NodeType uint8

// Node types as sysfs node_type prints them ("1: CA").
const (
	NodeCA          NodeType = 1
	NodeSwitch      NodeType = 2
	NodeRouter      NodeType = 3
	NodeRNIC        NodeType = 4 // iWARP
	NodeUSNIC       NodeType = 5
	NodeUSNICUDP    NodeType = 6
	NodeUnspecified NodeType = 7
)

var nodeTypeNames = [...]string{
	NodeCA: "CA", NodeSwitch: "switch", NodeRouter: "router", NodeRNIC: "RNIC",
	NodeUSNIC: "usNIC", NodeUSNICUDP: "usNIC UDP", NodeUnspecified: "unspecified",
}

// String gives the kernel's spelling (drivers/infiniband/core/sysfs.c).
func (t NodeType) String() string {
	if int(t) < len(nodeTypeNames) && nodeTypeNames[t] != "" {
		return nodeTypeNames[t]
	}
	return "NodeType(" + strconv.Itoa(int(t)) + ")"
}

// IsIB reports whether the node speaks InfiniBand management (CA, switch or
// router), the test libibumad applies before it lists a device.
func (t NodeType) IsIB() bool { return t >= NodeCA && t <= NodeRouter }

// PortState is PortInfo:PortState (IBA 14.2.5.6), as sysfs state prints it.
type PortState uint8

// Port states.
const (
	PortNOP         PortState = 0
	PortDown        PortState = 1
	PortInit        PortState = 2
	PortArmed       PortState = 3
	PortActive      PortState = 4
	PortActiveDefer PortState = 5
)

var portStateNames = [...]string{"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}

// String gives the kernel's spelling ("ACTIVE"), which is also rdma(8)'s.
func (s PortState) String() string {
	if int(s) < len(portStateNames) {
		return portStateNames[s]
	}
	return "PortState(" + strconv.Itoa(int(s)) + ")"
}

// PhysState is PortInfo:PortPhysicalState (IBA 14.2.5.6).
type PhysState uint8

// Physical port states.
const (
	PhysNOP                PhysState = 0
	PhysSleep              PhysState = 1
	PhysPolling            PhysState = 2
	PhysDisabled           PhysState = 3
	PhysPortConfigTraining PhysState = 4
	PhysLinkUp             PhysState = 5
	PhysLinkErrorRecovery  PhysState = 6
	PhysPhyTest            PhysState = 7
)

var physStateNames = [...]string{"NOP", "Sleep", "Polling", "Disabled", "PortConfigurationTraining",
	"LinkUp", "LinkErrorRecovery", "Phy Test"}

// String gives the kernel's sysfs spelling ("LinkUp"; ib_port_phys_state_str).
func (s PhysState) String() string {
	if int(s) < len(physStateNames) {
		return physStateNames[s]
	}
	return "<unknown>"
}

// LinkLayer is the link a port runs on: InfiniBand, or Ethernet for RoCE and
// iWARP.
type LinkLayer uint8

// Link layers as sysfs link_layer prints them.
const (
	LinkLayerUnknown LinkLayer = iota
	LinkLayerInfiniBand
	LinkLayerEthernet
)

// String gives the sysfs spelling.
func (l LinkLayer) String() string {
	switch l {
	case LinkLayerInfiniBand:
		return "InfiniBand"
	case LinkLayerEthernet:
		return "Ethernet"
	}
	return "Unknown"
}

func parseLinkLayer(s string) LinkLayer {
	switch s {
	case "InfiniBand":
		return LinkLayerInfiniBand
	case "Ethernet":
		return LinkLayerEthernet
	}
	return LinkLayerUnknown
}

// CapMaskIsSMDisabled is PortInfo:CapabilityMask bit 10, IsSMDisabled
// (IBA 14.2.5.6); libibumad's CAPMASK_IS_SM_DISABLED. A port with it set has
// no SMI of its own.
const CapMaskIsSMDisabled = 1 << 10

// CapMaskIsSM is CapabilityMask bit 1: an SM runs behind this port.
const CapMaskIsSM = 1 << 1
