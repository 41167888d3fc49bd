package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rdmakit/rdmakit/mad"
)

// recvQueue is how many MADs wait for an attachment's reader before more
// are dropped, as a full receive queue drops them on a real HCA.
const recvQueue = 4096

type agent struct {
	id    uint16
	local int
	att   *Attachment
	spec  mad.AgentSpec
}

// agentTable is an immutable snapshot: the forwarding path reads it
// without locks, Register and Close replace it.
type agentTable struct {
	byID   map[uint16]*agent
	byPort map[int32][]*agent
}

func (f *Fabric) serverAgent(port int32, class, method uint8) *agent {
	for _, a := range f.agents.Load().byPort[port] {
		if a.spec.Class == class && slices.Contains(a.spec.Methods, method) {
			return a
		}
	}
	return nil
}

func (f *Fabric) updateAgents(fn func(t *agentTable)) {
	f.agentMu.Lock()
	defer f.agentMu.Unlock()
	old := f.agents.Load()
	t := &agentTable{byID: make(map[uint16]*agent, len(old.byID)+1), byPort: make(map[int32][]*agent, len(old.byPort)+1)}
	for k, v := range old.byID {
		t.byID[k] = v
	}
	for k, v := range old.byPort {
		t.byPort[k] = slices.Clone(v)
	}
	fn(t)
	f.agents.Store(t)
}

// Attachment is a mad.Transport on one end port of a Fabric.
type Attachment struct {
	f      *Fabric
	port   int32
	name   string
	q      chan *mad.Packet
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	agents atomic.Pointer[[]*agent]
	drops  atomic.Uint64
}

// Attach returns a transport on a node's end port: a CA or router port
// (1 to its port count), or a switch's management port 0. Any number of
// attachments may share a port.
func (f *Fabric) Attach(nodeName string, portNum int) (mad.Transport, error) {
	return f.attach(nodeName, portNum)
}

func (f *Fabric) attach(nodeName string, portNum int) (*Attachment, error) {
	idx, err := f.portIndex(nodeName, portNum)
	if err != nil {
		return nil, fmt.Errorf("attaching to %s/%d: %w", nodeName, portNum, err)
	}
	if f.nodes[f.ports[idx].node].sw != nil && portNum != 0 {
		return nil, fmt.Errorf("attaching to %s/%d: %w: a switch is managed through port 0", nodeName, portNum, ErrNoPort)
	}
	a := &Attachment{f: f, port: idx, name: fmt.Sprintf("sim:%s/%d", nodeName, portNum), q: make(chan *mad.Packet, recvQueue), done: make(chan struct{})}
	empty := []*agent{}
	a.agents.Store(&empty)
	return a, nil
}

// Register opens an agent for a class.
func (a *Attachment) Register(spec mad.AgentSpec) (int, error) {
	select {
	case <-a.done:
		return 0, mad.ErrClosed
	default:
	}
	if spec.Class == 0 {
		return 0, errors.New("sim: registering an agent: class 0 is reserved")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := *a.agents.Load()
	ag := &agent{local: len(cur), att: a, spec: spec}
	ag.spec.Methods = slices.Clone(spec.Methods)
	full := false
	a.f.updateAgents(func(t *agentTable) {
		// 16-bit agent IDs, 0 being the built-in SM's, reused once free.
		if len(t.byID) >= 0xFFFE {
			full = true
			return
		}
		for {
			id := uint16(a.f.nextID.Add(1))
			if _, used := t.byID[id]; id != 0 && !used {
				ag.id = id
				break
			}
		}
		t.byID[ag.id] = ag
		t.byPort[a.port] = append(t.byPort[a.port], ag)
	})
	if full {
		return 0, errors.New("sim: registering an agent: 65534 agents are open")
	}
	next := append(slices.Clone(cur), ag)
	a.agents.Store(&next)
	return ag.local, nil
}

var msgPool = sync.Pool{New: func() any { return new(msg) }}

// Send hands a MAD to the fabric; it is routed, answered and its answer
// queued before Send returns. A MAD the fabric drops is lost silently, as
// on a real subnet: the sender's timeout notices.
func (a *Attachment) Send(ctx context.Context, p *mad.Packet) error {
	_, err := a.SendChecked(ctx, p)
	return err
}

// SendChecked is Send that also reports whether the fabric took the MAD:
// false when it was dropped on the way (no route, a link down, an M_Key or
// P_Key violation, a malformed header) or, for a response, when no agent
// waits for it. ibsim's protocol bounces such requests to their sender at
// once, which package ibsimserver does with this.
func (a *Attachment) SendChecked(ctx context.Context, p *mad.Packet) (bool, error) {
	select {
	case <-a.done:
		return false, mad.ErrClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	ags := *a.agents.Load()
	if p.Agent < 0 || p.Agent >= len(ags) {
		return false, fmt.Errorf("sim: send on %s: agent %d is not registered", a.name, p.Agent)
	}
	if len(p.MAD) < 24 || len(p.MAD) > mad.Size {
		return false, fmt.Errorf("sim: send on %s: a MAD of %d bytes (24 to %d)", a.name, len(p.MAD), mad.Size)
	}
	ag := ags[p.Agent]
	m := msgPool.Get().(*msg)
	defer msgPool.Put(m)
	n := copy(m.buf[:], p.MAD)
	clear(m.buf[n:])
	method := m.buf[offMethod]
	if !isResponse(method) {
		// TID bits 63-48 name the sending agent, so the reply finds it,
		// as ibsim does with its client slot; clients match bits 31-0, and
		// libumad2sim keeps its own agent number in bits 47-32.
		binary.BigEndian.PutUint16(m.buf[offTID:], ag.id)
	}
	f := a.f
	me := &f.ports[a.port]
	nd := &f.nodes[me.node]
	nd.mu.RLock()
	lid, lmc := me.lid, me.lmc
	nd.mu.RUnlock()
	m.dlid, m.sl = p.Addr.LID, p.Addr.SL
	m.slid = lid | uint16(p.Addr.PathBits)&(1<<lmc-1)
	m.srcQP, m.dstQP, m.qkey = 1, p.Addr.QPN, p.Addr.QKey
	class := m.buf[offClass]
	if class == classSMP || class == classDR {
		m.srcQP, m.dstQP, m.qkey, m.pkey = 0, 0, 0, 0xFFFF
		if class == classDR && m.dlid == 0 {
			m.dlid = LIDPermissive
		}
	} else {
		m.pkey = f.pkeyAt(a.port, p.Addr.PKeyIndex)
	}
	if f.lossy(m) {
		return false, nil
	}
	to, out := f.transact(a.port, m)
	return f.finish(to, out, m), nil
}

// finish hands what transact did with m to the agent waiting for it, at
// once or, with the latency model on, when its timer fires. It reports
// whether some agent takes it.
func (f *Fabric) finish(to int32, out outcome, m *msg) bool {
	var t *agent
	switch out {
	case response:
		if x := f.agents.Load().byID[binary.BigEndian.Uint16(m.buf[offTID:])]; x != nil && x.att.port == to {
			t = x
		}
	case request:
		t = f.serverAgent(to, m.buf[offClass], m.buf[offMethod])
	}
	if t == nil {
		return false
	}
	d, ok := f.delay(m)
	if !ok {
		return false // the agent's queue was full
	}
	if d <= 0 {
		t.att.deliver(t, m)
		return true
	}
	f.delayed.Add(1)
	f.delayNS.Add(int64(d))
	pkt := t.att.packet(t, m)
	node := m.agentNode
	after(d, func() {
		t.att.enqueue(pkt)
		if node >= 0 {
			f.nodes[node].queued.Add(-1)
		}
	})
	return true
}

// delivered is one received MAD: the packet and its bytes in one
// allocation.
type delivered struct {
	pkt mad.Packet
	buf [mad.Size]byte
}

func (a *Attachment) deliver(ag *agent, m *msg) { a.enqueue(a.packet(ag, m)) }

func (a *Attachment) packet(ag *agent, m *msg) *mad.Packet {
	d := &delivered{}
	d.buf = m.buf
	d.pkt = mad.Packet{
		Agent: ag.local, MAD: d.buf[:],
		Addr: mad.Addr{LID: m.slid, SL: m.sl, QPN: m.srcQP, QKey: m.qkey, PKeyIndex: a.pkeyIndex(m.pkey)},
	}
	return &d.pkt
}

func (a *Attachment) enqueue(p *mad.Packet) {
	select {
	case <-a.done:
	case a.q <- p:
	default:
		a.drops.Add(1)
	}
}

func (a *Attachment) pkeyIndex(key uint16) uint16 {
	p := &a.f.ports[a.port]
	nd := &a.f.nodes[p.node]
	nd.mu.RLock()
	defer nd.mu.RUnlock()
	for i, k := range p.pkeys {
		if pkeyMatch(key, k) {
			return uint16(i)
		}
	}
	return 0
}

// Recv waits for the next MAD for any of the attachment's agents.
func (a *Attachment) Recv(ctx context.Context) (*mad.Packet, error) {
	select {
	case p := <-a.q:
		return p, nil
	default:
	}
	select {
	case p := <-a.q:
		return p, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-a.done:
		return nil, mad.ErrClosed
	}
}

// LocalPort reads the attached port's current attributes.
func (a *Attachment) LocalPort(ctx context.Context) (mad.LocalPort, error) {
	if err := ctx.Err(); err != nil {
		return mad.LocalPort{}, err
	}
	f := a.f
	p := &f.ports[a.port]
	nd := &f.nodes[p.node]
	nd.mu.RLock()
	defer nd.mu.RUnlock()
	return mad.LocalPort{
		Name: a.name, NodeGUID: nd.guid, PortGUID: p.guid, PortNum: p.num,
		GIDPrefix: p.gidPrefix, LID: p.lid, LMC: p.lmc, SMLID: p.smLID, SMSL: p.smSL,
	}, nil
}

// KernelRMPP is false: RMPP is left to the client.
func (a *Attachment) KernelRMPP() bool { return false }

// Close removes the attachment's agents from the fabric; a Recv in
// progress returns mad.ErrClosed.
func (a *Attachment) Close() error {
	a.once.Do(func() {
		close(a.done)
		ags := *a.agents.Load()
		a.f.updateAgents(func(t *agentTable) {
			for _, ag := range ags {
				delete(t.byID, ag.id)
			}
			t.byPort[a.port] = slices.DeleteFunc(t.byPort[a.port], func(x *agent) bool { return x.att == a })
			if len(t.byPort[a.port]) == 0 {
				delete(t.byPort, a.port)
			}
		})
	})
	return nil
}

// SetIsSM sets or clears the IsSM bit of the attached port's
// PortInfo:CapabilityMask (IBA 14.2.5.6), as an SM does when it starts.
func (a *Attachment) SetIsSM(on bool) {
	p := &a.f.ports[a.port]
	nd := &a.f.nodes[p.node]
	nd.mu.Lock()
	if on {
		p.capMask |= 1 << 1
	} else {
		p.capMask &^= 1 << 1
	}
	nd.mu.Unlock()
}

// GetLocal reads an SMP attribute (IBA 14.2.5) of the attached port's own
// node, with the modifier of a SubnGet, as its SMA answers a Get arriving
// on the attached port; but outside the fabric: no latency, no loss, and
// an answer even from a node made dead. It is the simulator's own view of
// the port, which ibsim's control requests (GET_NODEINFO, GET_PORTINFO)
// give a client, never a MAD on the simulated wire.
func (a *Attachment) GetLocal(attr uint16, mod uint32) ([]byte, error) {
	select {
	case <-a.done:
		return nil, mad.ErrClosed
	default:
	}
	p := &a.f.ports[a.port]
	data := make([]byte, 64)
	if st := a.f.smaDo(p.node, p.num, methodGet, attr, mod, data); st != 0 {
		return nil, fmt.Errorf("sim: %s: reading attribute %#04x (modifier %d): MAD status %#04x", a.name, attr, mod, st)
	}
	return data, nil
}

// Dropped counts MADs lost because the attachment's receive queue was full.
func (a *Attachment) Dropped() uint64 { return a.drops.Load() }

var _ mad.Transport = (*Attachment)(nil)
