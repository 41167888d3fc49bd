package sa

import (
	"context"
	"fmt"
	"sync"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// SMP answers SubnGet from the SA's records instead of the nodes' SMAs,
// for --sa mode: python-rdma's SATransactor. NodeInfo, NodeDescription,
// PortInfo, SwitchInfo, GUIDInfo, P_KeyTable, SLtoVLMappingTable,
// VLArbitrationTable, LinearForwardingTable, MulticastForwardingTable and
// SMInfo become the matching record query; other attributes go out as
// SMPs. Commands written against mad.SubnGetter work with either.
//
// Work-arounds kept from python-rdma: PortInfo with modifier 0 on a node
// not known to be a switch is a GetTable that picks port 0's record (else
// the first), since the SA has no "this port" for a CA; ERR_NO_RECORDS for
// a table block (LFT, MFT, P_Key, SL to VL, VL arbitration) gives a zeroed
// block, as OpenSM answers so for blocks it never programmed.
type SMP struct {
	sa *Client

	mu        sync.Mutex
	nodeTypes map[uint16]iba.NodeType // by LID, learnt from NodeRecords
	drEnds    map[string]drEnd        // resolved directed routes
}

// drEnd is where a directed route ends: the LID, and the port it enters the
// last node by (0 for a route of no hops).
type drEnd struct {
	lid    uint16
	inPort uint8
}

// NewSMP returns the adapter.
func NewSMP(c *Client) *SMP {
	return &SMP{sa: c, nodeTypes: map[uint16]iba.NodeType{}, drEnds: map[string]drEnd{}}
}

var _ mad.SubnGetter = (*SMP)(nil)

// SubnGet reads attr of the target from the SA, or by SMP for the
// attributes the SA has no record of.
func (a *SMP) SubnGet(ctx context.Context, t mad.Target, attr iba.Attribute, mod uint32) error {
	if !isTranslated(attr) {
		return a.sa.mc.SubnGet(ctx, t, attr, mod)
	}
	lid, err := a.LID(ctx, t)
	if err != nil {
		return fmt.Errorf("SubnGet %s to %s through the SA: %w", attr.Desc().Name, t, err)
	}
	if err := a.get(ctx, lid, attr, mod); err != nil {
		return fmt.Errorf("SubnGet %s to %s through the SA: %w", attr.Desc().Name, t, err)
	}
	if ni, ok := attr.(*iba.NodeInfo); ok && t.Route().DR != nil {
		// NodeInfo:LocalPortNum is the port the SMP came in by (IBA
		// 14.2.5.3); a NodeRecord has the node's own, 0 for a switch.
		end, err := a.end(ctx, t)
		if err != nil {
			return fmt.Errorf("SubnGet %s to %s through the SA: %w", attr.Desc().Name, t, err)
		}
		if end.inPort != 0 {
			ni.LocalPortNum = end.inPort
		}
	}
	return nil
}

func isTranslated(attr iba.Attribute) bool {
	switch attr.(type) {
	case *iba.NodeInfo, *iba.NodeDescription, *iba.PortInfo, *iba.SwitchInfo, *iba.GUIDInfo, *iba.PKeyTable,
		*iba.SLtoVLMappingTable, *iba.VLArbitrationTable, *iba.LinearForwardingTable, *iba.MulticastForwardingTable, *iba.SMInfo:
		return true
	}
	return false
}

func (a *SMP) nodeType(lid uint16) (iba.NodeType, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	nt, ok := a.nodeTypes[lid]
	return nt, ok
}

func (a *SMP) learn(lid uint16, nt iba.NodeType) {
	a.mu.Lock()
	a.nodeTypes[lid] = nt
	a.mu.Unlock()
}

// zeroOnNoRecords turns ERR_NO_RECORDS into a zeroed attribute.
func zeroOnNoRecords(err error, attr iba.Attribute) error {
	if mad.IsNoRecords(err) {
		return attr.Unmarshal(make([]byte, attr.Desc().Size))
	}
	return err
}

func (a *SMP) get(ctx context.Context, lid uint16, attr iba.Attribute, mod uint32) error {
	c := a.sa
	switch v := attr.(type) {
	case *iba.NodeInfo:
		r := iba.NodeRecord{LID: lid}
		if err := c.Get(ctx, &r, Components("LID")); err != nil {
			return err
		}
		a.learn(lid, r.NodeInfo.NodeType)
		*v = r.NodeInfo
	case *iba.NodeDescription:
		r := iba.NodeRecord{LID: lid}
		if err := c.Get(ctx, &r, Components("LID")); err != nil {
			return err
		}
		a.learn(lid, r.NodeInfo.NodeType)
		*v = r.NodeDescription
	case *iba.PortInfo:
		if nt, ok := a.nodeType(lid); mod == 0 && (!ok || nt != iba.NodeTypeSwitch) {
			// Port 0 of a switch, or "the port at this LID" of a CA:
			// ask for them all and choose.
			recs, err := GetTable(ctx, c, &iba.PortInfoRecord{EndportLID: lid}, Components("EndportLID"))
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				return fmt.Errorf("no PortInfoRecord for LID %d: %w", lid, mad.ErrSANoRecords)
			}
			pick := recs[0]
			for _, r := range recs {
				if r.PortNum == 0 {
					pick = r
					break
				}
			}
			*v = pick.PortInfo
			return nil
		}
		r := iba.PortInfoRecord{EndportLID: lid, PortNum: uint8(mod)}
		if err := c.Get(ctx, &r, Components("EndportLID", "PortNum")); err != nil {
			return err
		}
		*v = r.PortInfo
	case *iba.SwitchInfo:
		r := iba.SwitchInfoRecord{LID: lid}
		if err := c.Get(ctx, &r, Components("LID")); err != nil {
			return err
		}
		*v = r.SwitchInfo
	case *iba.GUIDInfo:
		r := iba.GUIDInfoRecord{LID: lid, BlockNum: uint8(mod)}
		if err := c.Get(ctx, &r, Components("LID", "BlockNum")); err != nil {
			return err
		}
		*v = r.GUIDInfo
	case *iba.PKeyTable:
		r := iba.PKeyTableRecord{LID: lid, BlockNum: uint16(mod)}
		comps := []string{"LID", "BlockNum"}
		if nt, ok := a.nodeType(lid); !ok || nt == iba.NodeTypeSwitch {
			r.PortNum = uint8(mod >> 16)
			comps = append(comps, "PortNum")
		}
		if err := c.Get(ctx, &r, Components(comps...)); err != nil {
			return zeroOnNoRecords(err, v)
		}
		*v = r.PKeyTable
	case *iba.SLtoVLMappingTable:
		// A CA or router port's table is the record of input port 0 and
		// output port "this port" (IBA 15.2.5.4): select it by LID alone.
		r := iba.SLtoVLMappingTableRecord{LID: lid, InputPortNum: uint8(mod >> 8), OutputPortNum: uint8(mod)}
		comps := []string{"LID", "InputPortNum", "OutputPortNum"}
		if sw, err := a.isSwitch(ctx, lid); err != nil {
			return err
		} else if !sw {
			comps = comps[:1]
		}
		if err := c.Get(ctx, &r, Components(comps...)); err != nil {
			return zeroOnNoRecords(err, v)
		}
		*v = r.SLToVLMappingTable
	case *iba.VLArbitrationTable:
		r := iba.VLArbitrationTableRecord{LID: lid, OutputPortNum: uint8(mod), BlockNum: uint8(mod >> 16)}
		comps := []string{"LID", "OutputPortNum", "BlockNum"}
		if sw, err := a.isSwitch(ctx, lid); err != nil {
			return err
		} else if !sw {
			comps = []string{"LID", "BlockNum"}
		}
		if err := c.Get(ctx, &r, Components(comps...)); err != nil {
			return zeroOnNoRecords(err, v)
		}
		*v = r.VLArbitrationTable
	case *iba.LinearForwardingTable:
		r := iba.LinearForwardingTableRecord{LID: lid, BlockNum: uint16(mod)}
		if err := c.Get(ctx, &r, Components("LID", "BlockNum")); err != nil {
			return zeroOnNoRecords(err, v)
		}
		*v = r.LinearForwardingTable
	case *iba.MulticastForwardingTable:
		r := iba.MulticastForwardingTableRecord{LID: lid, BlockNum: uint16(mod & 0x1ff), Position: uint8(mod>>12) & 0xf}
		if err := c.Get(ctx, &r, Components("LID", "BlockNum", "Position")); err != nil {
			return zeroOnNoRecords(err, v)
		}
		*v = r.MulticastForwardingTable
	case *iba.SMInfo:
		r := iba.SMInfoRecord{LID: lid}
		if err := c.Get(ctx, &r, Components("LID")); err != nil {
			return err
		}
		*v = r.SMInfo
	}
	return nil
}

// isSwitch reports whether the node at lid is a switch, asking the SA for
// its NodeRecord when it is not known yet.
func (a *SMP) isSwitch(ctx context.Context, lid uint16) (bool, error) {
	if nt, ok := a.nodeType(lid); ok {
		return nt == iba.NodeTypeSwitch, nil
	}
	r := iba.NodeRecord{LID: lid}
	if err := a.sa.Get(ctx, &r, Components("LID")); err != nil {
		return false, err
	}
	a.learn(lid, r.NodeInfo.NodeType)
	return r.NodeInfo.NodeType == iba.NodeTypeSwitch, nil
}

// LID gives the LID a target reaches: its DLID, or for a directed route
// the LID at its end, found hop by hop with SA LinkRecords as python-rdma
// does (IBA 15.2.5.13).
func (a *SMP) LID(ctx context.Context, t mad.Target) (uint16, error) {
	r := t.Route()
	if r.DR == nil {
		if r.Addr.LID == 0 || r.Addr.LID >= 0xc000 {
			return 0, fmt.Errorf("%s has no unicast LID", t)
		}
		return r.Addr.LID, nil
	}
	if r.DR.DrDLID != 0 && r.DR.DrDLID != mad.LIDPermissive {
		return r.DR.DrDLID, nil
	}
	end, err := a.end(ctx, t)
	return end.lid, err
}

// end resolves a directed route, once per route.
func (a *SMP) end(ctx context.Context, t mad.Target) (drEnd, error) {
	key := t.String()
	a.mu.Lock()
	end, ok := a.drEnds[key]
	a.mu.Unlock()
	if ok {
		return end, nil
	}
	end, err := a.sa.drEnd(ctx, t.Route())
	if err != nil {
		return drEnd{}, err
	}
	a.mu.Lock()
	a.drEnds[key] = end
	a.mu.Unlock()
	return end, nil
}

// DRToLID follows a directed route with SA LinkRecords: from the route's
// LID-routed start (or the local port) out of each hop's port to the LID
// at the other end.
func (c *Client) DRToLID(ctx context.Context, r mad.Route) (uint16, error) {
	end, err := c.drEnd(ctx, r)
	return end.lid, err
}

func (c *Client) drEnd(ctx context.Context, r mad.Route) (drEnd, error) {
	if r.DR == nil {
		return drEnd{lid: r.Addr.LID}, nil
	}
	end := drEnd{lid: r.Addr.LID}
	if r.DR.DrSLID == 0 || r.DR.DrSLID == mad.LIDPermissive {
		lp, err := c.mc.LocalPort(ctx)
		if err != nil {
			return drEnd{}, fmt.Errorf("resolving %s: %w", r, err)
		}
		end.lid = lp.LID
	}
	if len(r.DR.Path) == 0 {
		return end, nil
	}
	for i, port := range r.DR.Path[1:] {
		q := iba.LinkRecord{FromLID: end.lid, FromPort: port}
		if err := c.Get(ctx, &q, Components("FromLID", "FromPort")); err != nil {
			return drEnd{}, fmt.Errorf("resolving hop %d of %s (LID %d port %d) with a LinkRecord: %w", i+1, r, end.lid, port, err)
		}
		end = drEnd{lid: q.ToLID, inPort: q.ToPort}
	}
	return end, nil
}
