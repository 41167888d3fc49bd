package topo

import (
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
)

// Link width enable masks as ibsim derives them from a width annotation
// (4x enables 1x and 4x, 12x enables 1x, 4x and 12x), IBA 14.2.5.6.
const (
	Width1x  = iba.LinkWidth1X
	Width4x  = iba.LinkWidth1X | iba.LinkWidth4X
	Width8x  = iba.LinkWidth8X
	Width12x = iba.LinkWidth1X | iba.LinkWidth4X | iba.LinkWidth12X
	Width2x  = iba.LinkWidth2X
)

// Defaults of a port that no annotation or directive changes: 4x SDR, as
// in ibsim.
const (
	DefaultWidth    = iba.LinkWidth4X
	DefaultSpeed    = iba.LinkSpeedSDR
	DefaultSpeedExt = 0
)

// Default GUID bases: ibsim's for switches and channel adapters; ibsim
// leaves routers at 0, which gives every router GUID 0, so routers get a
// base of their own here.
const (
	DefaultSwitchGUIDBase = 0x200000
	DefaultCAGUIDBase     = 0x100000
	DefaultRouterGUIDBase = 0x300000
)

// Node is one switch, channel adapter or router.
type Node struct {
	Type iba.NodeType
	// ID is the node's name in the topology file (the quoted id, with the
	// module prefix when there is one): "S-0008f10400410015", "Hca1".
	ID string
	// Desc is the NodeDescription; empty means the same as ID.
	Desc         string
	NumPorts     uint8
	NodeGUID     iba.GUID
	SysImageGUID iba.GUID
	VendorID     uint32
	DeviceID     uint16
	// EnhancedPort0 is set for switches whose header says "enhanced port 0".
	EnhancedPort0 bool
	// LID and LMC are the switch port 0 annotation ("lid 3 lmc 0").
	LID uint16
	LMC uint8
	// PortBase is the index of port 0 of this node in Topology.Ports.
	PortBase int32
	// Line is where the node's header is, 0 for generated nodes.
	Line int
}

// Description gives the NodeDescription: Desc, or ID when Desc is empty.
func (n *Node) Description() string {
	if n.Desc != "" {
		return n.Desc
	}
	return n.ID
}

// Port is one physical port (or a switch's port 0).
type Port struct {
	// GUID is the port GUID; switch ports all carry the switch's node GUID.
	GUID iba.GUID
	// Peer is the node index at the other end of the link, -1 if none.
	Peer     int32
	PeerPort uint8
	// Width, Speed, SpeedExt, SpeedExt2 and MlnxSpeed are the enabled
	// masks of PortInfo:LinkWidthEnabled, LinkSpeedEnabled,
	// LinkSpeedExtEnabled, LinkSpeedExtEnabled2 (bit 0: XDR; a port
	// without it has no second group of extended speeds) and of the
	// Mellanox extended port info (bit 0: FDR10).
	Width, Speed, SpeedExt, SpeedExt2, MlnxSpeed uint8
	// LID and LMC are a CA port's annotation ("# lid 2 lmc 0").
	LID uint16
	LMC uint8
}

// Topology is a fabric's cabling.
type Topology struct {
	Nodes []Node
	Ports []Port
}

// Port returns node n's port p; p 0 is the switch management port.
func (t *Topology) Port(n int, p int) *Port {
	return &t.Ports[int(t.Nodes[n].PortBase)+p]
}

// AddNode appends a node with numPorts ports, all unconnected, at the
// default width and speed, and returns its index. CA and router port GUIDs
// are the node GUID plus the port number, as ibsim makes them.
func (t *Topology) AddNode(typ iba.NodeType, id, desc string, numPorts int, guid iba.GUID) int {
	n := Node{
		Type: typ, ID: id, Desc: desc, NumPorts: uint8(numPorts),
		NodeGUID: guid, SysImageGUID: guid, PortBase: int32(len(t.Ports)),
	}
	t.Nodes = append(t.Nodes, n)
	for p := 0; p <= numPorts; p++ {
		pg := guid
		if typ != iba.NodeTypeSwitch {
			pg = guid + iba.GUID(p)
		}
		t.Ports = append(t.Ports, Port{GUID: pg, Peer: -1, Width: DefaultWidth, Speed: DefaultSpeed, SpeedExt: DefaultSpeedExt})
	}
	return len(t.Nodes) - 1
}

// Connect cables node a's port pa to node b's port pb.
func (t *Topology) Connect(a, pa, b, pb int) error {
	if err := t.checkPort(a, pa); err != nil {
		return err
	}
	if err := t.checkPort(b, pb); err != nil {
		return err
	}
	x, y := t.Port(a, pa), t.Port(b, pb)
	if x.Peer >= 0 || y.Peer >= 0 || (a == b && pa == pb) {
		return fmt.Errorf("connecting %q[%d] to %q[%d]: a port is already connected", t.Nodes[a].ID, pa, t.Nodes[b].ID, pb)
	}
	x.Peer, x.PeerPort = int32(b), uint8(pb)
	y.Peer, y.PeerPort = int32(a), uint8(pa)
	return nil
}

func (t *Topology) checkPort(n, p int) error {
	if n < 0 || n >= len(t.Nodes) {
		return fmt.Errorf("no node %d", n)
	}
	if p < 1 || p > int(t.Nodes[n].NumPorts) {
		return fmt.Errorf("node %q has no port %d (ports 1 to %d)", t.Nodes[n].ID, p, t.Nodes[n].NumPorts)
	}
	return nil
}

// SetLink sets the enabled width and speed masks of both ends of the link
// at node n port p (or of the port alone when it is not connected).
func (t *Topology) SetLink(n, p int, width, speed, speedExt, speedExt2, mlnx uint8) {
	x := t.Port(n, p)
	x.Width, x.Speed, x.SpeedExt, x.SpeedExt2, x.MlnxSpeed = width, speed, speedExt, speedExt2, mlnx
	if x.Peer >= 0 {
		y := t.Port(int(x.Peer), int(x.PeerPort))
		y.Width, y.Speed, y.SpeedExt, y.SpeedExt2, y.MlnxSpeed = width, speed, speedExt, speedExt2, mlnx
	}
}

// Counts returns the number of switches, channel adapters and routers.
func (t *Topology) Counts() (switches, cas, routers int) {
	for i := range t.Nodes {
		switch t.Nodes[i].Type {
		case iba.NodeTypeSwitch:
			switches++
		case iba.NodeTypeCA:
			cas++
		case iba.NodeTypeRouter:
			routers++
		}
	}
	return
}

// Validate checks what a simulator needs: a size within MaxNodes and
// MaxPorts, links that point back at each other, ports in range, and
// unique node ids and node GUIDs.
func (t *Topology) Validate() error {
	if len(t.Nodes) > MaxNodes || len(t.Ports) > MaxPorts {
		sw, _, _ := t.Counts()
		return checkSize("topology", int64(len(t.Nodes)), int64(sw), int64(len(t.Ports)))
	}
	ids := make(map[string]int, len(t.Nodes))
	guids := make(map[iba.GUID]int, len(t.Nodes))
	for i := range t.Nodes {
		n := &t.Nodes[i]
		if n.Type < iba.NodeTypeCA || n.Type > iba.NodeTypeRouter {
			return fmt.Errorf("node %q: bad node type %d", n.ID, n.Type)
		}
		if n.NumPorts == 0 || (n.NumPorts == 255) {
			return fmt.Errorf("node %q: %d ports (1 to 254)", n.ID, n.NumPorts)
		}
		if j, ok := ids[n.ID]; ok {
			return fmt.Errorf("node id %q used twice (nodes %d and %d)", n.ID, j, i)
		}
		ids[n.ID] = i
		if j, ok := guids[n.NodeGUID]; ok {
			return fmt.Errorf("node GUID %v used twice (%q and %q)", n.NodeGUID, t.Nodes[j].ID, n.ID)
		}
		guids[n.NodeGUID] = i
		if n.PortBase < 0 || int(n.PortBase)+int(n.NumPorts) >= len(t.Ports) {
			return fmt.Errorf("node %q: ports beyond the port table", n.ID)
		}
		for p := 1; p <= int(n.NumPorts); p++ {
			x := t.Port(i, p)
			if x.Peer < 0 {
				continue
			}
			if int(x.Peer) >= len(t.Nodes) || x.PeerPort == 0 || x.PeerPort > t.Nodes[x.Peer].NumPorts {
				return fmt.Errorf("node %q port %d: peer port out of range", n.ID, p)
			}
			y := t.Port(int(x.Peer), int(x.PeerPort))
			if int(y.Peer) != i || int(y.PeerPort) != p {
				return fmt.Errorf("node %q port %d: peer %q port %d does not link back", n.ID, p, t.Nodes[x.Peer].ID, x.PeerPort)
			}
		}
	}
	return nil
}
