package subnet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
)

// SARecords are the SA tables a subnet is built from in BySA discovery
// (python-rdma's subnet_*_SA): NodeRecords (IBA 15.2.5.2), PortInfoRecords
// (15.2.5.3), SwitchInfoRecords (15.2.5.5) and LinkRecords (15.2.5.13).
type SARecords struct {
	Nodes    []iba.NodeRecord
	Ports    []iba.PortInfoRecord
	Switches []iba.SwitchInfoRecord
	Links    []iba.LinkRecord
}

// FetchSARecords reads the four tables from the SA.
func FetchSARecords(ctx context.Context, c *sa.Client) (*SARecords, error) {
	var r SARecords
	var err error
	if r.Nodes, err = sa.GetTable(ctx, c, &iba.NodeRecord{}); err != nil {
		return nil, fmt.Errorf("reading NodeRecords: %w", err)
	}
	if r.Ports, err = sa.GetTable(ctx, c, &iba.PortInfoRecord{}); err != nil {
		return nil, fmt.Errorf("reading PortInfoRecords: %w", err)
	}
	if r.Switches, err = sa.GetTable(ctx, c, &iba.SwitchInfoRecord{}); err != nil {
		return nil, fmt.Errorf("reading SwitchInfoRecords: %w", err)
	}
	if r.Links, err = sa.GetTable(ctx, c, &iba.LinkRecord{}); err != nil {
		return nil, fmt.Errorf("reading LinkRecords: %w", err)
	}
	return &r, nil
}

// DiscoverSA builds the subnet from the SA's records, as seen from the
// local port lp: the tables are read, then the directed-route walk runs
// over them, so the database (order, paths, unreachable parts) is the one a
// directed route discovery of the same subnet gives, except that the SA
// has no MlnxExtPortInfo (FDR10 links read as QDR). opt.From,
// opt.StartLID (the walk starts at the node the SA gives that LID) and
// opt.MaxHops apply; the SMP options do not.
func DiscoverSA(ctx context.Context, c *sa.Client, lp mad.LocalPort, opt DiscoverOptions) (*Subnet, *DiscoverReport, error) {
	start := time.Now()
	recs, err := FetchSARecords(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	from, fromPort := lp.NodeGUID, int(lp.PortNum)
	if opt.StartLID != 0 {
		// A partial scan from a LID starts the walk at the node the SA
		// gives that LID, as the SMP scan starts there.
		found := false
		for _, nr := range recs.Nodes {
			if nr.LID == opt.StartLID {
				from, fromPort, found = nr.NodeInfo.NodeGUID, int(nr.NodeInfo.LocalPortNum), true
				break
			}
		}
		if !found {
			return nil, nil, fmt.Errorf("the SA has no NodeRecord for LID %d", opt.StartLID)
		}
	}
	s, rep, err := DiscoverRecords(ctx, recs, from, fromPort, opt)
	if rep != nil {
		rep.Sent = 4
		rep.Elapsed = time.Since(start)
	}
	return s, rep, err
}

// ErrNotInRecords is the error of a query the SA records cannot answer.
var ErrNotInRecords = errors.New("not in the SA records")

// DiscoverRecords runs the walk over recs from port fromPort of node from.
func DiscoverRecords(ctx context.Context, recs *SARecords, from iba.GUID, fromPort int, opt DiscoverOptions) (*Subnet, *DiscoverReport, error) {
	src, err := newRecordSource(recs, from, fromPort)
	if err != nil {
		return nil, nil, err
	}
	opt.Method = BySA
	opt.StartLID = 0
	// The SA keeps no vendor attributes: FDR10 links read as QDR.
	opt.NoMlnxExtPortInfo = true
	w := newWalk(src, opt)
	err = w.run(ctx)
	rep := &DiscoverReport{Method: BySA, Failures: w.failures, Queries: w.queued}
	return w.s, rep, err
}

type recNode struct {
	info  iba.NodeInfo
	desc  [AttrSize]byte
	si    *iba.SwitchInfo
	ports map[int]*recPort
}

type recPort struct {
	guid     iba.GUID
	info     *iba.PortInfo
	peer     *recNode
	peerPort int
}

// recordSource answers SMP queries from SA records by following the
// LinkRecords along the directed route.
type recordSource struct {
	nodes    map[iba.GUID]*recNode
	from     *recNode
	fromPort int
}

func newRecordSource(r *SARecords, from iba.GUID, fromPort int) (*recordSource, error) {
	src := &recordSource{nodes: map[iba.GUID]*recNode{}}
	byLID := map[uint16]*recNode{}
	portOf := func(n *recNode, num int) *recPort {
		p := n.ports[num]
		if p == nil {
			p = &recPort{}
			n.ports[num] = p
		}
		return p
	}
	for _, nr := range r.Nodes {
		ni := nr.NodeInfo
		n := src.nodes[ni.NodeGUID]
		if n == nil {
			n = &recNode{info: ni, ports: map[int]*recPort{}}
			var d [AttrSize]byte
			_ = nr.NodeDescription.MarshalTo(d[:])
			n.desc = d
			src.nodes[ni.NodeGUID] = n
		}
		byLID[nr.LID] = n
		portOf(n, int(ni.LocalPortNum)).guid = ni.PortGUID
	}
	// A CA's LIDs are per port: which port owns a LID is in its NodeRecord.
	lidPort := map[uint16]int{}
	for _, nr := range r.Nodes {
		lidPort[nr.LID] = int(nr.NodeInfo.LocalPortNum)
	}
	for i := range r.Ports {
		pr := &r.Ports[i]
		n := byLID[pr.EndportLID]
		if n == nil {
			continue
		}
		num := int(pr.PortNum)
		if n.info.NodeType != iba.NodeTypeSwitch {
			// IBA 15.2.5.3: for a CA the record's PortNum is the port
			// of EndportLID.
			num = lidPort[pr.EndportLID]
		}
		pi := pr.PortInfo
		portOf(n, num).info = &pi
	}
	for i := range r.Switches {
		if n := byLID[r.Switches[i].LID]; n != nil {
			si := r.Switches[i].SwitchInfo
			n.si = &si
		}
	}
	for _, lr := range r.Links {
		a, b := byLID[lr.FromLID], byLID[lr.ToLID]
		if a == nil || b == nil {
			continue
		}
		pa := portOf(a, int(lr.FromPort))
		pa.peer, pa.peerPort = b, int(lr.ToPort)
	}
	src.from = src.nodes[from]
	src.fromPort = fromPort
	if src.from == nil {
		return nil, fmt.Errorf("the local node %v is not among the SA's %d NodeRecords", from, len(r.Nodes))
	}
	return src, nil
}

func (r *recordSource) ask(q query, _ iba.GUID) *answer {
	a := &answer{done: make(chan struct{})}
	close(a.done)
	data, err := r.answer(q)
	if err != nil {
		a.err = fmt.Errorf("%s at DR path %v: %w", attrLabel(q.attr), q.path, err)
		return a
	}
	a.data = data
	return a
}

func (r *recordSource) answer(q query) ([AttrSize]byte, error) {
	var out [AttrSize]byte
	n, entry := r.from, r.fromPort
	for i, hop := range q.path {
		if i > 0 && n.info.NodeType != iba.NodeTypeSwitch {
			return out, fmt.Errorf("directed route through a CA: %w", ErrNotInRecords)
		}
		p := n.ports[int(hop)]
		if p == nil || p.peer == nil {
			return out, fmt.Errorf("no link on port %d of %v: %w", hop, n.info.NodeGUID, ErrNotInRecords)
		}
		n, entry = p.peer, p.peerPort
	}
	isSwitch := n.info.NodeType == iba.NodeTypeSwitch
	switch q.attr {
	case iba.AttrIDNodeInfo:
		ni := n.info
		ni.LocalPortNum = uint8(entry)
		if isSwitch {
			ni.LocalPortNum = uint8(entry)
		} else if p := n.ports[entry]; p != nil && p.guid != 0 {
			ni.PortGUID = p.guid
		} else {
			return out, fmt.Errorf("port %d of %v has no NodeRecord: %w", entry, n.info.NodeGUID, ErrNotInRecords)
		}
		_ = ni.MarshalTo(out[:])
	case iba.AttrIDNodeDescription:
		out = n.desc
	case iba.AttrIDSwitchInfo:
		if n.si == nil {
			return out, ErrNotInRecords
		}
		_ = n.si.MarshalTo(out[:])
	case iba.AttrIDPortInfo:
		p := n.ports[int(q.mod)]
		if p == nil || p.info == nil {
			return out, fmt.Errorf("port %d of %v: %w", q.mod, n.info.NodeGUID, ErrNotInRecords)
		}
		pi := *p.info
		if isSwitch {
			// A switch reports the port the SMP came in by.
			pi.LocalPortNum = uint8(entry)
		}
		_ = pi.MarshalTo(out[:])
	default:
		return out, ErrNotInRecords
	}
	return out, nil
}
