package diags

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "iblinkinfo", aliases: []string{"iblinkinfo.pl"}, make: newIBLinkInfo})
}

// iblinkinfo's --diffcheck keys (iblinkinfo.c DIFF_FLAG_*).
const (
	linkDiffPort     = 1 << iota // the port's connection
	linkDiffState                // the port's state
	linkDiffLID                  // the peer's and the switch's LID
	linkDiffNodeDesc             // the node description
	linkDiffDefault  = linkDiffPort | linkDiffState
)

type linkInfoFlags struct {
	df                          discoverFlags
	all, down, line, additional bool
	switchesOnly, casOnly       bool
	up, portGUIDs               bool
	target                      string
	targetLID                   bool
	nodeNameMap                 string
	diffFile, diffCheck         string
	filterDown                  string
}

// LinkInfoResult is iblinkinfo's --json document: every port printed, by
// node, in the C tool's order.
type LinkInfoResult struct {
	Nodes       []LinkInfoNode `json:"nodes"`
	Unreachable []FailureJSON  `json:"unreachable"`
}

// LinkInfoNode is one node and its ports.
type LinkInfoNode struct {
	Type  string         `json:"type"`
	GUID  string         `json:"guid"`
	Name  string         `json:"name"`
	LID   uint16         `json:"lid"`
	Ports []LinkInfoPort `json:"ports"`
}

// LinkInfoPort is one port and its link. Width, Speed and the "could be"
// hints are the C tool's words; empty for a port that is Down (IBA
// C14-24.2.1: only the states are valid then).
type LinkInfoPort struct {
	Port         int       `json:"port"`
	GUID         string    `json:"guid"`
	LID          uint16    `json:"lid"`
	Width        string    `json:"width,omitempty"`
	Speed        string    `json:"speed,omitempty"`
	State        string    `json:"state"`
	PhysState    string    `json:"phys_state"`
	HOQLife      *uint8    `json:"hoq_life,omitempty"`
	VLStall      *uint8    `json:"vl_stall_count,omitempty"`
	Remote       *LinkPeer `json:"remote,omitempty"`
	CouldWidth   string    `json:"could_be_width,omitempty"`
	CouldSpeed   string    `json:"could_be_speed,omitempty"`
	DiffSide     string    `json:"diff,omitempty"` // "<" or ">" with --diff
	NotAvailable bool      `json:"peer_not_available,omitempty"`
}

// LinkPeer is the far end of a link.
type LinkPeer struct {
	GUID string `json:"port_guid"`
	LID  uint16 `json:"lid"`
	Port int    `json:"port"`
	Name string `json:"name"`
}

func newIBLinkInfo(e *Env) *cobra.Command {
	f := &linkInfoFlags{}
	c := &cobra.Command{
		Use:   "iblinkinfo [flags] [TARGET]",
		Short: "report the link state of every port in the fabric (infiniband-diags iblinkinfo)",
		Long: `iblinkinfo discovers the subnet (or loads --load-cache) and prints every
port with its link: width, speed, state, the peer, and what the link could
run at. Output is infiniband-diags' iblinkinfo byte for byte.

-d is --down here, as in the C tool (it takes the place of the global
--debug, which iblinkinfo has no use for); -S and -G name a port GUID and -D
a directed route to start a partial scan at (one hop by default, -n sets
it); with -a every node of the partial scan is printed.

From python-rdma: TARGET prints one switch, given in any form (LID, GUID,
GID, directed route, path spec, name); --up leaves out the ports that are
Polling; -g is accepted and changes nothing, the C tool's format showing
port GUIDs already.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				f.target = args[0]
			}
			return runIBLinkInfo(e, cmd, f)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.nodeNameMap, "node-name-map", "", "node name map file")
	fl.StringVarP(&f.df.guid, "switch", "S", "", "start partial scan at the port with this GUID")
	fl.StringVarP(&f.df.guid, "port-guid", "G", "", "(same as -S)")
	fl.StringVarP(&f.df.direct, "Direct", "D", "", "start partial scan at the port this directed route reaches")
	fl.BoolVarP(&f.all, "all", "a", false, "print all nodes found in a partial fabric scan")
	fl.IntVarP(&f.df.hops, "hops", "n", 0, "number of hops to include away from the specified node")
	// The C tool's -d is --down: it shadows the global -d/--debug here.
	fl.BoolVarP(&f.down, "debug", "d", false, "print only down links (iblinkinfo's -d; same as --down)")
	fl.BoolVar(&f.down, "down", false, "print only down links")
	fl.BoolVarP(&f.line, "line", "l", false, "(line mode) print all information for each link on a single line")
	fl.BoolVarP(&f.additional, "additional", "p", false, "print additional port settings (HoqLife, VLStallCount)")
	fl.StringVar(&f.df.loadCache, "load-cache", "", "load the subnet from this ibnetdiscover cache instead of discovering")
	fl.StringVar(&f.diffFile, "diff", "", "ibnetdiscover cache to diff the subnet against")
	fl.StringVar(&f.diffCheck, "diffcheck", "", "checks for --diff: port,state,lid,nodedesc (default port,state)")
	fl.StringVar(&f.filterDown, "filterdownports", "", "ibnetdiscover cache: do not print ports that are down in it too")
	fl.BoolVar(&f.switchesOnly, "switches-only", false, "output only switches")
	fl.BoolVar(&f.casOnly, "cas-only", false, "output only CAs")
	fl.BoolVarP(&f.targetLID, "Lid", "L", false, "TARGET is a LID (python-rdma)")
	fl.BoolVar(&f.up, "up", false, "print only ports that are not Polling (python-rdma)")
	fl.BoolVarP(&f.portGUIDs, "portguids", "g", false, "show port GUIDs, not node GUIDs (python-rdma; the C format shows port GUIDs already)")
	f.df.register(c, false)
	return c
}

func liParseDiffCheck(s string) (int, error) {
	flags := 0
	for _, k := range strings.Split(s, ",") {
		switch strings.ToLower(k) {
		case "port":
			flags |= linkDiffPort
		case "state":
			flags |= linkDiffState
		case "lid":
			flags |= linkDiffLID
		case "nodedesc":
			flags |= linkDiffNodeDesc
		case "":
		default:
			return 0, fmt.Errorf("invalid diff check key: %s", k)
		}
	}
	return flags, nil
}

func runIBLinkInfo(e *Env, cmd *cobra.Command, f *linkInfoFlags) error {
	if f.df.direct != "" && f.df.loadCache != "" {
		return &exitError{errors.New("Cannot specify cache and direct route path"), 1}
	}
	checks := linkDiffDefault
	if cmd.Flags().Changed("diffcheck") {
		var err error
		if checks, err = liParseDiffCheck(f.diffCheck); err != nil {
			return usagef("--diffcheck: %v", err)
		}
	}
	onlyType := iba.NodeType(0)
	switch {
	case f.switchesOnly && f.casOnly:
		// The C tool takes the last of the two; both given is a mistake.
		return usagef("--switches-only and --cas-only exclude each other")
	case f.switchesOnly:
		onlyType = iba.NodeTypeSwitch
	case f.casOnly:
		onlyType = iba.NodeTypeCA
	}
	names, err := loadNames(f.nodeNameMap)
	if err != nil {
		return err
	}
	var diffWith, filter *subnet.Subnet
	if f.diffFile != "" {
		if diffWith, err = loadSubnetFile(f.diffFile); err != nil {
			return &exitError{fmt.Errorf("loading cached fabric for diff failed: %w", err), 255}
		}
	}
	if f.filterDown != "" {
		if filter, err = loadSubnetFile(f.filterDown); err != nil {
			return &exitError{fmt.Errorf("loading cached fabric for filterdownports failed: %w", err), 255}
		}
	}
	partial := f.df.loadCache == "" && (f.df.guid != "" || f.df.direct != "")
	if partial && f.df.hops == 0 {
		f.df.hops = 1 // libibnetdisc's default for a partial scan
	}
	f.df.progressBar = true
	f.df.drStart = true
	r, err := e.discover(&f.df, nil)
	if err != nil {
		var ue *UsageError
		if errors.As(err, &ue) {
			return err
		}
		return &exitError{err, 1}
	}
	e.warnFailures("iblinkinfo", r)
	s := r.s

	lw := &liWriter{names: names, line: f.line, additional: f.additional, down: f.down, up: f.up, filter: filter, json: e.JSON}
	var out strings.Builder
	lw.w = &out

	// The one node a partial scan reports, unless -a.
	var only *subnet.Node
	if f.target != "" {
		p, err := findInSubnet(s, r.report, f.target, &addrFlags{lid: f.targetLID}, names)
		if err != nil {
			return &exitError{err, 1}
		}
		if p.Node.Type != iba.NodeTypeSwitch {
			return &exitError{fmt.Errorf("%s is not a switch", f.target), 1}
		}
		only = p.Node
	}
	if only == nil && !f.all && (f.df.guid != "" || f.df.direct != "") {
		var p *subnet.Port
		what := f.df.guid
		if f.df.direct != "" {
			what = f.df.direct
			if n, _ := s.From(); n != nil {
				p = n.EndPort()
				if p == nil {
					p = &subnet.Port{Node: n}
				}
			}
		} else {
			p = s.PortByGUID(iba.GUID(cStrtoul(f.df.guid)))
		}
		if p == nil || (onlyType != 0 && p.Node.Type != onlyType) {
			fmt.Fprintf(e.Stderr, "Failed to find port: %s\n", what)
			return incomplete(lw.finish(e, r), r.lost())
		}
		only = p.Node
	}
	switch {
	case only != nil && diffWith != nil:
		lw.diff(only, diffWith, s, checks, onlyType)
	case only != nil:
		lw.node(only, "", "")
	case diffWith != nil:
		lw.diff(nil, diffWith, s, checks, onlyType)
	default:
		for _, n := range ibndOrder(s, onlyType) {
			lw.node(n, "", "")
		}
	}
	if !e.JSON {
		if _, err := io.WriteString(e.Stdout, out.String()); err != nil {
			return err
		}
	}
	return incomplete(lw.finish(e, r), r.lost())
}

// liWriter prints nodes and ports as iblinkinfo.c does and records them
// for --json.
type liWriter struct {
	w                            io.Writer
	names                        *namemap.Map
	line, additional, down, json bool
	up                           bool
	filter                       *subnet.Subnet
	res                          LinkInfoResult
	cur                          *LinkInfoNode
}

func (lw *liWriter) finish(e *Env, r *discoverResult) error {
	if !e.JSON {
		return nil
	}
	lw.res.Unreachable = unreachableJSON(r)
	if lw.res.Nodes == nil {
		lw.res.Nodes = []LinkInfoNode{}
	}
	return e.writeJSON("iblinkinfo", lw.res)
}

// header is print_node_header: printed once per node (*printed counts),
// never in line mode. A nil printed prints unconditionally.
func (lw *liWriter) header(n *subnet.Node, printed *int, prefix string) {
	if (printed != nil && *printed != 0) || lw.line {
		return
	}
	if n.Type == iba.NodeTypeSwitch {
		guid := n.NodeInfo().PortGUID
		if p0 := n.Port(0); p0 != nil {
			guid = p0.GUID
		}
		fmt.Fprintf(lw.w, "%s%s: 0x%016x %s:\n", prefix, liNodeType(n.Type), uint64(guid), nodeName(lw.names, n))
	} else {
		fmt.Fprintf(lw.w, "%s%s: %s:\n", prefix, liNodeType(n.Type), nodeName(lw.names, n))
	}
	if printed != nil {
		*printed++
	}
}

// node is print_node.
func (lw *liWriter) node(n *subnet.Node, prefix, side string) {
	printed := 0
	for i := 1; i <= n.NumPorts; i++ {
		p := n.Port(i)
		if p == nil {
			continue
		}
		pi := p.PortInfo()
		if lw.up && pi.PortPhysicalState == iba.PhysPortStatePolling {
			continue
		}
		if !lw.down || pi.PortState == iba.PortStateDown {
			lw.header(n, &printed, prefix)
			lw.port(n, p, prefix, side)
		}
	}
}

func (lw *liWriter) jsonNode(n *subnet.Node) *LinkInfoNode {
	if !lw.json {
		return nil
	}
	if lw.cur == nil || lw.cur.GUID != n.GUID.String() {
		lid := n.SMALID
		if ep := n.EndPort(); n.Type != iba.NodeTypeSwitch && ep != nil {
			lid = ep.BaseLID
		}
		lw.res.Nodes = append(lw.res.Nodes, LinkInfoNode{Type: liNodeType(n.Type), GUID: n.GUID.String(), Name: nodeName(lw.names, n), LID: lid, Ports: []LinkInfoPort{}})
		lw.cur = &lw.res.Nodes[len(lw.res.Nodes)-1]
	}
	return lw.cur
}

// filteredDown is filterdownport_check: the port is down in the filter
// subnet too.
func (lw *liWriter) filteredDown(n *subnet.Node, p *subnet.Port) bool {
	fn := lw.filter.Node(n.GUID)
	if fn == nil || p.Num > fn.NumPorts {
		return false
	}
	fp := fn.Port(p.Num)
	return fp != nil && fp.PortInfo().PortState == iba.PortStateDown
}

// port is print_port.
func (lw *liWriter) port(n *subnet.Node, p *subnet.Port, prefix, side string) {
	pi := p.PortInfo()
	if pi.PortState == iba.PortStateDown && lw.filter != nil && lw.filteredDown(n, p) {
		return
	}
	link, width, speed := linkState(p)
	jp := LinkInfoPort{Port: p.Num, GUID: p.GUID.String(), LID: p.BaseLID, Width: width, Speed: speed,
		State: linkPortState(pi.PortState), PhysState: linkPhysState(pi.PortPhysicalState), DiffSide: strings.TrimSpace(side)}
	if n.Type == iba.NodeTypeSwitch {
		jp.LID = n.SMALID
	}
	if lw.additional && pi.PortState != iba.PortStateDown {
		link += fmt.Sprintf(" (HOQ:%d VL_Stall:%d)", pi.HOQLife, pi.VLStallCount)
		hoq, vls := pi.HOQLife, pi.VLStallCount
		jp.HOQLife, jp.VLStall = &hoq, &vls
	}
	var remote string
	if r := p.Remote; r != nil {
		cw, cs := linkCouldBe(p)
		jp.CouldWidth, jp.CouldSpeed = cw, cs
		guid := ""
		if lw.line {
			guid = fmt.Sprintf("0x%016x ", uint64(r.GUID))
		}
		remote = fmt.Sprintf("%s%6d %4d[%2s] \"%s\" (%s %s)\n", guid, linkPeerLID(r), r.Num, linkExtPort(r), nodeName(lw.names, r.Node), cw, cs)
		jp.Remote = &LinkPeer{GUID: r.GUID.String(), LID: linkPeerLID(r), Port: r.Num, Name: nodeName(lw.names, r.Node)}
	} else if pi.PortState == iba.PortStateDown {
		remote = "           [  ] \"\" ( )\n"
	} else {
		remote = "    \"Port not available\"\n"
		jp.NotAvailable = true
	}
	if lw.line {
		fmt.Fprintf(lw.w, "%s0x%016x \"%30s\" ", prefix, uint64(p.GUID), nodeName(lw.names, n))
	} else {
		fmt.Fprintf(lw.w, "%s      ", prefix)
	}
	if n.Type != iba.NodeTypeSwitch {
		if !lw.line {
			fmt.Fprintf(lw.w, "0x%016x ", uint64(p.GUID))
		}
		fmt.Fprintf(lw.w, "%6d %4d[%2s] ==%s==>  %s", p.BaseLID, p.Num, linkExtPort(p), link, remote)
	} else {
		fmt.Fprintf(lw.w, "%6d %4d[%2s] ==%s==>  %s", n.SMALID, p.Num, linkExtPort(p), link, remote)
	}
	if jn := lw.jsonNode(n); jn != nil {
		jn.Ports = append(jn.Ports, jp)
	}
}

// diff is iblinkinfo.c's diff_node: orig is the --diff cache, cur the
// subnet found; one node, or every node (of onlyType), both ways.
func (lw *liWriter) diff(node *subnet.Node, orig, cur *subnet.Subnet, checks int, onlyType iba.NodeType) {
	d := &liDiff{lw: lw, flags: checks, f1: orig, f2: cur, p1: "< ", p2: "> "}
	if node != nil {
		d.nodeIter(node)
	} else {
		for _, n := range ibndOrder(orig, onlyType) {
			d.nodeIter(n)
		}
	}
	// The other way only finds nodes missing from the reference.
	d = &liDiff{lw: lw, flags: checks &^ (linkDiffPort | linkDiffState | linkDiffLID | linkDiffNodeDesc), f1: cur, f2: orig, p1: "> ", p2: "< "}
	if node != nil {
		d.nodeIter(node)
	} else {
		for _, n := range ibndOrder(cur, onlyType) {
			d.nodeIter(n)
		}
	}
}

type liDiff struct {
	lw     *liWriter
	flags  int
	f1, f2 *subnet.Subnet
	p1, p2 string
}

// nodeIter is diff_node_iter.
func (d *liDiff) nodeIter(n1 *subnet.Node) {
	n2 := d.f2.Node(n1.GUID)
	if n2 == nil {
		d.lw.node(n1, d.p1, d.p1)
		return
	}
	if d.flags == 0 {
		return
	}
	printed := 0
	if (n1.Type == iba.NodeTypeSwitch && d.flags&linkDiffLID != 0 && n1.SMALID != n2.SMALID) ||
		(d.flags&linkDiffNodeDesc != 0 && n1.Desc != n2.Desc) {
		// The C tool passes no counter here (and crashes on it); both
		// headers are printed once.
		d.lw.header(n1, nil, d.p1)
		d.lw.header(n2, nil, d.p2)
		printed++
	}
	if n1.NumPorts != n2.NumPorts {
		d.lw.header(n1, &printed, "")
		fmt.Fprintf(d.lw.w, "%snumports = %d\n", d.p1, n1.NumPorts)
		fmt.Fprintf(d.lw.w, "%snumports = %d\n", d.p2, n2.NumPorts)
		return
	}
	for i := 1; i <= n1.NumPorts; i++ {
		a, b := n1.Port(i), n2.Port(i)
		if a == nil && b == nil {
			continue
		}
		out := false
		if d.flags&linkDiffPort != 0 {
			switch {
			case (a == nil) != (b == nil):
				out = true
			case (a.Remote == nil) != (b.Remote == nil):
				out = true
			case a.Remote != nil && a.Remote.GUID != b.Remote.GUID:
				out = true
			}
		}
		both := a != nil && b != nil
		if d.flags&linkDiffState != 0 && both && a.PortInfo().PortState != b.PortInfo().PortState {
			out = true
		}
		linked := both && a.Remote != nil && b.Remote != nil
		if d.flags&linkDiffPort != 0 && d.flags&linkDiffLID != 0 && linked && a.Remote.BaseLID != b.Remote.BaseLID {
			out = true
		}
		if d.flags&linkDiffPort != 0 && d.flags&linkDiffNodeDesc != 0 && linked && a.Remote.Node.Desc != b.Remote.Node.Desc {
			out = true
		}
		if out && a != nil {
			d.lw.header(n1, &printed, "")
			d.lw.port(n1, a, d.p1, d.p1)
		}
		if out && b != nil {
			d.lw.header(n1, &printed, "")
			d.lw.port(n2, b, d.p2, d.p2)
		}
	}
}

// ibndOrder are the nodes of type t (every type for 0) in libibnetdisc's
// order.
func ibndOrder(s *subnet.Subnet, t iba.NodeType) []*subnet.Node {
	return s.IBNDOrder(func(n *subnet.Node) bool { return t == 0 || n.Type == t })
}
