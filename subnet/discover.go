package subnet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// Discovery: how the engine works and why it is built this way.
//
// libibnetdisc (rdma-core libibnetdisc/ibnetdisc.c, query_smp.c) keeps a
// FIFO of SMPs, at most max_smps (2) on the wire, and runs each reply's
// callback, which queues further SMPs at the tail. With replies in order
// (ibsim answers synchronously; a healthy fabric nearly so) the callbacks
// run in exactly the order the SMPs were queued, whatever the window: the
// whole discovery is a deterministic walk over one FIFO of queries. Node
// creation order (and so the text output), the port hash order (and so the
// cache bytes), which path a node is first reached by (and so which of its
// ports are probed), the maximum hop count and the MAD count all follow
// from that walk.
//
// Discover replays that walk exactly, but never waits for the wire to run
// it: every query is sent the moment the walk queues it, and more are sent
// ahead of the walk, predicted from the replies already in (a new switch's
// PortInfo for every port at once when the walk meets it, NodeInfo through
// every LinkUp port as soon as its PortInfo says so, a CA's description
// and PortInfo with its NodeInfo). The walk consumes replies in FIFO order
// and finds most already there. A predicted query is keyed by exactly what
// the walk would send (directed route, attribute, modifier), so a
// prediction either is the walk's own query or is wasted; it never changes
// the result. Switches are expanded at the walk's own path to them, not at
// the first path whose reply arrives (the walk's order is not the order of
// arrival; guessing cost 50% more SMPs on a fat tree), so that on the fat
// trees and leaf-spines of the benchmark we send libibnetdisc's SMPs and
// no more (a CA cabled to two switches can still cost one description
// read at the wrong path). The queries run through package sched with its
// global and per-node limits.
//
// Fewer, in fact: libibnetdisc probes NodeInfo through every LinkUp
// switch port but the one it came in by, so every link between two
// switches is probed from both ends (4,731 of the 60,542 SMPs of the
// 10,270-node leaf-spine of the benchmark). Once a probe out of switch Y port q has found switch X
// entered by port p, a probe out of X port p would get Y's NodeInfo
// entered by q, which is Y's NodeInfo as already read with LocalPortNum
// q: that answer is made from the link, not sent for. The walk sees the
// very bytes the wire would give, in the same order, so the database, the
// text, the caches and MADs (what libibnetdisc sends) are unchanged; only
// what goes on the wire is less (DiscoverReport.Sent and FromLinks).
// Only a reply makes a link known: a node that does not answer is never
// answered for, and a later reply that says otherwise is ignored. On a
// fabric recabled during the scan the answer is the one the first probe
// saw, where libibnetdisc would see the new cabling; ProbeKnownLinks
// sends every probe.
//
// Replies out of order are where the C tool and ours part: libibnetdisc
// runs each callback when its reply arrives, so on a fabric whose replies
// overtake each other (latency that differs by depth or by SMA load) its
// node order, and so its text, varies from run to run; ours is always the
// in-order walk's. The nodes, ports and links are the same.
//
// The same walk runs over SA records (BySA), answering each query from the
// records instead of the wire, so that all three methods give the same
// database for the same fabric.

// Method selects how Discover reaches the nodes (python-rdma's
// --discovery).
type Method int

const (
	// ByDirectRoute sends every SMP directed route from the local port, as
	// ibnetdiscover does; it works on a subnet no SM has configured.
	ByDirectRoute Method = iota
	// ByLID sends the SMPs to a node LID routed once its LID is known
	// (switches after their port 0 PortInfo, CAs after their port's), and
	// directed route otherwise; NodeInfo probes of unknown neighbours stay
	// directed route. A LID-routed query that fails is repeated directed
	// route.
	ByLID
	// BySA builds the subnet from the SA's NodeRecords, PortInfoRecords,
	// SwitchInfoRecords and LinkRecords (see DiscoverSA), sending no SMPs.
	BySA
)

func (m Method) String() string {
	switch m {
	case ByDirectRoute:
		return "DR"
	case ByLID:
		return "LID"
	case BySA:
		return "SA"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// ParseMethod reads DR, LID or SA (any case), python-rdma's --discovery
// values.
func ParseMethod(s string) (Method, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "DR", "SMP":
		return ByDirectRoute, nil
	case "LID":
		return ByLID, nil
	case "SA":
		return BySA, nil
	}
	return 0, fmt.Errorf("discovery method %q: want DR, LID or SA", s)
}

// MADDoer performs one RPC; *mad.Client is one.
type MADDoer interface {
	Do(ctx context.Context, req mad.Request) (*mad.Reply, error)
}

// MADStarter is a MADDoer that can also start an RPC and be called back
// with its result, holding no goroutine meanwhile (mad.Client.Start).
// Discover uses it when it has it: on a large fabric, hundreds of SMPs
// are in flight at once.
type MADStarter interface {
	MADDoer
	Start(ctx context.Context, req mad.Request, done func(*mad.Reply, error))
}

// DiscoverOptions configures Discover. The zero value discovers the whole
// subnet directed route from the local port with sched's default limits.
type DiscoverOptions struct {
	Method Method
	// From starts the scan at the node this directed route from the local
	// port reaches instead of at the local port (a partial scan, with
	// MaxHops). StartLID, when not 0, starts it at that LID instead, LID
	// routed; the scan then goes on directed route from there with DrSLID
	// LocalLID (IBA 14.2.2), as libibnetdisc does when given a LID.
	From     DRPath
	StartLID uint16
	// LocalLID is the local port's LID: ByLID needs it, and so does a scan
	// from StartLID.
	LocalLID uint16
	// MaxHops limits the depth of the scan as libibnetdisc's max_hops
	// does: no path is extended once the deepest one found exceeds it (so
	// nodes up to MaxHops+1 hops are reached). 0 means no limit but the
	// 63 hops of a directed route.
	MaxHops int
	// MaxInFlight bounds the SMPs outstanding at once (ibnetdiscover's
	// -o/--outstanding_smps); PerNode those to one node. Zero values take
	// sched's defaults.
	MaxInFlight int
	PerNode     int
	// NoMlnxExtPortInfo skips Mellanox's extended port info, which
	// libibnetdisc asks LinkUp QDR ports of known Mellanox devices for
	// (ibdiag.conf MLX_EPI=false).
	NoMlnxExtPortInfo bool
	// NoPrefetch sends only what the walk asks for, one FIFO step at a
	// time in parallel batches; for measuring the prediction.
	NoPrefetch bool
	// ProbeKnownLinks sends every NodeInfo probe as libibnetdisc does,
	// also through a switch port whose link to another switch a probe
	// from the far end already found (by default such a probe is
	// answered from the link; the result is the same).
	ProbeKnownLinks bool
	// MKey goes into every SMP. Timeout and Tries override the client's
	// per MAD.
	MKey    uint64
	Timeout time.Duration
	Tries   int
	// Progress, when set, is called as the walk advances: replies
	// processed, queries queued so far, nodes found.
	Progress func(DiscoverProgress)
	// ShowNode, when set, gets the line ibnetdiscover -s prints for every
	// NodeInfo reply, in the C tool's order.
	ShowNode func(line string)
	// Settled, when set, is called on the walk each time it has processed
	// every query it queued about a node: the node's type, ports and LIDs
	// are then as the rest of the walk will leave them, unless a later
	// path reaches it again (a CA by another of its ports gains that
	// port). A caller can begin its own work on the node meanwhile, from
	// a copy of what it needs: the walk goes on changing the database.
	Settled func(n *Node)
}

// DiscoverProgress is what DiscoverOptions.Progress is told.
type DiscoverProgress struct {
	Done, Queued, Nodes int
}

// Failure is one query of the walk that got no usable answer. Node is the
// node asked (zero for a NodeInfo probe that found nothing); Via the known
// port the probe left through.
type Failure struct {
	Path  DRPath
	Node  iba.GUID
	Desc  string
	Via   *Port
	Attr  uint16
	Mod   uint32
	Err   error
	Probe bool // a NodeInfo probe: the node behind Path is unreachable
}

func (f *Failure) Error() string {
	what := attrLabel(f.Attr)
	if f.Attr == iba.AttrIDPortInfo || f.Attr == iba.AttrIDMlnxExtPortInfo {
		what = fmt.Sprintf("%s of port %d", what, f.Mod)
	}
	switch {
	case f.Probe && f.Via != nil:
		return fmt.Sprintf("no node reachable at DR path %v (port %d of %v %q): %s: %v", f.Path, f.Via.Num, f.Via.Node.GUID, f.Via.Node.Description(), what, f.Err)
	case f.Probe:
		return fmt.Sprintf("no node reachable at DR path %v: %s: %v", f.Path, what, f.Err)
	}
	return fmt.Sprintf("node %v %q at DR path %v: %s: %v", f.Node, f.Desc, f.Path, what, f.Err)
}

func (f *Failure) Unwrap() error { return f.Err }

func attrLabel(id uint16) string {
	switch id {
	case iba.AttrIDNodeInfo:
		return "NodeInfo"
	case iba.AttrIDNodeDescription:
		return "NodeDescription"
	case iba.AttrIDPortInfo:
		return "PortInfo"
	case iba.AttrIDSwitchInfo:
		return "SwitchInfo"
	case iba.AttrIDMlnxExtPortInfo:
		return "MlnxExtPortInfo"
	case iba.AttrIDLinearForwardingTable:
		return "LinearForwardingTable"
	case iba.AttrIDMulticastForwardingTable:
		return "MulticastForwardingTable"
	}
	return fmt.Sprintf("attribute %#04x", id)
}

// DiscoverReport tells what a discovery did besides filling the subnet.
type DiscoverReport struct {
	Method Method
	// Failures lists the queries that failed, in walk order; the probes
	// among them are also in the subnet's Unreachable list.
	Failures []*Failure
	// Queries is what libibnetdisc would have sent for the same walk
	// (Subnet.MADs, ibnetdiscover -m); Sent what was really sent,
	// predictions included; FromLinks the queries answered from a link
	// already known instead (see ProbeKnownLinks), so Queries is
	// FromLinks plus the SMPs the walk used; Wasted the predictions the
	// walk did not use.
	Queries, Sent, FromLinks, Wasted int
	// Conflicts are the NodeInfo replies that named a node GUID already
	// found but cannot have come from that node: two devices share the
	// GUID (see Conflict).
	Conflicts []*Conflict
	// PeakInFlight is the most SMPs outstanding at once.
	PeakInFlight int
	Elapsed      time.Duration
}

// Unreachable lists the failed NodeInfo probes: nodes that are there (a
// LinkUp port leads to them) but did not answer.
func (r *DiscoverReport) Unreachable() []*Failure {
	var l []*Failure
	for _, f := range r.Failures {
		if f.Probe {
			l = append(l, f)
		}
	}
	return l
}

// Lost is what a walk could not read: the LinkUp ports whose NodeInfo
// probe went unanswered (Paths: a node is behind each, unknown, and may be
// behind several), the nodes it found that left some query unanswered
// (Partial: their description, SwitchInfo, a port's PortInfo, ...), and
// those queries (Queries).
type Lost struct {
	Paths, Partial, Queries int
}

// Lost counts what the walk could not read. A command that prints the
// subnet warns about each failure as the C tools do, and ends with a
// non-zero status when Lost is not zero (see IncompleteError).
func (r *DiscoverReport) Lost() Lost {
	var l Lost
	partial := map[iba.GUID]bool{}
	for _, f := range r.Failures {
		if f.Probe {
			l.Paths++
			continue
		}
		l.Queries++
		partial[f.Node] = true
	}
	l.Partial = len(partial)
	return l
}

// IsZero reports a walk that read everything.
func (l Lost) IsZero() bool { return l == Lost{} }

// ErrIncomplete is matched (errors.Is) by every *IncompleteError.
var ErrIncomplete = errors.New("subnet: discovery incomplete")

// IncompleteError reports a discovery that ended with a subnet but lost
// part of it: what it could not read, and of how many nodes found. A
// command prints what it has and returns this, so that the user (and a
// script) learns the output is partial: ibtool exits non-zero with it.
type IncompleteError struct {
	Lost  Lost
	Found int // nodes in the subnet
}

// Incomplete returns an *IncompleteError for the walk of s, nil when it
// lost nothing.
func (r *DiscoverReport) Incomplete(s *Subnet) error {
	l := r.Lost()
	if l.IsZero() {
		return nil
	}
	return &IncompleteError{Lost: l, Found: s.Len()}
}

func (e *IncompleteError) Error() string {
	n := func(k int, one, many string) string {
		if k == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", k, many)
	}
	return fmt.Sprintf("discovery incomplete: %s found; %s to a node that did not answer; %s only in part (%s failed)",
		n(e.Found, "node", "nodes"), n(e.Lost.Paths, "port leads", "ports lead"), n(e.Lost.Partial, "node answered", "nodes answered"), n(e.Lost.Queries, "query", "queries"))
}

// Is makes errors.Is(err, ErrIncomplete) true.
func (e *IncompleteError) Is(target error) bool { return target == ErrIncomplete }

// ErrNoStart is returned when the node discovery starts from does not
// answer: there is nothing to discover.
var ErrNoStart = errors.New("subnet: the start node did not answer")

// Discover finds the subnet through m, by directed route or LID routed
// SMPs (opt.Method; use DiscoverSA for BySA), and returns the database in
// exactly the order ibnetdiscover builds it. Unanswered queries are
// recorded in the report and the subnet, not fatal; only a start node that
// does not answer is (ErrNoStart). When ctx ends the subnet found so far
// is returned with ctx's error.
func Discover(ctx context.Context, m MADDoer, opt DiscoverOptions) (*Subnet, *DiscoverReport, error) {
	if opt.Method == BySA {
		return nil, nil, errors.New("subnet: Discover does not read SA records; use DiscoverSA")
	}
	if len(opt.From) > MaxHops {
		return nil, nil, invalid("start path %v: more than %d hops", opt.From, MaxHops)
	}
	if opt.StartLID != 0 && opt.LocalLID == 0 {
		return nil, nil, invalid("a scan from LID %d needs the local port's LID", opt.StartLID)
	}
	start := time.Now()
	src := newLiveSource(ctx, m, opt)
	w := newWalk(src, opt)
	err := w.run(ctx)
	st := src.finish()
	rep := &DiscoverReport{
		Method: opt.Method, Failures: w.failures, Queries: w.queued,
		Sent: st.sent, FromLinks: w.fromLinks, PeakInFlight: st.peak, Elapsed: time.Since(start),
	}
	rep.Wasted = max(0, rep.Sent-(rep.Queries-rep.FromLinks))
	rep.Conflicts = w.conflicts
	return w.s, rep, err
}

// query is one SMP of the walk: where it goes and what it asks.
type query struct {
	path DRPath
	lid  uint16 // LID-routed start of the route (libibnetdisc portid.lid)
	attr uint16
	mod  uint32
}

// answer is a query's reply data or error, ready once done is closed, or
// for a source that is a waiter (without done) once ready is set.
type answer struct {
	done  chan struct{}
	ready atomic.Bool
	data  [AttrSize]byte
	err   error
	// fromLink: made from a known link, not sent (liveSource).
	fromLink bool
	// What liveSource sent, for its job.
	r      *route
	target *knownNode
	attr   uint16
	mod    uint32
}

// source answers the walk's queries. ask must not block; the walk waits on
// the answer's done channel.
type source interface {
	ask(q query, target iba.GUID) *answer
}

// waiter is a source whose answers come without a done channel (a
// channel per query is a good part of what a query costs the walk): wait
// returns once a is ready, or false once ctx is done first.
type waiter interface {
	wait(ctx context.Context, a *answer) bool
}

// expander is a source told when the walk meets a new switch, the moment
// the walk asks for its port 0: the walk's own path to it is then known,
// so the PortInfo of every port can be asked at once, ahead of the walk.
type expander interface {
	expandSwitch(q query, guid iba.GUID, numPorts int)
}

// task is a queued query and what its callback needs (libibnetdisc's
// cb_data).
type task struct {
	q       query
	node    *Node // the node asked (nil for a NodeInfo probe)
	remNode *Node // a probe: the node it leaves through
	remPort int
	a       *answer
}

// walk is libibnetdisc's discovery, callback for callback.
type walk struct {
	src   source
	opt   DiscoverOptions
	s     *Subnet
	queue []*task
	head  int
	tasks []task // where new tasks are cut from: one allocation per batch

	maxHops     int // fabric.maxhops_discovered
	initialHops int
	fromNode    *Node
	fromPort    int
	queued      int
	done        int
	fromLinks   int
	failures    []*Failure
	conflicts   []*Conflict
	open        map[*Node]int32 // queries queued about a node, not yet processed (with Settled)
}

func newWalk(src source, opt DiscoverOptions) *walk {
	return &walk{src: src, opt: opt, s: New(), initialHops: len(opt.From)}
}

// newTask returns a task for the queue; the walk makes one per query.
func (w *walk) newTask(q query) *task {
	if len(w.tasks) == cap(w.tasks) {
		w.tasks = make([]task, 0, 512)
	}
	w.tasks = append(w.tasks, task{q: q})
	return &w.tasks[len(w.tasks)-1]
}

func (w *walk) enqueue(t *task) {
	w.queued++
	var target iba.GUID
	switch {
	case t.node != nil:
		target = t.node.GUID
	case t.remNode != nil:
		target = t.remNode.GUID
	}
	t.a = w.src.ask(t.q, target)
	w.queue = append(w.queue, t)
	if w.opt.Settled != nil && t.node != nil {
		if w.open == nil {
			w.open = map[*Node]int32{}
		}
		w.open[t.node]++
	}
}

// settle counts t as processed and tells Settled when it was the last
// query open about its node.
func (w *walk) settle(t *task) {
	if w.opt.Settled == nil || t.node == nil {
		return
	}
	if w.open[t.node]--; w.open[t.node] == 0 {
		delete(w.open, t.node)
		w.opt.Settled(t.node)
	}
}

func (w *walk) run(ctx context.Context) error {
	w.enqueue(w.newTask(query{path: append(DRPath(nil), w.opt.From...), lid: w.opt.StartLID, attr: iba.AttrIDNodeInfo}))
	for w.head < len(w.queue) {
		t := w.queue[w.head]
		w.queue[w.head] = nil
		w.head++
		// A query cut short by ctx ends in an error; it stops the walk.
		if !w.wait(ctx, t.a) || t.a.err != nil && ctx.Err() != nil {
			w.finish()
			return fmt.Errorf("discovery stopped after %d of %d queries: %w", w.done, w.queued, ctx.Err())
		}
		if t.a.fromLink {
			w.fromLinks++
		}
		w.process(t)
		w.settle(t)
		w.done++
		if w.opt.Progress != nil {
			w.opt.Progress(DiscoverProgress{Done: w.done, Queued: w.queued, Nodes: w.s.Len()})
		}
	}
	w.finish()
	if w.fromNode == nil {
		if len(w.failures) > 0 {
			return fmt.Errorf("%w: %v", ErrNoStart, w.failures[0].Err)
		}
		return ErrNoStart
	}
	return nil
}

// wait returns once a is ready, or false once ctx is done first.
func (w *walk) wait(ctx context.Context, a *answer) bool {
	if a.done == nil {
		return w.src.(waiter).wait(ctx, a)
	}
	// Most answers are in when the walk gets to them: a receive that does
	// not block costs less than the select with ctx.
	select {
	case <-a.done:
		return true
	default:
	}
	select {
	case <-a.done:
		return true
	case <-ctx.Done():
		return false
	}
}

func (w *walk) finish() {
	w.s.MADs = w.queued
	w.s.MaxHopsDiscovered = w.maxHops + w.initialHops
}

func (w *walk) fail(t *task, err error) {
	f := &Failure{Path: append(DRPath(nil), t.q.path...), Attr: t.q.attr, Mod: t.q.mod, Err: err}
	if t.node != nil {
		f.Node, f.Desc = t.node.GUID, t.node.Description()
	} else {
		f.Probe = true
		if t.remNode != nil {
			f.Via = t.remNode.Port(t.remPort)
		}
		w.s.MarkUnreachable(t.q.path, f.Via, err)
	}
	w.failures = append(w.failures, f)
}

func (w *walk) process(t *task) {
	err := t.a.err
	if err == nil {
		err = w.callback(t)
		if err != nil {
			// Data that cannot go into the database is a failed query too.
			w.fail(t, err)
		}
		return
	}
	w.fail(t, err)
	if t.q.attr == iba.AttrIDMlnxExtPortInfo {
		// libibnetdisc goes on as if the vendor attribute had answered
		// (mlnx_ext_port_info_err).
		w.extend(t, t.node, int(t.q.mod))
	}
}

func (w *walk) callback(t *task) error {
	data := t.a.data[:]
	switch t.q.attr {
	case iba.AttrIDNodeInfo:
		return w.recvNodeInfo(t, data)
	case iba.AttrIDNodeDescription:
		return w.s.SetNodeDescription(t.node, data)
	case iba.AttrIDSwitchInfo:
		return w.s.SetSwitchInfo(t.node, data)
	case iba.AttrIDPortInfo:
		return w.recvPortInfo(t, data)
	case iba.AttrIDMlnxExtPortInfo:
		if err := w.s.SetMlnxExtPortInfo(t.node, int(t.q.mod), data); err != nil {
			return err
		}
		w.extend(t, t.node, int(t.q.mod))
	}
	return nil
}

func (w *walk) child(t *task, attr uint16, mod uint32, node *Node) {
	nt := w.newTask(query{path: t.q.path, lid: t.q.lid, attr: attr, mod: mod})
	nt.node = node
	w.enqueue(nt)
}

// recvNodeInfo is libibnetdisc's recv_node_info.
func (w *walk) recvNodeInfo(t *task, data []byte) error {
	w.checkConflict(t, data)
	node, port, isNew, err := w.s.AddNode(data, t.q.path)
	if err != nil {
		return err
	}
	if w.opt.ShowNode != nil {
		w.opt.ShowNode(ProgressLine(t.q.path, isNew, node, port))
	}
	if t.remNode == nil {
		w.fromNode, w.fromPort = node, port.Num
		w.s.SetFrom(node, port.Num)
	} else {
		rp := t.remNode.Port(t.remPort)
		if err := w.s.Link(port, rp); err != nil {
			return err
		}
	}
	if isNew {
		w.child(t, iba.AttrIDNodeDescription, 0, node)
		if node.Type == iba.NodeTypeSwitch {
			w.child(t, iba.AttrIDSwitchInfo, 0, node)
			w.child(t, iba.AttrIDPortInfo, 0, node)
			if x, ok := w.src.(expander); ok {
				x.expandSwitch(query{path: t.q.path, lid: t.q.lid}, node.GUID, node.NumPorts)
			}
		}
	}
	if node.Type != iba.NodeTypeSwitch {
		w.child(t, iba.AttrIDPortInfo, uint32(port.Num), node)
	}
	return nil
}

// recvPortInfo is libibnetdisc's recv_port_info and recv_port0_info.
func (w *walk) recvPortInfo(t *task, data []byte) error {
	node, num := t.node, int(t.q.mod)
	p, err := w.s.SetPortInfo(node, num, data)
	if err != nil {
		return err
	}
	if !w.opt.NoMlnxExtPortInfo && mlnxExtPortInfoSupported(node) && wantsMlnxExtPortInfo(node, p) {
		w.child(t, iba.AttrIDMlnxExtPortInfo, uint32(num), node)
	} else {
		w.extend(t, node, num)
	}
	if num == 0 && node.Type == iba.NodeTypeSwitch {
		for i := 1; i <= node.NumPorts; i++ {
			w.child(t, iba.AttrIDPortInfo, uint32(i), node)
		}
	}
	return nil
}

// wantsMlnxExtPortInfo: a LinkUp port at QDR with no extended speed may be
// FDR10, which only the vendor attribute tells.
func wantsMlnxExtPortInfo(n *Node, p *Port) bool {
	pi := p.PortInfo()
	capInfo := &pi
	if n.Type == iba.NodeTypeSwitch {
		p0 := n.Port(0)
		if p0 == nil {
			return false
		}
		c := p0.PortInfo()
		capInfo = &c
	}
	return pi.PortPhysicalState == iba.PhysPortStateLinkUp && pi.LinkSpeedActive == speedQDR && aggExtSpeed(capInfo, &pi) == 0
}

// mlnxExtPortInfoSupported is libibnetdisc's list of Mellanox (and Bull)
// device IDs that answer attribute 0xFF90.
func mlnxExtPortInfoSupported(n *Node) bool {
	ni := n.NodeInfo()
	return mlnxDevice(ni.VendorID, ni.DeviceID)
}

func mlnxDevice(v uint32, d uint16) bool {
	bull := v == 0x119f
	switch {
	case d >= 0xc738 && d <= 0xc73b, d == 0xc839, d == 0xcb20, d == 0xcf08, d == 0xcf09, d == 0xd2f0:
		return true
	case bull && (d == 0x1b02 || d == 0x1b50 || d == 0x1ba0 || (d >= 0x1bd0 && d <= 0x1bd5) || d == 0x1bf0):
		return true
	case d >= 0x1003 && d <= 0x101b, d == 0xa2d2:
		return true
	case bull && (d == 0x1b33 || d == 0x1b73 || d == 0x1b40 || d == 0x1b41 || d == 0x1b60 || d == 0x1b61 ||
		d == 0x1b83 || d == 0x1b93 || d == 0x1b94 || d == 0x1bb4 || d == 0x1bb5 || (d >= 0x1bc4 && d <= 0x1bc6)):
		return true
	}
	return false
}

// extend probes the far side of port num if it is up and leads away from
// the walk: libibnetdisc's tail of recv_port_info.
func (w *walk) extend(t *task, node *Node, num int) {
	p := node.Port(num)
	if num == 0 || p == nil {
		return
	}
	pi := p.PortInfo()
	if pi.PortPhysicalState != iba.PhysPortStateLinkUp {
		return
	}
	isSwitch := node.Type == iba.NodeTypeSwitch
	if !((isSwitch && num != int(pi.LocalPortNum)) || (node == w.fromNode && num == w.fromPort)) {
		return
	}
	path := append(DRPath(nil), t.q.path...)
	ok := false
	if !isSwitch && node == w.fromNode && len(path) > 1 {
		// A scan started at a CA: step back to the switch it hangs off.
		if w.opt.MaxHops == 0 || w.maxHops <= w.opt.MaxHops {
			w.maxHops++
			path = path[:len(path)-1]
			ok = true
		}
	} else if t.q.lid == 0 || isSwitch {
		// Directed routes do not pass through a CA: no CA forwards a
		// directed-route SMP (IBA 14.2.2.2). Only the local CA's own
		// port starts one; from a CA one hop away (a scan started
		// there) libibnetdisc sends the SMP all the same and loses it,
		// so it is not sent, and the port stays unexplored as there.
		if w.opt.MaxHops == 0 || w.maxHops <= w.opt.MaxHops {
			if len(path) < MaxHops {
				path = append(path, uint8(num))
				if len(path)-w.initialHops > w.maxHops {
					w.maxHops++
				}
				ok = isSwitch || len(path) == 1
			}
		}
	}
	if ok {
		nt := w.newTask(query{path: path, lid: t.q.lid, attr: iba.AttrIDNodeInfo})
		nt.remNode, nt.remPort = node, num
		w.enqueue(nt)
	}
}

// Conflict is a NodeInfo reply (IBA 14.2.5.3) that gives the GUID of a
// node already in the subnet while something else in it says it is
// another device: a different type or port count, a different port GUID
// at the same port number (for a switch, any port), or an entry port
// that is already cabled to another port or whose PortInfo says it is
// not up. Two devices share the GUID; the walk goes on as libibnetdisc
// does (it takes the reply for the known node), so what lies behind the
// second device may be missing from the subnet. Conflict is how the
// duplicate is still told.
type Conflict struct {
	// Path is where the reply came from and Node the node it was taken
	// for; Via is the port the probe left through (nil at the start).
	Path DRPath
	Node *Node
	Via  *Port
	// Info is the NodeInfo data received.
	Info [AttrSize]byte
	// Reason says what gave the second device away.
	Reason string
}

// NodeInfo decodes Info.
func (c *Conflict) NodeInfo() iba.NodeInfo {
	var ni iba.NodeInfo
	_ = ni.Unmarshal(c.Info[:])
	return ni
}

// checkConflict records a Conflict when a NodeInfo reply names a known
// node that cannot have sent it.
func (w *walk) checkConflict(t *task, data []byte) {
	var ni iba.NodeInfo
	if len(data) < 40 || ni.Unmarshal(data) != nil {
		return
	}
	n := w.s.Node(ni.NodeGUID)
	if n == nil {
		return
	}
	var via *Port
	if t.remNode != nil {
		via = t.remNode.Port(t.remPort)
	}
	reason := ""
	local := int(ni.LocalPortNum)
	p := n.Port(local)
	switch {
	case n.Type != ni.NodeType || n.NumPorts != int(ni.NumPorts):
		reason = fmt.Sprintf("known as a node of type %d with %d ports, answered as type %d with %d", n.Type, n.NumPorts, ni.NodeType, ni.NumPorts)
	case n.Type == iba.NodeTypeSwitch && n.NodeInfo().PortGUID != ni.PortGUID:
		reason = fmt.Sprintf("switch port GUID %v, known as %v", ni.PortGUID, n.NodeInfo().PortGUID)
	case n.Type != iba.NodeTypeSwitch && p != nil && p.GUID != 0 && p.GUID != ni.PortGUID:
		reason = fmt.Sprintf("port %d has GUID %v, known as %v", local, ni.PortGUID, p.GUID)
	case via != nil && p != nil && p.Remote != nil && p.Remote != via:
		reason = fmt.Sprintf("port %d is cabled to %v port %d, and answered through %v port %d", local,
			p.Remote.Node.GUID, p.Remote.Num, via.Node.GUID, via.Num)
	case via != nil && p != nil && p.HasInfo && p.PortInfo().PortPhysicalState != iba.PhysPortStateLinkUp:
		reason = fmt.Sprintf("port %d is not up, and answered through %v port %d", local, via.Node.GUID, via.Num)
	default:
		return
	}
	c := &Conflict{Path: append(DRPath(nil), t.q.path...), Node: n, Via: via, Reason: reason}
	copy(c.Info[:], data)
	w.conflicts = append(w.conflicts, c)
}
