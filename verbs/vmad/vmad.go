package vmad

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/verbs"
)

// grhSize is the room a UD receive keeps for the GRH (IBA 11.4.1.2).
const grhSize = 40

// slotSize holds one MAD after its GRH.
const slotSize = grhSize + mad.Size

// recvFlag marks receive WR IDs; the low bits are the slot number.
const recvFlag = 1 << 63

// maxAHs bounds the address handle cache; idle ones are dropped beyond it.
const maxAHs = 256

// Options tune a transport.
type Options struct {
	// PKeyIndex is the QP's P_Key index (IBA 10.9.2); every MAD it sends
	// carries that P_Key. Default 0, the default partition.
	PKeyIndex uint16
	// Depth is the number of sends and of receives in flight (default 16).
	Depth int
}

// Transport is a mad.Transport over one UD QP.
type Transport struct {
	name      string
	port      uint8
	pkeyIndex uint16

	vc    *verbs.Context
	pd    *verbs.PD
	cq    *verbs.CQ
	qp    *verbs.QP
	mr    *verbs.MR
	depth int

	free  chan int // free send slots
	recvs chan *mad.Packet

	cancel  context.CancelFunc
	done    chan struct{} // the poller stopped
	pollErr error

	mu      sync.Mutex
	agents  []mad.AgentSpec
	ahs     map[ahKey]*ahEntry
	inSlot  []*ahEntry // AH used by each send slot
	gidIdx  map[iba.GID]uint8
	closed  bool
	closeMu sync.Once
}

type ahKey struct {
	lid       uint16
	sl        uint8
	pathBits  uint8
	global    bool
	gid       iba.GID
	sgidIndex uint8
	hopLimit  uint8
	tclass    uint8
	flow      uint32
}

type ahEntry struct {
	ah       *verbs.AH
	inFlight int
}

var _ mad.Transport = (*Transport)(nil)

// Open creates the UD QP on port of the named device and brings it to RTS
// with the GSI Q_Key.
func Open(device string, port int, o Options) (_ *Transport, err error) {
	if o.Depth <= 0 {
		o.Depth = 16
	}
	vc, err := verbs.Open(device)
	if err != nil {
		return nil, fmt.Errorf("vmad: %w", err)
	}
	defer func() {
		if err != nil {
			vc.Close()
		}
	}()
	t := &Transport{
		name: fmt.Sprintf("%s/%d", vc.Name(), port), port: uint8(port), pkeyIndex: o.PKeyIndex,
		vc: vc, depth: o.Depth, free: make(chan int, o.Depth), recvs: make(chan *mad.Packet, 4*o.Depth),
		done: make(chan struct{}), ahs: map[ahKey]*ahEntry{}, inSlot: make([]*ahEntry, o.Depth), gidIdx: map[iba.GID]uint8{},
	}
	if _, err := vc.QueryPort(port); err != nil {
		return nil, fmt.Errorf("vmad: %w", err)
	}
	if t.pd, err = vc.AllocPD(); err != nil {
		return nil, fmt.Errorf("vmad on %s: %w", t.name, err)
	}
	ch, err := vc.CreateCompChannel()
	if err != nil {
		return nil, fmt.Errorf("vmad on %s: %w", t.name, err)
	}
	if t.cq, err = vc.CreateCQ(2*o.Depth, ch); err != nil {
		return nil, fmt.Errorf("vmad on %s: %w", t.name, err)
	}
	if t.mr, err = t.pd.AllocMR(2*o.Depth*slotSize, verbs.AccessLocalWrite); err != nil {
		return nil, fmt.Errorf("vmad on %s: %w", t.name, err)
	}
	t.qp, err = t.pd.CreateQP(verbs.QPInitAttr{Type: verbs.QPTypeUD, SendCQ: t.cq, RecvCQ: t.cq,
		Cap: verbs.QPCap{MaxSendWR: o.Depth, MaxRecvWR: o.Depth, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		return nil, fmt.Errorf("vmad on %s: %w", t.name, err)
	}
	var psn [4]byte
	_, _ = rand.Read(psn[:])
	if err := t.qp.Init(verbs.InitAttr{Port: uint8(port), PKeyIndex: o.PKeyIndex, QKey: mad.QP1QKey}); err != nil {
		return nil, fmt.Errorf("vmad on %s: %w", t.name, err)
	}
	if err := t.qp.RTR(verbs.RTRAttr{}); err != nil {
		return nil, fmt.Errorf("vmad on %s: %w", t.name, err)
	}
	if err := t.qp.RTS(verbs.RTSAttr{SQPSN: binary.BigEndian.Uint32(psn[:]) & 0xffffff}); err != nil {
		return nil, fmt.Errorf("vmad on %s: %w", t.name, err)
	}
	for i := 0; i < o.Depth; i++ {
		t.free <- i
		if err := t.postRecv(i); err != nil {
			return nil, fmt.Errorf("vmad on %s: %w", t.name, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	go t.poll(ctx)
	return t, nil
}

// QPN is the number of the UD QP the MADs come from.
func (t *Transport) QPN() uint32 { return t.qp.QPN() }

// String names the transport's port.
func (t *Transport) String() string { return "vmad:" + t.name }

func (t *Transport) sendSlot(i int) []byte { return t.mr.Buf()[i*slotSize : (i+1)*slotSize] }
func (t *Transport) recvSlot(i int) []byte {
	return t.mr.Buf()[(t.depth+i)*slotSize : (t.depth+i+1)*slotSize]
}

func (t *Transport) postRecv(i int) error {
	return t.qp.PostRecv(verbs.RecvWR{ID: recvFlag | uint64(i), SGEs: []verbs.SGE{t.mr.SGE((t.depth+i)*slotSize, slotSize)}})
}

// poll reaps completions: receives go to Recv, sends free their slot.
func (t *Transport) poll(ctx context.Context) {
	defer close(t.done)
	wcs := make([]verbs.WC, 16)
	for {
		n, err := t.cq.Wait(ctx, wcs)
		if err != nil {
			if ctx.Err() == nil {
				t.pollErr = err
			}
			return
		}
		for _, wc := range wcs[:n] {
			if wc.ID&recvFlag == 0 {
				t.sent(int(wc.ID))
				continue
			}
			i := int(wc.ID &^ recvFlag)
			if i >= t.depth {
				continue
			}
			if wc.Status == verbs.WCSuccess {
				if p := t.packet(&wc, t.recvSlot(i)); p != nil {
					select {
					case t.recvs <- p:
					default: // nobody reads: drop, as the fabric would
					}
				}
			}
			if err := t.postRecv(i); err != nil {
				if ctx.Err() == nil {
					t.pollErr = err
				}
				return
			}
		}
	}
}

func (t *Transport) sent(i int) {
	if i < 0 || i >= t.depth {
		return
	}
	t.mu.Lock()
	if e := t.inSlot[i]; e != nil {
		e.inFlight--
		t.inSlot[i] = nil
	}
	t.mu.Unlock()
	t.free <- i
}

// packet builds the received MAD and its source address (IBA 13.5.4:
// reply to the LRH/GRH/BTH/DETH the request came with).
func (t *Transport) packet(wc *verbs.WC, slot []byte) *mad.Packet {
	if wc.ByteLen < grhSize+mad.HeaderSize || int(wc.ByteLen) > len(slot) {
		return nil
	}
	m := slices.Clone(slot[grhSize:wc.ByteLen])
	a := mad.Addr{LID: wc.SLID, SL: wc.SL, PathBits: wc.DLIDPathBits, QPN: wc.SrcQP, PKeyIndex: wc.PKeyIndex}
	if wc.Flags&verbs.WCWithGRH != 0 {
		a.GRH = t.grh(slot[:grhSize])
	}
	agent, ok := t.agentFor(m)
	if !ok {
		return nil
	}
	return &mad.Packet{Agent: agent, Addr: a, MAD: m}
}

// grh reads the GRH area of a receive and finds our index of the GID
// the packet was sent to, so a reply leaves from it.
func (t *Transport) grh(b []byte) *mad.GRH {
	g, err := verbs.ParseGRH(b)
	if err != nil {
		return nil
	}
	return &mad.GRH{GID: g.SGID, TrafficClass: g.TrafficClass, FlowLabel: g.FlowLabel, HopLimit: g.HopLimit, SGIDIndex: t.gidIndex(g.DGID)}
}

// gidIndex finds our GID table index of gid, so a reply leaves from the
// GID the request came to; 0 when it is not in the table.
func (t *Transport) gidIndex(gid iba.GID) uint8 {
	t.mu.Lock()
	i, ok := t.gidIdx[gid]
	t.mu.Unlock()
	if ok {
		return i
	}
	j, err := t.vc.FindGID(int(t.port), gid)
	if err != nil {
		return 0
	}
	t.mu.Lock()
	t.gidIdx[gid] = uint8(j)
	t.mu.Unlock()
	return uint8(j)
}

// agentFor picks the agent a received MAD belongs to: a server agent for a
// request of a method it serves, else the class's client agent.
func (t *Transport) agentFor(m []byte) (int, bool) {
	class, version, method := m[1], m[2], m[3]
	t.mu.Lock()
	defer t.mu.Unlock()
	client := -1
	for i, a := range t.agents {
		if a.Class != class || a.ClassVersion != version {
			continue
		}
		if method&0x80 == 0 && slices.Contains(a.Methods, method) {
			return i, true
		}
		if len(a.Methods) == 0 && client < 0 {
			client = i
		}
	}
	return client, client >= 0
}

// Register records an agent. Without a kernel MAD layer there is nothing to
// open: received MADs are matched to agents by class, version and method.
func (t *Transport) Register(spec mad.AgentSpec) (int, error) {
	what := fmt.Sprintf("vmad on %s: registering an agent for class %#02x version %d", t.name, spec.Class, spec.ClassVersion)
	switch {
	case spec.Class == 0x01 || spec.Class == 0x81:
		return 0, fmt.Errorf("%s: subnet management needs QP0, a UD QP carries only GMPs", what)
	case spec.RMPPVersion != 0:
		return 0, fmt.Errorf("%s: no kernel RMPP on a UD QP (the client does RMPP itself)", what)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return 0, mad.ErrClosed
	}
	for _, m := range spec.Methods {
		for _, a := range t.agents {
			if a.Class == spec.Class && a.ClassVersion == spec.ClassVersion && slices.Contains(a.Methods, m) {
				return 0, fmt.Errorf("%s: method %#02x is already served", what, m)
			}
		}
	}
	t.agents = append(t.agents, spec)
	return len(t.agents) - 1, nil
}

// Send posts one MAD to the address: QP1 with the GSI Q_Key unless the
// address names another QP and Q_Key. Packet.Timeout is not used: the
// client matches replies itself.
func (t *Transport) Send(ctx context.Context, p *mad.Packet) error {
	if len(p.MAD) < mad.HeaderSize || len(p.MAD) > mad.Size {
		return fmt.Errorf("vmad on %s: a MAD of %d bytes; a UD QP sends 24 to %d", t.name, len(p.MAD), mad.Size)
	}
	a := p.Addr
	if a.QPN == 0 {
		return fmt.Errorf("vmad on %s: QP0 takes only SMPs, which a UD QP cannot send", t.name)
	}
	if a.PKeyIndex != 0 && a.PKeyIndex != t.pkeyIndex {
		return fmt.Errorf("vmad on %s: P_Key index %d requested, the QP has %d", t.name, a.PKeyIndex, t.pkeyIndex)
	}
	if a.QKey == 0 {
		a.QKey = mad.QP1QKey
	}
	t.mu.Lock()
	closed := t.closed
	known := p.Agent >= 0 && p.Agent < len(t.agents)
	t.mu.Unlock()
	if closed {
		return mad.ErrClosed
	}
	if !known {
		return fmt.Errorf("vmad on %s: agent %d is not registered", t.name, p.Agent)
	}
	var slot int
	select {
	case slot = <-t.free:
	case <-ctx.Done():
		return ctx.Err()
	case <-t.done:
		return t.stopped()
	}
	e, err := t.ah(a)
	if err != nil {
		t.free <- slot
		return fmt.Errorf("vmad on %s: %w", t.name, err)
	}
	t.mu.Lock()
	t.inSlot[slot] = e
	t.mu.Unlock()
	n := copy(t.sendSlot(slot), p.MAD)
	err = t.qp.PostSend(verbs.SendWR{ID: uint64(slot), Opcode: verbs.OpSend, Flags: verbs.SendSignaled,
		SGEs: []verbs.SGE{t.mr.SGE(slot*slotSize, n)}, AH: e.ah, RemoteQPN: a.QPN, RemoteQKey: a.QKey})
	if err != nil {
		t.sent(slot)
		if errors.Is(err, verbs.ErrClosed) {
			return mad.ErrClosed
		}
		return fmt.Errorf("vmad on %s: sending to QP %d LID %d: %w", t.name, a.QPN, a.LID, err)
	}
	return nil
}

// ah finds or creates the address handle of a, counting the send in flight.
func (t *Transport) ah(a mad.Addr) (*ahEntry, error) {
	k := ahKey{lid: a.LID, sl: a.SL, pathBits: a.PathBits}
	if g := a.GRH; g != nil {
		k.global, k.gid, k.sgidIndex, k.hopLimit, k.tclass, k.flow = true, g.GID, g.SGIDIndex, g.HopLimit, g.TrafficClass, g.FlowLabel
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.ahs[k]; ok {
		e.inFlight++
		return e, nil
	}
	if len(t.ahs) >= maxAHs {
		for key, e := range t.ahs {
			if e.inFlight == 0 {
				_ = e.ah.Close()
				delete(t.ahs, key)
			}
		}
	}
	attr := verbs.AHAttr{DLID: a.LID, SL: a.SL, SrcPathBits: a.PathBits, PortNum: t.port}
	if k.global {
		hop := k.hopLimit
		if hop == 0 {
			hop = 64
		}
		attr.GRH = &verbs.GlobalRoute{DGID: k.gid, SGIDIndex: k.sgidIndex, HopLimit: hop, TrafficClass: k.tclass, FlowLabel: k.flow}
	}
	ah, err := t.pd.CreateAH(attr)
	if err != nil {
		return nil, err
	}
	e := &ahEntry{ah: ah, inFlight: 1}
	t.ahs[k] = e
	return e, nil
}

func (t *Transport) stopped() error {
	if t.pollErr != nil {
		return fmt.Errorf("vmad on %s: %w", t.name, t.pollErr)
	}
	return mad.ErrClosed
}

// Recv waits for the next MAD for a registered agent.
func (t *Transport) Recv(ctx context.Context) (*mad.Packet, error) {
	select {
	case p := <-t.recvs:
		return p, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.done:
		select {
		case p := <-t.recvs:
			return p, nil
		default:
		}
		return nil, t.stopped()
	}
}

// LocalPort reads the port through verbs.
func (t *Transport) LocalPort(ctx context.Context) (mad.LocalPort, error) {
	if err := ctx.Err(); err != nil {
		return mad.LocalPort{}, err
	}
	pa, err := t.vc.QueryPort(int(t.port))
	if err != nil {
		return mad.LocalPort{}, fmt.Errorf("vmad on %s: %w", t.name, err)
	}
	da, err := t.vc.QueryDevice()
	if err != nil {
		return mad.LocalPort{}, fmt.Errorf("vmad on %s: %w", t.name, err)
	}
	gid, err := t.vc.QueryGID(int(t.port), 0)
	if err != nil {
		return mad.LocalPort{}, fmt.Errorf("vmad on %s: %w", t.name, err)
	}
	return mad.LocalPort{
		Name: t.name, NodeGUID: da.NodeGUID, PortGUID: gid.GUID(), PortNum: t.port, GIDPrefix: gid.Prefix(),
		LID: pa.LID, LMC: pa.LMC, SMLID: pa.SMLID, SMSL: pa.SMSL,
	}, nil
}

// KernelRMPP is false: mad.Client segments and reassembles itself.
func (t *Transport) KernelRMPP() bool { return false }

// Close stops receiving and destroys the QP and everything it used.
func (t *Transport) Close() error {
	var err error
	t.closeMu.Do(func() {
		t.mu.Lock()
		t.closed = true
		t.mu.Unlock()
		t.cancel()
		<-t.done
		err = t.vc.Close()
	})
	return err
}
