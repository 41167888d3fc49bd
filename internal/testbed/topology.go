package testbed

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
)

// Width is a link width as ibnetdiscover prints it and ibsim reads it: the
// number of lanes (IBA 14.2.5.6, PortInfo:LinkWidthActive).
type Width int

// Link widths known to ibsim's topology parser.
const (
	Width1x  Width = 1
	Width2x  Width = 2
	Width4x  Width = 4
	Width8x  Width = 8
	Width12x Width = 12
)

func (w Width) String() string { return fmt.Sprintf("%dx", int(w)) }

// enabledMask is the PortInfo:LinkWidthEnabled mask ibsim derives from a
// width in a port line's comment (sim_net.c: parse_port_link_width_and_speed).
// Two ends can only link when their masks overlap: ibsim exits otherwise.
func (w Width) enabledMask() (int, bool) {
	switch w {
	case Width1x:
		return 0x1, true
	case Width4x:
		return 0x3, true
	case Width8x:
		return 0x4, true
	case Width12x:
		return 0xb, true
	case Width2x:
		return 0x10, true
	}
	return 0, false
}

// Speed is a link speed as ibnetdiscover prints it and ibsim reads it.
type Speed string

// Link speeds known to ibsim 0.10's topology parser (XDR is not).
const (
	SDR   Speed = "SDR"
	DDR   Speed = "DDR"
	QDR   Speed = "QDR"
	FDR10 Speed = "FDR10"
	FDR   Speed = "FDR"
	EDR   Speed = "EDR"
	HDR   Speed = "HDR"
	NDR   Speed = "NDR"
)

func (s Speed) valid() bool {
	switch s {
	case SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR:
		return true
	}
	return false
}

// NodeType says whether a node is a switch or a channel adapter.
type NodeType int

// Node types, numbered as NodeInfo:NodeType (IBA 14.2.5.3).
const (
	CA     NodeType = 1
	Switch NodeType = 2
)

func (t NodeType) String() string {
	switch t {
	case CA:
		return "Ca"
	case Switch:
		return "Switch"
	}
	return fmt.Sprintf("NodeType(%d)", int(t))
}

// Node is a switch or a channel adapter of a Fabric.
type Node struct {
	// Name is the node id in the topology file: what SIM_HOST and ibsim's
	// console commands name. ibsim also uses it as the NodeDescription.
	Name  string
	Type  NodeType
	Ports int
	// GUID is the node GUID. ibsim derives port GUIDs from it (PortGUID).
	GUID iba.GUID
}

// PortGUID is the GUID ibsim gives port n of the node: a switch has one
// port GUID, the node GUID (IBA 14.2.5.3: switch ports share port 0's
// GUID); a CA port n gets node GUID + n (sim_net.c: init_ports), whatever
// a topology file says in parentheses.
func (n *Node) PortGUID(port int) iba.GUID {
	if n.Type == Switch {
		return n.GUID
	}
	return n.GUID + iba.GUID(port)
}

// End is one end of a link: a node port and the width and speed it enables.
type End struct {
	Node  string
	Port  int
	Width Width
	Speed Speed
}

// Link joins two node ports. Each end has its own enabled width and speed,
// and ibsim brings the link up at the best width and speed both ends enable;
// different values at the two ends make a link that trained below what one
// end supports.
type Link struct {
	A, B End
}

// Fabric is a topology to hand to ibsim: nodes, and links between their
// ports. Build one with AddSwitch, AddCA and Connect, or with a generator
// such as FatTree, change it, and write it with Topology.
type Fabric struct {
	// Title goes into the comment at the top of the topology file.
	Title string
	Nodes []*Node
	Links []*Link
}

// AddSwitch adds a switch with ports external ports (port 0, the switch
// management port, comes in addition).
func (f *Fabric) AddSwitch(name string, ports int, guid iba.GUID) *Node {
	n := &Node{Name: name, Type: Switch, Ports: ports, GUID: guid}
	f.Nodes = append(f.Nodes, n)
	return n
}

// AddCA adds a channel adapter (an HCA) with ports ports.
func (f *Fabric) AddCA(name string, ports int, guid iba.GUID) *Node {
	n := &Node{Name: name, Type: CA, Ports: ports, GUID: guid}
	f.Nodes = append(f.Nodes, n)
	return n
}

// Connect links port ap of node a to port bp of node b, both ends enabling
// width w and speed s.
func (f *Fabric) Connect(a string, ap int, b string, bp int, w Width, s Speed) *Link {
	l := &Link{A: End{a, ap, w, s}, B: End{b, bp, w, s}}
	f.Links = append(f.Links, l)
	return l
}

// Node returns the node called name, or nil.
func (f *Fabric) Node(name string) *Node {
	for _, n := range f.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// LinkAt returns the link on port port of node name, or nil.
func (f *Fabric) LinkAt(name string, port int) *Link {
	for _, l := range f.Links {
		if (l.A.Node == name && l.A.Port == port) || (l.B.Node == name && l.B.Port == port) {
			return l
		}
	}
	return nil
}

// Unlink removes the link on port port of node name, leaving both ports
// unconnected (ibsim shows them Down/Polling). It reports whether there was
// such a link.
func (f *Fabric) Unlink(name string, port int) bool {
	for i, l := range f.Links {
		if (l.A.Node == name && l.A.Port == port) || (l.B.Node == name && l.B.Port == port) {
			f.Links = append(f.Links[:i], f.Links[i+1:]...)
			return true
		}
	}
	return false
}

// Peer returns the node and port at the other end of port port of node
// name; ok is false when the port is not linked.
func (f *Fabric) Peer(name string, port int) (peer string, peerPort int, ok bool) {
	l := f.LinkAt(name, port)
	switch {
	case l == nil:
		return "", 0, false
	case l.A.Node == name && l.A.Port == port:
		return l.B.Node, l.B.Port, true
	default:
		return l.A.Node, l.A.Port, true
	}
}

// ErrInvalidFabric is wrapped by every error Validate and Topology return.
var ErrInvalidFabric = errors.New("invalid fabric")

// Validate checks what ibsim would reject or die on: bad names, duplicate
// names or GUIDs (also CA port GUIDs, which ibsim does not check), ports out
// of range or used twice, and link ends with no width or speed in common.
func (f *Fabric) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidFabric, fmt.Sprintf(format, a...))
	}
	names := map[string]*Node{}
	guids := map[iba.GUID]string{}
	for _, n := range f.Nodes {
		if err := checkName(n.Name); err != nil {
			return bad("%v", err)
		}
		if names[n.Name] != nil {
			return bad("node %q appears twice", n.Name)
		}
		names[n.Name] = n
		if n.Type != Switch && n.Type != CA {
			return bad("node %q: type %v is neither Switch nor CA", n.Name, n.Type)
		}
		if n.Ports < 1 || n.Ports > 254 {
			return bad("node %q: %d ports, want 1 to 254", n.Name, n.Ports)
		}
		if n.GUID == 0 {
			return bad("node %q: GUID 0", n.Name)
		}
		used := []iba.GUID{n.GUID}
		if n.Type == CA {
			for p := 1; p <= n.Ports; p++ {
				used = append(used, n.PortGUID(p))
			}
		}
		for _, g := range used {
			if other, dup := guids[g]; dup {
				return bad("node %q: GUID %v already used by %q", n.Name, g, other)
			}
			guids[g] = n.Name
		}
	}
	type port struct {
		node string
		port int
	}
	seen := map[port]bool{}
	for _, l := range f.Links {
		for _, e := range []End{l.A, l.B} {
			n := names[e.Node]
			if n == nil {
				return bad("link %s: no node %q", l, e.Node)
			}
			if e.Port < 1 || e.Port > n.Ports {
				return bad("link %s: node %q has ports 1 to %d", l, e.Node, n.Ports)
			}
			if seen[port{e.Node, e.Port}] {
				return bad("link %s: port %d of %q is linked twice", l, e.Port, e.Node)
			}
			seen[port{e.Node, e.Port}] = true
			if _, ok := e.Width.enabledMask(); !ok {
				return bad("link %s: width %v is not 1x, 2x, 4x, 8x or 12x", l, e.Width)
			}
			if !e.Speed.valid() {
				return bad("link %s: speed %q unknown to ibsim", l, string(e.Speed))
			}
		}
		if l.A.Node == l.B.Node && l.A.Port == l.B.Port {
			return bad("link %s: a port linked to itself", l)
		}
		ma, _ := l.A.Width.enabledMask()
		mb, _ := l.B.Width.enabledMask()
		if ma&mb == 0 {
			return bad("link %s: widths %v and %v have no lane count in common", l, l.A.Width, l.B.Width)
		}
	}
	return nil
}

func (l *Link) String() string {
	return fmt.Sprintf("%q[%d]-%q[%d]", l.A.Node, l.A.Port, l.B.Node, l.B.Port)
}

// checkName keeps to names that survive ibsim's parsers: the topology
// parser splits on '"' and reserves '#' and '@' (module and alias syntax),
// the console takes one line of 127 bytes, and SIM_HOST holds 31 bytes.
func checkName(s string) error {
	if s == "" {
		return errors.New("empty node name")
	}
	if len(s) > 31 {
		return fmt.Errorf("node name %q: longer than SIM_HOST's 31 bytes", s)
	}
	for _, r := range s {
		if r <= ' ' || r > '~' || strings.ContainsRune(`"#@[]\`, r) {
			return fmt.Errorf("node name %q: %q not allowed (printable ASCII without space or \"#@[]\\)", s, r)
		}
	}
	return nil
}

// Topology writes the fabric in the ibnetdiscover topology format that
// ibsim reads (sim_net.c: parse_netconf). What it relies on:
//
//   - A record is a header line ("Switch <n> "id"", "Ca <n> "id"") and its
//     port lines, which start with '['. The first line that is not a port
//     line ends the record and is consumed, so a blank line follows every
//     record.
//   - "switchguid=" and "caguid=" set the GUID of the next node (an
//     absolute value); without them ibsim counts up from 0x200000 and
//     0x100000. A CA's port GUIDs are node GUID + port number.
//   - A port line is `[p] "peer"[pp]` and a comment; ibsim takes the link
//     width and speed from the comment's last "lid <n> <w>x<speed>", which
//     overrides any w=/s= option on the line, so only the comment is
//     written. A CA port line's first "lid <n> lmc <m>" sets the port's LID;
//     the switch header's "lid <n> lmc <m>" sets port 0's. All LIDs are
//     written as 0, for an SM (OpenSM) to assign.
//   - The text after '#' in a header is the NodeDescription; the name is
//     used for it.
//   - Both ends of a link must name each other, or ibsim refuses the file.
//   - Ports that no line mentions are unconnected (Down/Polling).
//
// The result is also valid ibnetdiscover output, so the topology parsers
// of infiniband-diags and of package subnet read it too.
func (f *Fabric) Topology() (string, error) {
	if err := f.Validate(); err != nil {
		return "", err
	}
	type endRef struct {
		self, peer End
	}
	ports := map[string][]endRef{}
	for _, l := range f.Links {
		ports[l.A.Node] = append(ports[l.A.Node], endRef{l.A, l.B})
		ports[l.B.Node] = append(ports[l.B.Node], endRef{l.B, l.A})
	}
	byName := map[string]*Node{}
	for _, n := range f.Nodes {
		byName[n.Name] = n
	}

	var b strings.Builder
	b.WriteString("#\n# Topology file for ibsim")
	if f.Title != "" {
		b.WriteString(": " + f.Title)
	}
	b.WriteString("\n# written by rdmakit internal/testbed; ibnetdiscover format\n#\n")
	// ibnetdiscover lists switches first, then CAs.
	for _, typ := range []NodeType{Switch, CA} {
		for _, n := range f.Nodes {
			if n.Type != typ {
				continue
			}
			refs := ports[n.Name]
			sort.Slice(refs, func(i, j int) bool { return refs[i].self.Port < refs[j].self.Port })
			b.WriteString("\n")
			if n.Type == Switch {
				fmt.Fprintf(&b, "switchguid=0x%016x\n", uint64(n.GUID))
				fmt.Fprintf(&b, "Switch\t%d \"%s\"\t\t# \"%s\" base port 0 lid 0 lmc 0\n", n.Ports, n.Name, n.Name)
				for _, r := range refs {
					peer := byName[r.peer.Node]
					fmt.Fprintf(&b, "[%d]\t\"%s\"[%d]", r.self.Port, peer.Name, r.peer.Port)
					if peer.Type == CA {
						fmt.Fprintf(&b, "(%x) ", uint64(peer.PortGUID(r.peer.Port)))
					}
					fmt.Fprintf(&b, "\t\t# \"%s\" lid 0 %v%s\n", peer.Name, r.self.Width, r.self.Speed)
				}
			} else {
				fmt.Fprintf(&b, "caguid=0x%016x\n", uint64(n.GUID))
				fmt.Fprintf(&b, "Ca\t%d \"%s\"\t\t# \"%s\"\n", n.Ports, n.Name, n.Name)
				for _, r := range refs {
					peer := byName[r.peer.Node]
					fmt.Fprintf(&b, "[%d](%x) \t\"%s\"[%d]", r.self.Port, uint64(n.PortGUID(r.self.Port)), peer.Name, r.peer.Port)
					if peer.Type == CA {
						fmt.Fprintf(&b, "(%x) ", uint64(peer.PortGUID(r.peer.Port)))
					}
					fmt.Fprintf(&b, "\t\t# lid 0 lmc 0 \"%s\" lid 0 %v%s\n", peer.Name, r.self.Width, r.self.Speed)
				}
			}
		}
	}
	return b.String(), nil
}
