package subnet

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

// TopologyOptions selects the variants of ibnetdiscover's output.
type TopologyOptions struct {
	// Group is -g: nodes that share a chassis (by system image GUID) are
	// listed per chassis before the others.
	Group bool
	// Full is -f/--full: every port line ends with its raw speed, width
	// and VLCap (" s=4 w=2 v=4").
	Full bool
	// ReportHops is -m: the header gives the discovery depth and the
	// number of MADs (MaxHopsDiscovered, MADs).
	ReportHops bool
	// NodeName maps a node to the name printed for it (--node-name-map);
	// nil prints the node description. As in ibnetdiscover it is applied
	// to switch headers and to the far end of port lines, not to CA
	// headers.
	NodeName func(guid iba.GUID, desc string) string
	// Now is the time on the "generated on" line; zero means time.Now().
	Now time.Time
}

func (o *TopologyOptions) name(n *Node) string {
	d := n.Description()
	if o.NodeName != nil {
		return o.NodeName(n.GUID, d)
	}
	return d
}

// typeLetter is the letter ibnetdiscover puts before a node's GUID to make
// its topology id ("S-0002c9...").
func typeLetter(t iba.NodeType) byte {
	switch t {
	case iba.NodeTypeSwitch:
		return 'S'
	case iba.NodeTypeCA:
		return 'H'
	case iba.NodeTypeRouter:
		return 'R'
	}
	return '?'
}

// nodeID is the quoted topology id of a node.
func nodeID(n *Node) string {
	return fmt.Sprintf("\"%c-%016x\"", typeLetter(n.Type), uint64(n.GUID))
}

// Xsigo devices are recognised by GUID (libibnetdisc chassis.c).
func isXsigoGUID(g iba.GUID) bool { return uint64(g)&0xffffff0000000000 == 0x0013970000000000 }
func isXsigoHCA(g iba.GUID) bool  { return uint64(g)&0xffffffff00000000 == 0x0013970200000000 }
func isXsigoTCA(g iba.GUID) bool  { return uint64(g)&0xffffffff00000000 == 0x0013970300000000 }

// reversed lists nodes of type t newest first: libibnetdisc's per-type
// lists, which every ibnetdiscover listing walks.
func (s *Subnet) reversed(t iba.NodeType) []*Node {
	var l []*Node
	for i := len(s.nodes) - 1; i >= 0; i-- {
		if n := s.nodes[i]; n.Type == t {
			l = append(l, n)
		}
	}
	return l
}

// topoWriter prints with ibnetdiscover's functions (ibnetdiscover.c:
// out_ids, out_switch, out_ca, out_switch_port, out_ca_port).
type topoWriter struct {
	w     *bufio.Writer
	o     *TopologyOptions
	group bool
	ch    map[*Node]*chassis
}

func (t *topoWriter) printf(format string, a ...any) { fmt.Fprintf(t.w, format, a...) }

func (t *topoWriter) chassisNum(n *Node) int {
	if c := t.ch[n]; c != nil {
		return c.num
	}
	return 0
}

func (t *topoWriter) outIDs(n *Node, chname string, prefix string) {
	ni := n.NodeInfo()
	t.printf("\n%svendid=0x%x\n", prefix, ni.VendorID)
	t.printf("%sdevid=0x%x\n", prefix, ni.DeviceID)
	if ni.SystemImageGUID != 0 {
		t.printf("%ssysimgguid=0x%x", prefix, uint64(ni.SystemImageGUID))
	}
	num := t.chassisNum(n)
	if t.group && num != 0 {
		t.printf("\t\t# Chassis %d", num)
		if chname != "" {
			t.printf(" (%s)", chname)
		}
		if isXsigoTCA(n.GUID) {
			if p := n.Port(1); p != nil && p.Remote != nil {
				t.printf(" slot %d", p.Remote.Num)
			}
		}
	}
	if ni.SystemImageGUID != 0 || (t.group && num != 0) {
		t.printf("\n")
	}
}

func (t *topoWriter) outSwitchDetail(n *Node, prefix string) {
	lmcKind := "base"
	if n.EnhancedSP0 {
		lmcKind = "enhanced"
	}
	t.printf("%sSwitch\t%d %s\t\t# \"%s\" %s port 0 lid %d lmc %d", prefix, n.NumPorts, nodeID(n), t.o.name(n), lmcKind, n.SMALID, n.SMALMC)
}

func (t *topoWriter) outSwitch(n *Node, chname, idPrefix, swPrefix string) {
	t.outIDs(n, chname, idPrefix)
	t.printf("%sswitchguid=0x%x(%x)", idPrefix, uint64(n.GUID), uint64(n.NodeInfo().PortGUID))
	if t.group {
		// Chassis type and slot strings exist for Voltaire and Mellanox
		// line/spine boards only, which this grouping does not resolve.
		t.printf("\t# ")
	}
	t.printf("\n")
	t.outSwitchDetail(n, swPrefix)
	t.printf("\n")
}

func (t *topoWriter) outCADetail(n *Node, prefix string) {
	kind := "???"
	switch n.Type {
	case iba.NodeTypeCA:
		kind = "Ca"
	case iba.NodeTypeRouter:
		kind = "Rt"
	}
	t.printf("%s%s\t%d %s\t\t# \"%s\"", prefix, kind, n.NumPorts, nodeID(n), n.Description())
}

func (t *topoWriter) outCA(n *Node, chname, idPrefix, caPrefix string) {
	t.outIDs(n, chname, idPrefix)
	kind := "???"
	switch n.Type {
	case iba.NodeTypeCA:
		kind = "ca"
	case iba.NodeTypeRouter:
		kind = "rt"
	}
	t.printf("%s%sguid=0x%x\n", idPrefix, kind, uint64(n.GUID))
	t.outCADetail(n, caPrefix)
	if t.group && isXsigoHCA(n.GUID) {
		t.printf(" (scp)")
	}
	t.printf("\n")
}

func (t *topoWriter) extPort(p *Port) string {
	if t.group && p.ExtNum != 0 {
		return fmt.Sprintf("[ext %d]", p.ExtNum)
	}
	return ""
}

// remoteLID is the LID printed for the far end: a switch's port 0 LID.
func remoteLID(r *Port) uint16 {
	if r.Node.Type == iba.NodeTypeSwitch {
		return r.Node.SMALID
	}
	return r.BaseLID
}

func (t *topoWriter) full(r linkRate) {
	if t.o.Full {
		t.printf(" s=%d w=%d v=%d", r.ispeed, r.width, r.vlcap)
	}
}

func (t *topoWriter) outSwitchPort(p *Port, prefix string) {
	r := p.Remote
	t.printf("%s[%d]%s", prefix, p.Num, t.extPort(p))
	t.printf("\t%s[%d]%s", nodeID(r.Node), r.Num, t.extPort(r))
	if r.Node.Type != iba.NodeTypeSwitch {
		t.printf("(%x) ", uint64(r.GUID))
	}
	rate := rateOf(p)
	t.printf("\t\t# \"%s\" lid %d %s", t.o.name(r.Node), remoteLID(r), rate.text)
	t.full(rate)
	if isXsigoTCA(r.GUID) {
		t.printf(" slot %d", p.Num)
	} else if isXsigoHCA(r.GUID) {
		t.printf(" (scp)")
	}
	t.printf("\n")
}

func (t *topoWriter) outCAPort(p *Port, prefix string) {
	r := p.Remote
	t.printf("%s[%d]", prefix, p.Num)
	if p.Node.Type != iba.NodeTypeSwitch {
		t.printf("(%x) ", uint64(p.GUID))
	}
	t.printf("\t%s[%d]%s", nodeID(r.Node), r.Num, t.extPort(r))
	if r.Node.Type != iba.NodeTypeSwitch {
		t.printf(" (%x) ", uint64(r.GUID))
	}
	rate := rateOf(p)
	t.printf("\t\t# lid %d lmc %d \"%s\" lid %d %s", p.BaseLID, p.LMC, t.o.name(r.Node), remoteLID(r), rate.text)
	t.full(rate)
	t.printf("\n")
}

func (t *topoWriter) switchWithPorts(n *Node, chname string) {
	t.outSwitch(n, chname, "", "")
	for _, p := range n.Ports[1:] {
		if p != nil && p.Remote != nil {
			t.outSwitchPort(p, "")
		}
	}
}

func (t *topoWriter) caWithPorts(n *Node, chname string) {
	t.outCA(n, chname, "", "")
	for _, p := range n.Ports[1:] {
		if p != nil && p.Remote != nil {
			t.outCAPort(p, "")
		}
	}
}

// ctime is C's ctime(3) layout, which supplies its own newline.
const ctime = "Mon Jan _2 15:04:05 2006\n"

// WriteTopology prints the subnet as ibnetdiscover does (ibnetdiscover.c:
// dump_topology): a header naming the start node, then every switch with
// its linked ports, then CAs, then routers, each list newest first. A
// subnet with no nodes is an error, as ibnetdiscover has nothing to print.
func (s *Subnet) WriteTopology(w io.Writer, o TopologyOptions) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.from == nil {
		return invalid("no start node: nothing discovered")
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	t := &topoWriter{w: bufio.NewWriter(w), o: &o, group: o.Group}
	t.printf("#\n# Topology file: generated on %s#\n", now.Format(ctime))
	if o.ReportHops {
		t.printf("# Reported max hops discovered: %d\n# Total MADs used: %d\n", s.MaxHopsDiscovered, s.MADs)
	}
	t.printf("# Initiated from node %016x port %016x\n", uint64(s.from.GUID), uint64(s.from.NodeInfo().PortGUID))

	switches := s.reversed(iba.NodeTypeSwitch)
	if o.Group {
		var list []*chassis
		list, t.ch = s.groupLocked()
		for _, c := range list {
			if c.num == 0 {
				continue
			}
			t.printf("\nChassis %d", c.num)
			if c.guid != 0 {
				t.printf(" (guid 0x%x)", uint64(c.guid))
			}
			t.printf("\n")
			chname := ""
			if isXsigoGUID(c.guid) {
				for _, n := range c.nodes {
					if isXsigoHCA(n.GUID) {
						chname = n.Description()
						t.printf("Hostname: %s\n", chname)
					}
				}
			}
			// Spine and line boards are found only in Voltaire and
			// Mellanox IS4 chassis, which are not resolved: both lists
			// stay empty.
			t.printf("\n# Spine Nodes")
			t.printf("\n# Line Nodes")
			t.printf("\n# Chassis Switches")
			for _, n := range c.nodes {
				if n.Type == iba.NodeTypeSwitch {
					t.switchWithPorts(n, chname)
				}
			}
			t.printf("\n# Chassis CAs")
			for _, n := range c.nodes {
				if n.Type == iba.NodeTypeCA {
					t.caWithPorts(n, chname)
				}
			}
		}
		t.printf("\nNon-Chassis Nodes\n")
	}
	for _, n := range switches {
		if o.Group && t.chassisNum(n) != 0 {
			continue
		}
		t.switchWithPorts(n, "")
	}
	for _, typ := range []iba.NodeType{iba.NodeTypeCA, iba.NodeTypeRouter} {
		for _, n := range s.reversed(typ) {
			if o.Group && t.chassisNum(n) != 0 {
				continue
			}
			t.caWithPorts(n, "")
		}
	}
	return t.w.Flush()
}

// WriteNodeList prints one line per node of the given types, in the order
// of the types given, each type newest first: ibnetdiscover -l (CA,
// switch, router), -H (CA), -S (switch), -R (router), and so ibhosts,
// ibswitches and ibrouters' underlying list.
func (s *Subnet) WriteNodeList(w io.Writer, o TopologyOptions, types ...iba.NodeType) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	bw := bufio.NewWriter(w)
	for _, typ := range types {
		kind := "???"
		switch typ {
		case iba.NodeTypeSwitch:
			kind = "Switch"
		case iba.NodeTypeCA:
			kind = "Ca"
		case iba.NodeTypeRouter:
			kind = "Router"
		}
		for _, n := range s.reversed(typ) {
			ni := n.NodeInfo()
			fmt.Fprintf(bw, "%s\t : 0x%016x ports %d devid 0x%x vendid 0x%x \"%s\"\n", kind, uint64(n.GUID), n.NumPorts, ni.DeviceID, ni.VendorID, o.name(n))
		}
	}
	return bw.Flush()
}

func typeCompat(t iba.NodeType) string {
	switch t {
	case iba.NodeTypeSwitch:
		return "SW"
	case iba.NodeTypeCA:
		return "CA"
	case iba.NodeTypeRouter:
		return "RT"
	}
	return "??"
}

// WritePortsReport prints ibnetdiscover -p: every known port of every node
// (nodes newest first, ports from the highest number down), with its peer.
func (s *Subnet) WritePortsReport(w io.Writer, o TopologyOptions) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	bw := bufio.NewWriter(w)
	for i := len(s.nodes) - 1; i >= 0; i-- {
		n := s.nodes[i]
		for num := n.NumPorts; num > 0; num-- {
			p := n.Ports[num]
			if p == nil {
				continue
			}
			pi := p.PortInfo()
			width, ispeed, espeed := pi.LinkWidthActive, pi.LinkSpeedActive, 0
			switch {
			case n.Type != iba.NodeTypeSwitch:
				espeed = aggExtSpeed(&pi, &pi)
			case n.Port(0) != nil:
				c := n.Port(0).PortInfo()
				espeed = aggExtSpeed(&c, &pi)
			default:
				width, ispeed = 0, 0
			}
			var fdr10 uint8
			if p.HasExtInfo {
				var x iba.MlnxExtPortInfo
				_ = x.Unmarshal(p.ExtInfo[:])
				fdr10 = x.LinkSpeedActive
			}
			lid := p.BaseLID
			if n.Type == iba.NodeTypeSwitch {
				lid = n.SMALID
			}
			fmt.Fprintf(bw, "%2s %5d %2d 0x%016x %s %s", typeCompat(n.Type), lid, p.Num, uint64(p.GUID), widthString(width), speedString(ispeed, espeed, fdr10))
			if r := p.Remote; r != nil {
				fmt.Fprintf(bw, " - %2s %5d %2d 0x%016x ( '%s' - '%s' )\n", typeCompat(r.Node.Type), remoteLID(r), r.Num, uint64(r.GUID), o.name(n), o.name(r.Node))
			} else {
				fmt.Fprintf(bw, "%36s'%s'\n", "", o.name(n))
			}
		}
	}
	return bw.Flush()
}

// ProgressLine is the line ibnetdiscover -s prints when a NodeInfo reply
// arrives (libibnetdisc: dump_endnode), without its newline: the DR path,
// whether the node is new, its type, GUID, the port it was entered by (0
// for a switch) with that port's LID range, and its description as known
// at that moment.
func ProgressLine(path DRPath, isNew bool, n *Node, entry *Port) string {
	what := "known"
	if isNew {
		what = "new"
	}
	kind := "unknown"
	switch n.Type {
	case iba.NodeTypeSwitch:
		kind = "Switch"
	case iba.NodeTypeCA:
		kind = "Channel Adapter"
	case iba.NodeTypeRouter:
		kind = "Router"
	}
	num := entry.Num
	if n.Type == iba.NodeTypeSwitch {
		num = 0
	}
	base := int(entry.BaseLID)
	last := base + 1<<entry.LMC - 1
	desc := string(n.Desc[:])
	if i := indexNUL(n.Desc[:]); i >= 0 {
		desc = string(n.Desc[:i])
	}
	return fmt.Sprintf("DR path slid 0; dlid 0; %s -> %s %s {%016x} portnum %d lid %d-%d \"%s\"", path, what, kind, uint64(n.GUID), num, base, last, desc)
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}
