package subnet

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/namemap"
)

// AttrSize is the size of an SMP's data field (IBA 14.2.1.1): every
// attribute the database keeps is stored as these 64 raw bytes.
const AttrSize = 64

// MaxHops is the longest directed route an SMP can take (IBA 14.2.2: the
// initial path has 64 entries, the first unused).
const MaxHops = 63

// Unicast LIDs run from 1 to 0xBFFF; 0xC000 and up are multicast (IBA 4.1.3).
const (
	maxUnicastLID  = 0xbfff
	firstMulticast = 0xc000
)

// ErrInvalid is matched (errors.Is) by every error about data that cannot
// go into a Subnet: short attribute data, port numbers out of range, a
// node whose type or port count changed.
var ErrInvalid = errors.New("subnet: invalid data")

// MaxPorts is the most ports a node can have: port numbers run from 1 to
// 254, and 255 is reserved (IBA 14.2.5.6: a PortInfo attribute modifier
// names ports 0 to 254).
const MaxPorts = 254

// checkNode is the one rule for what a node may be, applied alike by
// AddNode, the readers of every file format and their writers, so that
// whatever loads can be written back: a CA, switch or router with 0 to
// MaxPorts ports (a switch has port 0 besides).
func checkNode(guid iba.GUID, typ iba.NodeType, numPorts int) error {
	if typ < iba.NodeTypeCA || typ > iba.NodeTypeRouter {
		return invalid("node %v: NodeType %d", guid, typ)
	}
	if numPorts < 0 || numPorts > MaxPorts {
		return invalid("node %v: %d ports, more than the %d a node can have", guid, numPorts, MaxPorts)
	}
	return nil
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// DRPath is a directed route as the out ports taken hop by hop, without the
// leading 0 of the SMP's InitialPath (IBA 14.2.2). The empty path is the
// start node itself.
type DRPath []uint8

// String gives the spelling of infiniband-diags, "0" for the start node
// and "0,1,5" for two hops.
func (p DRPath) String() string {
	b := make([]byte, 0, 2+4*len(p))
	b = append(b, '0')
	for _, h := range p {
		b = append(b, ',')
		b = strconv.AppendUint(b, uint64(h), 10)
	}
	return string(b)
}

// Extend returns a new path one hop longer, leaving p unchanged.
func (p DRPath) Extend(port uint8) DRPath {
	q := make(DRPath, len(p)+1)
	copy(q, p)
	q[len(p)] = port
	return q
}

// ParseDRPath reads "0,1,5" (the leading 0 optional, as in smpquery -D).
func ParseDRPath(s string) (DRPath, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, invalid("empty DR path")
	}
	parts := strings.Split(s, ",")
	if parts[0] == "0" {
		parts = parts[1:]
	}
	if len(parts) > MaxHops {
		return nil, invalid("DR path %q: more than %d hops", s, MaxHops)
	}
	p := make(DRPath, 0, len(parts))
	for _, f := range parts {
		v, err := strconv.ParseUint(strings.TrimSpace(f), 10, 8)
		if err != nil || v == 0 {
			return nil, invalid("DR path %q: hop %q is not a port 1..255", s, f)
		}
		p = append(p, uint8(v))
	}
	return p, nil
}

// Node is a switch, channel adapter or router.
type Node struct {
	GUID     iba.GUID
	Type     iba.NodeType
	NumPorts int
	// Info is the NodeInfo data as received (from the node's first reply).
	Info [AttrSize]byte
	// Desc is the NodeDescription data, zero until HasDesc.
	Desc    [AttrSize]byte
	HasDesc bool
	// SwitchInfo is a switch's SwitchInfo data, zero until HasSwitchInfo.
	SwitchInfo    [AttrSize]byte
	HasSwitchInfo bool
	// SMALID and SMALMC are a switch's port 0 LID and LMC, the address of
	// its management port (IBA 18.2.4.1); EnhancedSP0 is
	// SwitchInfo:EnhancedPort0.
	SMALID      uint16
	SMALMC      uint8
	EnhancedSP0 bool
	// Path is the directed route on which the node was first found.
	Path DRPath
	// Ports is indexed by port number, 0 to NumPorts; a nil entry is a port
	// nothing is known about yet.
	Ports []*Port

	// LFT is a switch's linear forwarding table by LID, as far as read;
	// MFT its multicast port masks by position (16 ports each) and by
	// MLID - 0xC000.
	LFT []uint8
	MFT [][]uint16

	index int // place in discovery order
}

// Index is the node's place in discovery order, from 0.
func (n *Node) Index() int { return n.index }

// NodeInfo decodes Info.
func (n *Node) NodeInfo() iba.NodeInfo {
	var ni iba.NodeInfo
	_ = ni.Unmarshal(n.Info[:])
	return ni
}

// DecodeSwitchInfo decodes SwitchInfo (zero until HasSwitchInfo).
func (n *Node) DecodeSwitchInfo() iba.SwitchInfo {
	var si iba.SwitchInfo
	_ = si.Unmarshal(n.SwitchInfo[:])
	return si
}

// Description is the NodeDescription as infiniband-diags shows it: up to
// the first NUL, every byte that is not printable ASCII made a space
// (util/node_name_map.c: clean_nodedesc).
func (n *Node) Description() string { return namemap.Clean(n.Desc[:]) }

// Port returns port num, nil if unknown or out of range.
func (n *Node) Port(num int) *Port {
	if num < 0 || num >= len(n.Ports) {
		return nil
	}
	return n.Ports[num]
}

// EndPort is the port that carries the node's LID and GUID as an end
// node: port 0 of a switch (IBA 18.2.4.1), else the lowest-numbered port
// with PortInfo.
func (n *Node) EndPort() *Port {
	if n.Type == iba.NodeTypeSwitch {
		return n.Port(0)
	}
	for _, p := range n.Ports {
		if p != nil && p.HasInfo {
			return p
		}
	}
	return nil
}

// Port is one port of a node.
type Port struct {
	Node *Node
	Num  int
	// GUID is the port GUID; every port of a switch carries the switch's
	// port 0 GUID (IBA 14.2.5.3).
	GUID iba.GUID
	// ExtNum is the front-panel port number of a chassis line board
	// (libibnetdisc's ext_portnum), 0 when not known.
	ExtNum int
	// BaseLID and LMC give the LID range; a switch's ports 1..N repeat
	// its port 0 values.
	BaseLID uint16
	LMC     uint8
	// Info is the PortInfo data, valid when HasInfo.
	Info    [AttrSize]byte
	HasInfo bool
	// ExtInfo is MlnxExtPortInfo (vendor attribute 0xFF90), when HasExtInfo.
	ExtInfo    [AttrSize]byte
	HasExtInfo bool
	// Remote is the port at the other end of the link, nil if none known.
	Remote *Port

	// seq orders the first PortInfo of every port: libibnetdisc writes
	// ports in the order of its port hash chains, which are newest first.
	seq uint64
}

// PortInfo decodes Info.
func (p *Port) PortInfo() iba.PortInfo {
	var pi iba.PortInfo
	_ = pi.Unmarshal(p.Info[:])
	return pi
}

// LIDs gives the first and last LID of the port's range (IBA 7.11.1:
// 2^LMC LIDs from the base LID).
func (p *Port) LIDs() (first, last uint16) {
	if p.BaseLID == 0 {
		return 0, 0
	}
	return p.BaseLID, p.BaseLID + uint16(1)<<p.LMC - 1
}

// Unreachable is a directed route that got no usable answer.
type Unreachable struct {
	// Path is the route that failed; Via the known port it leaves the
	// discovered part of the subnet through, nil if not known.
	Path DRPath
	Via  *Port
	// Reason is the error of the last try.
	Reason error
}

// Subnet is the topology database. Its methods are safe for concurrent use
// (a discovery engine calls them from many goroutines); the Node and Port
// values it hands out are shared, so read their fields once filling is
// done or from the goroutine that filled them.
type Subnet struct {
	mu sync.RWMutex

	nodes      []*Node
	byNodeGUID map[iba.GUID]*Node
	byPortGUID map[iba.GUID]*Port
	byLID      map[uint16]*Port
	byName     map[string][]*Node
	from       *Node
	fromPort   int
	portSeq    uint64
	unreach    []Unreachable

	// MaxHopsDiscovered is the depth of the discovery (ibnetdiscover -m);
	// MADs the number of SMPs it took.
	MaxHopsDiscovered int
	MADs              int
}

// New returns an empty subnet.
func New() *Subnet {
	return &Subnet{
		byNodeGUID: map[iba.GUID]*Node{},
		byPortGUID: map[iba.GUID]*Port{},
		byLID:      map[uint16]*Port{},
		byName:     map[string][]*Node{},
	}
}

// AddNode records a NodeInfo reply (at least its 40 defined bytes)
// received on path. The first node added is where discovery started. A
// node already known by GUID is not changed, only the port the reply came
// in through is recorded (a node is reached once per link). It returns the
// node, the port named by NodeInfo:LocalPortNum, and whether the node is
// new.
func (s *Subnet) AddNode(info []byte, path DRPath) (node *Node, port *Port, isNew bool, err error) {
	if len(info) < 40 {
		return nil, nil, false, invalid("NodeInfo of %d bytes, want 40", len(info))
	}
	var ni iba.NodeInfo
	if err := ni.Unmarshal(info); err != nil {
		return nil, nil, false, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := checkNode(ni.NodeGUID, ni.NodeType, int(ni.NumPorts)); err != nil {
		return nil, nil, false, err
	}
	local := int(ni.LocalPortNum)
	if local > int(ni.NumPorts) || (local == 0 && ni.NodeType != iba.NodeTypeSwitch) {
		return nil, nil, false, invalid("node %v: LocalPortNum %d of %d ports", ni.NodeGUID, local, ni.NumPorts)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.byNodeGUID[ni.NodeGUID]
	if n == nil {
		n = s.newNodeLocked(ni.NodeGUID, ni.NodeType, int(ni.NumPorts))
		copy(n.Info[:], info)
		n.Path = append(DRPath(nil), path...)
		isNew = true
		if s.from == nil {
			s.from, s.fromPort = n, local
		}
	} else if n.Type != ni.NodeType || n.NumPorts != int(ni.NumPorts) {
		return nil, nil, false, invalid("node %v: was type %d with %d ports, now type %d with %d", ni.NodeGUID, n.Type, n.NumPorts, ni.NodeType, ni.NumPorts)
	}
	p := n.Ports[local]
	if p == nil {
		p = &Port{Node: n, Num: local}
		n.Ports[local] = p
	}
	p.GUID = ni.PortGUID
	s.indexPortGUIDLocked(p)
	return n, p, isNew, nil
}

// newNodeLocked makes and indexes an empty node.
func (s *Subnet) newNodeLocked(guid iba.GUID, typ iba.NodeType, numPorts int) *Node {
	n := &Node{GUID: guid, Type: typ, NumPorts: numPorts, Ports: make([]*Port, numPorts+1), index: len(s.nodes)}
	s.nodes = append(s.nodes, n)
	s.byNodeGUID[guid] = n
	return n
}

func (s *Subnet) indexPortGUIDLocked(p *Port) {
	if p.GUID == 0 {
		return
	}
	old := s.byPortGUID[p.GUID]
	// A switch's ports share one GUID: port 0 stands for all of them.
	if old == nil || (p.Num == 0 && old.Node == p.Node) {
		s.byPortGUID[p.GUID] = p
	}
}

// SetNodeDescription records a node's NodeDescription data.
func (s *Subnet) SetNodeDescription(n *Node, desc []byte) error {
	if len(desc) < AttrSize {
		return invalid("node %v: NodeDescription of %d bytes, want %d", n.GUID, len(desc), AttrSize)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n.HasDesc {
		s.unindexNameLocked(n)
	}
	copy(n.Desc[:], desc)
	n.HasDesc = true
	name := n.Description()
	s.byName[name] = append(s.byName[name], n)
	return nil
}

func (s *Subnet) unindexNameLocked(n *Node) {
	name := n.Description()
	l := s.byName[name]
	for i, m := range l {
		if m == n {
			l = append(l[:i:i], l[i+1:]...)
			break
		}
	}
	if len(l) == 0 {
		delete(s.byName, name)
	} else {
		s.byName[name] = l
	}
}

// SetSwitchInfo records a switch's SwitchInfo data (IBA 14.2.5.4).
func (s *Subnet) SetSwitchInfo(n *Node, info []byte) error {
	if len(info) < AttrSize {
		return invalid("node %v: SwitchInfo of %d bytes, want %d", n.GUID, len(info), AttrSize)
	}
	if n.Type != iba.NodeTypeSwitch {
		return invalid("node %v: SwitchInfo for a node of type %d", n.GUID, n.Type)
	}
	var si iba.SwitchInfo
	_ = si.Unmarshal(info)
	s.mu.Lock()
	defer s.mu.Unlock()
	copy(n.SwitchInfo[:], info)
	n.HasSwitchInfo = true
	n.EnhancedSP0 = si.EnhancedPort0 != 0
	return nil
}

// SetPortInfo records the PortInfo data of port num and returns the port.
// As in libibnetdisc, a switch's port 0 gives the switch its LID and LMC,
// which its other ports carry too.
func (s *Subnet) SetPortInfo(n *Node, num int, info []byte) (*Port, error) {
	if len(info) < AttrSize {
		return nil, invalid("node %v port %d: PortInfo of %d bytes, want %d", n.GUID, num, len(info), AttrSize)
	}
	if num < 0 || num > n.NumPorts || (num == 0 && n.Type != iba.NodeTypeSwitch) {
		return nil, invalid("node %v: PortInfo for port %d of %d", n.GUID, num, n.NumPorts)
	}
	var pi iba.PortInfo
	_ = pi.Unmarshal(info)
	s.mu.Lock()
	defer s.mu.Unlock()
	p := n.Ports[num]
	if p == nil {
		p = &Port{Node: n, Num: num, GUID: n.NodeInfo().PortGUID}
		n.Ports[num] = p
		s.indexPortGUIDLocked(p)
	}
	s.unindexLIDsLocked(p)
	copy(p.Info[:], info)
	if !p.HasInfo {
		s.portSeq++
		p.seq = s.portSeq
		p.HasInfo = true
	}
	p.BaseLID, p.LMC = pi.LID, pi.LMC
	switch {
	case n.Type != iba.NodeTypeSwitch:
		s.indexLIDsLocked(p)
	case num == 0:
		n.SMALID, n.SMALMC = pi.LID, pi.LMC
		for _, q := range n.Ports[1:] {
			if q != nil && q.HasInfo {
				q.BaseLID, q.LMC = n.SMALID, n.SMALMC
			}
		}
		s.indexLIDsLocked(p)
	default:
		p.BaseLID, p.LMC = n.SMALID, n.SMALMC
	}
	return p, nil
}

// indexLIDsLocked maps every LID of p's range to it; the first port to
// claim a LID keeps it, as in libibnetdisc (a duplicate LID is a subnet
// fault that Diff and the SM report, not this index).
func (s *Subnet) indexLIDsLocked(p *Port) {
	first, last := p.LIDs()
	if first == 0 || first > maxUnicastLID {
		return
	}
	for lid := uint32(first); lid <= uint32(last) && lid <= maxUnicastLID; lid++ {
		if _, ok := s.byLID[uint16(lid)]; !ok {
			s.byLID[uint16(lid)] = p
		}
	}
}

func (s *Subnet) unindexLIDsLocked(p *Port) {
	first, last := p.LIDs()
	for lid := uint32(first); first != 0 && lid <= uint32(last); lid++ {
		if s.byLID[uint16(lid)] == p {
			delete(s.byLID, uint16(lid))
		}
	}
}

// SetMlnxExtPortInfo records Mellanox's extended port info (vendor SMP
// attribute 0xFF90) of port num, which tells FDR10 links from QDR ones.
func (s *Subnet) SetMlnxExtPortInfo(n *Node, num int, info []byte) error {
	if len(info) < AttrSize {
		return invalid("node %v port %d: MlnxExtPortInfo of %d bytes, want %d", n.GUID, num, len(info), AttrSize)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := n.Port(num)
	if p == nil {
		return invalid("node %v: MlnxExtPortInfo for port %d with no PortInfo", n.GUID, num)
	}
	copy(p.ExtInfo[:], info)
	p.HasExtInfo = true
	return nil
}

// Link records that a and b are the two ends of one link. Ports linked
// elsewhere before are unlinked first, as a link seen later is the newer
// truth (a cable moved during discovery).
func (s *Subnet) Link(a, b *Port) error {
	if a == nil || b == nil {
		return invalid("link with a missing end")
	}
	if a == b {
		return invalid("node %v port %d linked to itself", a.Node.GUID, a.Num)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.Remote != nil && a.Remote != b {
		a.Remote.Remote = nil
	}
	if b.Remote != nil && b.Remote != a {
		b.Remote.Remote = nil
	}
	a.Remote, b.Remote = b, a
	return nil
}

// MarkUnreachable records a directed route that got no answer, the port it
// left the known subnet through (nil if none) and why.
func (s *Subnet) MarkUnreachable(path DRPath, via *Port, reason error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unreach = append(s.unreach, Unreachable{Path: append(DRPath(nil), path...), Via: via, Reason: reason})
}

// Unreachable lists the routes MarkUnreachable recorded, oldest first.
func (s *Subnet) Unreachable() []Unreachable {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]Unreachable(nil), s.unreach...)
}

// SetLFTBlock records block blk (LIDs 64*blk to 64*blk+63) of a switch's
// linear forwarding table (IBA 14.2.5.10).
func (s *Subnet) SetLFTBlock(n *Node, blk int, data []byte) error {
	if len(data) < AttrSize {
		return invalid("node %v: LFT block of %d bytes", n.GUID, len(data))
	}
	if blk < 0 || blk > maxUnicastLID/64 {
		return invalid("node %v: LFT block %d out of range", n.GUID, blk)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	need := (blk + 1) * 64
	if len(n.LFT) < need {
		grown := make([]uint8, need)
		for i := range grown {
			grown[i] = 0xff // IBA 14.2.5.10: 255 is "no port", the unread default
		}
		copy(grown, n.LFT)
		n.LFT = grown
	}
	copy(n.LFT[blk*64:], data[:64])
	return nil
}

// LFTPort is the out port of a switch for lid; ok is false when that part
// of the table was not read or the entry is 255 (no route).
func (n *Node) LFTPort(lid uint16) (port uint8, ok bool) {
	if int(lid) >= len(n.LFT) || n.LFT[lid] == 0xff {
		return 0, false
	}
	return n.LFT[lid], true
}

// SetMFTBlock records block blk (MLIDs 0xC000+32*blk ...) of position pos
// (ports 16*pos to 16*pos+15) of a switch's multicast forwarding table (IBA
// 14.2.5.12: attribute modifier = position<<28 | block).
func (s *Subnet) SetMFTBlock(n *Node, blk, pos int, data []byte) error {
	if len(data) < AttrSize {
		return invalid("node %v: MFT block of %d bytes", n.GUID, len(data))
	}
	if blk < 0 || blk >= 512 || pos < 0 || pos > 15 {
		return invalid("node %v: MFT block %d position %d out of range", n.GUID, blk, pos)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(n.MFT) <= pos {
		n.MFT = append(n.MFT, nil)
	}
	if need := (blk + 1) * 32; len(n.MFT[pos]) < need {
		grown := make([]uint16, need)
		copy(grown, n.MFT[pos])
		n.MFT[pos] = grown
	}
	for i := 0; i < 32; i++ {
		n.MFT[pos][blk*32+i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
	}
	return nil
}

// MFTPorts gives the ports a switch forwards mlid to, as far as read.
func (n *Node) MFTPorts(mlid uint16) []int {
	if mlid < firstMulticast {
		return nil
	}
	i := int(mlid - firstMulticast)
	var ports []int
	for pos, masks := range n.MFT {
		if i >= len(masks) {
			continue
		}
		for b := 0; b < 16; b++ {
			if masks[i]&(1<<b) != 0 {
				ports = append(ports, pos*16+b)
			}
		}
	}
	return ports
}

// Nodes lists every node in discovery order.
func (s *Subnet) Nodes() []*Node {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]*Node(nil), s.nodes...)
}

// NodesOfType lists the nodes of one type in discovery order.
func (s *Subnet) NodesOfType(t iba.NodeType) []*Node {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var l []*Node
	for _, n := range s.nodes {
		if n.Type == t {
			l = append(l, n)
		}
	}
	return l
}

// Len is the number of nodes.
func (s *Subnet) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.nodes)
}

// Node finds a node by node GUID.
func (s *Subnet) Node(guid iba.GUID) *Node {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.byNodeGUID[guid]
}

// PortByGUID finds an end port by port GUID (port 0 for a switch).
func (s *Subnet) PortByGUID(guid iba.GUID) *Port {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.byPortGUID[guid]
}

// PortByLID finds the end port that owns lid, any LID of its LMC range.
func (s *Subnet) PortByLID(lid uint16) *Port {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.byLID[lid]
}

// NodesByName finds the nodes whose description (as Description gives it)
// is name, in discovery order.
func (s *Subnet) NodesByName(name string) []*Node {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]*Node(nil), s.byName[name]...)
}

// NodeAt follows a directed route from the start node over the known links
// (libibnetdisc's ibnd_find_port_dr) and returns the node it ends at.
func (s *Subnet) NodeAt(path DRPath) *Node {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.from
	for _, h := range path {
		if n == nil {
			return nil
		}
		p := n.Port(int(h))
		if p == nil || p.Remote == nil {
			return nil
		}
		n = p.Remote.Node
	}
	return n
}

// From is the node discovery started at and its port number (0 if not
// known, as after loading a cache, which does not keep it).
func (s *Subnet) From() (*Node, int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.from, s.fromPort
}

// SetFrom names the start node and port.
func (s *Subnet) SetFrom(n *Node, port int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.from, s.fromPort = n, port
}

// IBNDOrder are the nodes keep accepts (all with nil) in the order
// libibnetdisc lists them, the reverse of their discovery: the order the C
// tools print nodes in.
func (s *Subnet) IBNDOrder(keep func(*Node) bool) []*Node {
	all := s.Nodes()
	l := make([]*Node, 0, len(all))
	for i := len(all) - 1; i >= 0; i-- {
		if keep == nil || keep(all[i]) {
			l = append(l, all[i])
		}
	}
	return l
}
