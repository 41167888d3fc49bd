package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

// Latency is the latency and loss model of MADs sent on attachments. It
// is off (everything zero) by default; SetLatency changes it at any time.
//
// A request's answer is delivered Hop per link crossed (both ways) after
// it was sent, plus SMA or Agent for the node that answered it. A node's
// management processor answers one request at a time, so requests that
// meet at a node queue up (its busy time moves on by SMA or Agent each);
// with QueueDepth set, a request that finds that many waiting is dropped,
// as a real switch's management processor drops what it cannot hold.
// Loss drops that percentage of all MADs sent, anywhere.
//
// The built-in SM's own sweeps are not delayed. Delays are timers, not
// spinning goroutines: a fabric with a million MADs in flight holds a
// million timers and no CPU.
type Latency struct {
	Hop        time.Duration // per link crossed
	SMA        time.Duration // per SMP a node's SMA answers
	Agent      time.Duration // per GMP a node's PMA, CC or vendor agent answers
	QueueDepth int           // requests a node's agent holds; 0 for no limit
	Loss       float64       // percent of MADs lost
}

// SetLatency changes the latency model; the zero Latency turns it off.
func (f *Fabric) SetLatency(l Latency) error {
	if l.Hop < 0 || l.SMA < 0 || l.Agent < 0 || l.QueueDepth < 0 || l.Loss < 0 || l.Loss > 100 {
		return fmt.Errorf("latency model %+v: negative values or a loss above 100%%", l)
	}
	if l == (Latency{}) {
		f.lat.Store(nil)
		return nil
	}
	f.lat.Store(&l)
	return nil
}

// Latency returns the latency model in effect.
func (f *Fabric) Latency() Latency {
	if l := f.lat.Load(); l != nil {
		return *l
	}
	return Latency{}
}

// QueueDrops counts the requests dropped because a node's agent queue was
// full.
func (f *Fabric) QueueDrops() uint64 { return f.qdrops.Load() }

func (f *Fabric) lossy(m *msg) bool {
	l := f.lat.Load()
	return l != nil && l.Loss > 0 && rand.Float64()*100 < l.Loss
}

// delay works out when m reaches its agent; false when the answering
// node's queue is full. A request counted in a queue leaves it when its
// delivery timer fires.
func (f *Fabric) delay(m *msg) (time.Duration, bool) {
	l := f.lat.Load()
	if l == nil {
		m.agentNode = -1
		return 0, true
	}
	total := time.Duration(m.hops) * l.Hop
	svc := l.SMA
	if m.agentKind == agentGS {
		svc = l.Agent
	}
	if m.agentKind == agentNone || m.agentNode < 0 || svc == 0 {
		m.agentNode = -1
		return total, true
	}
	nd := &f.nodes[m.agentNode]
	if q := nd.queued.Add(1); l.QueueDepth > 0 && int(q) > l.QueueDepth {
		nd.queued.Add(-1)
		f.qdrops.Add(1)
		return 0, false
	}
	now := time.Now().UnixNano()
	arrive := now + int64(time.Duration(m.hopsOut)*l.Hop)
	var done int64
	for {
		busy := nd.busy.Load()
		start := max(arrive, busy)
		done = start + int64(svc)
		if nd.busy.CompareAndSwap(busy, done) {
			break
		}
	}
	back := time.Duration(m.hops-m.hopsOut) * l.Hop
	return time.Duration(done-now) + back, true
}

// SetNodeDead makes a node stop answering and forwarding MADs (true) or
// come back (false), as a hung or powered-off management processor.
func (f *Fabric) SetNodeDead(name string, dead bool) error {
	n, ok := f.ids[name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrNoNode, name)
	}
	f.nodes[n].dead.Store(dead)
	return nil
}

// SetLink pulls the cable at a port (up false: both ends go Down and
// Polling and stay so) or plugs it back (both ends train to Init). The
// switches at either end send trap 128 (IBA 14.2.5.1, a link state
// change) to their SM, which sweeps again.
func (f *Fabric) SetLink(name string, portNum int, up bool) error {
	i, err := f.portIndex(name, portNum)
	if err != nil {
		return fmt.Errorf("setting a link: %w", err)
	}
	p := &f.ports[i]
	if p.num == 0 || p.peer < 0 {
		return fmt.Errorf("setting a link: %s/%d has no cable", name, portNum)
	}
	unlock := f.lock2(i, p.peer)
	q := &f.ports[p.peer]
	changed := p.cut == up
	p.cut, q.cut = !up, !up
	if !up && changed {
		for _, x := range []*port{p, q} {
			if x.phys == iba.PhysPortStateLinkUp {
				x.pc.linkDowned.Add(1)
			}
			if x.phys != iba.PhysPortStateDisabled {
				x.state, x.phys = iba.PortStateDown, iba.PhysPortStatePolling
			}
		}
		f.markChange(p, q)
	}
	train := up && changed && p.phys != iba.PhysPortStateDisabled && q.phys != iba.PhysPortStateDisabled
	unlock()
	if train {
		f.linkUp(i, p.peer)
	}
	if changed {
		f.trap128(p.node)
		f.trap128(q.node)
	}
	return nil
}

// trap128 sends a switch's "link state change" notice to its SM LID.
func (f *Fabric) trap128(n int32) {
	nd := &f.nodes[n]
	if nd.sw == nil || nd.dead.Load() {
		return
	}
	p0 := &f.ports[nd.base]
	nd.mu.RLock()
	lid, sm := p0.lid, p0.smLID
	nd.mu.RUnlock()
	if lid == 0 || sm == 0 {
		return
	}
	m := msgPool.Get().(*msg)
	defer msgPool.Put(m)
	b := m.buf[:]
	clear(b)
	b[0], b[offClass], b[2], b[offMethod] = 1, classSMP, 1, uint8(iba.MethodTrap)
	b[offTID+4] = 0x80 // TIDs of traps: bit 31, apart from any agent's
	b[offTID+7] = byte(f.trapSeq.Add(1))
	b[offAttrID+1] = 0x02 // Notice
	n128 := iba.Notice{IsGeneric: 1, Type: 1, ProducerTypeVendor: uint32(iba.NodeTypeSwitch), TrapNumber: 128, IssuerLID: lid}
	n128.DataDetails[0], n128.DataDetails[1] = byte(lid>>8), byte(lid)
	n128.MarshalTo(b[offSMPData:])
	m.slid, m.dlid, m.pkey = lid, sm, 0xFFFF
	to, out := f.transact(nd.base, m)
	if out == request {
		f.finish(to, out, m)
	}
}
