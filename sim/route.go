package sim

import (
	"context"
	"fmt"

	"github.com/rdmakit/rdmakit/iba"
)

// route computes minimum-hop routes to every LID and programs them into
// every switch's linear forwarding table, spreading the LIDs behind each
// destination switch over the equally short ports (the least loaded port
// first, as OpenSM's minhop does).
func (s *SM) route(ctx context.Context, nodes []smNode, maxLID uint16) error {
	var sws []int32
	for i := range nodes {
		if nodes[i].typ == iba.NodeTypeSwitch {
			sws = append(sws, int32(i))
		}
	}
	ns := len(sws)
	if ns == 0 {
		return nil
	}
	// The switch graph in compressed form: the neighbor switch of each
	// port, -1 for none (flat arrays keep the O(switches^2) loops in cache).
	portStart := make([]int32, ns+1)
	for x, id := range sws {
		portStart[x+1] = portStart[x] + int32(nodes[id].nports) + 1
	}
	nbr := make([]int32, portStart[ns])
	for x, id := range sws {
		n := &nodes[id]
		for q := 0; q <= int(n.nports); q++ {
			v := int32(-1)
			if l := n.links[q]; q > 0 && l.node >= 0 {
				v = nodes[l.node].sw
			}
			nbr[portStart[x]+int32(q)] = v
		}
	}
	// hop[d*ns+x]: hops between switches d and x (the graph is undirected,
	// so row x also gives the hops from x to every d), by BFS from each d.
	const inf = 0xFF
	hop := make([]uint8, ns*ns)
	err := s.parallel(ctx, ns, func(_ *msg, d int) error {
		row := hop[d*ns : (d+1)*ns]
		for i := range row {
			row[i] = inf
		}
		row[d] = 0
		queue := make([]int32, 1, 64)
		queue[0] = int32(d)
		for qi := 0; qi < len(queue); qi++ {
			x := queue[qi]
			hx := row[x]
			for _, y := range nbr[portStart[x]:portStart[x+1]] {
				if y >= 0 && row[y] == inf && hx < inf-1 {
					row[y] = hx + 1
					queue = append(queue, y)
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// What sits behind each switch: its own LID and its CAs' LID ranges.
	type dest struct {
		lid, count uint16
		port       uint8 // the switch port the CA hangs on; 0 for the switch
	}
	behind := make([][]dest, ns)
	for _, id := range sws {
		n := &nodes[id]
		x := n.sw
		if n.lid[0] != 0 {
			behind[x] = append(behind[x], dest{n.lid[0], 1, 0})
		}
		for q := 1; q <= int(n.nports); q++ {
			l := n.links[q]
			if l.node < 0 || nodes[l.node].typ == iba.NodeTypeSwitch {
				continue
			}
			if lid := nodes[l.node].lid[l.port]; lid != 0 {
				behind[x] = append(behind[x], dest{lid, 1 << s.cfg.LMC, uint8(q)})
			}
		}
	}
	blocks := int(maxLID)/64 + 1
	return s.parallel(ctx, ns, func(m *msg, x int) error {
		n := &nodes[sws[x]]
		lft := make([]uint8, blocks*64)
		for i := range lft {
			lft[i] = 0xFF
		}
		load := make([]uint32, n.nports+1)
		cand := make([]uint8, 0, n.nports)
		own := hop[x*ns : (x+1)*ns]
		// rows[i] gives the hops from the switch behind port ports[i].
		var ports []uint8
		var rows [][]uint8
		for q := 1; q <= int(n.nports); q++ {
			if y := nbr[portStart[x]+int32(q)]; y >= 0 {
				ports = append(ports, uint8(q))
				rows = append(rows, hop[int(y)*ns:(int(y)+1)*ns])
			}
		}
		for d := 0; d < ns; d++ {
			if len(behind[d]) == 0 {
				continue
			}
			if d == x {
				for _, e := range behind[d] {
					for k := uint16(0); k < e.count; k++ {
						lft[e.lid+k] = e.port
					}
				}
				continue
			}
			h := own[d]
			if h == inf {
				continue // unreachable
			}
			cand = cand[:0]
			for i, r := range rows {
				if r[d] == h-1 {
					cand = append(cand, ports[i])
				}
			}
			// Round robin from the least loaded candidate: as balanced as
			// picking the least loaded port for every LID, in O(1) each.
			start := 0
			for i, q := range cand {
				if load[q] < load[cand[start]] {
					start = i
				}
			}
			i := start
			for _, e := range behind[d] {
				for k := uint16(0); k < e.count; k++ {
					q := cand[i]
					load[q]++
					lft[e.lid+k] = q
					if i++; i == len(cand) {
						i = 0
					}
				}
			}
		}
		for b := 0; b < blocks; b++ {
			copy(m.buf[offSMPData:offSMPData+64], lft[b*64:])
			st, err := s.smp(m, n.path, methodSet, attrLFT, uint32(b))
			if err != nil {
				return err
			}
			if st != 0 {
				return fmt.Errorf("SM: SubnSet LinearForwardingTable block %d via %v: status 0x%04x", b, n.path, st)
			}
		}
		si := iba.SwitchInfo{LinearFDBTop: maxLID, PortStateChange: 1, LifeTimeValue: 18}
		clear(m.buf[offSMPData : offSMPData+64])
		si.MarshalTo(m.buf[offSMPData:])
		st, err := s.smp(m, n.path, methodSet, attrSwitchInfo, 0)
		if err != nil {
			return err
		}
		if st != 0 {
			return fmt.Errorf("SM: SubnSet SwitchInfo via %v: status 0x%04x", n.path, st)
		}
		return nil
	})
}

// serve answers SMInfo (IBA 14.2.5.13) at the SM's port and swallows traps.
func (s *SM) serve(m *msg) int {
	b := m.buf[:]
	method := b[offMethod]
	if method == uint8(iba.MethodTrap) {
		return drop
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
