package subnet

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sched"
)

// liveSource answers the walk's queries with SMPs sent through sched, and
// sends ahead what the replies so far say the walk will ask (discover.go
// explains why that cannot change the result).
type liveSource struct {
	m      MADDoer
	opt    DiscoverOptions
	ctx    context.Context
	cancel context.CancelFunc
	sch    *sched.Scheduler

	mu       sync.Mutex
	answers  map[queryID]*answer
	expanded map[iba.GUID]bool // CAs whose description was asked
	// What predictions need of a node, by GUID: its NodeInfo (the
	// fields used do not depend on the path it came by) and a switch's
	// port 0 PortInfo (its capabilities).
	info  map[iba.GUID]iba.NodeInfo
	port0 map[iba.GUID]iba.PortInfo
	lidOf map[iba.GUID]uint16
	keys  map[iba.GUID]string // sched keys, made once per node
	sent  int
}

type liveStats struct{ sent, peak int }

func newLiveSource(ctx context.Context, m MADDoer, opt DiscoverOptions) *liveSource {
	cctx, cancel := context.WithCancel(ctx)
	l := &liveSource{
		m: m, opt: opt, ctx: cctx, cancel: cancel,
		answers:  map[queryID]*answer{},
		expanded: map[iba.GUID]bool{},
		info:     map[iba.GUID]iba.NodeInfo{},
		port0:    map[iba.GUID]iba.PortInfo{},
		lidOf:    map[iba.GUID]uint16{},
		keys:     map[iba.GUID]string{},
	}
	l.sch = sched.New(cctx, sched.Options{
		MaxInFlight: opt.MaxInFlight,
		PerTarget:   opt.PerNode,
		Busy:        func(err error) bool { return errors.Is(err, mad.ErrBusy) },
	})
	return l
}

// finish drops the predictions still under way and waits for them.
func (l *liveSource) finish() liveStats {
	l.cancel()
	_, _ = l.sch.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return liveStats{sent: l.sent, peak: l.sch.Stats().PeakInFlight}
}

func (l *liveSource) ask(q query, target iba.GUID) *answer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sendLocked(q, target)
}

// sendLocked returns the answer for q, sending q if it was not sent yet.
func (l *liveSource) sendLocked(q query, target iba.GUID) *answer {
	k := q.id()
	if a := l.answers[k]; a != nil {
		return a
	}
	a := &answer{done: make(chan struct{})}
	l.answers[k] = a
	l.sent++
	// The per-node limit applies per target node; a NodeInfo probe's
	// target is unknown, so it is limited per route (which is one SMP).
	key := "path " + k.path
	if target != 0 {
		if key = l.keys[target]; key == "" {
			key = target.String()
			l.keys[target] = key
		}
	}
	// The walk records failures itself; sched's name is for its errors,
	// which nobody reads here, so it stays a constant.
	name := attrLabel(q.attr)
	ok := l.sch.Submit(key, name, func(ctx context.Context) error {
		data, err := l.get(ctx, q, target)
		if err == nil {
			a.data = data
		}
		a.err = err
		close(a.done)
		if err == nil && !l.opt.NoPrefetch {
			l.predict(q, target, data)
		}
		return err
	})
	if !ok {
		a.err = fmt.Errorf("SubnGet(%s) mod %d at %s: %w", name, q.mod, q.path, context.Canceled)
		if err := l.ctx.Err(); err != nil {
			a.err = fmt.Errorf("SubnGet(%s) mod %d at %s: %w", name, q.mod, q.path, err)
		}
		close(a.done)
	}
	return a
}

// get sends one SMP: LID routed when ByLID knows the target's LID (and
// directed route again if that fails), else as the query's route says.
func (l *liveSource) get(ctx context.Context, q query, target iba.GUID) ([AttrSize]byte, error) {
	if l.opt.Method == ByLID && q.attr != iba.AttrIDNodeInfo && target != 0 && q.lid == 0 && l.opt.LocalLID != 0 {
		l.mu.Lock()
		lid := l.lidOf[target]
		l.mu.Unlock()
		if lid != 0 && lid <= maxUnicastLID {
			rt := mad.Route{Addr: mad.Addr{LID: lid}, MKey: l.opt.MKey, Timeout: l.opt.Timeout, Tries: l.opt.Tries}
			if data, err := l.do(ctx, q, rt); err == nil || ctx.Err() != nil {
				return data, err
			}
		}
	}
	return l.do(ctx, q, l.route(q))
}

// route is the addressing libibnetdisc gives a portid: directed route from
// the local port, or LID routed to q.lid and directed route from there.
func (l *liveSource) route(q query) mad.Route {
	rt := mad.Route{MKey: l.opt.MKey, Timeout: l.opt.Timeout, Tries: l.opt.Tries}
	if q.lid != 0 && len(q.path) == 0 {
		rt.Addr.LID = q.lid
		return rt
	}
	dr := &mad.DirectedRoute{Path: append([]byte{0}, q.path...), DrSLID: mad.LIDPermissive, DrDLID: mad.LIDPermissive}
	if q.lid != 0 {
		rt.Addr.LID = q.lid
		dr.DrSLID = l.opt.LocalLID
	}
	rt.DR = dr
	return rt
}

func (l *liveSource) do(ctx context.Context, q query, rt mad.Route) ([AttrSize]byte, error) {
	var out [AttrSize]byte
	rep, err := l.m.Do(ctx, mad.Request{
		Target: rt, Class: iba.ClassSubnMgt, Method: iba.MethodGet,
		AttrID: q.attr, AttrMod: q.mod, Unchecked: q.attr == iba.AttrIDMlnxExtPortInfo,
	})
	if err != nil {
		return out, err
	}
	d := rep.Data()
	if len(d) < AttrSize {
		return out, fmt.Errorf("%s reply with %d bytes of data", attrLabel(q.attr), len(d))
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
	for i := 1; i <= numPorts; i++ {
		l.sendLocked(query{path: q.path, lid: q.lid, attr: iba.AttrIDPortInfo, mod: uint32(i)}, guid)
	}
}

// predict sends what the walk will ask once it reaches this reply.
func (l *liveSource) predict(q query, target iba.GUID, data [AttrSize]byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at := func(attr uint16, mod uint32, guid iba.GUID) {
		l.sendLocked(query{path: q.path, lid: q.lid, attr: attr, mod: mod}, guid)
	}
	switch q.attr {
	case iba.AttrIDNodeInfo:
		var ni iba.NodeInfo
		if ni.Unmarshal(data[:]) != nil {
			return
		}
		l.info[ni.NodeGUID] = ni
		isSwitch := ni.NodeType == iba.NodeTypeSwitch
		if !isSwitch {
			// The walk reads a CA's port on every path that reaches it.
			at(iba.AttrIDPortInfo, uint32(ni.LocalPortNum), ni.NodeGUID)
		}
		// A switch is reached by many paths (a spine from every leaf),
		// and the walk reads it at the first of them in its own order,
		// which the order replies arrive in does not tell: expanding it
		// at the first path to answer wasted 40% of the SMPs on a fat
		// tree. The walk itself says when it meets a new switch
		// (expandSwitch). A CA is nearly always reached by one path, and
		// its description is one SMP: read it at once.
		if isSwitch || l.expanded[ni.NodeGUID] {
			return
		}
		l.expanded[ni.NodeGUID] = true
		at(iba.AttrIDNodeDescription, 0, ni.NodeGUID)
	case iba.AttrIDPortInfo:
		ni, ok := l.info[target]
		if !ok {
			return
		}
		var pi iba.PortInfo
		if pi.Unmarshal(data[:]) != nil {
			return
		}
		isSwitch := ni.NodeType == iba.NodeTypeSwitch
		if pi.LID != 0 && (!isSwitch || q.mod == 0) {
			l.lidOf[ni.NodeGUID] = pi.LID
		}
		if isSwitch && q.mod == 0 {
			l.port0[target] = pi
			if l.opt.Method == ByLID {
				for i := 1; i <= int(ni.NumPorts); i++ {
					at(iba.AttrIDPortInfo, uint32(i), ni.NodeGUID)
				}
			}
			return
		}
		if q.mod == 0 || pi.PortPhysicalState != iba.PhysPortStateLinkUp {
			return
		}
		startPath := len(q.path) == len(l.opt.From) && q.lid == l.opt.StartLID
		if isSwitch && int(q.mod) == int(pi.LocalPortNum) || !isSwitch && !startPath {
			return
		}
		if !l.opt.NoMlnxExtPortInfo {
			capInfo, have := &pi, true
			if isSwitch {
				p0, ok := l.port0[target]
				capInfo, have = &p0, ok
			}
			supported := mlnxDevice(ni.VendorID, ni.DeviceID)
			if have && supported && pi.LinkSpeedActive == speedQDR && aggExtSpeed(capInfo, &pi) == 0 {
				at(iba.AttrIDMlnxExtPortInfo, q.mod, ni.NodeGUID)
			}
		}
		if !isSwitch && len(q.path) > 1 {
			return // the walk steps back here; rare enough to leave to it
		}
		if q.lid != 0 && !isSwitch {
			return
		}
		depth := len(q.path) + 1
		if depth > MaxHops || (l.opt.MaxHops > 0 && depth-len(l.opt.From) > l.opt.MaxHops+1) {
			return
		}
		l.sendLocked(query{path: q.path.Extend(uint8(q.mod)), lid: q.lid, attr: iba.AttrIDNodeInfo}, ni.NodeGUID)
	}
}
