package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

// ErrLIDsExhausted is returned by RunSM when the subnet has more end ports
// (times 2^LMC) than unicast LIDs; the ports left without a LID stay in
// Init.
var ErrLIDsExhausted = errors.New("sim: unicast LIDs exhausted")

// SMConfig configures the built-in subnet manager.
type SMConfig struct {
	// Node and Port name the end port the SM runs on; by default the first
	// port of the first CA (or port 0 of the first switch when there is no
	// CA).
	Node string
	Port int
	// LMC is the LID mask control given to CA ports (IBA 7.11.1).
	LMC      uint8
	Priority uint8
	// Workers is how many SMPs are in flight at once; 0 means GOMAXPROCS.
	Workers int
	// NoSA leaves the subnet administrator out: by default the SM serves
	// the SA (IBA 15) at QP1 of its port once the first sweep is done.
	NoSA bool
	// NoResweep makes the SM ignore traps: by default a trap 128 (a link
	// changed state) makes it sweep again, as OpenSM does.
	NoResweep bool
}

// SMResult reports a sweep.
type SMResult struct {
	Switches, CAs, Routers, EndPorts int
	// MaxLID is the highest LID assigned; Unassigned counts end ports
	// that got none.
	MaxLID     uint16
	Unassigned int
	SMPs       uint64
	Discover   time.Duration
	Route      time.Duration
	Total      time.Duration
}

// SM is the built-in subnet manager: it discovers the fabric with
// directed-route SMPs through the SMAs, assigns LIDs, programs min-hop
// linear forwarding tables and brings every port to Active.
type SM struct {
	f        *Fabric
	port     int32
	guid     iba.GUID
	priority uint8
	state    atomic.Uint32
	actCount atomic.Uint32
	smps     atomic.Uint64
	cfg      SMConfig

	mu     sync.Mutex          // one sweep at a time
	lids   map[iba.GUID]uint16 // port GUID -> base LID, kept across sweeps (as OpenSM's guid2lid)
	view   atomic.Pointer[smView]
	sa     atomic.Pointer[saServer]
	kick   chan struct{}
	ctx    context.Context // the SM's lifetime: Fabric.Close ends it
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// Sweeps counts the sweeps done; Traps the traps received.
	sweeps, traps atomic.Uint64
}

// resweepDelay gathers the traps of one event (both ends of a link
// report it) into one sweep.
const resweepDelay = 20 * time.Millisecond

// smNode is the SM's view of a node, learnt from SMPs only.
type smNode struct {
	guid   iba.GUID
	typ    iba.NodeType
	nports uint8
	path   []byte
	sw     int32    // index among switches, -1 for CAs
	links  []smLink // by port number
	pinfo  [][]byte // PortInfo by port number, as read
	lid    []uint16 // base LID by port number (switch: [0])
	epPath [][]byte // the DR path reaching each port (CAs: per port)
}

type smLink struct {
	node int32
	port uint8
}

// RunSM runs the built-in SM once over the fabric and leaves it answering
// SMInfo as MASTER. It may be run again (a resweep).
func (f *Fabric) RunSM(ctx context.Context, cfg SMConfig) (*SMResult, error) {
	idx, err := f.smPort(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.LMC > 7 {
		return nil, fmt.Errorf("running the SM: LMC %d (0 to 7)", cfg.LMC)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	f.smMu.Lock()
	if f.closed {
		f.smMu.Unlock()
		return nil, errors.New("running the SM: the fabric is closed")
	}
	s := f.sm.Load()
	if s == nil || s.port != idx || s.cfg.LMC != cfg.LMC || s.cfg.NoSA != cfg.NoSA || s.cfg.NoResweep != cfg.NoResweep || s.priority != cfg.Priority {
		old := s
		if old != nil {
			old.stop()
		}
		s = &SM{f: f, port: idx, guid: f.ports[idx].guid, priority: cfg.Priority, cfg: cfg,
			lids: map[iba.GUID]uint16{}, kick: make(chan struct{}, 1)}
		if old != nil {
			s.actCount.Store(old.actCount.Load())
		}
		s.ctx, s.cancel = context.WithCancel(context.Background())
		f.sm.Store(s)
		s.wg.Add(1)
		go s.loop()
	}
	f.smMu.Unlock()
	s.mu.Lock()
	s.cfg.Workers = cfg.Workers // the rest is the same, or this is a new SM
	res, err := s.sweep(ctx)
	s.mu.Unlock()
	if err != nil && !errors.Is(err, ErrLIDsExhausted) {
		return res, err
	}
	if !cfg.NoSA {
		if serr := s.startSA(); serr != nil {
			return res, serr
		}
	}
	return res, err
}

// loop sweeps again when traps ask for it, until the SM stops.
func (s *SM) loop() {
	defer s.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.kick:
		}
		t := time.NewTimer(resweepDelay)
		select {
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		select {
		case <-s.kick: // the traps that came meanwhile are covered
		default:
		}
		s.mu.Lock()
		_, _ = s.sweep(s.ctx) // a failed resweep leaves the fabric as it is; the next trap retries
		s.mu.Unlock()
	}
}

// requestResweep asks the SM loop for a sweep (a trap came in).
func (s *SM) requestResweep() {
	if s.cfg.NoResweep {
		return
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// stop ends the SM's loop and its SA.
func (s *SM) stop() {
	s.cancel()
	s.wg.Wait()
	if a := s.sa.Load(); a != nil {
		a.close()
	}
	s.state.Store(uint32(iba.SMStateNotActive))
}

// Close stops the built-in SM and SA (their goroutines) and closes the
// fabric to new SM runs; attachments keep working.
func (f *Fabric) Close() error {
	f.smMu.Lock()
	defer f.smMu.Unlock()
	f.closed = true
	if s := f.sm.Load(); s != nil {
		s.stop()
	}
	return nil
}

// Sweeps counts the sweeps the built-in SM has done (0 with no SM).
func (f *Fabric) Sweeps() uint64 {
	if s := f.sm.Load(); s != nil {
		return s.sweeps.Load()
	}
	return 0
}

// sweep discovers, assigns LIDs, routes and activates; caller holds s.mu.
func (s *SM) sweep(ctx context.Context) (*SMResult, error) {
	start := time.Now()
	f, cfg, idx := s.f, s.cfg, s.port
	defer s.sweeps.Add(1)
	smps0 := s.smps.Load()
	s.state.Store(uint32(iba.SMStateDiscovering))
	p := &f.ports[idx]
	nd := &f.nodes[p.node]
	nd.mu.Lock()
	p.capMask |= 1 << 1 // IsSM
	nd.mu.Unlock()

	res := &SMResult{}
	nodes, err := s.discover(ctx)
	if err != nil {
		return nil, err
	}
	res.Discover = time.Since(start)
	var eps []smLink
	for i := range nodes {
		n := &nodes[i]
		switch n.typ {
		case iba.NodeTypeSwitch:
			res.Switches++
			eps = append(eps, smLink{int32(i), 0})
		case iba.NodeTypeCA:
			res.CAs++
		default:
			res.Routers++
		}
	}
	for i := range nodes {
		n := &nodes[i]
		if n.typ != iba.NodeTypeSwitch {
			for q := 1; q <= int(n.nports); q++ {
				if n.epPath[q] != nil {
					eps = append(eps, smLink{int32(i), uint8(q)})
				}
			}
		}
	}
	res.EndPorts = len(eps)
	// LIDs: those the ports had in earlier sweeps stay; new ports get the
	// lowest free ones, switches first, then CA ports, each base aligned
	// to 2^LMC, up to what the switches' forwarding tables hold.
	last := uint32(min(MaxUnicastLID, f.lftCap-1))
	used := make([]bool, last+1)
	guidOf := func(e smLink) iba.GUID { return s.portGUID(nodes, e) }
	lmcOf := func(e smLink) uint8 {
		if nodes[e.node].typ == iba.NodeTypeSwitch {
			return 0
		}
		return cfg.LMC
	}
	for _, e := range eps {
		l, ok := s.lids[guidOf(e)]
		step := uint32(1) << lmcOf(e)
		if !ok || uint32(l)&(step-1) != 0 || uint32(l)+step-1 > last {
			continue
		}
		free := true
		for k := uint32(0); k < step; k++ {
			free = free && !used[uint32(l)+k]
		}
		if !free {
			continue
		}
		for k := uint32(0); k < step; k++ {
			used[uint32(l)+k] = true
		}
		nodes[e.node].lid[e.port] = l
	}
	next := uint32(1)
	for _, e := range eps {
		n := &nodes[e.node]
		step := uint32(1) << lmcOf(e)
		if n.lid[e.port] == 0 {
			base := (next + step - 1) &^ (step - 1)
			for base+step-1 <= last {
				free := true
				for k := uint32(0); k < step; k++ {
					free = free && !used[base+k]
				}
				if free {
					break
				}
				base += step
			}
			if base+step-1 > last {
				res.Unassigned++
				continue
			}
			for k := uint32(0); k < step; k++ {
				used[base+k] = true
			}
			n.lid[e.port] = uint16(base)
			next = base + step
			s.lids[guidOf(e)] = uint16(base)
		}
		res.MaxLID = max(res.MaxLID, n.lid[e.port]+uint16(step)-1)
	}
	smLID := s.lidOf(nodes, idx)
	// Assign LIDs and arm the end ports.
	err = s.parallel(ctx, len(eps), func(m *msg, i int) error {
		e := eps[i]
		n := &nodes[e.node]
		if n.lid[e.port] == 0 {
			return nil
		}
		var pi iba.PortInfo
		pi.Unmarshal(n.pinfo[e.port])
		pi.LID, pi.MasterSMLID, pi.GIDPrefix = n.lid[e.port], smLID, 0xfe80000000000000
		pi.LMC = cfg.LMC
		if n.typ == iba.NodeTypeSwitch {
			pi.LMC = 0
			pi.PortState = 0
		} else {
			pi.PortState = armFrom(pi.PortState)
		}
		s.clearNoChange(&pi)
		return s.setPortInfo(m, n.epPath[e.port], 0, &pi)
	})
	if err != nil {
		return nil, err
	}
	tRoute := time.Now()
	if err := s.route(ctx, nodes, res.MaxLID); err != nil {
		return nil, err
	}
	res.Route = time.Since(tRoute)
	// Arm switch ports, then make everything Active.
	var swPorts []smLink
	for i := range nodes {
		n := &nodes[i]
		if n.typ == iba.NodeTypeSwitch {
			for q := 1; q <= int(n.nports); q++ {
				if n.links[q].node >= 0 {
					swPorts = append(swPorts, smLink{int32(i), uint8(q)})
				}
			}
		}
	}
	for _, st := range []iba.PortState{iba.PortStateArmed, iba.PortStateActive} {
		err = s.parallel(ctx, len(swPorts), func(m *msg, i int) error {
			e := swPorts[i]
			n := &nodes[e.node]
			if peer := &nodes[n.links[e.port].node]; peer.typ != iba.NodeTypeSwitch && peer.lid[n.links[e.port].port] == 0 {
				return nil // its CA has no LID: leave the link in Init
			}
			var pi iba.PortInfo
			pi.Unmarshal(n.pinfo[e.port])
			if st == iba.PortStateArmed {
				pi.PortState = armFrom(pi.PortState)
			} else {
				pi.PortState = st
			}
			s.clearNoChange(&pi)
			return s.setPortInfo(m, n.path, uint32(e.port), &pi)
		})
		if err != nil {
			return nil, err
		}
	}
	err = s.parallel(ctx, len(eps), func(m *msg, i int) error {
		e := eps[i]
		n := &nodes[e.node]
		if n.typ == iba.NodeTypeSwitch || n.lid[e.port] == 0 {
			return nil
		}
		var pi iba.PortInfo
		pi.Unmarshal(n.pinfo[e.port])
		pi.LID, pi.MasterSMLID, pi.LMC, pi.GIDPrefix = n.lid[e.port], smLID, cfg.LMC, 0xfe80000000000000
		pi.PortState = iba.PortStateActive
		s.clearNoChange(&pi)
		return s.setPortInfo(m, n.epPath[e.port], 0, &pi)
	})
	if err != nil {
		return nil, err
	}
	s.publish(nodes, smLID)
	s.state.Store(uint32(iba.SMStateMaster))
	res.SMPs = s.smps.Load() - smps0
	res.Total = time.Since(start)
	if res.Unassigned > 0 {
		return res, fmt.Errorf("%w: %d of %d end ports have no LID", ErrLIDsExhausted, res.Unassigned, res.EndPorts)
	}
	return res, nil
}

func (f *Fabric) smPort(cfg SMConfig) (int32, error) {
	if cfg.Node != "" {
		idx, err := f.portIndex(cfg.Node, cfg.Port)
		if err != nil {
			return 0, fmt.Errorf("running the SM: %w", err)
		}
		if f.nodes[f.ports[idx].node].sw != nil && cfg.Port != 0 {
			return 0, fmt.Errorf("running the SM on %s: a switch's SM runs on port 0", cfg.Node)
		}
		return idx, nil
	}
	for i := range f.nodes {
		if f.nodes[i].typ == iba.NodeTypeCA {
			return f.nodes[i].base + 1, nil
		}
	}
	for i := range f.nodes {
		if f.nodes[i].sw != nil {
			return f.nodes[i].base, nil
		}
	}
	return 0, errors.New("running the SM: the fabric has no CA and no switch")
}

func (s *SM) lidOf(nodes []smNode, idx int32) uint16 {
	p := &s.f.ports[idx]
	for i := range nodes {
		if nodes[i].guid == s.f.nodes[p.node].guid {
			return nodes[i].lid[p.num]
		}
	}
	return 0
}

// armFrom gives the state to ask of a port to arm it: Armed from Init,
// no change from Armed or Active (a resweep).
func armFrom(cur iba.PortState) iba.PortState {
	if cur == iba.PortStateInit {
		return iba.PortStateArmed
	}
	return iba.PortStateNoChange
}

// clearNoChange zeroes the PortInfo components whose 0 means "no change"
// in a Set, so that a read-modify-write does not retrain anything.
func (s *SM) clearNoChange(pi *iba.PortInfo) {
	pi.LinkWidthEnabled, pi.LinkSpeedEnabled, pi.LinkSpeedExtEnabled = 0, 0, 0
	pi.PortPhysicalState = 0
}

// parallel runs fn for 0..n-1 on cfg.Workers goroutines, each with its
// own MAD buffer, and returns the first error.
func (s *SM) parallel(ctx context.Context, n int, fn func(m *msg, i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	w := min(s.cfg.Workers, n)
	for k := 0; k < w; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := new(msg)
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if i&1023 == 0 && ctx.Err() != nil {
					once.Do(func() { first = ctx.Err() })
					return
				}
				if err := fn(m, i); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// smp sends one directed-route SMP along path and returns its status; the
// reply is in m.
func (s *SM) smp(m *msg, path []byte, method uint8, attr uint16, mod uint32) (uint16, error) {
	b := m.buf[:]
	b[0], b[offClass], b[2], b[offMethod] = 1, classDR, 1, method
	binary.BigEndian.PutUint16(b[offStatus:], 0)
	b[offHopPointer], b[offHopCount] = 0, uint8(len(path))
	binary.BigEndian.PutUint32(b[offTID:], 0) // agent 0: the SM (bits 63-48)
	binary.BigEndian.PutUint32(b[offTID+4:], s.actCount.Add(1))
	binary.BigEndian.PutUint16(b[offAttrID:], attr)
	binary.BigEndian.PutUint16(b[offAttrID+2:], 0)
	binary.BigEndian.PutUint32(b[offAttrMod:], mod)
	binary.BigEndian.PutUint64(b[offMKey:], 0)
	binary.BigEndian.PutUint16(b[offDrSLID:], LIDPermissive)
	binary.BigEndian.PutUint16(b[offDrDLID:], LIDPermissive)
	clear(b[36:offSMPData])
	clear(b[offInitPath:])
	copy(b[offInitPath+1:], path)
	m.dlid, m.slid = LIDPermissive, LIDPermissive
	s.smps.Add(1)
	to, out := s.f.transact(s.port, m)
	if out != response || to != s.port || binary.BigEndian.Uint16(b[offTID:]) != 0 {
		return 0, fmt.Errorf("SM: %s 0x%04x via %v: no reply", map[uint8]string{methodGet: "SubnGet", methodSet: "SubnSet"}[method], attr, path)
	}
	return binary.BigEndian.Uint16(b[offStatus:]) & 0x7FFF, nil
}

func (s *SM) setPortInfo(m *msg, path []byte, mod uint32, pi *iba.PortInfo) error {
	pi.MarshalTo(m.buf[offSMPData:])
	st, err := s.smp(m, path, methodSet, attrPortInfo, mod)
	if err != nil {
		return err
	}
	if st != 0 {
		return fmt.Errorf("SM: SubnSet PortInfo %d via %v: status 0x%04x", mod, path, st)
	}
	return nil
}

type probe struct {
	path     []byte
	from     int32
	fromPort uint8
	// results
	ni    iba.NodeInfo
	pinfo []byte
	err   error
}

// discover sweeps the subnet breadth first with directed-route SMPs.
func (s *SM) discover(ctx context.Context) ([]smNode, error) {
	var nodes []smNode
	byGUID := map[iba.GUID]int32{}
	probes := []*probe{{path: []byte{}, from: -1}}
	var frontier []int32
	var pendingSelf []*probe
	newNode := func(pr *probe) int32 {
		n := smNode{guid: pr.ni.NodeGUID, typ: pr.ni.NodeType, nports: pr.ni.NumPorts, path: pr.path, sw: -1}
		n.links = make([]smLink, n.nports+1)
		for i := range n.links {
			n.links[i].node = -1
		}
		n.pinfo = make([][]byte, n.nports+1)
		n.lid = make([]uint16, n.nports+1)
		n.epPath = make([][]byte, n.nports+1)
		nodes = append(nodes, n)
		id := int32(len(nodes) - 1)
		byGUID[n.guid] = id
		return id
	}
	for len(probes) > 0 {
		err := s.parallel(ctx, len(probes), func(m *msg, i int) error {
			pr := probes[i]
			st, err := s.smp(m, pr.path, methodGet, attrNodeInfo, 0)
			if err != nil || st != 0 {
				pr.err = fmt.Errorf("NodeInfo via %v: status %#x, %v", pr.path, st, err)
				return nil // a dead end, not a failed sweep
			}
			pr.ni.Unmarshal(m.buf[offSMPData:])
			if pr.ni.NodeType != iba.NodeTypeSwitch {
				if st, err := s.smp(m, pr.path, methodGet, attrPortInfo, 0); err == nil && st == 0 {
					pr.pinfo = append([]byte(nil), m.buf[offSMPData:offSMPData+64]...)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		frontier = frontier[:0]
		for _, pr := range probes {
			if pr.err != nil {
				continue
			}
			id, ok := byGUID[pr.ni.NodeGUID]
			if !ok {
				id = newNode(pr)
				if pr.ni.NodeType == iba.NodeTypeSwitch {
					frontier = append(frontier, id)
				}
			}
			n := &nodes[id]
			lp := pr.ni.LocalPortNum
			if n.typ != iba.NodeTypeSwitch {
				if lp == 0 || lp > n.nports {
					continue
				}
				if n.epPath[lp] == nil {
					n.epPath[lp], n.pinfo[lp] = pr.path, pr.pinfo
				}
			}
			if pr.from >= 0 && int(lp) < len(n.links) {
				n.links[lp] = smLink{pr.from, pr.fromPort}
				nodes[pr.from].links[pr.fromPort] = smLink{id, lp}
			}
			if pr.from < 0 && n.typ != iba.NodeTypeSwitch {
				// The SM's own CA: explore out of the SM's port only.
				q := s.f.ports[s.port].num
				n.epPath[q] = []byte{}
				pendingSelf = append(pendingSelf, &probe{path: []byte{q}, from: id, fromPort: q})
			}
		}
		probes = probes[:0]
		probes = append(probes, pendingSelf...)
		pendingSelf = pendingSelf[:0]
		// Read every port of the new switches; probe the live links that
		// are not known yet.
		swProbes := make([][]*probe, len(frontier))
		err = s.parallel(ctx, len(frontier), func(m *msg, k int) error {
			id := frontier[k]
			n := &nodes[id]
			for q := 0; q <= int(n.nports); q++ {
				st, err := s.smp(m, n.path, methodGet, attrPortInfo, uint32(q))
				if err != nil || st != 0 {
					continue
				}
				n.pinfo[q] = append([]byte(nil), m.buf[offSMPData:offSMPData+64]...)
				if q == 0 || n.links[q].node >= 0 {
					continue
				}
				var pi iba.PortInfo
				pi.Unmarshal(n.pinfo[q])
				if pi.PortPhysicalState != iba.PhysPortStateLinkUp {
					continue
				}
				path := make([]byte, len(n.path)+1)
				copy(path, n.path)
				path[len(n.path)] = uint8(q)
				if len(path) > 63 {
					continue
				}
				swProbes[k] = append(swProbes[k], &probe{path: path, from: id, fromPort: uint8(q)})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for k, id := range frontier {
			n := &nodes[id]
			n.epPath[0] = n.path
			probes = append(probes, swProbes[k]...)
		}
	}
	// Switch indexes for routing.
	k := int32(0)
	for i := range nodes {
		if nodes[i].typ == iba.NodeTypeSwitch {
			nodes[i].sw = k
			k++
		}
	}
	return nodes, nil
}

// serve answers SMInfo (IBA 14.2.5.13) at the SM's port and swallows traps.
func (s *SM) serve(m *msg) int {
	b := m.buf[:]
	method := b[offMethod]
	if method == uint8(iba.MethodTrap) {
		// A notice (IBA 14.2.5.1): trap 128, a link changed state, makes
		// the SM sweep again; every notice goes on to the subscribers of
		// the SA. The trap is repressed so that its sender stops.
		s.traps.Add(1)
		var n iba.Notice
		if n.Unmarshal(b[offSMPData:]) == nil && n.IsGeneric == 1 && n.TrapNumber == 128 {
			s.requestResweep()
		}
		if a := s.sa.Load(); a != nil {
			a.report(append([]byte(nil), b[offSMPData:offSMPData+80]...))
		}
		b[offMethod] = methodRep
		binary.BigEndian.PutUint16(b[offStatus:], 0)
		return served
	}
	if method != methodGet && method != methodSet {
		setResponse(b, statusMethodUnsupp)
		return served
	}
	info := iba.SMInfo{
		GUID: s.guid, ActCount: s.actCount.Load(), Priority: s.priority,
		SMState: iba.SMState(s.state.Load()),
	}
	if method == methodSet {
		// Another SM handing over or asking to discover: this SM stays
		// master (IBA 14.4.1); the Set is acknowledged with the state.
		info.SMKey = 0
	}
	clear(b[offSMPData : offSMPData+64])
	info.MarshalTo(b[offSMPData:])
	setResponse(b, 0)
	return served
}

// SMState reports the state of the built-in SM, NotActive when none runs.
func (f *Fabric) SMState() iba.SMState {
	if s := f.sm.Load(); s != nil {
		return iba.SMState(s.state.Load())
	}
	return iba.SMStateNotActive
}
