package health

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmakit/rdmakit/subnet"
)

// CreditLoop is a cycle of the channel dependency graph: channels (a
// link in one direction, on one VL) each waiting on the next for credits,
// the last on the first (Dally and Seitz; ibdm's CredLoops). Traffic that
// fills them all deadlocks.
type CreditLoop struct {
	// Channels are the cycle's channels in order: the port each leaves
	// by and its VL.
	Channels []Channel
	// Size counts the channels of the strongly connected part of the
	// graph the cycle was found in (every channel that can deadlock with
	// it).
	Size int
}

// Channel is a link direction on a VL.
type Channel struct {
	From *subnet.Port
	VL   uint8
}

// CreditLoops builds the channel dependency graph of the routes the
// switches' forwarding tables make and returns its cycles, one per
// strongly connected part. A route from a CA through switches u, s, t
// makes the channel into s (u's out port) depend on the channel out of s
// toward t, each on the VL its SL maps to there: sl2vl gives, for a
// node, the VL of an SL from an input port to an output port (IBA
// 14.2.5.8; nil means every SL on VL 0, as ibdiagnet without -vlr). Only
// routes that reach their destination count (routing faults are the
// routing check's). sls are the SLs followed (SL 0 when empty).
func CreditLoops(s *subnet.Subnet, sl2vl map[*subnet.Node]*SL2VL, sls []uint8) []CreditLoop {
	return creditLoops(routing(s, true), sl2vl, sls)
}

func creditLoops(r *RoutingResult, sl2vl map[*subnet.Node]*SL2VL, sls []uint8) []CreditLoop {
	g := r.g
	if len(sls) == 0 {
		sls = []uint8{0}
	}
	// vlAt is the VL of sl on the channel leaving node n by port out,
	// having come in by port in.
	vlAt := func(n *subnet.Node, in, out int, sl uint8) uint8 {
		if sl2vl == nil {
			return 0
		}
		if v, ok := sl2vl[n].VL(in, out, sl); ok {
			return v
		}
		return sl & 7 // an unread table: the default mapping's
	}
	// The VLs each channel carries, per SL: out of a CA, its table's;
	// out of a switch, what its tables give for the channels that turn
	// into it.
	type key struct {
		c  int32
		sl uint8
	}
	carried := map[key]uint16{}
	for e, c := range g.caChan {
		if c < 0 {
			continue
		}
		p := g.ends[e]
		for _, sl := range sls {
			carried[key{c, sl}] |= 1 << vlAt(p.Node, 0, p.Num, sl)
		}
	}
	g.eachTurn(r, func(c, c2 int32, n *subnet.Node, in, o int) {
		for _, sl := range sls {
			carried[key{c2, sl}] |= 1 << vlAt(n, in, o, sl)
		}
	})
	// Vertices are channel*16+VL; edges follow the turns.
	succ := map[int32][]int32{}
	var verts []int32
	seen := map[int32]bool{}
	addV := func(v int32) {
		if !seen[v] {
			seen[v] = true
			verts = append(verts, v)
		}
	}
	g.eachTurn(r, func(c, c2 int32, n *subnet.Node, in, o int) {
		edges := map[int64]bool{}
		for _, sl := range sls {
			vls := carried[key{c, sl}]
			v2 := vlAt(n, in, o, sl)
			for v := uint8(0); v < 16; v++ {
				if vls&(1<<v) == 0 {
					continue
				}
				from, to := c*16+int32(v), c2*16+int32(v2)
				if k := int64(from)<<32 | int64(to); !edges[k] {
					edges[k] = true
					addV(from)
					addV(to)
					succ[from] = append(succ[from], to)
				}
			}
		}
	})
	sort.Slice(verts, func(i, j int) bool { return verts[i] < verts[j] })
	var loops []CreditLoop
	for _, comp := range scc(verts, succ) {
		self := len(comp) == 1 && contains(succ[comp[0]], comp[0])
		if len(comp) < 2 && !self {
			continue
		}
		cyc := cycleIn(comp, succ)
		l := CreditLoop{Size: len(comp)}
		for _, v := range cyc {
			l.Channels = append(l.Channels, Channel{From: g.chanEnd[v/16].from, VL: uint8(v % 16)})
		}
		loops = append(loops, l)
	}
	return loops
}

// eachTurn calls f for every turn the routes take: from channel c into
// switch n by its port in, out by its port o onto channel c2.
func (g *graph) eachTurn(r *RoutingResult, f func(c, c2 int32, n *subnet.Node, in, o int)) {
	for c := int32(0); c < g.nChan; c++ {
		ci := g.chanEnd[c]
		if ci.to < 0 {
			continue
		}
		n := g.sw[ci.to]
		for o := 1; o < len(g.peer[ci.to]); o++ {
			if r.turns[c][o/64]&(1<<(o%64)) != 0 {
				f(c, g.chanOf[ci.to][o], n, int(ci.in), o)
			}
		}
	}
}

func contains(l []int32, v int32) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

// scc is Tarjan's strongly connected components, iterative.
func scc(verts []int32, succ map[int32][]int32) [][]int32 {
	index := map[int32]int32{}
	low := map[int32]int32{}
	on := map[int32]bool{}
	var stack []int32
	var out [][]int32
	next := int32(0)
	type frame struct {
		v int32
		i int
	}
	for _, root := range verts {
		if _, ok := index[root]; ok {
			continue
		}
		call := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		on[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.i < len(succ[f.v]) {
				w := succ[f.v][f.i]
				f.i++
				if _, ok := index[w]; !ok {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					on[w] = true
					call = append(call, frame{w, 0})
				} else if on[w] && index[w] < low[f.v] {
					low[f.v] = index[w]
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				if u := call[len(call)-1].v; low[v] < low[u] {
					low[u] = low[v]
				}
			}
			if low[v] == index[v] {
				var comp []int32
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					on[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				sort.Slice(comp, func(i, j int) bool { return comp[i] < comp[j] })
				out = append(out, comp)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// cycleIn finds a cycle through the first vertex of a strongly connected
// component: a breadth-first search back to it within the component.
func cycleIn(comp []int32, succ map[int32][]int32) []int32 {
	in := map[int32]bool{}
	for _, v := range comp {
		in[v] = true
	}
	start := comp[0]
	prev := map[int32]int32{}
	queue := []int32{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range succ[v] {
			if !in[w] {
				continue
			}
			if w == start {
				cyc := []int32{v}
				for v != start {
					v = prev[v]
					cyc = append(cyc, v)
				}
				for i, j := 0, len(cyc)-1; i < j; i, j = i+1, j-1 {
					cyc[i], cyc[j] = cyc[j], cyc[i]
				}
				return cyc
			}
			if _, ok := prev[w]; !ok && w != start {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return []int32{start}
}

var _ = register(&Check{
	Name: "credit-loops", Severity: Error, Default: true,
	Needs: NeedLFT | NeedSL2VL,
	Doc: `Credit loops: cycles in the channel dependency graph of the unicast
routes (a channel is a link direction on a VL; a route through switches
u, s, t makes u's channel into s depend on s's channel toward t, on the
VLs the SL-to-VL tables give, IBA 14.2.5.8). A cycle can deadlock the
fabric. ibdiagnet -r's credit loop report and ibdmchk's analysis (ibdm
CredLoops.cpp); with Options.VLRouting (ibdiagnet -vlr) the SL-to-VL
tables are read and followed, otherwise every SL travels on VL 0.
Options.SLs are the SLs followed (SL 0 by default). One finding per
strongly connected part of the graph, with one of its cycles.`,
	run: func(d *Data) []Finding {
		var tables map[*subnet.Node]*SL2VL
		if d.opts.VLRouting {
			tables = d.SL2VL
		}
		var out []Finding
		for _, l := range creditLoops(d.routing(), tables, d.opts.SLs) {
			fd := Finding{Port: RefOf(l.Channels[0].From)}
			var hops []string
			for _, c := range l.Channels {
				fd.Ports = append(fd.Ports, RefOf(c.From))
				hops = append(hops, fmt.Sprintf("%q/P%d", c.From.Node.Description(), c.From.Num))
			}
			vl := fmt.Sprintf("VL %d", l.Channels[0].VL)
			fd.Message = fmt.Sprintf("credit loop of %d channels (%s): %s, back to the first (%d channels can deadlock)",
				len(l.Channels), vl, strings.Join(hops, " -> "), l.Size)
			out = append(out, fd)
		}
		return out
	},
})
