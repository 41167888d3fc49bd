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
	node  *subnet.Node // nil for a lost node
	guid  iba.GUID
	typ   iba.NodeType
	label series      // {guid="..."}
	info  series      // node_info's labels
	ports []*portView // into the topology's flat
	// lost: the last discovery did not reach the node; seen is when one
	// last did.
	lost bool
	seen time.Time
	// up: the node answered the last scrape that read it.
	up bool
}

// portView is one port as exported.
type portView struct {
	num   int
	node  int32  // index of its node in the topology
	idx   int32  // its index in the topology's flat
	label series // {guid="...",port="N"}
	info  series // port_info's labels
	// state: the PortInfo values below are known (not for a lost node).
	state                     bool
	portState, physState      uint8
	widthActive, widthEnabled int
	widthSupported            int
	speedActive, speedEnabled iba.Speed
	speedSupported            iba.Speed
	// gauges are the state families' values, by stateFamilies.
	gauges [numStateFamilies]float64
	// What the last scrape read of the port, to tell a link that went
	// down (LinkDownedCounter moved) or came up (packets on a port the
	// topology has down).
	read       bool
	linkDowned uint64
	packets    uint64
}

// series is the labels of one series: the text the exposition writes
// ({name="value",...}, escaped) and the values in the family's order.
type series struct {
	text   string
	values []string
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
	return series{text: b.String(), values: values}
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
				lp.state, lp.read = false, false
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
	for i, nv := range t.nodes {
		for j, pv := range nv.ports {
			pv.node, pv.idx = int32(i), int32(len(t.flat))
			if pv.state {
				for k, f := range stateFamilies {
					pv.gauges[k] = f.value(pv)
				}
			}
			if pv.num > 0 {
				t.ports++
			}
			t.flat = append(t.flat, *pv)
			nv.ports[j] = &t.flat[len(t.flat)-1]
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
	byNum := map[int]*portView{}
	for _, p := range o.ports {
		byNum[p.num] = p
	}
	for _, p := range nv.ports {
		if op := byNum[p.num]; op != nil {
			p.read, p.linkDowned, p.packets = op.read, op.linkDowned, op.packets
		}
	}
}

func newNodeView(n *subnet.Node, names *namemap.Map, now time.Time) *nodeView {
	guid := n.GUID.String()
	name, desc := nodeName(names, n), n.Description()
	ni := n.NodeInfo()
	nv := &nodeView{node: n, guid: n.GUID, typ: n.Type, seen: now}
	nv.label = makeSeries(nodeLabels, []string{guid})
	nv.info = makeSeries(nodeInfoLabels, []string{guid, typeName(n.Type), name, desc, strconv.Itoa(int(nodeLID(n))),
		ni.SystemImageGUID.String(), "0x" + strconv.FormatUint(uint64(ni.VendorID), 16), "0x" + strconv.FormatUint(uint64(ni.DeviceID), 16)})
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
		pv := &portView{num: num}
		port := strconv.Itoa(num)
		pv.label = makeSeries(portLabels, []string{guid, port})
		lid := p.BaseLID
		if n.Type == iba.NodeTypeSwitch {
			lid = n.SMALID
		}
		var rguid, rport, rname string
		if r := p.Remote; r != nil {
			rguid, rport, rname = r.Node.GUID.String(), strconv.Itoa(r.Num), nodeName(names, r.Node)
		}
		pv.info = makeSeries(portInfoLabels, []string{guid, port, name, desc, p.GUID.String(), strconv.Itoa(int(lid)), rguid, rport, rname})
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
	pv.widthActive = iba.LinkWidthLanes(pi.LinkWidthActive)
	pv.widthEnabled = iba.WidestLanes(pi.LinkWidthEnabled)
	pv.widthSupported = iba.WidestLanes(pi.LinkWidthSupported)
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
