package sim

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// Limits of the simulated devices, as ibsim reports them.
const (
	// LinearFDBCap is the default SwitchInfo:LinearFDBCap: LIDs 0 to
	// 0xBFFF, as ibsim 0.12 has it (the 0.10 in Debian bookworm reports
	// 30720; Options.LinearFDBCap gives that).
	LinearFDBCap = 0xC000
	// MulticastFDBCap is SwitchInfo:MulticastFDBCap.
	MulticastFDBCap = 1024
	caPKeyCap       = 64 // NodeInfo:PartitionCap of a CA
	swPKeyCap       = 8  // NodeInfo:PartitionCap of a switch (port 0)
	swEnfCap        = 64 // SwitchInfo:PartitionEnforcementCap
	caGUIDCap       = 32
	vlCap           = 4
	vlArbCap        = 8
	maxHops         = 64
	// LIDPermissive is the permissive LID (IBA 4.1.3).
	LIDPermissive = 0xFFFF
	// MaxUnicastLID is the last unicast LID (IBA 4.1.3).
	MaxUnicastLID = 0xBFFF
)

// ErrNoNode is returned for a node name or GUID that the fabric lacks.
var ErrNoNode = errors.New("sim: no such node")

// ErrNoPort is returned for a port number a node lacks.
var ErrNoPort = errors.New("sim: no such port")

type node struct {
	mu       sync.RWMutex
	typ      iba.NodeType
	numPorts uint8
	base     int32
	guid     iba.GUID
	sysGUID  iba.GUID
	vendorID uint32
	deviceID uint16
	desc     [64]byte
	sw       *switchState
	dead     atomic.Bool  // no answers, no forwarding (SetNodeDead)
	busy     atomic.Int64 // latency model: when the agent's queue drains (unix ns)
	queued   atomic.Int32 // latency model: requests waiting at the agent
}

type switchState struct {
	lft             []uint8 // grown by blocks of 64; missing entries are 0xFF
	lftTop          uint16
	mft             []uint16 // [block*portMasks+position][32] entries, lazily
	mftTop          uint16
	lifeTime        uint8
	portStateChange bool
	enhancedPort0   bool
	defaultPort     uint8
	defMcastPrim    uint8
	defMcastNotPrim uint8
	sl2vl           []byte // (in*(n+1)+out)*8, nil until a Set
}

// port holds one port's SMA state; all of it except the counters is
// guarded by its node's lock.
type port struct {
	node  int32
	num   uint8
	guid  iba.GUID
	peer  int32 // port index, -1 if not cabled
	state iba.PortState
	phys  iba.PhysPortState

	lid, smLID        uint16
	lmc, smSL         uint8
	mkey              uint64
	mkeyProtect       uint8
	mkeyLease         uint16
	mkeyViolations    uint16
	pkeyViolations    uint16
	qkeyViolations    uint16
	gidPrefix         uint64
	capMask           uint32
	capMask2          uint16
	widthEn, widthAct uint8
	speedEn, speedAct uint8
	extEn, extAct     uint8
	ext2En, ext2Act   uint8 // the second group (XDR); ext2En 0: the port has none
	mlnxEn, mlnxAct   uint8
	mlnxStateChange   uint8
	opVLs, hoqLife    uint8
	neighborMTU       iba.MTU
	vlHighLimit       uint8
	vlStall           uint8
	subnetTimeOut     uint8
	respTime          uint8
	led               uint8
	localPhyErrors    uint8
	linkDownDefault   uint8

	pkeys  []uint16   // nil: the default table, 0xFFFF at index 0
	guids  []iba.GUID // GUIDInfo beyond index 0, nil until a Set
	sl2vl  [8]byte    // CA ports and switch port 0
	vlarb  [2][16]byte
	vlarbS bool // vlarb set (else defaults)

	cut bool // the cable is pulled (SetLink): the link stays down

	sm *iba.SMInfo // another SM's SMInfo answered here (SetSMInfo)
	// cable is the widths the cable can carry (SetCableWidths), 0 for any.
	cable uint8
	// enfIn and enfOut are PortInfo:PartitionEnforcementInbound and
	// Outbound of a switch's external port, as set.
	enfIn, enfOut uint8

	pc   counters
	drop atomic.Uint32 // receive drop rate in percent, for error injection
}

// Fabric is a simulated subnet. All its methods are safe for concurrent use.
type Fabric struct {
	topo   *topo.Topology
	nodes  []node
	ports  []port
	ids    map[string]int32
	byGUID map[iba.GUID]int32 // node GUID -> node

	agents  atomic.Pointer[agentTable]
	agentMu sync.Mutex    // serializes agent table updates (not the forwarding path)
	nextID  atomic.Uint32 // agent IDs, used modulo 2^16

	sm     atomic.Pointer[SM]
	smMu   sync.Mutex // serializes RunSM's SM changes and Close
	closed bool

	lftCap int // SwitchInfo:LinearFDBCap, a multiple of 64

	ccs ccStore // congestion control settings of the nodes that were Set

	lat     atomic.Pointer[Latency]
	qdrops  atomic.Uint64
	delayed atomic.Uint64 // MADs the latency model delayed
	delayNS atomic.Int64  // the delays it gave them, in all
	trapSeq atomic.Uint32
}

// Options change how New builds a fabric.
type Options struct {
	// LinearFDBCap is what switches report as SwitchInfo:LinearFDBCap and
	// the size of their forwarding tables: LinearFDBCap when 0; rounded up
	// to a block of 64.
	LinearFDBCap int
}

// New builds a fabric from a topology: links come up to Init (LinkUp,
// as after training, awaiting an SM), unconnected ports are Down/Polling,
// and LIDs given in the topology are applied.
func New(t *topo.Topology) (*Fabric, error) { return NewWithOptions(t, Options{}) }

// NewWithOptions is New with options.
func NewWithOptions(t *topo.Topology, o Options) (*Fabric, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("building fabric: %w", err)
	}
	if o.LinearFDBCap == 0 {
		o.LinearFDBCap = LinearFDBCap
	}
	if o.LinearFDBCap < 0 || o.LinearFDBCap > LinearFDBCap {
		return nil, fmt.Errorf("building fabric: LinearFDBCap %d (1 to %d)", o.LinearFDBCap, LinearFDBCap)
	}
	f := &Fabric{
		lftCap: (o.LinearFDBCap + 63) &^ 63,
		topo:   t,
		nodes:  make([]node, len(t.Nodes)),
		ports:  make([]port, len(t.Ports)),
		ids:    make(map[string]int32, len(t.Nodes)),
		byGUID: make(map[iba.GUID]int32, len(t.Nodes)),
	}
	f.ccs.start = time.Now()
	f.agents.Store(&agentTable{byID: map[uint16]*agent{}, byPort: map[int32][]*agent{}})
	for i := range t.Nodes {
		tn := &t.Nodes[i]
		n := &f.nodes[i]
		n.typ, n.numPorts, n.base = tn.Type, tn.NumPorts, tn.PortBase
		n.guid, n.sysGUID = tn.NodeGUID, tn.SysImageGUID
		n.vendorID, n.deviceID = tn.VendorID, tn.DeviceID
		copy(n.desc[:], tn.Description())
		if tn.Type == iba.NodeTypeSwitch {
			n.sw = &switchState{enhancedPort0: tn.EnhancedPort0}
		}
		f.ids[tn.ID] = int32(i)
		f.byGUID[tn.NodeGUID] = int32(i)
		for p := 0; p <= int(tn.NumPorts); p++ {
			idx := int(tn.PortBase) + p
			f.initPort(int32(i), uint8(p), &t.Ports[idx], &f.ports[idx])
		}
		f.initExtSpeeds2(n)
		if n.sw != nil {
			p0 := &f.ports[n.base]
			p0.lid, p0.lmc = tn.LID, tn.LMC
		}
	}
	for i := range f.ports {
		p := &f.ports[i]
		if p.peer >= 0 {
			f.linkUp(int32(i), p.peer)
		}
	}
	return f, nil
}

func (f *Fabric) initPort(n int32, num uint8, tp *topo.Port, p *port) {
	nd := &f.nodes[n]
	p.node, p.num, p.guid = n, num, tp.GUID
	p.peer = -1
	if tp.Peer >= 0 {
		p.peer = f.topo.Nodes[tp.Peer].PortBase + int32(tp.PeerPort)
	}
	p.widthEn, p.speedEn, p.extEn, p.ext2En, p.mlnxEn = tp.Width, tp.Speed, tp.SpeedExt, tp.SpeedExt2, tp.MlnxSpeed
	p.widthAct, p.speedAct = iba.LinkWidth4X, iba.LinkSpeedSDR
	p.state, p.phys = iba.PortStateDown, iba.PhysPortStatePolling
	p.opVLs, p.vlStall = vlCap, 7
	p.neighborMTU = iba.MTU2048
	p.linkDownDefault = 2
	p.sl2vl = defaultSL2VL
	isSM := nd.typ == iba.NodeTypeSwitch && num == 0
	if nd.typ != iba.NodeTypeSwitch || isSM {
		p.gidPrefix = 0xfe80000000000000
		p.mkeyLease = 0xFF9
		p.subnetTimeOut = 31
		p.capMask2 = 0x30
		p.lid, p.lmc = tp.LID, tp.LMC
	}
	switch {
	case isSM:
		p.capMask = 0xC048
		p.respTime = 8
		p.state, p.phys = iba.PortStateActive, iba.PhysPortStateLinkUp
		p.neighborMTU, p.vlStall = iba.MTU256, 0
	case nd.typ != iba.NodeTypeSwitch:
		p.capMask = 0x0050C048
	case tp.Peer < 0:
		p.localPhyErrors = 4 // what ibsim reports on a switch port without a cable
	}
}

// initExtSpeeds2 announces the second group of extended speeds (XDR) in
// CapabilityMask2 where a port has it: on the port of a CA or router, and
// on a switch's port 0 when any of its ports has it, since port 0's masks
// speak for the switch (IBA 14.2.5.6). Ports without XDR report what
// ibsim reports.
func (f *Fabric) initExtSpeeds2(n *node) {
	const xdr = iba.PortCap2IsExtendedSpeeds2Supported | iba.PortCap2IsLinkSpeedXDRSupported
	has := false
	for p := 0; p <= int(n.numPorts); p++ {
		pt := &f.ports[int(n.base)+p]
		if pt.ext2En == 0 {
			continue
		}
		has = true
		if n.sw == nil {
			pt.capMask2 |= xdr
		}
	}
	if n.sw != nil && has {
		f.ports[n.base].capMask2 |= xdr
	}
}

// linkSpeeds works out the active speeds of a link from what both ends
// enable: the fastest classic speed, and the fastest extended one, XDR
// (the second group) before the first group's, whose active field is then
// 0.
func linkSpeeds(pa, pb *port) (s, e, e2 uint8) {
	s = highestBit(pa.speedEn&pb.speedEn, []uint8{iba.LinkSpeedQDR, iba.LinkSpeedDDR, iba.LinkSpeedSDR})
	if e2 = pa.ext2En & pb.ext2En & iba.LinkSpeedExt2XDR; e2 == 0 {
		e = highestBit(pa.extEn&pb.extEn, []uint8{iba.LinkSpeedExtNDR, iba.LinkSpeedExtHDR, iba.LinkSpeedExtEDR, iba.LinkSpeedExtFDR})
	}
	return s, e, e2
}

// defaultSL2VL maps SL i to VL i and SL 15 to VL 7 (ibsim's table).
var defaultSL2VL = [8]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xe7}

// linkUp trains the link between ports a and b: both go to Init and
// LinkUp with the best width and speed both enable. Called with no locks.
func (f *Fabric) linkUp(a, b int32) {
	pa, pb := &f.ports[a], &f.ports[b]
	if pb.node < pa.node {
		pa, pb = pb, pa // lock in node order: two flaps cannot deadlock
	}
	na, nb := &f.nodes[pa.node], &f.nodes[pb.node]
	na.mu.Lock()
	if nb != na {
		nb.mu.Lock()
	}
	w := highestBit(pa.widthEn&pb.widthEn&cableWidths(pa), []uint8{iba.LinkWidth12X, iba.LinkWidth8X, iba.LinkWidth4X, iba.LinkWidth2X, iba.LinkWidth1X})
	s, e, e2 := linkSpeeds(pa, pb)
	m := pa.mlnxEn & pb.mlnxEn & 1
	if w == 0 {
		w = iba.LinkWidth1X
	}
	if s == 0 {
		s = iba.LinkSpeedSDR
	}
	for _, p := range []*port{pa, pb} {
		p.widthAct, p.speedAct, p.extAct, p.ext2Act, p.mlnxAct = w, s, e, e2, m
		p.state, p.phys = iba.PortStateInit, iba.PhysPortStateLinkUp
	}
	if na.sw != nil {
		na.sw.portStateChange = true
	}
	if nb.sw != nil {
		nb.sw.portStateChange = true
	}
	if nb != na {
		nb.mu.Unlock()
	}
	na.mu.Unlock()
}

func highestBit(v uint8, order []uint8) uint8 {
	for _, b := range order {
		if v&b != 0 {
			return b
		}
	}
	return 0
}

// NodeCount returns the number of nodes.
func (f *Fabric) NodeCount() int { return len(f.nodes) }

// Topology returns the topology the fabric was built from; it must not be
// modified.
func (f *Fabric) Topology() *topo.Topology { return f.topo }

// portIndex resolves a node name and port number to a port index. Port 0
// names a switch's management port; for a CA it is an error.
func (f *Fabric) portIndex(name string, portNum int) (int32, error) {
	n, ok := f.ids[name]
	if !ok {
		return 0, fmt.Errorf("%w: %q", ErrNoNode, name)
	}
	nd := &f.nodes[n]
	if portNum < 0 || portNum > int(nd.numPorts) || (portNum == 0 && nd.sw == nil) {
		return 0, fmt.Errorf("%w: %q has ports 1 to %d", ErrNoPort, name, nd.numPorts)
	}
	return nd.base + int32(portNum), nil
}

// owns reports whether LID l addresses port p (its base LID and LMC
// range); a switch's ports are all addressed through port 0's LID.
// Caller holds the node's read lock.
func (f *Fabric) owns(p *port, l uint16) bool {
	if p.lid == 0 {
		return false
	}
	return l >= p.lid && uint32(l) < uint32(p.lid)+1<<p.lmc
}

// PortState returns a port's logical and physical state, LID and LMC.
func (f *Fabric) PortState(name string, portNum int) (iba.PortState, iba.PhysPortState, uint16, uint8, error) {
	i, err := f.portIndex(name, portNum)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	p := &f.ports[i]
	nd := &f.nodes[p.node]
	nd.mu.RLock()
	defer nd.mu.RUnlock()
	return p.state, p.phys, p.lid, p.lmc, nil
}

// FindNode resolves a node by its topology id or, failing that, by its
// NodeDescription (as ibsim resolves SIM_HOST), and returns its id and the
// end port a client attaches to: 0 for a switch, 1 otherwise.
func (f *Fabric) FindNode(name string) (id string, port int, ok bool) {
	n, ok := f.ids[name]
	if !ok {
		for i := range f.topo.Nodes {
			if f.topo.Nodes[i].Description() == name {
				n, ok = int32(i), true
				break
			}
		}
	}
	if !ok {
		return "", 0, false
	}
	if f.nodes[n].sw == nil {
		port = 1
	}
	return f.topo.Nodes[n].ID, port, true
}

// DefaultNode is the node a client without a name attaches to: the first
// in the topology, as in ibsim.
func (f *Fabric) DefaultNode() (id string, port int) {
	if len(f.nodes) == 0 {
		return "", 0
	}
	id, port, _ = f.FindNode(f.topo.Nodes[0].ID)
	return id, port
}
