package traceroute

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/subnet"
)

// MaxHops is the longest route followed (infiniband-diags' MAXHOPS; a
// directed route has at most 63 hops, IBA 14.2.2).
const MaxHops = 63

// HopKind says what a Hop is on a route.
type HopKind int

const (
	// From is the source port.
	From HopKind = iota
	// Through is a port entered on the way, OutPort being the port the
	// node before it was left by.
	Through
	// To is the destination port.
	To
)

// Hop is one port on a route.
type Hop struct {
	Kind HopKind
	// OutPort is, for Through, the port the previous node forwards on.
	OutPort  int
	NodeType iba.NodeType
	NodeGUID iba.GUID
	// PortGUID is the port's GUID; 0 for the From and To of a unicast
	// route (ibtracert does not print it there).
	PortGUID iba.GUID
	// PortNum is the port: 0 for a switch as From or To of a unicast
	// route, the port entered for a Through.
	PortNum int
	LID     int
	LMC     int
	// Desc is the node's description (NodeDescription, IBA 14.2.5.2).
	Desc string
}

// LastLID is the last LID of the port's range (LID + 2^LMC - 1).
func (h Hop) LastLID() int { return h.LID + 1<<h.LMC - 1 }

// Warning is something the trace met on its way, named for the step of
// ibtracert.c that met it ("find_route", "get_route").
type Warning struct{ Func, Msg string }

func (w Warning) String() string { return w.Func + ": " + w.Msg }

// Route is a traced route. On failure it holds what was traced before the
// failure and the warnings that explain it.
type Route struct {
	// SrcLID is the source port's LID, 0 for the local port; DstLID the
	// destination's; MLID the multicast LID of a Multicast route.
	SrcLID, DstLID uint16
	MLID           int
	Hops           []Hop
	// Circles are the switches a multicast search reached a second time
	// (a loop in the group's spanning tree), in the order met.
	Circles  []Hop
	Warnings []Warning
}

// ErrNoRoute is what every failed trace wraps.
var ErrNoRoute = errors.New("route not found")

// Error is a failed trace: Msg is the last of the route's warnings.
type Error struct{ Msg string }

func (e *Error) Error() string { return "traceroute: " + e.Msg }
func (e *Error) Unwrap() error { return ErrNoRoute }

// Tracer follows routes with directed-route SMPs from the local port, as
// infiniband-diags' ibtracert does: NodeInfo, NodeDescription and PortInfo
// of every node on the way, SwitchInfo and one LinearForwardingTable block
// (IBA 14.2.5.10) of every switch, or the MulticastForwardingTable blocks
// (IBA 14.2.5.12) of the group. It reads no more than the route needs, so
// it works on a fabric of any size without a discovery.
//
// A Tracer is not safe for concurrent use. Like ibtracert across the
// lines of a ports file, it remembers the nodes its multicast searches
// visited: a node seen by one search is not expanded by the next. Use a
// new Tracer for an independent multicast search.
type Tracer struct {
	// Getter sends the SMPs: a *mad.Client, a *fabric.Fabric.
	Getter mad.SubnGetter
	// Timeout is each SMP's timeout; 0 is the Getter's default.
	Timeout time.Duration
	// Force (ibtracert -f) goes on when the ends cannot be reached, and
	// takes two ports with the same LID as the same port.
	Force bool

	visited   map[iba.GUID]bool
	nodesDist [MaxHops][]*node
}

// Unicast traces the route from the port of LID src (0: the local port) to
// the port of LID dst, through the switches' linear forwarding tables.
func (t *Tracer) Unicast(ctx context.Context, src, dst uint16) (*Route, error) {
	r := t.start(src, dst)
	from, err := r.source(ctx)
	if err != nil {
		return r.Route, err
	}
	if err := r.findRoute(ctx, &from, &portid{lid: dst}, true); err != nil {
		return r.Route, r.failed("can't find a route from src to dest")
	}
	return r.Route, nil
}

// Multicast traces the route from the port of LID src (0: the local port)
// to the port of LID dst through the multicast group mlid's forwarding
// (a breadth-first search along the ports the switches forward mlid to,
// from the source until the destination port).
func (t *Tracer) Multicast(ctx context.Context, src, dst uint16, mlid int) (*Route, error) {
	r := t.start(src, dst)
	from, err := r.source(ctx)
	if err != nil {
		return r.Route, err
	}
	r.MLID = mlid
	if mlid < subnet.MinMulticastLID {
		r.warn("get_route", "invalid MLID; must be 0xc000 or larger")
	}
	var toNode node
	var toPort port
	if r.getNode(ctx, &toNode, &toPort, &portid{lid: dst}) != nil {
		r.warn("find_target_portguid", "can't find to port\n")
		r.targetGUID = ^iba.GUID(0)
	} else {
		r.targetGUID = toPort.portGUID
	}
	if r.targetGUID == 0 {
		return r.Route, r.failed(fmt.Sprintf("can't reach target lid %d", dst))
	}
	end := r.findMCPath(ctx, &from, mlid)
	if end == nil {
		return r.Route, r.failed("can't find a multicast route from src to dest")
	}
	r.mcPath(end)
	return r.Route, nil
}

// DirectedRoute finds the directed route from the local port to the port
// of LID dst through the switches' linear forwarding tables, as
// infiniband-diags' build_dr_path_to_lid does for iblinkinfo -S and -G.
// Unlike Unicast it sends no SMP to a LID: every SMP of the walk is
// directed-route (IBA 14.2.2), so it works where the subnet does not route
// LID-addressed SMPs (not guaranteed on XDR fabrics, rdma-core 77f7355ce).
// The destination is known by its LID only: the walk ends at the port
// whose LID range holds dst (a switch is found at the port the route
// enters it by). The path is empty for the local port. On failure the
// error, an *Error wrapping ErrNoRoute, says which step failed.
func (t *Tracer) DirectedRoute(ctx context.Context, dst uint16) (subnet.DRPath, error) {
	if dst == 0 || dst >= subnet.MinMulticastLID {
		return nil, &Error{fmt.Sprintf("invalid destination LID %d", dst)}
	}
	r := t.start(0, dst)
	r.byLID = true
	var from portid
	if err := r.findRoute(ctx, &from, &portid{lid: dst}, false); err != nil {
		// The step that failed recorded its warning last.
		return nil, &Error{r.Warnings[len(r.Warnings)-1].Msg}
	}
	return subnet.DRPath(from.dr), nil
}

// run is one route being traced; targetGUID is a multicast search's
// destination port; byLID says the destination is known by its LID only
// (DirectedRoute): it is not read by LID, and a port is it when its LID
// range holds the destination LID.
type run struct {
	*Route
	t          *Tracer
	targetGUID iba.GUID
	byLID      bool
}

func (t *Tracer) start(src, dst uint16) *run {
	if t.visited == nil {
		t.visited = map[iba.GUID]bool{}
	}
	return &run{Route: &Route{SrcLID: src, DstLID: dst}, t: t}
}

// source is the directed route to the source port: empty for the local
// port, else found (silently) through the forwarding tables.
func (r *run) source(ctx context.Context) (portid, error) {
	var my portid
	if r.SrcLID == 0 {
		return my, nil
	}
	if err := r.findRoute(ctx, &my, &portid{lid: r.SrcLID}, false); err != nil {
		return my, r.failed("can't find a route to the src port")
	}
	return my, nil
}

func (r *run) warn(fn, format string, a ...any) {
	r.Warnings = append(r.Warnings, Warning{fn, fmt.Sprintf(format, a...)})
}

func (r *run) failed(msg string) error {
	r.warn("get_route", "%s", msg)
	return &Error{msg}
}

// errStep is a step of a walk that failed; its warning is recorded.
var errStep = errors.New("step failed")

// portid is libibmad's ib_portid_t as ibtracert uses it: a LID, or a
// directed route from the local port when the LID is 0.
type portid struct {
	lid uint16
	dr  []byte // the out ports after the leading 0
}

func (p *portid) clone() portid {
	return portid{lid: p.lid, dr: append([]byte(nil), p.dr...)}
}

// extend adds a hop; false when the route already has 62 (ibtracert's
// extend_dpath: its path count plus 2 must stay below the 64 bytes of
// ib_dr_path_t).
func (p *portid) extend(port int) bool {
	if len(p.dr)+2 >= 64 {
		return false
	}
	p.dr = append(p.dr, byte(port))
	return true
}

func (p *portid) pop() int {
	if len(p.dr) == 0 {
		return 0
	}
	last := int(p.dr[len(p.dr)-1])
	p.dr = p.dr[:len(p.dr)-1]
	return last
}

func (p *portid) String() string {
	if p.lid != 0 {
		return fmt.Sprintf("Lid %d", p.lid)
	}
	hops := []string{"0"}
	for _, h := range p.dr {
		hops = append(hops, strconv.Itoa(int(h)))
	}
	return "DR path slid 0; dlid 0; " + strings.Join(hops, ",")
}

func (r *run) get(ctx context.Context, p *portid, a iba.Attribute, mod uint32) error {
	var tg mad.Target
	if p.lid != 0 {
		tg = mad.Route{Addr: mad.Addr{LID: p.lid}, Timeout: r.t.Timeout}
	} else {
		rt := ibpath.NewDR(append([]byte{0}, p.dr...)...).Route()
		rt.Timeout = r.t.Timeout
		tg = rt
	}
	return r.t.Getter.SubnGet(ctx, tg, a, mod)
}

type port struct {
	portGUID  iba.GUID
	portNum   int
	lid       int
	lmc       int
	state     int
	physState int
	remote    *port
}

type node struct {
	guid     iba.GUID
	typ      iba.NodeType
	numPorts int
	desc     string
	ports    []*port // newest first
	path     portid
	dist     int
	upport   int
	upnode   *node
}

type swinfo struct {
	linearCap, linearTop, enhSP0 int
}

// getNode reads NodeInfo, NodeDescription and PortInfo of the port the
// SMP arrives on (ibtracert's get_node).
func (r *run) getNode(ctx context.Context, n *node, pt *port, p *portid) error {
	var ni iba.NodeInfo
	if err := r.get(ctx, p, &ni, 0); err != nil {
		return err
	}
	var nd iba.NodeDescription
	if err := r.get(ctx, p, &nd, 0); err != nil {
		return err
	}
	var pi iba.PortInfo
	if err := r.get(ctx, p, &pi, 0); err != nil {
		return err
	}
	n.guid, n.typ, n.numPorts = ni.NodeGUID, ni.NodeType, int(ni.NumPorts)
	n.desc = namemap.Clean(nd.NodeString[:])
	pt.portGUID, pt.portNum = ni.PortGUID, int(ni.LocalPortNum)
	pt.lid, pt.lmc, pt.state = int(pi.LID), int(pi.LMC), int(pi.PortState)
	return nil
}

// switchLookup is the LFT entry of lid, -1 when it cannot be read or lies
// beyond the table (ibtracert's switch_lookup).
func (r *run) switchLookup(ctx context.Context, sw *swinfo, p *portid, lid int) int {
	var si iba.SwitchInfo
	if err := r.get(ctx, p, &si, 0); err != nil {
		return -1
	}
	sw.linearCap, sw.linearTop, sw.enhSP0 = int(si.LinearFDBCap), int(si.LinearFDBTop), int(si.EnhancedPort0)
	outside := lid >= sw.linearCap && lid > sw.linearTop
	if r.byLID {
		// build_dr_path_to_lid's bounds: no LFT, a top past the
		// capacity, a LID past the top (IBA 14.2.5.4).
		outside = sw.linearCap == 0 || sw.linearCap < sw.linearTop || lid > sw.linearTop
	}
	if outside {
		return -1
	}
	var lft iba.LinearForwardingTable
	if err := r.get(ctx, p, &lft, uint32(lid/64)); err != nil {
		return -1
	}
	return int(lft.PortBlock[lid%64])
}

func (r *run) samePort(a, b *port) bool {
	if r.byLID {
		// Ports whose GUIDs are both known are compared by them; else b
		// is the destination, known by its LID: a is it when its LID
		// range (LID to LID + 2^LMC - 1) holds that LID.
		if a.portGUID != 0 && b.portGUID != 0 {
			return a.portGUID == b.portGUID
		}
		return a.lid != 0 && b.lid&^(1<<a.lmc-1) == a.lid
	}
	return a.portGUID == b.portGUID || (r.t.Force && a.lid == b.lid)
}

func portInactive(n *node, p *port, sw *swinfo) bool {
	return p.state != int(iba.PortStateActive) && (n.typ != iba.NodeTypeSwitch || sw.enhSP0 != 0)
}

// endHop records the From or To of a unicast route: a switch as port 0.
func endHop(kind HopKind, n *node, p *port) Hop {
	pn := p.portNum
	if n.typ == iba.NodeTypeSwitch {
		pn = 0
	}
	return Hop{Kind: kind, NodeType: n.typ, NodeGUID: n.guid, PortNum: pn, LID: p.lid, LMC: p.lmc, Desc: n.desc}
}

// findRoute follows the LFTs from from towards to.lid, from's directed
// route growing hop by hop (ibtracert's find_route); record keeps the
// hops in the route.
func (r *run) findRoute(ctx context.Context, from, to *portid, record bool) error {
	const fn = "find_route"
	var fromNode, toNode, next node
	var fromPort, toPort, nextPort port
	var sw swinfo
	maxHops := MaxHops
	outport, nextOut := 255, 255
	add := func(h Hop) {
		if record {
			r.Hops = append(r.Hops, h)
		}
	}
	if r.byLID {
		if r.getNode(ctx, &fromNode, &fromPort, from) != nil {
			r.warn(fn, "can't reach from port")
			return errStep
		}
		toPort.lid = int(to.lid)
	} else if r.getNode(ctx, &fromNode, &fromPort, from) != nil || r.getNode(ctx, &toNode, &toPort, to) != nil {
		r.warn(fn, "can't reach to/from ports")
		if !r.t.Force {
			return errStep
		}
		if to.lid > 0 {
			toPort.lid = int(to.lid)
		}
		r.warn(fn, "Force: look for lid %d", to.lid)
	}
	n, p := &fromNode, &fromPort
	portnum := p.portNum
	add(endHop(From, n, p))
	badTable := func() error {
		r.warn(fn, "Bad forwarding table entry found at: node \"%s\" lid entry %d is %d (top %d)", n.desc, to.lid, outport, sw.linearTop)
		return errStep
	}
	badPath := func() error {
		r.warn(fn, "Direct path too long!")
		return errStep
	}
	if n.typ == iba.NodeTypeSwitch {
		nextOut = r.switchLookup(ctx, &sw, from, int(to.lid))
		if nextOut < 0 || nextOut > n.numPorts {
			outport = nextOut
			return badTable()
		}
	}
	for {
		if maxHops == 0 {
			maxHops = -1
			break
		}
		maxHops--
		if portInactive(n, p, &sw) {
			r.warn(fn, "Bad port state found: node \"%s\" port %d state %d", n.desc, portnum, p.state)
			return errStep
		}
		if r.samePort(p, &toPort) {
			break
		}
		if n.typ == iba.NodeTypeSwitch {
			outport = nextOut
			if !from.extend(outport) {
				return badPath()
			}
			if r.getNode(ctx, &next, &nextPort, from) != nil {
				r.warn(fn, "can't reach port at %s", from)
				return errStep
			}
			if outport == 0 {
				if !r.samePort(&nextPort, &toPort) {
					return badTable()
				}
				break
			}
		} else if n.typ == iba.NodeTypeCA || n.typ == iba.NodeTypeRouter {
			outport = portnum
			if !r.samePort(p, &fromPort) {
				r.warn(fn, "can't continue: reached CA or router port %x, lid %d", uint64(p.portGUID), p.lid)
				return errStep
			}
			// At the source CA or router: one hop back to (one hopes) a
			// switch.
			caSrc := len(from.dr) == 0
			back := from.pop()
			if caSrc && portnum != 0 && !from.extend(portnum) {
				return badPath()
			}
			if r.getNode(ctx, &next, &nextPort, from) != nil {
				r.warn(fn, "can't reach port at %s", from)
				return errStep
			}
			if !caSrc {
				// The port number as seen from the CA's side: the hop
				// just taken back.
				nextPort.portNum = back
			}
		}
		if next.typ == iba.NodeTypeSwitch {
			nextOut = r.switchLookup(ctx, &sw, from, int(to.lid))
			if nextOut < 0 || nextOut > next.numPorts {
				outport = nextOut
				return badTable()
			}
		}
		p = &nextPort
		if portInactive(&next, p, &sw) {
			r.warn(fn, "Bad out port state found: node \"%s\" outport %d state %d", n.desc, outport, p.state)
			return errStep
		}
		n = &next
		portnum = p.portNum
		add(Hop{Kind: Through, OutPort: outport, NodeType: n.typ, NodeGUID: n.guid, PortGUID: p.portGUID,
			PortNum: p.portNum, LID: p.lid, LMC: p.lmc, Desc: n.desc})
	}
	if maxHops <= 0 {
		r.warn(fn, "no route found after %d hops", MaxHops)
		return errStep
	}
	add(endHop(To, n, p))
	return nil
}

// getPort reads PortInfo of port num of the node at p (ibtracert's
// get_port).
func (r *run) getPort(ctx context.Context, pt *port, num int, p *portid) error {
	pt.portNum = num
	var pi iba.PortInfo
	if err := r.get(ctx, p, &pi, uint32(num)); err != nil {
		return err
	}
	pt.lid, pt.lmc = int(pi.LID), int(pi.LMC)
	pt.state, pt.physState = int(pi.PortState), int(pi.PortPhysicalState)
	return nil
}

// newNode is 1 when the port is the target, -1 for a node seen before,
// else 0 with the node queued at its distance (ibtracert's new_node).
func (r *run) newNode(n *node, pt *port, p *portid, dist int) int {
	t := r.t
	if pt.portGUID == r.targetGUID {
		n.dist = -1
		n.ports = append([]*port{pt}, n.ports...)
		return 1
	}
	if t.visited[n.guid] {
		return -1
	}
	t.visited[n.guid] = true
	n.ports = append([]*port{pt}, n.ports...)
	n.dist = dist
	n.path = p.clone()
	t.nodesDist[dist] = append([]*node{n}, t.nodesDist[dist]...)
	return 0
}

// switchMCLookup is the set of ports (0..255) the switch forwards mlid to
// (ibtracert's switch_mclookup). Like the C tool it reads (NumPorts+15)/16
// port positions, so on a switch with a multiple of 16 ports the last is
// not seen.
func (r *run) switchMCLookup(ctx context.Context, n *node, p *portid, mlid int) ([256]bool, error) {
	var m [256]bool
	var si iba.SwitchInfo
	if err := r.get(ctx, p, &si, 0); err != nil {
		return m, err
	}
	mlid -= subnet.MinMulticastLID
	if mlid < 0 || mlid >= int(si.MulticastFDBCap) {
		return m, errors.New("mlid beyond the multicast table")
	}
	block := uint32(mlid / 32)
	for set := 0; set < (n.numPorts+15)/16; set++ {
		var mft iba.MulticastForwardingTable
		if err := r.get(ctx, p, &mft, subnet.MFTModifier(int(block), set)); err != nil {
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

// findMCPath is a breadth-first search from the source along the ports
// the switches forward mlid to, until the target port (ibtracert's
// find_mcpath).
func (r *run) findMCPath(ctx context.Context, from *portid, mlid int) *node {
	const fn = "find_mcpath"
	t := r.t
	n, pt := &node{}, &port{}
	if r.getNode(ctx, n, pt, from) != nil {
		r.warn(fn, "can't reach node %s", from)
		return nil
	}
	if r.newNode(n, pt, from, 0) > 0 {
		if n.typ != iba.NodeTypeSwitch {
			r.warn(fn, "ibtracert from CA to CA is unsupported")
			return nil
		}
		m, err := r.switchMCLookup(ctx, n, from, mlid)
		if err != nil || !m[0] {
			return nil
		}
		return n
	}
	leafport := 0
	// The nodes of the last distance are not expanded: their neighbours
	// would lie beyond MaxHops (and a directed route that long cannot be
	// sent).
	for dist := 0; dist < MaxHops-1; dist++ {
		for _, n := range t.nodesDist[dist] {
			path := &n.path
			var m [256]bool
			if n.typ != iba.NodeTypeSwitch {
				if dist != 0 {
					continue
				}
				if len(path.dr) > 0 {
					leafport = int(path.dr[len(path.dr)-1])
				}
				m[pt.portNum] = true
				n.upport = 0
			} else {
				if dist == 1 && leafport != 0 {
					n.upport = leafport
				}
				var err error
				if m, err = r.switchMCLookup(ctx, n, path, mlid); err != nil {
					r.warn(fn, "skipping bad Switch 0x%x", uint64(n.guid))
					continue
				}
			}
			for i := 1; i <= n.numPorts; i++ {
				if !m[i] || i == n.upport {
					continue
				}
				if dist == 0 && leafport != 0 {
					if len(from.dr) > 0 {
						path.pop()
					}
				} else {
					pt = &port{}
					if r.getPort(ctx, pt, i, path) != nil {
						r.warn(fn, "can't reach node %s port %d", path, i)
						return nil
					}
					if pt.physState != int(iba.PhysPortStateLinkUp) {
						continue
					}
					if !path.extend(i) {
						return nil
					}
				}
				remote, remotePort := &node{}, &port{}
				if r.getNode(ctx, remote, remotePort, path) != nil {
					r.warn(fn, "NodeInfo on %s port %d failed, skipping port", path, i)
					path.pop()
					continue
				}
				remote.upnode = n
				remote.upport = remotePort.portNum
				remotePort.remote = pt
				res := r.newNode(remote, remotePort, path, dist+1)
				if res > 0 {
					return remote
				}
				if res < 0 && remote.typ == iba.NodeTypeSwitch {
					r.Circles = append(r.Circles, endHop(Through, remote, remotePort))
				}
				path.pop()
			}
		}
	}
	return nil
}

// mcPath records the route from the search's root to n (ibtracert's
// dump_mcpath): the root as From, each node as Through (its PortNum the
// port it was entered by), the target as Through and To.
func (r *run) mcPath(n *node) {
	if n.upnode != nil {
		r.mcPath(n.upnode)
	}
	p := n.ports[0]
	h := Hop{NodeType: n.typ, NodeGUID: n.guid, PortGUID: p.portGUID, PortNum: p.portNum, LID: p.lid, LMC: p.lmc, Desc: n.desc}
	if n.dist == 0 {
		h.Kind = From
		r.Hops = append(r.Hops, h)
		return
	}
	through := h
	through.Kind, through.PortNum = Through, n.upport
	if p.remote != nil {
		through.OutPort = p.remote.portNum
	}
	r.Hops = append(r.Hops, through)
	if n.dist < 0 {
		h.Kind = To
		r.Hops = append(r.Hops, h)
	}
}
