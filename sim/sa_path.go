package sim

import (
	"encoding/binary"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// pathInfo is what a path through the forwarding tables offers.
type pathInfo struct {
	hops int
	mtu  iba.MTU
	rate iba.Rate
}

func lanes(w uint8) int {
	switch w {
	case iba.LinkWidth1X:
		return 1
	case iba.LinkWidth2X:
		return 2
	case iba.LinkWidth8X:
		return 8
	case iba.LinkWidth12X:
		return 12
	}
	return 4
}

func linkSpeed(p *port) iba.Speed {
	if p.ext2Act != 0 {
		return iba.SpeedXDR
	}
	switch p.extAct {
	case iba.LinkSpeedExtFDR:
		return iba.SpeedFDR
	case iba.LinkSpeedExtEDR:
		return iba.SpeedEDR
	case iba.LinkSpeedExtHDR:
		return iba.SpeedHDR
	case iba.LinkSpeedExtNDR:
		return iba.SpeedNDR
	}
	if p.mlnxAct != 0 {
		return iba.SpeedFDR10
	}
	switch p.speedAct {
	case iba.LinkSpeedDDR:
		return iba.SpeedDDR
	case iba.LinkSpeedQDR:
		return iba.SpeedQDR
	}
	return iba.SpeedSDR
}

// tracePath follows the forwarding tables from port `from` to dlid over
// Active links and says what the path offers: the smallest MTU and rate
// of its ports and links, and its length.
func (f *Fabric) tracePath(from int32, dlid uint16) (pathInfo, bool) {
	pi := pathInfo{mtu: iba.MTU2048}
	gbps := 0.0
	cur := from
	for h := 0; h < maxHops; h++ {
		p := &f.ports[cur]
		nd := &f.nodes[p.node]
		nd.mu.RLock()
		out := int32(-1)
		if sw := nd.sw; sw != nil {
			if f.owns(&f.ports[nd.base], dlid) {
				nd.mu.RUnlock()
				pi.mtu = min(pi.mtu, iba.MTU1024) // a switch's port 0
				return pi, true
			}
			if int(dlid) < len(sw.lft) && dlid <= sw.lftTop && sw.lft[dlid] != 0 && sw.lft[dlid] <= nd.numPorts {
				out = nd.base + int32(sw.lft[dlid])
			}
		} else if f.owns(p, dlid) {
			nd.mu.RUnlock()
			return pi, true
		} else if h == 0 {
			out = cur
		}
		ok := out >= 0 && linkOK(&f.ports[out], false)
		var r iba.Rate
		if ok {
			o := &f.ports[out]
			if rr, known := iba.RateFor(lanes(o.widthAct), linkSpeed(o)); known {
				r = rr
			}
		}
		nd.mu.RUnlock()
		if !ok {
			return pi, false
		}
		if r != 0 && (gbps == 0 || r.Gbps() < gbps) {
			gbps, pi.rate = r.Gbps(), r
		}
		pi.hops++
		cur = f.ports[out].peer
	}
	return pi, false
}

// selected applies an SA selector (IBA 15.2.5.16: 0 greater than, 1 less
// than, 2 exactly, 3 the largest available) to a path's value.
func selected(sel uint8, have, want float64) bool {
	switch sel {
	case 0:
		return have > want
	case 1:
		return have < want
	case 2:
		return have == want
	}
	return true
}

// paths answers PathRecord queries (IBA 15.2.5.16): one path per pair of
// end ports the query's SGID/SLID and DGID/DLID allow (all of them when a
// side is not given, on subnets small enough), through the forwarding
// tables as programmed.
func (a *saServer) paths(v *smView, q []byte, mask uint64, d *iba.Struct, emit func([]byte) bool) error {
	m := newMatcher(d, q, mask)
	var pq iba.PathRecord
	if err := pq.Unmarshal(q); err != nil {
		return errSAInvalid
	}
	side := func(gidPath, lidPath string, gid iba.GID, lid uint16) ([]int32, []uint16, error) {
		switch {
		case m.has(gidPath):
			if binary.BigEndian.Uint64(gid[:8]) != 0xfe80000000000000 {
				return nil, nil, errSA(mad.SAReqInvalidGID)
			}
			i, ok := v.byGUID[iba.GUID(binary.BigEndian.Uint64(gid[8:]))]
			if !ok {
				return nil, nil, nil
			}
			return []int32{i}, []uint16{v.ports[i].lid}, nil
		case m.has(lidPath):
			if _, ok := v.port(lid); !ok {
				return nil, nil, nil
			}
			return []int32{v.byLID[lid]}, []uint16{lid}, nil
		}
		// Every port: a "half world" query (the other side named) is
		// answered whatever the subnet's size, as OpenSM answers it; the
		// whole world is bounded below.
		idx := make([]int32, len(v.ports))
		lids := make([]uint16, len(v.ports))
		for i := range v.ports {
			idx[i], lids[i] = int32(i), v.ports[i].lid
		}
		return idx, lids, nil
	}
	src, slids, err := side("SGID", "SLID", pq.SGID, pq.SLID)
	if err != nil {
		return err
	}
	dst, dlids, err := side("DGID", "DLID", pq.DGID, pq.DLID)
	if err != nil {
		return err
	}
	if len(src) > 1 && len(dst) > 1 && len(v.ports) > saMaxWorld {
		return errSA(mad.SAReqInsufficientComponents)
	}
	// NumbPath (IBA 15.2.5.16) caps the paths per pair; each pair has one
	// here (base LIDs), which any NumbPath of 1 or more allows. infiniband-
	// diags' ibqueryerrors asks with NumbPath 1 and Reversible 1 for the SL
	// to every destination.
	if m.has("numbPath") && pq.NumbPath == 0 {
		return nil
	}
	rec := make([]byte, d.Size)
	gidOf := func(p *viewPort) iba.GID {
		var g iba.GID
		binary.BigEndian.PutUint64(g[:], 0xfe80000000000000)
		binary.BigEndian.PutUint64(g[8:], uint64(p.guid))
		return g
	}
	for si, s := range src {
		sp := &v.ports[s]
		from := a.f.nodes[sp.fnode].base + int32(sp.port)
		for di, t := range dst {
			tp := &v.ports[t]
			info, ok := a.f.tracePath(from, dlids[di])
			if !ok {
				continue
			}
			if a.f.nodes[sp.fnode].sw != nil {
				info.mtu = min(info.mtu, iba.MTU1024)
			}
			if info.rate == 0 {
				info.rate = iba.Rate10Gbps // no link crossed: a port to itself
			}
			r := iba.PathRecord{
				ServiceID: pq.ServiceID, DGID: gidOf(tp), SGID: gidOf(sp), DLID: dlids[di], SLID: slids[si],
				Reversible: 1, PKey: 0xFFFF, MTUSelector: 2, MTU: info.mtu, RateSelector: 2, Rate: info.rate,
				PacketLifeTimeSelector: 2, PacketLifeTime: 18,
			}
			if m.has("PKey") {
				r.PKey = pq.PKey
			}
			if m.has("SL") {
				r.SL = pq.SL
			}
			if m.has("TClass") {
				r.TClass = pq.TClass
			}
			if m.has("flowLabel") {
				r.FlowLabel = pq.FlowLabel
			}
			if m.has("hopLimit") {
				r.HopLimit = pq.HopLimit
			}
			if m.has("QOSClass") {
				r.QOSClass = pq.QOSClass
			}
			if m.has("MTU") && !selected(sel(m, "MTUSelector", pq.MTUSelector), float64(r.MTU), float64(pq.MTU)) {
				continue
			}
			if m.has("rate") && !selected(sel(m, "rateSelector", pq.RateSelector), r.Rate.Gbps(), pq.Rate.Gbps()) {
				continue
			}
			if m.has("packetLifeTime") && !selected(sel(m, "packetLifeTimeSelector", pq.PacketLifeTimeSelector), float64(r.PacketLifeTime), float64(pq.PacketLifeTime)) {
				continue
			}
			if m.has("reversible") && pq.Reversible != r.Reversible {
				continue
			}
			clear(rec)
			r.MarshalTo(rec)
			if !emit(rec) {
				return nil
			}
		}
	}
	return nil
}

// sel is the selector a query gives for a value, "exactly" when the
// selector component is not in the mask.
func sel(m *matcher, path string, v uint8) uint8 {
	if m.has(path) {
		return v
	}
	return 2
}
