package sim

import (
	"context"
	"fmt"
	"math/bits"
	"slices"

	"github.com/rdmakit/rdmakit/iba"
)

// route computes minimum-hop routes to every LID and programs them into
// every switch's linear forwarding table, spreading the LIDs behind each
// destination switch over the equally short ports (the least loaded port
// first, as OpenSM's minhop does).
//
// One breadth-first search per destination switch d, run in parallel over
// compact arrays (the switch graph as a flat neighbor list), finds every
// switch's distance to d; when a switch x leaves the queue, its neighbors
// one hop closer to d are already known, so its candidate ports for d are
// read off its neighbor list right there and x's table entries for the
// LIDs behind d are written at once. The whole phase costs one BFS per
// switch, O(switches x links), with no switches^2 matrix.
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
	// The switch graph: the neighbor switch of each port, -1 for none.
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
	blocks := int(maxLID)/64 + 1
	return s.parallel(ctx, ns, func(m *msg, x int) error {
		n := &nodes[sws[x]]
		lft := make([]uint8, blocks*64)
		for i := range lft {
			lft[i] = 0xFF
		}
		load := make([]uint32, n.nports+1)
		own := hop[x*ns : (x+1)*ns]
		var ports []uint8
		for q := 1; q <= int(n.nports); q++ {
			if nbr[portStart[x]+int32(q)] >= 0 {
				ports = append(ports, uint8(q))
			}
		}
		// cand[d] has bit i set when port ports[i] is one hop closer to
		// switch d: one sequential pass per neighbor over its row of the
		// hop matrix (this is the inner loop of the whole phase:
		// switches x switch links).
		words := (len(ports) + 63) / 64
		cand := make([]uint64, ns*words)
		for i, q := range ports {
			row := hop[int(nbr[portStart[x]+int32(q)])*ns:][:ns]
			w, bit := i/64, uint64(1)<<(i%64)
			if words == 1 {
				c := cand[:len(own)]
				for d, h := range own {
					var t uint64
					if row[d]+1 == h {
						t = bit
					}
					c[d] |= t
				}
				continue
			}
			c := cand[w:]
			for d, h := range own {
				if row[d]+1 == h {
					c[d*words] |= bit
				}
			}
		}
		var pick []uint8
		var prev []uint64
		i := 0
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
			cd := cand[d*words : (d+1)*words]
			if !slices.Equal(cd, prev) {
				// A new set of candidates: start the round robin at its
				// least loaded port. The same set again (all the leaves
				// seen from a leaf) just goes on with the rotation.
				prev = cd
				pick = pick[:0]
				for w, v := range cd {
					for v != 0 {
						pick = append(pick, ports[w*64+bits.TrailingZeros64(v)])
						v &= v - 1
					}
				}
				i = 0
				for k, q := range pick {
					if load[q] < load[pick[i]] {
						i = k
					}
				}
			}
			if len(pick) == 0 {
				continue // unreachable
			}
			for _, e := range behind[d] {
				for k := uint16(0); k < e.count; k++ {
					q := pick[i]
					load[q]++
					lft[e.lid+k] = q
					if i++; i == len(pick) {
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
