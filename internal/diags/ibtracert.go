package diags

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "ibtracert", make: newIBTracert})
}

// ibtracert follows the forwarding tables hop by hop with directed route
// SMPs, as infiniband-diags' ibtracert.c does: NodeInfo, NodeDescription
// and PortInfo of every node on the way, SwitchInfo and one LFT (or MFT)
// block of every switch. Its walks, messages and output are the C tool's.

// traceMaxHops is ibtracert's MAXHOPS.
const traceMaxHops = 63

// TraceResult is what ibtracert found: one route per source and
// destination pair (several with --ports-file).
type TraceResult struct {
	Routes []*TraceRoute `json:"routes"`
	// PortsFile and Pairs are --ports-file's file and the pairs read.
	PortsFile string `json:"portsFile,omitempty"`
	Pairs     int    `json:"pairs,omitempty"`
}

// TraceRoute is the path from a source to a destination port, unicast or
// through a multicast group's spanning tree.
type TraceRoute struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	MLID        int    `json:"mlid,omitempty"`
	// Hops are the ports in order: the source, each port entered, the
	// destination.
	Hops  []TraceHop `json:"hops"`
	Error string     `json:"error,omitempty"`
}

// TraceHop is one port on a route: how it was left (OutPort of the node
// before) and where it arrived.
type TraceHop struct {
	Kind     string `json:"kind"` // from, hop, to
	OutPort  *int   `json:"outPort,omitempty"`
	NodeType string `json:"nodeType"`
	NodeGUID string `json:"nodeGuid"`
	PortGUID string `json:"portGuid,omitempty"`
	PortNum  int    `json:"portNum"`
	LID      int    `json:"lid"`
	LastLID  int    `json:"lastLid"`
	Name     string `json:"name"`
}

type ibtracertFlags struct {
	guid        bool
	lid         bool
	direct      bool
	reverse     bool
	force       bool
	brief       bool
	mlid        string
	nodeNameMap string
	portsFile   string
	df          discoverFlags
}

func newIBTracert(e *Env) *cobra.Command {
	var f ibtracertFlags
	c := &cobra.Command{
		Use:   "ibtracert [flags] [<src-addr>] <dest-addr>",
		Short: "trace the unicast or multicast route between two ports (infiniband-diags ibtracert)",
		Long: `ibtracert follows the switches' forwarding tables from a source port to a
destination port and prints every hop, as infiniband-diags' ibtracert does.
With one address it traces from the local port (python-rdma's ibtracert).

Examples:
  ibtracert 4 16                      # the path between LIDs 4 and 16
  ibtracert -n 4 16                   # the same, in the simple format
  ibtracert -G 0x8f1040396522d 0x002c9000100d051   # by port GUID
  ibtracert -m 0xc000 4 16            # the multicast path of MLID 0xc000
  ibtracert 16                        # from the local port to LID 16
  ibtracert --ports-file pairs        # one pair per line

An address is a LID, a port GUID (-G, or 0x and 16 hex digits), a GID, a
directed route (-D, or a list of ports), a python-rdma path spec or a
node's name or description. With --discovery or --cache (python-rdma) the
addresses are looked up in the discovered (or cached) subnet; the route is
always read from the switches.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIBTracert(e, &f, cmd.Flags().Changed("mlid"), args)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&f.force, "force", "f", false, "force")
	fl.BoolVarP(&f.brief, "no_info", "n", false, "simple format")
	fl.StringVarP(&f.mlid, "mlid", "m", "", "multicast trace of the mlid")
	fl.StringVar(&f.nodeNameMap, "node-name-map", "", "node name map file")
	fl.StringVar(&f.portsFile, "ports-file", "", "port pairs file")
	fl.BoolVarP(&f.guid, "Guid", "G", false, "use GUID address argument")
	fl.BoolVarP(&f.lid, "Lid", "L", false, "use LID address argument")
	fl.BoolVarP(&f.direct, "Direct", "D", false, "use Direct address argument: the route traced goes to the LID of the port a directed route reaches (python-rdma)")
	fl.BoolVarP(&f.reverse, "reverse", "r", false, "swap source and destination (python-rdma)")
	f.df.register(c, false)
	return c
}

// traceFailed is ibtracert's IBEXIT: exit status 255.
type traceFailed struct{ msg string }

func (e *traceFailed) Error() string { return e.msg }
func (e *traceFailed) ExitCode() int { return 255 }

// errTraceFailed is a get_route that failed; its warnings are on stderr.
var errTraceFailed = errors.New("route not found")

func runIBTracert(e *Env, f *ibtracertFlags, multicast bool, args []string) error {
	if f.portsFile == "" && (len(args) < 1 || len(args) > 2) {
		return usagef("want [<src-addr>] <dest-addr>")
	}
	if (f.guid && f.lid) || (f.direct && (f.guid || f.lid)) {
		return usagef("-D, -G and -L exclude each other")
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	defer s.Close()
	names, err := loadNames(f.nodeNameMap)
	if err != nil {
		return err
	}
	s.names = names
	tr := &tracer{e: e, s: s, f: f, names: names, dump: 2, visited: map[iba.GUID]bool{}, out: e.Stdout}
	if e.JSON {
		tr.out = io.Discard
	}
	if f.brief {
		tr.dump = 1
	}
	if tr.timeout, err = e.madTimeout(); err != nil {
		return err
	}
	if f.df.cache != "" || f.df.cmd.Flags().Changed("discovery") {
		// python-rdma's discovery options: the addresses are looked up in
		// the subnet; the route is still read from the switches.
		if tr.sn, tr.rep, err = e.discoverWith(s, f.df, false); err != nil {
			return err
		}
	}
	if multicast {
		tr.multicast = true
		tr.mlid = int(int32(cStrtoul(f.mlid)))
	}
	res := &TraceResult{}
	fail := func(msg string) error {
		if e.JSON {
			if err := e.writeJSON("ibtracert", res); err != nil {
				return err
			}
		}
		return &traceFailed{msg}
	}
	if f.portsFile == "" {
		src, dst := "", args[0]
		if len(args) == 2 {
			src, dst = args[0], args[1]
		}
		if f.reverse {
			if src == "" {
				src = fmt.Sprint(s.local.LID)
			}
			src, dst = dst, src
		}
		rt, err := tr.getRoute(src, dst)
		res.Routes = append(res.Routes, rt)
		if err != nil {
			return traceErr(err, fail, "Failed to get route information")
		}
	} else {
		file, err := os.Open(f.portsFile)
		if err != nil {
			return fail(fmt.Sprintf("cannot open ports-file %s", f.portsFile))
		}
		defer file.Close()
		res.PortsFile = f.portsFile
		line := 0
		sc := bufio.NewScanner(file)
		sc.Buffer(make([]byte, 0, 4096), maxPortsLine)
		for sc.Scan() {
			line++
			src, dst, ok, why := portsFileLine(sc.Text())
			if why != "" {
				return fail(fmt.Sprintf("ports-file, %s, at line %d contains bad data: %s", f.portsFile, line, why))
			}
			if !ok {
				continue
			}
			res.Pairs++
			rt, err := tr.getRoute(src, dst)
			res.Routes = append(res.Routes, rt)
			if err != nil {
				return traceErr(err, fail, fmt.Sprintf("Failed to get route information at line %d", line))
			}
		}
		switch err := sc.Err(); {
		case errors.Is(err, bufio.ErrTooLong):
			return fail(fmt.Sprintf("ports-file, %s, at line %d contains bad data: longer than %d bytes", f.portsFile, line+1, maxPortsLine))
		case err != nil:
			return fail(fmt.Sprintf("ports-file, %s: reading after line %d: %v", f.portsFile, line, err))
		}
		fmt.Fprintf(tr.out, "%d lid/guid pairs processed from %s\n", res.Pairs, f.portsFile)
	}
	if e.JSON {
		return e.writeJSON("ibtracert", res)
	}
	return nil
}

// traceErr passes a usage error on, and makes any other failure msg.
func traceErr(err error, fail func(string) error, msg string) error {
	var ue *UsageError
	if errors.As(err, &ue) {
		return err
	}
	return fail(msg)
}

// maxPortsLine bounds a line of --ports-file: two addresses and perhaps a
// comment.
const maxPortsLine = 64 << 10

// portsFileLine reads one line of --ports-file: blank or a comment (ok
// false), or a source and a destination address, which a comment may
// follow. Where the C tool reads the first two words of any line (and cuts
// each at 20 characters), anything else is bad data, why says what.
func portsFileLine(text string) (src, dst string, ok bool, why string) {
	if strings.IndexByte(text, 0) >= 0 {
		return "", "", false, "binary data (a NUL byte)"
	}
	text, _, _ = strings.Cut(text, "#")
	fields := strings.Fields(text)
	switch len(fields) {
	case 0:
		return "", "", false, ""
	case 2:
		return fields[0], fields[1], true, ""
	}
	return "", "", false, fmt.Sprintf("%d words, want a source and a destination address", len(fields))
}

// tracer is one ibtracert run: its flags and the state the C tool keeps
// across the routes of a ports file.
type tracer struct {
	e       *Env
	s       *session
	f       *ibtracertFlags
	names   *namemap.Map
	timeout time.Duration
	// sn, with --discovery or --cache, is the subnet targets are looked
	// up in (rep how its discovery went).
	sn        *subnet.Subnet
	rep       *subnet.DiscoverReport
	dump      int
	multicast bool
	mlid      int
	out       io.Writer
	route     *TraceRoute

	// The multicast search's node table and distance lists (static in
	// the C tool, so shared by the routes of a ports file).
	visited    map[iba.GUID]bool
	nodesDist  [traceMaxHops][]*trNode
	targetGUID iba.GUID
}

// trPortid is libibmad's ib_portid_t as ibtracert uses it: a LID, or a
// directed route from the local port when the LID is 0. A portid with
// both is sent LID routed (its DrSLID and DrDLID are 0).
type trPortid struct {
	lid uint16
	dr  []byte // the out ports after the leading 0
}

func (p *trPortid) clone() trPortid {
	return trPortid{lid: p.lid, dr: append([]byte(nil), p.dr...)}
}

// extend is extend_dpath.
func (p *trPortid) extend(port int) bool {
	if len(p.dr)+1+2 >= 64 {
		return false
	}
	p.dr = append(p.dr, byte(port))
	return true
}

func (p *trPortid) String() string {
	if p.lid != 0 {
		return fmt.Sprintf("Lid %d", p.lid)
	}
	hops := []string{"0"}
	for _, h := range p.dr {
		hops = append(hops, strconv.Itoa(int(h)))
	}
	return "DR path slid 0; dlid 0; " + strings.Join(hops, ",")
}

func (t *tracer) target(p *trPortid) mad.Target {
	if p.lid != 0 {
		return mad.Route{Addr: mad.Addr{LID: p.lid}, Timeout: t.timeout}
	}
	dr := ibpath.NewDR(append([]byte{0}, p.dr...)...)
	r := dr.Route()
	r.Timeout = t.timeout
	return r
}

func (t *tracer) get(p *trPortid, a iba.Attribute, mod uint32) error {
	return t.s.SubnGet(t.e.Ctx, t.target(p), a, mod)
}

func (t *tracer) warn(fn, format string, a ...any) {
	fmt.Fprintf(t.e.Stderr, "ibwarn: [%d] %s: %s\n", os.Getpid(), fn, fmt.Sprintf(format, a...))
}

type trPort struct {
	portGUID  iba.GUID
	portNum   int
	lid       int
	lmc       int
	state     int
	physState int
	remote    *trPort
}

type trNode struct {
	guid     iba.GUID
	typ      iba.NodeType
	numPorts int
	desc     string
	ports    []*trPort // newest first (link_port)
	path     trPortid
	dist     int
	upport   int
	upnode   *trNode
}

type trSwitch struct {
	linearCap, linearTop, enhSP0 int
}

// getNode is get_node: NodeInfo, NodeDescription and PortInfo of the port
// the SMP arrives on.
func (t *tracer) getNode(node *trNode, port *trPort, p *trPortid) error {
	var ni iba.NodeInfo
	if err := t.get(p, &ni, 0); err != nil {
		return err
	}
	var nd iba.NodeDescription
	if err := t.get(p, &nd, 0); err != nil {
		return err
	}
	var pi iba.PortInfo
	if err := t.get(p, &pi, 0); err != nil {
		return err
	}
	node.guid, node.typ, node.numPorts = ni.NodeGUID, ni.NodeType, int(ni.NumPorts)
	node.desc = namemap.Clean(nd.NodeString[:])
	port.portGUID, port.portNum = ni.PortGUID, int(ni.LocalPortNum)
	port.lid, port.lmc, port.state = int(pi.LID), int(pi.LMC), int(pi.PortState)
	return nil
}

// switchLookup is switch_lookup: the LFT entry of lid, -1 when it cannot
// be read or lies beyond the table.
func (t *tracer) switchLookup(sw *trSwitch, p *trPortid, lid int) int {
	var si iba.SwitchInfo
	if err := t.get(p, &si, 0); err != nil {
		return -1
	}
	sw.linearCap, sw.linearTop, sw.enhSP0 = int(si.LinearFDBCap), int(si.LinearFDBTop), int(si.EnhancedPort0)
	if lid >= sw.linearCap && lid > sw.linearTop {
		return -1
	}
	var lft iba.LinearForwardingTable
	if err := t.get(p, &lft, uint32(lid/64)); err != nil {
		return -1
	}
	return int(lft.PortBlock[lid%64])
}

func (t *tracer) samePort(a, b *trPort) bool {
	return a.portGUID == b.portGUID || (t.f.force && a.lid == b.lid)
}

func portInactive(node *trNode, port *trPort, sw *trSwitch) bool {
	return port.state != int(iba.PortStateActive) && (node.typ != iba.NodeTypeSwitch || sw.enhSP0 != 0)
}

// trNodeType is ibtracert's node_type_str.
func trNodeType(t iba.NodeType) string {
	switch t {
	case 0:
		return "???"
	case iba.NodeTypeCA:
		return "ca"
	case iba.NodeTypeSwitch:
		return "switch"
	case iba.NodeTypeRouter:
		return "router"
	case 4:
		return "iwarp rnic"
	}
	return "???"
}

func (t *tracer) name(n *trNode) string {
	return t.names.Name(n.guid, n.desc)
}

func (t *tracer) hop(kind string, out *int, node *trNode, portGUID iba.GUID, portNum, lid, lmc int) {
	if t.route == nil {
		return
	}
	h := TraceHop{Kind: kind, OutPort: out, NodeType: trNodeType(node.typ), NodeGUID: fmt.Sprintf("0x%016x", uint64(node.guid)),
		PortNum: portNum, LID: lid, LastLID: lid + 1<<lmc - 1, Name: t.name(node)}
	if portGUID != 0 {
		h.PortGUID = fmt.Sprintf("0x%016x", uint64(portGUID))
	}
	t.route.Hops = append(t.route.Hops, h)
}

// dumpEndnode is dump_endnode.
func (t *tracer) dumpEndnode(dump int, prompt string, node *trNode, port *trPort) {
	if dump == 0 {
		return
	}
	pn := port.portNum
	if node.typ == iba.NodeTypeSwitch {
		pn = 0
	}
	t.hop(strings.ToLower(prompt), nil, node, 0, pn, port.lid, port.lmc)
	if dump == 1 {
		fmt.Fprintf(t.out, "%s {0x%016x}[%d]\n", prompt, uint64(node.guid), pn)
		return
	}
	fmt.Fprintf(t.out, "%s %s {0x%016x} portnum %d lid %d-%d \"%s\"\n", prompt, trNodeType(node.typ), uint64(node.guid),
		pn, port.lid, port.lid+1<<port.lmc-1, t.name(node))
}

// dumpRoute is dump_route.
func (t *tracer) dumpRoute(dump int, node *trNode, outport int, port *trPort) {
	if dump == 0 {
		return
	}
	op := outport
	t.hop("hop", &op, node, port.portGUID, port.portNum, port.lid, port.lmc)
	if dump == 1 {
		fmt.Fprintf(t.out, "[%d] -> {0x%016x}[%d]\n", outport, uint64(port.portGUID), port.portNum)
		return
	}
	fmt.Fprintf(t.out, "[%d] -> %s port {0x%016x}[%d] lid %d-%d \"%s\"\n", outport, trNodeType(node.typ),
		uint64(port.portGUID), port.portNum, port.lid, port.lid+1<<port.lmc-1, t.name(node))
}

// findRoute is find_route: from follows the LFTs towards to.lid, its
// directed route growing hop by hop.
func (t *tracer) findRoute(from, to *trPortid, dump int) error {
	const fn = "find_route"
	var fromNode, toNode, next trNode
	var fromPort, toPort, nextPort trPort
	var sw trSwitch
	maxHops := traceMaxHops
	outport, nextOut := 255, 255
	if t.getNode(&fromNode, &fromPort, from) != nil || t.getNode(&toNode, &toPort, to) != nil {
		t.warn(fn, "can't reach to/from ports")
		if !t.f.force {
			return errTraceFailed
		}
		if to.lid > 0 {
			toPort.lid = int(to.lid)
		}
		t.warn(fn, "Force: look for lid %d", to.lid)
	}
	node, port := &fromNode, &fromPort
	portnum := port.portNum
	t.dumpEndnode(dump, "From", node, port)
	badTable := func() error {
		t.warn(fn, "Bad forwarding table entry found at: node \"%s\" lid entry %d is %d (top %d)", node.desc, to.lid, outport, sw.linearTop)
		return errTraceFailed
	}
	badPath := func() error {
		t.warn(fn, "Direct path too long!")
		return errTraceFailed
	}
	if node.typ == iba.NodeTypeSwitch {
		nextOut = t.switchLookup(&sw, from, int(to.lid))
		if nextOut < 0 || nextOut > node.numPorts {
			outport = nextOut
			return badTable()
		}
	}
	for {
		// while (maxhops--)
		if maxHops == 0 {
			maxHops = -1
			break
		}
		maxHops--
		if portInactive(node, port, &sw) {
			t.warn(fn, "Bad port state found: node \"%s\" port %d state %d", node.desc, portnum, port.state)
			return errTraceFailed
		}
		if t.samePort(port, &toPort) {
			break
		}
		if node.typ == iba.NodeTypeSwitch {
			outport = nextOut
			if !from.extend(outport) {
				return badPath()
			}
			if t.getNode(&next, &nextPort, from) != nil {
				t.warn(fn, "can't reach port at %s", from)
				return errTraceFailed
			}
			if outport == 0 {
				if !t.samePort(&nextPort, &toPort) {
					return badTable()
				}
				break
			}
		} else if node.typ == iba.NodeTypeCA || node.typ == iba.NodeTypeRouter {
			caSrc := false
			outport = portnum
			if !t.samePort(port, &fromPort) {
				t.warn(fn, "can't continue: reached CA or router port %x, lid %d", uint64(port.portGUID), port.lid)
				return errTraceFailed
			}
			// At the source CA or router: one hop back to (one hopes) a
			// switch.
			back := 0
			if len(from.dr) > 0 {
				back = int(from.dr[len(from.dr)-1])
				from.dr = from.dr[:len(from.dr)-1]
			} else {
				caSrc = true
				if portnum != 0 && !from.extend(portnum) {
					return badPath()
				}
			}
			if t.getNode(&next, &nextPort, from) != nil {
				t.warn(fn, "can't reach port at %s", from)
				return errTraceFailed
			}
			if !caSrc {
				// The port number as seen from the CA's side: the hop
				// just taken back.
				nextPort.portNum = back
			}
		}
		if next.typ == iba.NodeTypeSwitch {
			nextOut = t.switchLookup(&sw, from, int(to.lid))
			if nextOut < 0 || nextOut > next.numPorts {
				outport = nextOut
				return badTable()
			}
		}
		port = &nextPort
		if portInactive(&next, port, &sw) {
			t.warn(fn, "Bad out port state found: node \"%s\" outport %d state %d", node.desc, outport, port.state)
			return errTraceFailed
		}
		node = &next
		portnum = port.portNum
		t.dumpRoute(dump, node, outport, port)
	}
	if maxHops <= 0 {
		t.warn(fn, "no route found after %d hops", traceMaxHops)
		return errTraceFailed
	}
	t.dumpEndnode(dump, "To", node, port)
	return nil
}

// getPort is get_port: PortInfo of port num of the node at p.
func (t *tracer) getPort(port *trPort, num int, p *trPortid) error {
	port.portNum = num
	var pi iba.PortInfo
	if err := t.get(p, &pi, uint32(num)); err != nil {
		return err
	}
	port.lid, port.lmc = int(pi.LID), int(pi.LMC)
	port.state, port.physState = int(pi.PortState), int(pi.PortPhysicalState)
	return nil
}

// newNode is new_node: 1 when the port is the target, -1 for a node seen
// before, else 0 with the node queued at its distance.
func (t *tracer) newNode(node *trNode, port *trPort, p *trPortid, dist int) int {
	if port.portGUID == t.targetGUID {
		node.dist = -1
		node.ports = append([]*trPort{port}, node.ports...)
		return 1
	}
	if t.visited[node.guid] {
		return -1
	}
	t.visited[node.guid] = true
	node.ports = append([]*trPort{port}, node.ports...)
	node.dist = dist
	node.path = p.clone()
	t.nodesDist[dist] = append([]*trNode{node}, t.nodesDist[dist]...)
	return 0
}

// switchMCLookup is switch_mclookup: the ports (0..255) the switch
// forwards mlid to. Like the C tool it reads (NumPorts+15)/16 port
// positions, so on a switch with a multiple of 16 ports the last is not
// seen.
func (t *tracer) switchMCLookup(node *trNode, p *trPortid, mlid int) ([256]bool, error) {
	var m [256]bool
	var si iba.SwitchInfo
	if err := t.get(p, &si, 0); err != nil {
		return m, err
	}
	mlid -= subnet.MinMulticastLID
	if mlid < 0 || mlid >= int(si.MulticastFDBCap) {
		return m, errors.New("mlid beyond the multicast table")
	}
	block := uint32(mlid / 32)
	for set := 0; set < (node.numPorts+15)/16; set++ {
		var mft iba.MulticastForwardingTable
		if err := t.get(p, &mft, block|uint32(set)<<28); err != nil {
			return m, err
		}
		mask := mft.PortMaskBlock[mlid%32]
		for i := 0; i < 16; i++ {
			if mask&(1<<i) != 0 {
				m[set*16+i] = true
			}
		}
	}
	return m, nil
}

// findMCPath is find_mcpath: a breadth-first search from the source along
// the ports the switches forward mlid to, until the target port.
func (t *tracer) findMCPath(from *trPortid, mlid int) *trNode {
	const fn = "find_mcpath"
	node, port := &trNode{}, &trPort{}
	if t.getNode(node, port, from) != nil {
		t.warn(fn, "can't reach node %s", from)
		return nil
	}
	if r := t.newNode(node, port, from, 0); r > 0 {
		if node.typ != iba.NodeTypeSwitch {
			t.warn(fn, "ibtracert from CA to CA is unsupported")
			return nil
		}
		m, err := t.switchMCLookup(node, from, mlid)
		if err != nil || !m[0] {
			return nil
		}
		return node
	}
	leafport := 0
	for dist := 0; dist < traceMaxHops; dist++ {
		for _, node := range t.nodesDist[dist] {
			path := &node.path
			var m [256]bool
			if node.typ != iba.NodeTypeSwitch {
				if dist != 0 {
					continue
				}
				if len(path.dr) > 0 {
					leafport = int(path.dr[len(path.dr)-1])
				}
				m[port.portNum] = true
				node.upport = 0
			} else {
				if dist == 1 && leafport != 0 {
					node.upport = leafport
				}
				var err error
				if m, err = t.switchMCLookup(node, path, mlid); err != nil {
					t.warn(fn, "skipping bad Switch 0x%x", uint64(node.guid))
					continue
				}
			}
			for i := 1; i <= node.numPorts; i++ {
				if !m[i] || i == node.upport {
					continue
				}
				if dist == 0 && leafport != 0 {
					if len(from.dr) > 0 && len(path.dr) > 0 {
						path.dr = path.dr[:len(path.dr)-1]
					}
				} else {
					port = &trPort{}
					if t.getPort(port, i, path) != nil {
						t.warn(fn, "can't reach node %s port %d", path, i)
						return nil
					}
					if port.physState != int(iba.PhysPortStateLinkUp) {
						continue
					}
					if !path.extend(i) {
						return nil
					}
				}
				remote, remotePort := &trNode{}, &trPort{}
				if t.getNode(remote, remotePort, path) != nil {
					t.warn(fn, "NodeInfo on %s port %d failed, skipping port", path, i)
					if len(path.dr) > 0 {
						path.dr = path.dr[:len(path.dr)-1]
					}
					continue
				}
				remote.upnode = node
				remote.upport = remotePort.portNum
				remotePort.remote = port
				r := t.newNode(remote, remotePort, path, dist+1)
				if r > 0 {
					return remote
				}
				if r < 0 && remote.typ == iba.NodeTypeSwitch {
					t.dumpEndnode(2, "ERR: circle discovered at", remote, remotePort)
				}
				if len(path.dr) > 0 {
					path.dr = path.dr[:len(path.dr)-1]
				}
			}
		}
	}
	return nil
}

// dumpMCPath is dump_mcpath: the route from the root to node.
func (t *tracer) dumpMCPath(node *trNode) {
	if node.upnode != nil {
		t.dumpMCPath(node.upnode)
	}
	p := node.ports[0]
	name := t.name(node)
	if node.dist == 0 {
		t.hop("from", nil, node, p.portGUID, p.portNum, p.lid, p.lmc)
		fmt.Fprintf(t.out, "From %s 0x%x port %d lid %d-%d \"%s\"\n", trNodeType(node.typ), uint64(node.guid), p.portNum, p.lid, p.lid+1<<p.lmc-1, name)
		return
	}
	out := 0
	if p.remote != nil {
		out = p.remote.portNum
	}
	t.hop("hop", &out, node, p.portGUID, node.upport, p.lid, 0)
	if t.dump == 1 {
		fmt.Fprintf(t.out, "[%d] -> %s {0x%016x}[%d]\n", out, trNodeType(node.typ), uint64(node.guid), node.upport)
	} else {
		fmt.Fprintf(t.out, "[%d] -> %s 0x%x[%d] lid %d \"%s\"\n", out, trNodeType(node.typ), uint64(node.guid), node.upport, p.lid, name)
	}
	if node.dist < 0 {
		t.hop("to", nil, node, p.portGUID, p.portNum, p.lid, p.lmc)
		fmt.Fprintf(t.out, "To %s 0x%x port %d lid %d-%d \"%s\"\n", trNodeType(node.typ), uint64(node.guid), p.portNum, p.lid, p.lid+1<<p.lmc-1, name)
	}
}

// resolve is resolve_portid_str for ibtracert's addresses, to a LID: a
// LID, a port GUID (-G, or 0x and 16 hex digits), a GID, a directed route
// (-D, or a list of ports: to the LID of the port it reaches), a path spec
// or a node's name (session.parseTarget).
func (t *tracer) resolve(arg string) (trPortid, error) {
	a := &addrFlags{guid: t.f.guid, lid: t.f.lid, direct: t.f.direct}
	if t.sn != nil {
		p, err := findInSubnet(t.sn, t.rep, arg, a, t.names)
		if err != nil {
			return trPortid{}, err
		}
		if p.BaseLID < 1 || p.BaseLID > subnet.MaxUnicastLID {
			return trPortid{}, fmt.Errorf("%s has no unicast LID", arg)
		}
		return trPortid{lid: p.BaseLID}, nil
	}
	p, err := t.s.parseTarget(arg, a)
	if err != nil {
		return trPortid{}, err
	}
	lid, err := t.s.res.LID(t.e.Ctx, p)
	if err != nil {
		return trPortid{}, err
	}
	if lid < 1 || lid > subnet.MaxUnicastLID {
		return trPortid{}, fmt.Errorf("LID %d is not a unicast LID", lid)
	}
	return trPortid{lid: lid}, nil
}

// getRoute is get_route; with srcArg empty the route starts at the local
// port (python-rdma's one-argument form).
func (t *tracer) getRoute(srcArg, dstArg string) (*TraceRoute, error) {
	const fn = "get_route"
	rt := &TraceRoute{Source: srcArg, Destination: dstArg}
	if srcArg == "" {
		rt.Source = "local port " + t.s.local.Name
	}
	t.route = rt
	defer func() { t.route = nil }()
	failed := func(format string, a ...any) (*TraceRoute, error) {
		t.warn(fn, format, a...)
		rt.Error = fmt.Sprintf(format, a...)
		return rt, errTraceFailed
	}
	var src trPortid
	if srcArg != "" {
		var err error
		if src, err = t.resolve(srcArg); err != nil {
			return failed("can't resolve source port %s", srcArg)
		}
	}
	dst, err := t.resolve(dstArg)
	if err != nil {
		return failed("can't resolve destination port %s", dstArg)
	}
	if srcArg != "" {
		// First a directed route to the source port, silently.
		var my trPortid
		saved := t.route
		t.route = nil
		err := t.findRoute(&my, &src, 0)
		t.route = saved
		if err != nil {
			return failed("can't find a route to the src port")
		}
		src = my
	}
	if !t.multicast {
		if err := t.findRoute(&src, &dst, t.dump); err != nil {
			return failed("can't find a route from src to dest")
		}
		return rt, nil
	}
	rt.MLID = t.mlid
	if t.mlid < subnet.MinMulticastLID {
		t.warn(fn, "invalid MLID; must be 0xc000 or larger")
	}
	var toNode trNode
	var toPort trPort
	if t.getNode(&toNode, &toPort, &dst) != nil {
		t.warn("find_target_portguid", "can't find to port\n")
		t.targetGUID = ^iba.GUID(0)
	} else {
		t.targetGUID = toPort.portGUID
	}
	if t.targetGUID == 0 {
		return failed("can't reach target lid %d", dst.lid)
	}
	end := t.findMCPath(&src, t.mlid)
	if end == nil {
		return failed("can't find a multicast route from src to dest")
	}
	t.dumpMCPath(end)
	return rt, nil
}
