package promfabric

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/subnet"
)

// topology is the cached subnet as the scrapes need it: its nodes in the
// order the sweep reads them, each port's label text made once, and the
// nodes earlier discoveries found that the last one did not.
type topology struct {
	subnet *subnet.Subnet
	// nodes are the subnet's nodes the exporter reads (read), in the
	// sweep's order, then the lost ones.
	nodes []*nodeView
	read  int
	byPtr map[*subnet.Node]int

	// flat holds every port of nodes, in order, in one slice: a scrape's
	// series are written family by family, each a pass over all ports.
	flat []portView

	taken       time.Time
	took        time.Duration
	unreachable int
	ports       int
	links       int
	types       map[string]int
}

// nodeView is one node as exported.
type nodeView struct {
	node       *subnet.Node // nil for a lost node
	guid       iba.GUID
	typ        iba.NodeType
	id         *nodeID
	info       string   // node_info's label text
	infoValues []string // and its values
	// ports point into the topology's flat.
	ports []*portView
	// lost: the last discovery did not reach the node; seen is when one
	// last did.
	lost bool
	seen time.Time
	// up: the node answered the last scrape that read it.
	up bool
}

// nodeID is what a node's series, and the port_info series of the ports
// cabled to it, say of it: label text escaped once, shared by every port
// (a port's own label text is made as it is written, from these).
type nodeID struct {
	guid  string // 0x...
	label string // {guid="0x..."}
	// portPrefix is {guid="0x...",port=" of its ports' labels.
	portPrefix string
	// names is name="...",description="..." of its port_info series;
	// remote is remote_guid="...",remote_name="..." of those of the
	// ports cabled to it.
	names, remote string
	name, desc    string
}

// portView is one port as exported: its PortInfo as the discovery read
// it, its far end, and what the last scrape read of it.
type portView struct {
	nv   *nodeView
	num  int32
	idx  int32 // its index in the topology's flat
	guid iba.GUID
	lid  uint16
	// remote is the node at the other end of the link (nil when none is
	// known) and rport its port there.
	remote *nodeID
	rport  int32
	// state: the PortInfo values below are known (not for a lost node).
	state                     bool
	portState, physState      uint8
	widthActive, widthEnabled uint8
	widthSupported            uint8
	speedActive, speedEnabled iba.Speed
	speedSupported            iba.Speed
	// What the last scrape read of the port, to tell a link that went
	// down (LinkDownedCounter moved) or came up (packets on a port the
	// topology has down).
	read       bool
	linkDowned uint64
	packets    uint64
}

// series is the labels of a series that is not a port's or a node's:
// its text ({name="value",...}, escaped) and values in the family's order.
type series struct {
	text string
	vals []string
}

func makeSeries(names, values []string) series {
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
		b.WriteString(`="`)
		writeEscaped(&b, values[i])
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return series{text: b.String(), vals: values}
}

// escape is a label value as the text format wants it.
func escape(s string) string {
	var b strings.Builder
	writeEscaped(&b, s)
	return b.String()
}

// writeEscaped writes a label value as the text format wants it:
// backslash, double quote and line feed escaped, valid UTF-8.
func writeEscaped(b *strings.Builder, s string) {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
}

func typeName(t iba.NodeType) string {
	switch t {
	case iba.NodeTypeSwitch:
		return "switch"
	case iba.NodeTypeCA:
		return "ca"
	case iba.NodeTypeRouter:
		return "router"
	}
	return "unknown"
}

// nodeName is the node's node-name-map name, else its description.
func nodeName(names *namemap.Map, n *subnet.Node) string {
	return names.Name(n.GUID, n.Description())
}

// nodeLID is the LID a node is known by: a switch's port 0 LID, a CA's or
// router's first port's.
func nodeLID(n *subnet.Node) uint16 {
	if n.Type == iba.NodeTypeSwitch {
		return n.SMALID
	}
	if p := n.EndPort(); p != nil {
		return p.BaseLID
	}
	return 0
}

// buildTopology makes the topology of a fresh discovery: the nodes want
// accepts, in libibnetdisc's order, then the nodes of prev the discovery
// did not reach, kept for forget after they were last seen. What the last
// scrape read of each port carries over.
func buildTopology(s *subnet.Subnet, names *namemap.Map, want func(*subnet.Node) bool, prev *topology, now time.Time, forget time.Duration) *topology {
	t := &topology{subnet: s, taken: now, byPtr: map[*subnet.Node]int{}, types: map[string]int{}}
	old := map[iba.GUID]*nodeView{}
	if prev != nil {
		for _, nv := range prev.nodes {
			old[nv.guid] = nv
		}
	}
	for _, n := range s.IBNDOrder(want) {
		nv := newNodeView(n, names, now)
		if o := old[n.GUID]; o != nil {
			nv.up = o.up
			carry(nv, o)
			delete(old, n.GUID)
		}
		t.byPtr[n] = len(t.nodes)
		t.nodes = append(t.nodes, nv)
		t.types[typeName(n.Type)]++
	}
	t.read = len(t.nodes)
	if prev != nil {
		for _, o := range prev.nodes {
			if old[o.guid] == nil || s.Node(o.guid) != nil || now.Sub(o.seen) > forget {
				continue
			}
			lost := *o
			lost.node, lost.lost, lost.up = nil, true, false
			lost.ports = make([]*portView, len(o.ports))
			for i, p := range o.ports {
				lp := *p
				lp.nv, lp.state, lp.read = &lost, false, false
				lost.ports[i] = &lp
			}
			t.nodes = append(t.nodes, &lost)
			t.types["lost"]++
		}
	}
	n := 0
	for _, nv := range t.nodes {
		n += len(nv.ports)
	}
	t.flat = make([]portView, 0, n)
	for _, nv := range t.nodes {
		for j, pv := range nv.ports {
			pv.idx = int32(len(t.flat))
			if pv.num > 0 {
				t.ports++
			}
			t.flat = append(t.flat, *pv)
			nv.ports[j] = &t.flat[len(t.flat)-1]
		}
	}
	// The far ends, now that every node has its ID.
	ids := make(map[*subnet.Node]*nodeID, len(t.nodes))
	for _, nv := range t.nodes[:t.read] {
		ids[nv.node] = nv.id
	}
	for _, nv := range t.nodes[:t.read] {
		for _, pv := range nv.ports {
			if p := nv.node.Port(int(pv.num)); p != nil && p.Remote != nil {
				pv.remote, pv.rport = ids[p.Remote.Node], int32(p.Remote.Num)
				if pv.remote == nil {
					// A node the exporter does not read (Want).
					pv.remote = newNodeID(p.Remote.Node, names)
				}
			}
		}
	}
	for _, n := range s.Nodes() {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && (p.Node.GUID < p.Remote.Node.GUID || p.Node.GUID == p.Remote.Node.GUID && p.Num < p.Remote.Num) {
				t.links++
			}
		}
	}
	return t
}

// carry keeps what the last scrape read of each port.
func carry(nv, o *nodeView) {
	byNum := map[int32]*portView{}
	for _, p := range o.ports {
		byNum[p.num] = p
	}
	for _, p := range nv.ports {
		if op := byNum[p.num]; op != nil {
			p.read, p.linkDowned, p.packets = op.read, op.linkDowned, op.packets
		}
	}
}

// newNodeID makes the label text of a node.
func newNodeID(n *subnet.Node, names *namemap.Map) *nodeID {
	guid := n.GUID.String()
	id := &nodeID{guid: guid, name: nodeName(names, n), desc: n.Description()}
	id.label = `{guid="` + guid + `"}`
	id.portPrefix = `{guid="` + guid + `",port="`
	id.names = `name="` + escape(id.name) + `",description="` + escape(id.desc) + `"`
	id.remote = `remote_guid="` + guid + `",remote_name="` + escape(id.name) + `"`
	return id
}

func newNodeView(n *subnet.Node, names *namemap.Map, now time.Time) *nodeView {
	ni := n.NodeInfo()
	nv := &nodeView{node: n, guid: n.GUID, typ: n.Type, seen: now, id: newNodeID(n, names)}
	info := makeSeries(nodeInfoLabels, []string{nv.id.guid, typeName(n.Type), nv.id.name, nv.id.desc, strconv.Itoa(int(nodeLID(n))),
		ni.SystemImageGUID.String(), "0x" + strconv.FormatUint(uint64(ni.VendorID), 16), "0x" + strconv.FormatUint(uint64(ni.DeviceID), 16)})
	nv.info, nv.infoValues = info.text, info.vals
	// A switch's CapabilityMask is its port 0's (IBA 14.2.5.6).
	var capInfo *iba.PortInfo
	if n.Type == iba.NodeTypeSwitch {
		if p0 := n.Port(0); p0 != nil && p0.HasInfo {
			pi := p0.PortInfo()
			capInfo = &pi
		}
	}
	for num, p := range n.Ports {
		if p == nil {
			continue
		}
		pv := &portView{nv: nv, num: int32(num), guid: p.GUID, lid: p.BaseLID}
		if n.Type == iba.NodeTypeSwitch {
			pv.lid = n.SMALID
		}
		if num > 0 && p.HasInfo {
			portState(pv, p, capInfo)
		}
		nv.ports = append(nv.ports, pv)
	}
	return nv
}

// portState reads the port's PortInfo (and the Mellanox extension) into
// pv; capInfo is a switch's port 0 PortInfo, nil for a CA or router
// (whose ports carry their own CapabilityMask).
func portState(pv *portView, p *subnet.Port, capInfo *iba.PortInfo) {
	pi := p.PortInfo()
	if capInfo == nil {
		capInfo = &pi
	}
	pv.state = true
	pv.portState, pv.physState = uint8(pi.PortState), uint8(pi.PortPhysicalState)
	pv.widthActive = uint8(iba.LinkWidthLanes(pi.LinkWidthActive))
	pv.widthEnabled = uint8(iba.WidestLanes(pi.LinkWidthEnabled))
	pv.widthSupported = uint8(iba.WidestLanes(pi.LinkWidthSupported))
	var mx iba.MlnxExtPortInfo
	if p.HasExtInfo {
		_ = mx.Unmarshal(p.ExtInfo[:])
	}
	_, pv.speedActive = p.Rate()
	var ext, ext2, extEn, ext2En uint8
	if capInfo.CapabilityMask&iba.PortCapIsExtendedSpeedsSupported != 0 {
		ext, extEn = pi.LinkSpeedExtSupported, pi.LinkSpeedExtEnabled
		if capInfo.CapabilityMask&iba.PortCapIsCapabilityMask2Supported != 0 && capInfo.CapabilityMask2&iba.PortCap2IsExtendedSpeeds2Supported != 0 {
			ext2, ext2En = pi.LinkSpeedExtSupported2, pi.LinkSpeedExtEnabled2
		}
	}
	pv.speedSupported = iba.FastestSpeed(pi.LinkSpeedSupported, ext, ext2, mx.LinkSpeedSupported)
	pv.speedEnabled = iba.FastestSpeed(pi.LinkSpeedEnabled, extEn, ext2En, mx.LinkSpeedEnabled)
}
