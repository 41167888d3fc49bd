package ibpath

import (
	"context"
	"errors"
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
)

// ErrNotFound is matched when the SA has no path or node for a target
// (python-rdma's SAPathNotFoundError).
var ErrNotFound = errors.New("not found by the SA")

// Resolver completes paths: SA PathRecords for GMPs, LIDs for directed
// routes and node GUIDs.
type Resolver struct {
	MAD *mad.Client
	// SA is the SA client; nil makes one on MAD with no SM_Key.
	SA *sa.Client
	// DRViaSA resolves directed routes to LIDs with SA LinkRecords, as
	// python-rdma does, instead of reading NodeInfo and PortInfo over the
	// route.
	DRViaSA bool
}

func (r *Resolver) sa() *sa.Client {
	if r.SA != nil {
		return r.SA
	}
	return sa.New(r.MAD)
}

// NodesDescribed asks the SA for the nodes whose NodeDescription is desc
// (NodeRecords with the NodeDescription component, IBA 15.2.5.2) and gives
// their node GUIDs, once each and in the SA's order: the lookup behind a
// target given by a node's description.
func (r *Resolver) NodesDescribed(ctx context.Context, desc string) ([]iba.GUID, error) {
	var q iba.NodeRecord
	if desc == "" || len(desc) > len(q.NodeDescription.NodeString) {
		return nil, fmt.Errorf("node description %q: %w", desc, ErrNotFound)
	}
	copy(q.NodeDescription.NodeString[:], desc)
	recs, err := sa.GetTable(ctx, r.sa(), &q)
	if err != nil {
		return nil, fmt.Errorf("looking up node description %q: %w", desc, err)
	}
	var gs []iba.GUID
	seen := map[iba.GUID]bool{}
	for _, rec := range recs {
		if g := rec.NodeInfo.NodeGUID; !seen[g] {
			seen[g] = true
			gs = append(gs, g)
		}
	}
	return gs, nil
}

// SMP returns the path to send SMPs on: directed routes and LIDs as they
// are; GIDs, port GUIDs and node GUIDs as the LID the SA gives them.
func (r *Resolver) SMP(ctx context.Context, p Path) (Path, error) {
	switch v := p.(type) {
	case *DRPath:
		return v, nil
	case *IBPath:
		if v.Has("DLID") {
			return v, nil
		}
		lid, err := r.LID(ctx, v)
		if err != nil {
			return nil, err
		}
		q := *v
		q.DLID = lid
		q.Mark("DLID")
		return &q, nil
	}
	return nil, fmt.Errorf("resolving %v: unknown path type %T", p, p)
}

// LID gives the LID at the end of a path.
func (r *Resolver) LID(ctx context.Context, p Path) (uint16, error) {
	switch v := p.(type) {
	case *DRPath:
		return r.drLID(ctx, v)
	case *IBPath:
		switch {
		case v.Has("DLID"):
			return v.DLID, nil
		case v.Has("nodeGUID"):
			return r.nodeLID(ctx, v.NodeGUID)
		}
		g, err := r.GMP(ctx, v)
		if err != nil {
			return 0, err
		}
		return g.DLID, nil
	}
	return 0, fmt.Errorf("resolving %v: unknown path type %T", p, p)
}

// GMP returns a path complete for GMPs (IBA 13.5.1: SL, P_Key and LIDs from
// the SM, never guessed): a path spec with SLID, DLID and dqpn as given,
// anything else completed with an SA PathRecord, which is also how
// python-rdma's ibtool addresses every GMP.
func (r *Resolver) GMP(ctx context.Context, p Path) (*IBPath, error) {
	var base IBPath
	switch v := p.(type) {
	case *DRPath:
		lid, err := r.drLID(ctx, v)
		if err != nil {
			return nil, err
		}
		base = IBPath{EndPort: v.EndPort, DLID: lid, PKey: 0xffff, Retries: v.Retries, TimeoutMS: v.TimeoutMS, RespTime: v.RespTime}
		for _, k := range []string{"retries", "timeout", "resp_time"} {
			if v.Has(k) {
				base.Mark(k)
			}
		}
		base.Mark("DLID")
	case *IBPath:
		if v.Has("SLID") && v.Has("DLID") && v.Has("dqpn") {
			return v, nil
		}
		base = *v
		if v.Has("nodeGUID") && !v.Has("DLID") && !v.Has("DGID") {
			lid, err := r.nodeLID(ctx, v.NodeGUID)
			if err != nil {
				return nil, err
			}
			base.DLID = lid
			base.Mark("DLID")
		}
	default:
		return nil, fmt.Errorf("resolving %v: unknown path type %T", p, p)
	}
	sgid := base.SGID
	if !base.Has("SGID") {
		lp, err := r.MAD.LocalPort(ctx)
		if err != nil {
			return nil, fmt.Errorf("resolving %v: %w", p, err)
		}
		sgid = iba.MakeGID(lp.GIDPrefix, lp.PortGUID)
	}
	var dgid iba.GID
	if base.Has("DGID") {
		dgid = base.DGID
	}
	pr, err := r.sa().PathRecord(ctx, sgid, dgid, base.DLID)
	if err != nil {
		if mad.IsNoRecords(err) {
			return nil, fmt.Errorf("getting the path record for %v: %w (%w)", p, ErrNotFound, err)
		}
		return nil, fmt.Errorf("getting the path record for %v: %w", p, err)
	}
	out := base
	// The record's PacketLifeTime is kept but not marked: marking it would
	// switch the MAD timeout to python-rdma's formula instead of the
	// client's (infiniband-diags') default.
	out.applyPathRecord(&pr)
	for _, k := range []string{"DGID", "SGID", "DLID", "SLID", "SL", "pkey"} {
		out.Mark(k)
	}
	if out.HasGRH {
		for _, k := range []string{"has_grh", "hop_limit", "traffic_class", "flow_label"} {
			out.Mark(k)
		}
	}
	return &out, nil
}

// nodeLID finds the LID of a node by its GUID: the first NodeRecord's.
func (r *Resolver) nodeLID(ctx context.Context, g iba.GUID) (uint16, error) {
	q := iba.NodeRecord{}
	q.NodeInfo.NodeGUID = g
	recs, err := sa.GetTable(ctx, r.sa(), &q)
	if err != nil {
		return 0, fmt.Errorf("finding node GUID %v: %w", g, err)
	}
	if len(recs) == 0 {
		return 0, fmt.Errorf("finding node GUID %v: %w", g, ErrNotFound)
	}
	return recs[0].LID, nil
}

// drLID follows a directed route to a LID: NodeInfo then PortInfo over the
// route (switches answer for port 0, CAs for the port the SMP came in by),
// or the SA's LinkRecords with DRViaSA.
func (r *Resolver) drLID(ctx context.Context, p *DRPath) (uint16, error) {
	if p.DrDLID != mad.LIDPermissive && p.DrDLID != 0 {
		return p.DrDLID, nil
	}
	if r.DRViaSA {
		lid, err := r.sa().DRToLID(ctx, p.Route())
		if err != nil {
			return 0, err
		}
		return lid, nil
	}
	var ni iba.NodeInfo
	if err := r.MAD.SubnGet(ctx, p, &ni, 0); err != nil {
		return 0, fmt.Errorf("resolving %v to a LID: %w", p, err)
	}
	port := uint32(ni.LocalPortNum)
	if ni.NodeType == iba.NodeTypeSwitch {
		port = 0
	}
	var pi iba.PortInfo
	if err := r.MAD.SubnGet(ctx, p, &pi, port); err != nil {
		return 0, fmt.Errorf("resolving %v to a LID: %w", p, err)
	}
	if pi.LID == 0 || pi.LID >= 0xc000 {
		return 0, fmt.Errorf("resolving %v to a LID: port %d has LID %d (no subnet manager yet?)", p, port, pi.LID)
	}
	return pi.LID, nil
}
