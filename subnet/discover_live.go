package subnet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sched"
)

// liveSource answers the walk's queries with SMPs sent through sched, and
// sends ahead what the replies so far say the walk will ask (discover.go
// explains why that cannot change the result). A NodeInfo probe through a
// switch port whose link another probe already found from the far switch
// is answered from that link instead of the wire (see fromLinkLocked).
//
// A discovery makes some 60,000 queries for 10,000 nodes, and the CPU the
// bookkeeping costs per query shows beside that of the MAD itself: queries
// are kept in a tree of routes (one node per directed route, answers by
// attribute in slices), not in a map keyed by path strings, and what is
// known of a node is one struct reached by one lookup.
type liveSource struct {
	m      MADDoer
	ms     MADStarter // m, when it is one
	opt    DiscoverOptions
	ctx    context.Context
	cancel context.CancelFunc
	sch    *sched.Scheduler

	mu    sync.Mutex
	root  *route            // the start of opt.StartLID's routes
	roots map[uint16]*route // any other start LID's
	nodes map[iba.GUID]*knownNode
	sent  atomic.Int64

	// The walk waits on one answer at a time: it names it here, and only
	// that answer's job wakes it.
	waiting atomic.Pointer[answer]
	wake    chan struct{}
}

// route is one directed route from the start (libibnetdisc's portid: a
// LID-routed start, then the path) and the queries asked along it.
type route struct {
	lid  uint16
	path DRPath
	mr   mad.Route // how an SMP along it is addressed, made once
	dr   mad.DirectedRoute
	key  string               // the sched key of a query with no known target
	kids []*route             // by out port
	ni   *answer              // NodeInfo
	nd   *answer              // NodeDescription
	si   *answer              // SwitchInfo
	pi   []*answer            // PortInfo by port
	more map[attrMod]**answer // anything else (MlnxExtPortInfo)
}

type attrMod struct {
	attr uint16
	mod  uint32
}

// knownNode is what the replies so far tell of one node: what predictions
// need (its NodeInfo, whose fields used do not depend on the path it came
// by, and a switch's port 0 PortInfo with its capabilities) and, for a
// switch, the switch port at the other end of each port once a probe
// found it.
type knownNode struct {
	info     iba.NodeInfo
	hasInfo  bool
	raw      [AttrSize]byte // a switch's NodeInfo as it answered
	port0    iba.PortInfo
	hasPort0 bool
	lid      uint16
	key      string // the sched key, made once
	expanded bool   // a CA whose description was asked
	links    []knownLink
}

type knownLink struct {
	peer *knownNode
	port uint8
}

// nodeInfoLocalPortNum is the byte of LocalPortNum in NodeInfo (IBA
// 14.2.5.3, bit offset 288).
const nodeInfoLocalPortNum = 36

// linkAnswer is an answer made from a known link, ready when made.
func linkAnswer(data [AttrSize]byte) *answer {
	a := &answer{data: data, fromLink: true}
	a.ready.Store(true)
	return a
}

// complete makes a ready and wakes the walk if it waits for a. The walk
// names the answer before it looks at ready a last time, and a job sets
// ready before it looks at the name: one of them sees the other.
func (l *liveSource) complete(a *answer) {
	a.ready.Store(true)
	if l.waiting.Load() == a {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

func (l *liveSource) wait(ctx context.Context, a *answer) bool {
	if a.ready.Load() {
		return true
	}
	l.waiting.Store(a)
	defer l.waiting.Store(nil)
	for !a.ready.Load() {
		select {
		case <-l.wake:
		case <-ctx.Done():
			return a.ready.Load()
		}
	}
	return true
}

type liveStats struct{ sent, peak int }

func newLiveSource(ctx context.Context, m MADDoer, opt DiscoverOptions) *liveSource {
	cctx, cancel := context.WithCancel(ctx)
	l := &liveSource{
		m: m, opt: opt, ctx: cctx, cancel: cancel,
		nodes: map[iba.GUID]*knownNode{},
		wake:  make(chan struct{}, 1),
	}
	l.ms, _ = m.(MADStarter)
	l.root = l.newRoute(opt.StartLID, nil)
	l.sch = sched.New(cctx, sched.Options{
		MaxInFlight: opt.MaxInFlight,
		PerTarget:   opt.PerNode,
		Busy:        func(err error) bool { return errors.Is(err, mad.ErrBusy) },
	})
	return l
}

// newRoute makes the route to path from the start at lid, with its
// addressing: directed route from the local port, or LID routed to lid
// and directed route from there (DrSLID the local LID, IBA 14.2.2). The
// SMP's InitialPath and the path share one array.
func (l *liveSource) newRoute(lid uint16, path DRPath) *route {
	buf := make([]byte, len(path)+1)
	copy(buf[1:], path)
	r := &route{lid: lid, path: DRPath(buf[1:len(buf):len(buf)])}
	r.mr = mad.Route{MKey: l.opt.MKey, Timeout: l.opt.Timeout, Tries: l.opt.Tries}
	if lid != 0 && len(path) == 0 {
		r.mr.Addr.LID = lid
		return r
	}
	r.dr = mad.DirectedRoute{Path: buf, DrSLID: mad.LIDPermissive, DrDLID: mad.LIDPermissive}
	if lid != 0 {
		r.mr.Addr.LID = lid
		r.dr.DrSLID = l.opt.LocalLID
	}
	r.mr.DR = &r.dr
	return r
}

// kid is the route one hop further, out of port.
func (l *liveSource) kidLocked(r *route, port uint8) *route {
	if int(port) < len(r.kids) {
		if k := r.kids[port]; k != nil {
			return k
		}
	} else {
		// Sized for the widest switch at once: a route is extended
		// through most ports of the switch it reaches or through one.
		kids := make([]*route, max(int(port)+1, min(2*len(r.kids), 256)))
		copy(kids, r.kids)
		r.kids = kids
	}
	b := make(DRPath, len(r.path)+1)
	copy(b, r.path)
	b[len(r.path)] = port
	k := l.newRoute(r.lid, b)
	r.kids[port] = k
	return k
}

func (l *liveSource) routeLocked(lid uint16, path DRPath) *route {
	r := l.root
	if lid != l.opt.StartLID {
		if r = l.roots[lid]; r == nil {
			if l.roots == nil {
				l.roots = map[uint16]*route{}
			}
			r = l.newRoute(lid, nil)
			l.roots[lid] = r
		}
	}
	for _, p := range path {
		r = l.kidLocked(r, p)
	}
	return r
}

// slot is where the answer to attr/mod along r is kept.
func (r *route) slot(attr uint16, mod uint32) **answer {
	switch attr {
	case iba.AttrIDNodeInfo:
		return &r.ni
	case iba.AttrIDNodeDescription:
		return &r.nd
	case iba.AttrIDSwitchInfo:
		return &r.si
	case iba.AttrIDPortInfo:
		if mod < 256 {
			if int(mod) >= len(r.pi) {
				pi := make([]*answer, max(int(mod)+1, min(2*len(r.pi), 256)))
				copy(pi, r.pi)
				r.pi = pi
			}
			return &r.pi[mod]
		}
	}
	if r.more == nil {
		r.more = map[attrMod]**answer{}
	}
	k := attrMod{attr, mod}
	p := r.more[k]
	if p == nil {
		p = new(*answer)
		r.more[k] = p
	}
	return p
}

func (l *liveSource) nodeLocked(guid iba.GUID) *knownNode {
	if guid == 0 {
		return nil
	}
	n := l.nodes[guid]
	if n == nil {
		n = &knownNode{}
		l.nodes[guid] = n
	}
	return n
}

// finish drops the predictions still under way and waits for them.
func (l *liveSource) finish() liveStats {
	l.cancel()
	_, _ = l.sch.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return liveStats{sent: int(l.sent.Load()), peak: l.sch.Stats().PeakInFlight}
}

func (l *liveSource) ask(q query, target iba.GUID) *answer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sendLocked(l.routeLocked(q.lid, q.path), q.attr, q.mod, target, l.nodeLocked(target))
}

// sendLocked returns the answer for attr/mod along r, sending the query if
// it was not sent yet and a known link does not answer it. target is the
// node asked, or for a NodeInfo probe the node it leaves through.
func (l *liveSource) sendLocked(r *route, attr uint16, mod uint32, guid iba.GUID, target *knownNode) *answer {
	slot := r.slot(attr, mod)
	if a := *slot; a != nil {
		return a
	}
	if data, ok := l.fromLinkLocked(r, attr, target); ok {
		a := linkAnswer(data)
		*slot = a
		return a
	}
	a := &answer{r: r, attr: attr, mod: mod, target: target}
	*slot = a
	// The per-node limit applies per target node; a query with none (the
	// start node's NodeInfo) is limited per route, which is one SMP.
	var key string
	if target != nil {
		if key = target.key; key == "" {
			key = guid.String()
			target.key = key
		}
	} else {
		if r.key == "" {
			r.key = "path " + string(r.path)
		}
		key = r.key
	}
	// The walk records failures itself; sched's name is for its errors,
	// which nobody reads here, so it stays a constant.
	var ok bool
	if l.ms != nil {
		ok = l.sch.SubmitAsync(key, attrLabel(attr), func(ctx context.Context, done func(error)) { l.start(ctx, a, done) })
	} else {
		ok = l.sch.Submit(key, attrLabel(attr), func(ctx context.Context) error { return l.run(ctx, a) })
	}
	if !ok {
		err := l.ctx.Err()
		if err == nil {
			err = context.Canceled
		}
		a.err = fmt.Errorf("SubnGet(%s) mod %d at %s: %w", attrLabel(attr), mod, r.path, err)
		l.complete(a)
	}
	return a
}

// fromLinkLocked answers a NodeInfo probe out of a switch port from the
// link a probe from the other end found, when that end is a switch too:
// the reply would be the far switch's NodeInfo, which is the same through
// every port (PortGUID is port 0's, IBA 14.2.5.3) but for LocalPortNum,
// the port the probe enters by. libibnetdisc probes every switch-to-switch
// link from both ends; the second probe tells it nothing the first did
// not. Only a reply that came over the wire makes a link known, so a node
// that never answered is never answered for.
func (l *liveSource) fromLinkLocked(r *route, attr uint16, target *knownNode) (data [AttrSize]byte, ok bool) {
	if attr != iba.AttrIDNodeInfo || l.opt.ProbeKnownLinks || target == nil || len(r.path) == 0 {
		return data, false
	}
	// A probe's path leaves its target (a switch: links is set only for
	// switches) by its last hop.
	out := r.path[len(r.path)-1]
	if int(out) >= len(target.links) {
		return data, false
	}
	k := target.links[out]
	if k.peer == nil {
		return data, false
	}
	data = k.peer.raw
	data[nodeInfoLocalPortNum] = k.port
	return data, true
}

// start sends a's query and calls done once a has its answer; before the
// walk can see the reply, it learns from it and sends what it predicts. A
// probe looks for a known link again first (linked); ByLID sends LID
// routed when it knows the target's LID, and directed route again if
// that fails. With a MADStarter the SMPs are started and done comes from
// the MAD client's reader; with a plain MADDoer they are waited for, and
// done has been called when start returns.
func (l *liveSource) start(ctx context.Context, a *answer, done func(error)) {
	if l.linked(a) {
		done(nil)
		return
	}
	l.sent.Add(1)
	finish := func(data [AttrSize]byte, err error) {
		l.answered(a, data, err)
		done(err)
	}
	if rt := l.lidRoute(a); rt != nil {
		l.get(ctx, a, rt, func(data [AttrSize]byte, err error) {
			if err != nil && ctx.Err() == nil {
				l.get(ctx, a, &a.r.mr, finish)
				return
			}
			finish(data, err)
		})
		return
	}
	l.get(ctx, a, &a.r.mr, finish)
}

// run is start as a job that waits, for a MADDoer without Start.
func (l *liveSource) run(ctx context.Context, a *answer) (err error) {
	l.start(ctx, a, func(e error) { err = e })
	return err
}

// linked answers a NodeInfo probe from a known link if it can (see
// fromLinkLocked): sched starts queries in the order they were asked,
// and the one that finds the link from the other end usually comes
// first.
func (l *liveSource) linked(a *answer) bool {
	if a.attr != iba.AttrIDNodeInfo || l.opt.ProbeKnownLinks || a.target == nil {
		return false
	}
	l.mu.Lock()
	data, ok := l.fromLinkLocked(a.r, a.attr, a.target)
	l.mu.Unlock()
	if ok {
		a.data, a.fromLink = data, true
		l.complete(a)
	}
	return ok
}

// answered records a's answer and, before the walk can see it, learns
// from it and sends what it predicts.
func (l *liveSource) answered(a *answer, data [AttrSize]byte, err error) {
	if err == nil {
		a.data = data
		l.absorb(a)
	}
	a.err = err
	l.complete(a)
}

// lidRoute is the LID route to a's target when ByLID knows its LID: the
// SMP goes that way first, and directed route again if that fails.
func (l *liveSource) lidRoute(a *answer) *mad.Route {
	if l.opt.Method != ByLID || a.attr == iba.AttrIDNodeInfo || a.target == nil || a.r.lid != 0 || l.opt.LocalLID == 0 {
		return nil
	}
	l.mu.Lock()
	lid := a.target.lid
	l.mu.Unlock()
	if lid == 0 || lid > maxUnicastLID {
		return nil
	}
	return &mad.Route{Addr: mad.Addr{LID: lid}, MKey: l.opt.MKey, Timeout: l.opt.Timeout, Tries: l.opt.Tries}
}

func (l *liveSource) request(a *answer, rt *mad.Route) mad.Request {
	return mad.Request{
		Target: rt, Class: iba.ClassSubnMgt, Method: iba.MethodGet,
		AttrID: a.attr, AttrMod: a.mod, Unchecked: a.attr == iba.AttrIDMlnxExtPortInfo,
	}
}

// get sends one SMP along rt and calls done with the attribute of its
// reply: through Start when it can, else through Do, before returning.
func (l *liveSource) get(ctx context.Context, a *answer, rt *mad.Route, done func([AttrSize]byte, error)) {
	req := l.request(a, rt)
	if l.ms == nil {
		rep, err := l.m.Do(ctx, req)
		done(replyData(a, rep, err))
		return
	}
	l.ms.Start(ctx, req, func(rep *mad.Reply, err error) { done(replyData(a, rep, err)) })
}

// replyData is the attribute an SMP's reply carries.
func replyData(a *answer, rep *mad.Reply, err error) ([AttrSize]byte, error) {
	var out [AttrSize]byte
	if err != nil {
		return out, err
	}
	d := rep.Data()
	if len(d) < AttrSize {
		return out, fmt.Errorf("%s reply with %d bytes of data", attrLabel(a.attr), len(d))
	}
	copy(out[:], d)
	return out, nil
}

// expandSwitch sends the PortInfo of every port of a switch the walk has
// just met at q's route (it asks port 0 itself and would ask the others
// once that answers). ByLID waits for port 0, whose LID routes the rest.
func (l *liveSource) expandSwitch(q query, guid iba.GUID, numPorts int) {
	if l.opt.NoPrefetch || l.opt.Method == ByLID {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r, n := l.routeLocked(q.lid, q.path), l.nodeLocked(guid)
	for i := 1; i <= numPorts; i++ {
		l.sendLocked(r, iba.AttrIDPortInfo, uint32(i), guid, n)
	}
}

// absorb learns what a's reply tells of its node and, unless NoPrefetch,
// sends what the walk will ask once it reaches the reply.
func (l *liveSource) absorb(a *answer) {
	switch a.attr {
	case iba.AttrIDNodeInfo:
		var ni iba.NodeInfo
		if ni.Unmarshal(a.data[:]) != nil {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		n := l.nodeLocked(ni.NodeGUID)
		if n == nil {
			return
		}
		l.learnNodeLocked(a, n, &ni)
		if !l.opt.NoPrefetch {
			l.predictNodeLocked(a.r, n, &ni)
		}
	case iba.AttrIDPortInfo:
		if l.opt.NoPrefetch || a.target == nil {
			return
		}
		var pi iba.PortInfo
		if pi.Unmarshal(a.data[:]) != nil {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.predictPortLocked(a, &pi)
	}
}

// learnNodeLocked keeps n's NodeInfo and, for a probe from one switch
// that found another, the link between them. The first word on a link
// stands: the walk may have been answered from it already.
func (l *liveSource) learnNodeLocked(a *answer, n *knownNode, ni *iba.NodeInfo) {
	if !n.hasInfo {
		n.info, n.hasInfo = *ni, true
		if ni.NodeType == iba.NodeTypeSwitch {
			n.raw = a.data
			n.links = make([]knownLink, int(ni.NumPorts)+1)
		}
	}
	from := a.target
	if from == nil || from.links == nil || n.links == nil || len(a.r.path) == 0 {
		return
	}
	out, in := a.r.path[len(a.r.path)-1], ni.LocalPortNum
	if in == 0 || int(out) >= len(from.links) || int(in) >= len(n.links) || from.links[out].peer != nil || n.links[in].peer != nil {
		return
	}
	from.links[out] = knownLink{peer: n, port: in}
	n.links[in] = knownLink{peer: from, port: out}
}

// predictNodeLocked sends what the walk asks of a node it reaches at r.
func (l *liveSource) predictNodeLocked(r *route, n *knownNode, ni *iba.NodeInfo) {
	isSwitch := ni.NodeType == iba.NodeTypeSwitch
	if !isSwitch {
		// The walk reads a CA's port on every path that reaches it.
		l.sendLocked(r, iba.AttrIDPortInfo, uint32(ni.LocalPortNum), ni.NodeGUID, n)
	}
	// A switch is reached by many paths (a spine from every leaf), and the
	// walk reads it at the first of them in its own order, which the
	// order replies arrive in does not tell: expanding it at the first
	// path to answer wasted 40% of the SMPs on a fat tree. The walk itself
	// says when it meets a new switch (expandSwitch). A CA is nearly
	// always reached by one path, and its description is one SMP: read it
	// at once.
	if isSwitch || n.expanded {
		return
	}
	n.expanded = true
	l.sendLocked(r, iba.AttrIDNodeDescription, 0, ni.NodeGUID, n)
}

// predictPortLocked sends what the walk asks once it reads a's PortInfo
// reply pi: a switch's other ports, the vendor attribute, the probe
// through the port.
func (l *liveSource) predictPortLocked(a *answer, pi *iba.PortInfo) {
	n, r, mod := a.target, a.r, a.mod
	if !n.hasInfo {
		return
	}
	ni := &n.info
	guid := ni.NodeGUID
	isSwitch := ni.NodeType == iba.NodeTypeSwitch
	if pi.LID != 0 && (!isSwitch || mod == 0) {
		n.lid = pi.LID
	}
	if isSwitch && mod == 0 {
		n.port0, n.hasPort0 = *pi, true
		if l.opt.Method == ByLID {
			for i := 1; i <= int(ni.NumPorts); i++ {
				l.sendLocked(r, iba.AttrIDPortInfo, uint32(i), guid, n)
			}
		}
		return
	}
	if mod == 0 || pi.PortPhysicalState != iba.PhysPortStateLinkUp {
		return
	}
	startPath := len(r.path) == len(l.opt.From) && r.lid == l.opt.StartLID
	if isSwitch && int(mod) == int(pi.LocalPortNum) || !isSwitch && !startPath {
		return
	}
	if !l.opt.NoMlnxExtPortInfo {
		capInfo, have := pi, true
		if isSwitch {
			capInfo, have = &n.port0, n.hasPort0
		}
		supported := mlnxDevice(ni.VendorID, ni.DeviceID)
		if have && supported && pi.LinkSpeedActive == speedQDR && aggExtSpeed(capInfo, pi) == 0 {
			l.sendLocked(r, iba.AttrIDMlnxExtPortInfo, mod, guid, n)
		}
	}
	if !isSwitch && len(r.path) > 1 {
		return // the walk steps back here; rare enough to leave to it
	}
	if r.lid != 0 && !isSwitch {
		return
	}
	depth := len(r.path) + 1
	if depth > MaxHops || (l.opt.MaxHops > 0 && depth-len(l.opt.From) > l.opt.MaxHops+1) {
		return
	}
	l.sendLocked(l.kidLocked(r, uint8(mod)), iba.AttrIDNodeInfo, 0, guid, n)
}
