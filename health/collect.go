package health

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/perf"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/sched"
	"github.com/rdmakit/rdmakit/subnet"
)

// Data is what Collect gathered; the checks read it. The maps are keyed
// by the Subnet's own nodes and ports.
type Data struct {
	// Subnet is the fabric as discovered (or given), with the switches'
	// forwarding tables read into it (NeedLFT, NeedMFT); Discovery is how
	// it was discovered (nil when given).
	Subnet    *subnet.Subnet
	Discovery *subnet.DiscoverReport

	// Before and After are the two counter samples by node (NeedCounters),
	// Interval the time between their starts.
	Before, After map[*subnet.Node]*perf.NodeResult
	Interval      time.Duration

	// SMs are the SMs found (NeedSM), in the order of their ports in the
	// subnet.
	SMs []*SMRecord

	// PKeys are P_Key tables by port (NeedPKeys): CA and router ports, and
	// switch ports that enforce partitions.
	PKeys map[*subnet.Port][]uint16

	// SL2VL are the SL-to-VL tables (NeedSL2VL with Options.VLRouting).
	SL2VL map[*subnet.Node]*SL2VL

	// Groups are the multicast groups with their members (NeedGroups);
	// GroupsErr is why they could not be read.
	Groups    []*Group
	GroupsErr error

	// Lossy are the links the repeated SMPs crossed (NeedLossy).
	Lossy []*LinkLoss

	// Failures are the reads of tables, P_Keys and SMInfo that failed,
	// by what they were for.
	Failures []*ReadFailure

	opts Options
	rt   *RoutingResult
	once sync.Once
	mu   sync.Mutex
}

func (d *Data) options() Options { return d.opts }

// SMRecord is one SM: its port and SMInfo (IBA 14.2.5.13) read at the
// start and at the end of the run.
type SMRecord struct {
	Port        *subnet.Port
	First, Last iba.SMInfo
	// Err is why SMInfo could not be read; First and Last are then zero.
	Err error
}

// SL2VL holds a node's SL-to-VL mapping tables (IBA 14.2.5.8): a
// switch's by input and output port, a CA's by port (input 0).
type SL2VL struct {
	// Tables[in][out][sl] is the VL; nil where a table was not read.
	Tables [][]*[16]uint8
}

// VL is the VL of sl from port in to port out, and false when that table
// is not known.
func (t *SL2VL) VL(in, out int, sl uint8) (uint8, bool) {
	if t == nil || in < 0 || in >= len(t.Tables) || out < 0 || out >= len(t.Tables[in]) || t.Tables[in][out] == nil || sl > 15 {
		return 0, false
	}
	return t.Tables[in][out][sl], true
}

// Group is a multicast group (IBA 15.2.5.17) and its member ports.
type Group struct {
	MGID    iba.GID
	MLID    uint16
	Members []*subnet.Port
	// Unknown counts member port GIDs the subnet has no port for.
	Unknown int
}

// LinkLoss is what repeated SMPs along one link gave: the link's far end
// To was asked Sent times through From, and Lost of them got no answer.
type LinkLoss struct {
	From, To   *subnet.Port
	Sent, Lost int
	// ParentLost: the SMPs to From's node lost some too, so the loss may
	// lie before this link.
	ParentLost bool
}

// ReadFailure is a read that failed.
type ReadFailure struct {
	// What is "LinearForwardingTable", "PKeyTable", "SMInfo", ...
	What string
	Node *subnet.Node
	Port int
	Err  error
}

func (f *ReadFailure) Error() string {
	return fmt.Sprintf("%s of %q (%v) port %d: %v", f.What, f.Node.Description(), f.Node.GUID, f.Port, f.Err)
}

func (f *ReadFailure) Unwrap() error { return f.Err }

func (d *Data) fail(what string, n *subnet.Node, port int, err error) {
	d.mu.Lock()
	d.Failures = append(d.Failures, &ReadFailure{What: what, Node: n, Port: port, Err: err})
	d.mu.Unlock()
}

// failures lists the failed reads of one kind.
func (d *Data) failures(what string) []*ReadFailure {
	var out []*ReadFailure
	for _, f := range d.Failures {
		if f.What == what {
			out = append(out, f)
		}
	}
	return out
}

// Collect reads from the fabric what need asks for (see Need) and returns
// it for the checks. The discovery (unless Options.Subnet) and the first
// counter sample run together; the tables, P_Keys, SMs, groups and lossy
// probes are read while the counter interval runs, then the second sample
// is taken. A part that does not answer is recorded (Failures, the
// samples' errors, the discovery's report), not fatal; the error is the
// discovery's when it could not start, or ctx's.
func Collect(ctx context.Context, f *fabric.Fabric, need Need, o Options) (*Data, error) {
	d := &Data{opts: o}
	dopt := o.Discover
	if dopt.LocalLID == 0 {
		dopt.LocalLID = f.Local.LID
	}
	if dopt.MKey == 0 {
		dopt.MKey = o.MKey
	}
	if dopt.MaxInFlight == 0 {
		dopt.MaxInFlight = o.MaxInFlight
	}
	if dopt.PerNode == 0 {
		dopt.PerNode = o.PerNode
	}
	// The reads run through one scheduler, once the discovery and the
	// first counter sample are over, while the counters count. (Reading
	// each switch's tables as the discovery settles it was tried: on the
	// simulator, which is CPU-bound, it slowed the discovery as much as
	// it saved.)
	r := newReader(ctx, f.MAD, o)
	if need&NeedCounters != 0 {
		o.stage("discovery and first counter sample")
		res, err := perf.Sweep(ctx, f, perf.SweepOptions{Subnet: o.Subnet, Discover: dopt, MaxInFlight: o.MaxInFlight, PerNode: o.PerNode})
		if res != nil {
			d.Subnet, d.Discovery = res.Subnet, res.Report
		}
		if err != nil {
			_ = r.wait()
			return d, fmt.Errorf("discovering the subnet: %w", err)
		}
		d.Before = byNode(res.Nodes)
	} else if o.Subnet != nil {
		d.Subnet = o.Subnet
	} else {
		o.stage("discovery")
		var err error
		if dopt.Method == subnet.BySA {
			d.Subnet, d.Discovery, err = subnet.DiscoverSA(ctx, f.SA(), f.Local, dopt)
		} else {
			d.Subnet, d.Discovery, err = subnet.Discover(ctx, f.MAD, dopt)
		}
		if err != nil {
			_ = r.wait()
			return d, fmt.Errorf("discovering the subnet: %w", err)
		}
	}
	// Every port's first reading is in: the interval starts now, so that
	// no port's two readings are closer than it.
	t0 := time.Now()

	if need&NeedGroups != 0 || need&NeedMFT != 0 {
		o.stage("multicast groups")
		d.Groups, d.GroupsErr = readGroups(ctx, f, d.Subnet)
	}
	if need&NeedSM != 0 {
		o.stage("subnet managers")
		d.readSMs(r, f, true)
	}
	if need&NeedLFT != 0 {
		o.stage("forwarding tables")
		d.readLFTs(r)
	}
	if need&NeedMFT != 0 {
		d.readMFTs(r)
	}
	if need&NeedPKeys != 0 {
		o.stage("P_Key tables")
		d.readPKeys(r)
	}
	if need&NeedSL2VL != 0 && o.VLRouting {
		o.stage("SL to VL tables")
		d.readSL2VL(r)
	}
	var lossy func()
	if need&NeedLossy != 0 {
		o.stage("lossy links")
		lossy = d.probeLinks(r)
	}
	if err := r.wait(); err != nil {
		return d, err
	}
	if lossy != nil {
		lossy()
	}
	if need&NeedLFT != 0 {
		o.stage("routing analysis")
		d.routing()
	}

	if need&NeedCounters != 0 {
		if wait := time.Until(t0.Add(o.interval())); wait > 0 {
			o.stage("counter interval")
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return d, ctx.Err()
			}
		}
		o.stage("second counter sample")
		t1 := time.Now()
		res, err := perf.Sweep(ctx, f, perf.SweepOptions{Subnet: d.Subnet, MaxInFlight: o.MaxInFlight, PerNode: o.PerNode})
		if err != nil {
			return d, fmt.Errorf("second counter sample: %w", err)
		}
		d.After = byNode(res.Nodes)
		d.Interval = t1.Sub(t0)
	}
	if need&NeedSM != 0 {
		r := newReader(ctx, f.MAD, o)
		d.readSMs(r, f, false)
		if err := r.wait(); err != nil {
			return d, err
		}
	}
	return d, ctx.Err()
}

func byNode(l []*perf.NodeResult) map[*subnet.Node]*perf.NodeResult {
	m := make(map[*subnet.Node]*perf.NodeResult, len(l))
	for _, n := range l {
		m[n.Node] = n
	}
	return m
}

// reader sends SMPs through a scheduler: many nodes at once, a few per
// node, each holding no goroutine while it is out.
type reader struct {
	mc   *mad.Client
	s    *sched.Scheduler
	mkey uint64
}

func newReader(ctx context.Context, mc *mad.Client, o Options) *reader {
	return &reader{mc: mc, mkey: o.MKey, s: sched.New(ctx, sched.Options{MaxInFlight: o.MaxInFlight, PerTarget: o.PerNode,
		Busy: func(err error) bool { return errors.Is(err, mad.ErrBusy) }})}
}

// drRoute is the directed route to the node at path.
func (r *reader) drRoute(path subnet.DRPath) mad.Route {
	return mad.Route{DR: &mad.DirectedRoute{Path: append([]byte{0}, path...), DrSLID: mad.LIDPermissive, DrDLID: mad.LIDPermissive},
		Addr: mad.Addr{LID: mad.LIDPermissive}, MKey: r.mkey}
}

// get reads an SMP attribute of the node at path; done gets its 64 bytes
// (a copy) or the error, on the MAD client's goroutines: it must not
// block.
func (r *reader) get(key string, path subnet.DRPath, attr uint16, mod uint32, done func(data []byte, err error)) {
	rt := r.drRoute(path)
	r.s.SubmitAsync(key, "SubnGet", func(ctx context.Context, fin func(error)) {
		r.mc.Start(ctx, mad.Request{Target: rt, Class: iba.ClassSubnMgt, Method: iba.MethodGet, AttrID: attr, AttrMod: mod}, func(rep *mad.Reply, err error) {
			if err != nil {
				done(nil, err)
				fin(nil)
				return
			}
			b := rep.Data()
			if len(b) < subnet.AttrSize {
				done(nil, fmt.Errorf("reply with %d bytes of data", len(b)))
				fin(nil)
				return
			}
			data := make([]byte, subnet.AttrSize)
			copy(data, b)
			done(data, nil)
			fin(nil)
		})
	})
}

func (r *reader) wait() error {
	_, err := r.s.Wait()
	return err
}

// portPath is the directed route that reaches port p itself: a switch's
// path, the empty path for the local port, and for another CA port the
// path of the switch it is cabled to and the port there (the node's own
// path arrives at the port it was found through).
func portPath(s *subnet.Subnet, p *subnet.Port) subnet.DRPath {
	n := p.Node
	if n.Type == iba.NodeTypeSwitch {
		return n.Path
	}
	if from, fp := s.From(); from == n && fp == p.Num {
		return nil
	}
	if r := p.Remote; r != nil && r.Node.Type == iba.NodeTypeSwitch && len(r.Node.Path) < subnet.MaxHops {
		return r.Node.Path.Extend(uint8(r.Num))
	}
	return n.Path
}

func nodeKey(n *subnet.Node) string { return n.GUID.String() + "/" + n.Path.String() }

// readLFTs reads every switch's linear forwarding table up to
// SwitchInfo:LinearFDBTop into the subnet (IBA 14.2.5.10).
func (d *Data) readLFTs(r *reader) {
	for _, n := range d.Subnet.NodesOfType(iba.NodeTypeSwitch) {
		if !n.HasSwitchInfo {
			d.fail("LinearForwardingTable", n, 0, errors.New("no SwitchInfo"))
			continue
		}
		var si iba.SwitchInfo
		_ = si.Unmarshal(n.SwitchInfo[:])
		top := int(min(si.LinearFDBTop, 0xbfff))
		for blk := 0; blk <= top/64; blk++ {
			r.get(nodeKey(n), n.Path, iba.AttrIDLinearForwardingTable, uint32(blk), func(data []byte, err error) {
				if err == nil {
					err = d.Subnet.SetLFTBlock(n, blk, data)
				}
				if err != nil {
					d.fail("LinearForwardingTable", n, 0, fmt.Errorf("block %d: %w", blk, err))
				}
			})
		}
	}
}

// readMFTs reads the multicast forwarding tables (IBA 14.2.5.12): up to
// SwitchInfo:MulticastFDBTop where the switch reports one, else the
// blocks of the groups' MLIDs, else every block the switch has.
func (d *Data) readMFTs(r *reader) {
	mlidBlocks := map[int]bool{}
	for _, g := range d.Groups {
		if g.MLID >= 0xc000 {
			mlidBlocks[int(g.MLID-0xc000)/32] = true
		}
	}
	for _, n := range d.Subnet.NodesOfType(iba.NodeTypeSwitch) {
		if !n.HasSwitchInfo {
			continue
		}
		var si iba.SwitchInfo
		_ = si.Unmarshal(n.SwitchInfo[:])
		var blocks []int
		switch {
		case si.MulticastFDBTop >= 0xc000:
			for b := 0; b <= int(si.MulticastFDBTop-0xc000)/32; b++ {
				blocks = append(blocks, b)
			}
		case d.GroupsErr == nil:
			for b := range mlidBlocks {
				blocks = append(blocks, b)
			}
		default:
			for b := 0; b < int(si.MulticastFDBCap+31)/32; b++ {
				blocks = append(blocks, b)
			}
		}
		for _, blk := range blocks {
			for pos := 0; pos <= n.NumPorts/16; pos++ {
				r.get(nodeKey(n), n.Path, iba.AttrIDMulticastForwardingTable, uint32(pos)<<28|uint32(blk), func(data []byte, err error) {
					if err == nil {
						err = d.Subnet.SetMFTBlock(n, blk, pos, data)
					}
					if err != nil {
						d.fail("MulticastForwardingTable", n, 0, fmt.Errorf("block %d position %d: %w", blk, pos, err))
					}
				})
			}
		}
	}
}

// readPKeys reads the P_Key tables (IBA 14.2.5.7) of every CA and router
// port, and of every switch port whose PortInfo enforces partitions
// (PartitionEnforcementInbound or Outbound).
func (d *Data) readPKeys(r *reader) {
	d.PKeys = map[*subnet.Port][]uint16{}
	for _, n := range d.Subnet.Nodes() {
		ni := n.NodeInfo()
		for _, p := range n.Ports {
			if p == nil || !p.HasInfo {
				continue
			}
			size, mod := 0, uint32(0)
			path := n.Path
			if n.Type == iba.NodeTypeSwitch {
				if p.Num == 0 {
					continue
				}
				pi := p.PortInfo()
				if pi.PartitionEnforcementInbound == 0 && pi.PartitionEnforcementOutbound == 0 {
					continue
				}
				var si iba.SwitchInfo
				_ = si.Unmarshal(n.SwitchInfo[:])
				size, mod = int(si.PartitionEnforcementCap), uint32(p.Num)<<16
			} else {
				if p.PortInfo().PortPhysicalState != iba.PhysPortStateLinkUp {
					continue
				}
				size, path = int(ni.PartitionCap), portPath(d.Subnet, p)
			}
			if size == 0 {
				continue
			}
			blocks := (size + 31) / 32
			table := make([]uint16, blocks*32)
			left := blocks
			var failed bool
			for b := 0; b < blocks; b++ {
				r.get(nodeKey(n), path, iba.AttrIDPKeyTable, mod|uint32(b), func(data []byte, err error) {
					d.mu.Lock()
					defer d.mu.Unlock()
					if err != nil {
						if !failed {
							d.Failures = append(d.Failures, &ReadFailure{What: "PKeyTable", Node: n, Port: p.Num, Err: fmt.Errorf("block %d: %w", b, err)})
						}
						failed = true
					} else {
						for i := 0; i < 32; i++ {
							table[b*32+i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
						}
					}
					if left--; left == 0 && !failed {
						d.PKeys[p] = table[:size]
					}
				})
			}
		}
	}
}

// readSL2VL reads every SL-to-VL table (IBA 14.2.5.8): each input and
// output port pair of a switch (attribute modifier in<<8|out), each port
// of a CA.
func (d *Data) readSL2VL(r *reader) {
	d.SL2VL = map[*subnet.Node]*SL2VL{}
	for _, n := range d.Subnet.Nodes() {
		t := &SL2VL{Tables: make([][]*[16]uint8, n.NumPorts+1)}
		for i := range t.Tables {
			t.Tables[i] = make([]*[16]uint8, n.NumPorts+1)
		}
		d.SL2VL[n] = t
		store := func(in, out int) func([]byte, error) {
			return func(data []byte, err error) {
				if err != nil {
					d.fail("SLtoVLMappingTable", n, out, fmt.Errorf("input port %d: %w", in, err))
					return
				}
				var vls [16]uint8
				for sl := 0; sl < 16; sl++ {
					vls[sl] = data[sl/2] >> (4 * (1 - sl%2)) & 0xf
				}
				d.mu.Lock()
				t.Tables[in][out] = &vls
				d.mu.Unlock()
			}
		}
		if n.Type != iba.NodeTypeSwitch {
			for _, p := range n.Ports {
				if p != nil && p.Remote != nil {
					r.get(nodeKey(n), portPath(d.Subnet, p), iba.AttrIDSLtoVLMappingTable, 0, store(0, p.Num))
				}
			}
			continue
		}
		for _, in := range n.Ports {
			if in == nil || (in.Num != 0 && in.Remote == nil) {
				continue
			}
			for _, out := range n.Ports {
				if out == nil || out.Num == 0 || out.Remote == nil || out == in {
					continue
				}
				r.get(nodeKey(n), n.Path, iba.AttrIDSLtoVLMappingTable, uint32(in.Num)<<8|uint32(out.Num), store(in.Num, out.Num))
			}
		}
	}
}

// readSMs reads SMInfo of every port that says it has an SM
// (PortInfo:CapabilityMask.IsSM, IBA 14.2.5.6) and of the port the local
// port names as its master SM (PortInfo:MasterSMLID), first or last.
func (d *Data) readSMs(r *reader, f *fabric.Fabric, first bool) {
	if first {
		seen := map[*subnet.Port]bool{}
		add := func(p *subnet.Port) {
			if p != nil && !seen[p] {
				seen[p] = true
				d.SMs = append(d.SMs, &SMRecord{Port: p})
			}
		}
		for _, n := range d.Subnet.Nodes() {
			for _, p := range n.Ports {
				if p == nil || !p.HasInfo || (n.Type == iba.NodeTypeSwitch && p.Num != 0) {
					continue
				}
				if p.PortInfo().CapabilityMask&capIsSM != 0 {
					add(p)
				}
			}
		}
		if f.Local.SMLID != 0 {
			add(d.Subnet.PortByLID(f.Local.SMLID))
		}
	}
	for _, sm := range d.SMs {
		p := sm.Port
		r.get(nodeKey(p.Node)+"/sm", portPath(d.Subnet, p), iba.AttrIDSMInfo, 0, func(data []byte, err error) {
			d.mu.Lock()
			defer d.mu.Unlock()
			if err != nil {
				if sm.Err == nil {
					sm.Err = err
				}
				return
			}
			var info iba.SMInfo
			_ = info.Unmarshal(data)
			if first {
				sm.First, sm.Last = info, info
			} else {
				sm.Last = info
			}
		})
	}
}

// capIsSM is PortInfo:CapabilityMask.IsSM (IBA 14.2.5.6, table 146).
const capIsSM = 1 << 1

// readGroups reads the multicast groups and their members from the SA's
// MCMemberRecords (IBA 15.2.5.17).
func readGroups(ctx context.Context, f *fabric.Fabric, s *subnet.Subnet) ([]*Group, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	recs, err := sa.GetTable(ctx, f.SA(), &iba.MCMemberRecord{})
	if err != nil {
		return nil, fmt.Errorf("reading MCMemberRecords: %w", err)
	}
	byMGID := map[iba.GID]*Group{}
	var out []*Group
	for _, r := range recs {
		g := byMGID[r.MGID]
		if g == nil {
			g = &Group{MGID: r.MGID, MLID: r.MLID}
			byMGID[r.MGID] = g
			out = append(out, g)
		}
		if r.PortGID == (iba.GID{}) {
			continue
		}
		if p := s.PortByGUID(r.PortGID.GUID()); p != nil {
			g.Members = append(g.Members, p)
		} else {
			g.Unknown++
		}
	}
	return out, nil
}
