package sim

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
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
// The built-in SM's own sweeps are not delayed. Delayed MADs wait in one
// queue ordered by due time (see after), not on a timer each: a fabric
// with a million MADs in flight holds a million queue entries, one timer
// and no CPU, and MADs due at the same time are delivered in the order
// they were sent, as a link delivers them (IBA 9.7.7: in order on a path),
// which RMPP transfers rely on.
type Latency struct {
	Hop        time.Duration // per link crossed
	SMA        time.Duration // per SMP a node's SMA answers
	Agent      time.Duration // per GMP a node's PMA, CC or vendor agent answers
	QueueDepth int           // requests a node's agent holds; 0 for no limit
	Loss       float64       // percent of MADs lost
}

// MaxLatency bounds each delay of the latency model: a MAD that waits
// longer than this has timed out at every client.
const MaxLatency = time.Minute

// SetLatency changes the latency model; the zero Latency turns it off.
// Delays run from 0 to MaxLatency, QueueDepth is not negative, Loss is a
// percentage from 0 to 100 (NaN is refused).
func (f *Fabric) SetLatency(l Latency) error {
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"hop", l.Hop}, {"SMA", l.SMA}, {"agent", l.Agent}} {
		if d.d < 0 || d.d > MaxLatency {
			return fmt.Errorf("latency model: %s delay %v: want 0 to %v", d.name, d.d, MaxLatency)
		}
	}
	if l.QueueDepth < 0 {
		return fmt.Errorf("latency model: queue depth %d is negative", l.QueueDepth)
	}
	if !(l.Loss >= 0 && l.Loss <= 100) {
		return fmt.Errorf("latency model: loss %v%%: want 0 to 100", l.Loss)
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

// Delayed counts the MADs the latency model delayed since the fabric was
// built, and the delays it gave them in all (its nominal figure: the time
// they should have spent in flight, whatever the machine managed). A tool
// that keeps one MAD in flight takes its time without latency plus this
// sum over its MADs.
func (f *Fabric) Delayed() (mads uint64, total time.Duration) {
	return f.delayed.Load(), time.Duration(f.delayNS.Load())
}

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

// epoch is the zero of the monotonic clock the delivery queue runs on.
var epoch = time.Now()

// dueMAD is a delayed delivery: run fn at due (nanoseconds since epoch);
// seq breaks ties in the order of sending.
type dueMAD struct {
	due int64
	seq uint64
	fn  func()
}

func (a dueMAD) before(b dueMAD) bool { return a.due < b.due || a.due == b.due && a.seq < b.seq }

// deliveryQueue is the latency model's queue: a min-heap by due time and
// sending order, drained by one goroutine that runs every entry due on
// each wake, so MADs due together reach their attachments together (and
// leave a server's socket in one batch).
//
// The goroutine delivers each MAD at its due time, to within a few
// microseconds. A Go timer fires up to a millisecond late on an idle
// process (the runtime's poller sleeps in whole milliseconds), which made
// a 22 us round trip take 0.25 to 1 ms: a tool with one MAD in flight saw
// a fabric ten to forty times slower than asked. So the goroutine sleeps
// (a waker: on Linux ppoll(2) on an eventfd, which an earlier entry
// interrupts) until spinMargin before the due time, then spins, yielding
// to the process's other goroutines on each turn (the one a delivery
// woke runs at once, on this thread) and now and then to other threads,
// for the rest. With nothing queued it sleeps without a deadline and costs
// no CPU; while MADs are in flight it spins at most about spinMargin per
// delivery.
type deliveryQueue struct {
	mu      sync.Mutex
	heap    []dueMAD
	seq     uint64
	started bool
	stop    bool // the goroutine ends (tests)
	idle    bool // the goroutine waits with nothing queued
	w       waker
}

// spinMargin is how long before an entry is due the goroutine stops
// sleeping and spins: more than a sleep's usual lateness (the kernel's
// default timer slack of 50 us and a wake-up), so that the spin, not the
// sleep, ends on time.
const spinMargin = 150 * time.Microsecond

// deliveries serves every fabric: entries carry what they deliver.
var deliveries = &deliveryQueue{}

// after runs fn once d has passed, and after every fn given before it
// with the same due time.
func after(d time.Duration, fn func()) { deliveries.add(d, fn) }

func (q *deliveryQueue) add(d time.Duration, fn func()) {
	due := int64(time.Since(epoch) + d)
	q.mu.Lock()
	if !q.started {
		q.started = true
		q.w = newWaker()
		go q.run()
	}
	q.seq++
	q.push(dueMAD{due, q.seq, fn})
	first := q.heap[0].seq == q.seq
	w := q.w
	q.mu.Unlock()
	if first {
		w.kick() // an entry earlier than the one waited for, or the first
	}
}

// close ends the goroutine once it next wakes (the queue's tests).
func (q *deliveryQueue) close() {
	q.mu.Lock()
	q.stop = true
	w := q.w
	q.mu.Unlock()
	if w != nil {
		w.kick()
	}
}

func (q *deliveryQueue) run() {
	var due []func()
	for {
		q.mu.Lock()
		if q.stop {
			q.mu.Unlock()
			q.w.close()
			return
		}
		now := int64(time.Since(epoch))
		for len(q.heap) > 0 && q.heap[0].due <= now {
			due = append(due, q.pop().fn)
		}
		next := int64(-1)
		if len(q.heap) > 0 {
			next = q.heap[0].due
		}
		q.idle = next < 0 && len(due) == 0
		q.mu.Unlock()
		if len(due) > 0 {
			for i, fn := range due {
				fn()
				due[i] = nil
			}
			due = due[:0]
			// Let what the deliveries woke (a server writing the reply to
			// its client) run now, on this thread, rather than wait for
			// another to be woken for it.
			runtime.Gosched()
			continue
		}
		switch wait := time.Duration(next - now); {
		case next < 0:
			q.w.wait(-1) // nothing queued: until an entry comes
		case wait > spinMargin:
			q.w.wait(wait - spinMargin)
		default:
			// The last stretch: spin until the entry is due or an
			// earlier one comes, letting other goroutines run on each
			// turn and other threads every 64.
			for turn := 1; int64(time.Since(epoch)) < next && !q.w.poll(); turn++ {
				runtime.Gosched()
				if turn%64 == 0 {
					yield()
				}
			}
		}
	}
}

func (q *deliveryQueue) push(x dueMAD) {
	h := append(q.heap, x)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	q.heap = h
}

func (q *deliveryQueue) pop() dueMAD {
	h := q.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = dueMAD{}
	h = h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h[l].before(h[m]) {
			m = l
		}
		if r < n && h[r].before(h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	q.heap = h
	return top
}
