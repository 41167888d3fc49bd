package subnet

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sched"
)

// Reading switches' forwarding tables (python-rdma's Switch.get_switch_fdb,
// infiniband-diags' ibroute and dump_fts): the LinearForwardingTable (IBA
// 14.2.5.10) and MulticastForwardingTable (14.2.5.12) blocks of a switch,
// read by SubnGet many at a time and recorded with SetLFTBlock and
// SetMFTBlock.

// Entries of one table block: an LFT block holds the out ports of 64 LIDs
// (IBA 14.2.5.10); an MFT block the port masks of 32 MLIDs for one
// position of 16 ports (14.2.5.12).
const (
	LIDsPerLFTBlock     = 64
	MLIDsPerMFTBlock    = 32
	PortsPerMFTPosition = 16
)

// Limits of the tables (IBA 4.1.3: unicast LIDs up to 0xBFFF, multicast
// from 0xC000 to 0xFFFE; 0xFFFF is the permissive LID).
const (
	MaxUnicastLID   = maxUnicastLID
	MinMulticastLID = firstMulticast
	MaxMulticastLID = 0xfffe
)

// ErrNotSwitch matches the error about a node that has no forwarding
// tables because it is not a switch.
var ErrNotSwitch = errors.New("subnet: not a switch")

// BlockRange is the blocks First to End-1 of a forwarding table. Block b of
// an LFT holds LIDs 64b to 64b+63; block b of an MFT holds MLIDs
// 0xC000+32b to 0xC000+32b+31, the attribute modifier's block number (IBA
// 14.2.5.12). An empty range (End <= First) reads nothing.
type BlockRange struct{ First, End int }

// Len is the number of blocks.
func (r BlockRange) Len() int { return max(r.End-r.First, 0) }

// LFTRange is the LFT blocks that hold LIDs first to last.
func LFTRange(first, last int) BlockRange {
	if last < first || last < 0 {
		return BlockRange{}
	}
	first, last = max(first, 0), min(last, MaxUnicastLID)
	return BlockRange{first / LIDsPerLFTBlock, last/LIDsPerLFTBlock + 1}
}

// MFTRange is the MFT blocks that hold MLIDs first to last.
func MFTRange(first, last int) BlockRange {
	first, last = max(first, MinMulticastLID), min(last, MaxMulticastLID)
	if last < first {
		return BlockRange{}
	}
	return BlockRange{(first - MinMulticastLID) / MLIDsPerMFTBlock, (last-MinMulticastLID)/MLIDsPerMFTBlock + 1}
}

// WholeLFT is the range of a switch's LFT that SwitchInfo:LinearFDBTop
// (IBA 14.2.5.4) says is in use: LIDs 0 to LinearFDBTop.
func WholeLFT(n *Node) BlockRange {
	si := n.DecodeSwitchInfo()
	return LFTRange(0, int(si.LinearFDBTop))
}

// WholeMFT is the range of a switch's MFT in use: MLIDs 0xC000 up to
// MulticastFDBTop, or, where the switch leaves it 0 (not supported, IBA
// 14.2.5.4), as many as MulticastFDBCap says it holds.
func WholeMFT(n *Node) BlockRange {
	si := n.DecodeSwitchInfo()
	last := MinMulticastLID + int(si.MulticastFDBCap) - 1
	if top := int(si.MulticastFDBTop); top != 0 && top < last {
		last = top
	}
	return MFTRange(MinMulticastLID, last)
}

// MFTPositions is the number of port positions of a switch's MFT: enough
// for ports 0 to NumPorts, 16 each.
func MFTPositions(n *Node) int { return n.NumPorts/PortsPerMFTPosition + 1 }

// TableOptions says which blocks of a switch's tables ReadTables reads, and
// how.
type TableOptions struct {
	// LFT and MFT choose the blocks of each switch's linear and multicast
	// forwarding tables to read; nil reads none of that table. WholeLFT
	// and WholeMFT read what SwitchInfo says is in use. Every position of
	// an MFT block is read (MFTPositions).
	LFT, MFT func(n *Node) BlockRange
	// Target addresses a switch. Nil sends SMPs on the directed route
	// Node.Path from the local port, with MKey: right for a subnet that
	// Discover found from the local port.
	Target func(n *Node) mad.Target
	MKey   uint64
	// PerSwitch bounds the SMPs in flight to one switch (default 4: a
	// switch's SMA answers one at a time, so more only queue there);
	// Switches the switches read at once (default 16).
	PerSwitch, Switches int
}

const (
	defaultPerSwitch = 4
	defaultSwitches  = 16
)

// AttrError is a SubnGet of one attribute of a switch that failed.
type AttrError struct {
	// Attr is the attribute ID (iba.AttrIDLinearForwardingTable, ...) and
	// Mod its attribute modifier.
	Attr uint16
	Mod  uint32
	Err  error
}

func (e *AttrError) Error() string {
	return fmt.Sprintf("SubnGet(%s, modifier %#x): %v", attrLabel(e.Attr), e.Mod, e.Err)
}

func (e *AttrError) Unwrap() error { return e.Err }

// TableError is what could not be read of one switch's tables: the
// SwitchInfo the blocks depend on (nothing else was read then), or the
// blocks listed, in the order of the tables (LFT blocks, then MFT blocks by
// block and position). The other blocks were read and recorded.
type TableError struct {
	Node   *Node
	Failed []*AttrError
}

func (e *TableError) Error() string {
	if len(e.Failed) == 1 {
		return fmt.Sprintf("switch %v: %v", e.Node.GUID, e.Failed[0])
	}
	return fmt.Sprintf("switch %v: %d reads failed, first %v", e.Node.GUID, len(e.Failed), e.Failed[0])
}

// Unwrap gives the failed reads.
func (e *TableError) Unwrap() []error {
	l := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		l[i] = f
	}
	return l
}

// MFTModifier is the attribute modifier of MFT block block at position pos
// (IBA 14.2.5.12: the position in bits 31..28, the block in 8..0).
func MFTModifier(block, pos int) uint32 { return uint32(pos)<<28 | uint32(block) }

// ReadSwitch reads what infiniband-diags' ibroute checks of a switch
// before its tables: NodeInfo (IBA 14.2.5.3) and NodeDescription
// (14.2.5.2) of the node at t, and, when it is a switch, its SwitchInfo
// (14.2.5.4). It records the node, found on path (nil for a LID), in s. A
// node that is not a switch is an error matching ErrNotSwitch; a read that
// failed is an *AttrError.
func (s *Subnet) ReadSwitch(ctx context.Context, g mad.SubnGetter, t mad.Target, path DRPath) (*Node, error) {
	var ni iba.NodeInfo
	var nd iba.NodeDescription
	for _, a := range []iba.Attribute{&ni, &nd} {
		if err := g.SubnGet(ctx, t, a, 0); err != nil {
			return nil, fmt.Errorf("reading switch at %v: %w", t, &AttrError{Attr: a.Desc().AttrID, Err: err})
		}
	}
	if ni.NodeType != iba.NodeTypeSwitch {
		return nil, fmt.Errorf("node %v at %v: %w", ni.NodeGUID, t, ErrNotSwitch)
	}
	var si iba.SwitchInfo
	if err := g.SubnGet(ctx, t, &si, 0); err != nil {
		return nil, fmt.Errorf("reading switch at %v: %w", t, &AttrError{Attr: iba.AttrIDSwitchInfo, Err: err})
	}
	var buf [3][AttrSize]byte
	for i, a := range []iba.Attribute{&ni, &nd, &si} {
		if err := a.MarshalTo(buf[i][:]); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
	}
	n, _, _, err := s.AddNode(buf[0][:], path)
	if err != nil {
		return nil, err
	}
	if err := s.SetNodeDescription(n, buf[1][:]); err != nil {
		return nil, err
	}
	if err := s.SetSwitchInfo(n, buf[2][:]); err != nil {
		return nil, err
	}
	return n, nil
}

// ReadSwitchTables is ReadTables for one switch. Its error is nil, the
// context's, one matching ErrNotSwitch, or a *TableError.
func (s *Subnet) ReadSwitchTables(ctx context.Context, g mad.SubnGetter, n *Node, o TableOptions) error {
	failed, err := s.ReadTables(ctx, g, []*Node{n}, o)
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		return failed[0]
	}
	return nil
}

// ReadTables reads the blocks o chooses of the forwarding tables of the
// switches (nil: every switch of s) and records them in the nodes'
// LFT and MFT (SetLFTBlock, SetMFTBlock). A switch whose SwitchInfo is not
// known has it read first. Up to o.Switches switches are read at once, up
// to o.PerSwitch SMPs to each; a busy switch is asked again later.
//
// It returns the switches that could not be read whole, in the order
// given, each with the reads that failed; the error is the context's when
// it ended first, or about a node that is not a switch.
func (s *Subnet) ReadTables(ctx context.Context, g mad.SubnGetter, switches []*Node, o TableOptions) ([]*TableError, error) {
	if switches == nil {
		switches = s.NodesOfType(iba.NodeTypeSwitch)
	}
	for _, n := range switches {
		if n == nil {
			return nil, invalid("ReadTables: a nil switch")
		}
		if n.Type != iba.NodeTypeSwitch {
			return nil, fmt.Errorf("node %v: %w", n.GUID, ErrNotSwitch)
		}
	}
	per, many := o.PerSwitch, o.Switches
	if per <= 0 {
		per = defaultPerSwitch
	}
	if many <= 0 {
		many = defaultSwitches
	}
	sc := sched.New(ctx, sched.Options{MaxInFlight: per * many, PerTarget: per, Busy: isBusy})
	reads := make([]*tableRead, len(switches))
	for i, n := range switches {
		r := &tableRead{s: s, g: g, n: n, o: &o, sc: sc, key: strconv.Itoa(i)}
		r.target = r.defaultTarget
		if o.Target != nil {
			r.target = func() mad.Target { return o.Target(n) }
		}
		reads[i] = r
		if n.HasSwitchInfo {
			r.submitBlocks()
			continue
		}
		sc.Submit(r.key, "SwitchInfo", func(ctx context.Context) error {
			err := r.readSwitchInfo(ctx)
			r.si = nil // a busy switch is asked again: only the last try counts
			if err != nil {
				r.si = &AttrError{Attr: iba.AttrIDSwitchInfo, Err: err}
				return err
			}
			r.submitBlocks()
			return nil
		})
	}
	if _, err := sc.Wait(); err != nil {
		return nil, err
	}
	var failed []*TableError
	for _, r := range reads {
		if e := r.result(); e != nil {
			failed = append(failed, e)
		}
	}
	return failed, nil
}

func isBusy(err error) bool { return errors.Is(err, mad.ErrBusy) }

// tableRead is the reading of one switch's tables.
type tableRead struct {
	s      *Subnet
	g      mad.SubnGetter
	n      *Node
	o      *TableOptions
	sc     *sched.Scheduler
	key    string
	target func() mad.Target

	// failures by place in the tables' order; set by the jobs, read after
	// the scheduler's Wait.
	lft, mft []*AttrError
	si       *AttrError
}

func (r *tableRead) defaultTarget() mad.Target {
	path := make([]byte, 0, len(r.n.Path)+1)
	path = append(append(path, 0), r.n.Path...)
	return mad.Route{
		DR:   &mad.DirectedRoute{Path: path, DrSLID: mad.LIDPermissive, DrDLID: mad.LIDPermissive},
		MKey: r.o.MKey,
		Name: "DR path " + r.n.Path.String(),
	}
}

func (r *tableRead) readSwitchInfo(ctx context.Context) error {
	var si iba.SwitchInfo
	if err := r.g.SubnGet(ctx, r.target(), &si, 0); err != nil {
		return err
	}
	b := make([]byte, AttrSize)
	if err := si.MarshalTo(b); err != nil {
		return err
	}
	return r.s.SetSwitchInfo(r.n, b)
}

// submitBlocks queues a job per block; each records its failure in its
// own slot, so the jobs need no lock.
func (r *tableRead) submitBlocks() {
	t := r.target()
	if r.o.LFT != nil {
		br := r.o.LFT(r.n)
		r.lft = make([]*AttrError, br.Len())
		for i := range br.Len() {
			blk := br.First + i
			r.sc.Submit(r.key, fmt.Sprintf("LFT block %d", blk), func(ctx context.Context) error {
				var lft iba.LinearForwardingTable
				err := r.g.SubnGet(ctx, t, &lft, uint32(blk))
				if err == nil {
					err = r.s.SetLFTBlock(r.n, blk, lft.PortBlock[:])
				}
				r.lft[i] = nil // only the last try of a busy switch counts
				if err != nil {
					r.lft[i] = &AttrError{Attr: iba.AttrIDLinearForwardingTable, Mod: uint32(blk), Err: err}
				}
				return err
			})
		}
	}
	if r.o.MFT != nil {
		br := r.o.MFT(r.n)
		positions := MFTPositions(r.n)
		r.mft = make([]*AttrError, br.Len()*positions)
		for i := range br.Len() * positions {
			blk, pos := br.First+i/positions, i%positions
			mod := MFTModifier(blk, pos)
			r.sc.Submit(r.key, fmt.Sprintf("MFT block %d position %d", blk, pos), func(ctx context.Context) error {
				var mft iba.MulticastForwardingTable
				err := r.g.SubnGet(ctx, t, &mft, mod)
				if err == nil {
					b := make([]byte, AttrSize)
					if err = mft.MarshalTo(b); err == nil {
						err = r.s.SetMFTBlock(r.n, blk, pos, b)
					}
				}
				r.mft[i] = nil
				if err != nil {
					r.mft[i] = &AttrError{Attr: iba.AttrIDMulticastForwardingTable, Mod: mod, Err: err}
				}
				return err
			})
		}
	}
}

func (r *tableRead) result() *TableError {
	e := &TableError{Node: r.n}
	if r.si != nil {
		e.Failed = append(e.Failed, r.si)
	}
	for _, l := range [][]*AttrError{r.lft, r.mft} {
		for _, f := range l {
			if f != nil {
				e.Failed = append(e.Failed, f)
			}
		}
	}
	if len(e.Failed) == 0 {
		return nil
	}
	return e
}
