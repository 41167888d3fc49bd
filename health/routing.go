package health

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/subnet"
)

// RoutingResult is the analysis of the unicast routes that the switches'
// linear forwarding tables (IBA 14.2.5.10) make: every LID of every end
// port followed from every switch.
type RoutingResult struct {
	// Switches and LIDs count what was analysed: every switch, every
	// LID of an end port cabled to a switch (all of an LMC range).
	Switches int `json:"switches"`
	LIDs     int `json:"lids"`
	// Unrouted lists the switches that have no entry for some of those
	// LIDs.
	Unrouted []SwitchLIDs `json:"unrouted,omitempty"`
	// Faults are the LIDs whose route loops or ends elsewhere than at
	// the LID's port, one per LID (the first switch found to fail it).
	Faults []RouteFault `json:"faults,omitempty"`
	// Histogram[h] counts the CA-to-CA routes of h hops (links): from
	// every CA or router port to the base LID of every other;
	// MaxHops is the longest, Pairs the routes counted.
	Histogram []int64 `json:"hop_histogram"`
	MaxHops   int     `json:"max_hops"`
	Pairs     int64   `json:"pairs"`

	g     *graph
	turns [][]uint64 // per channel: the out ports of the switch it enters that routes continue on
}

// SwitchLIDs is a switch and the LIDs it has no route for (the first
// 16 of them, Count in all).
type SwitchLIDs struct {
	Switch *subnet.Node `json:"-"`
	Ref    *PortRef     `json:"switch"`
	LIDs   []uint16     `json:"lids"`
	Count  int          `json:"count"`
}

// RouteFault is a LID whose route fails.
type RouteFault struct {
	LID uint16 `json:"lid"`
	// Loop: the route comes back to a switch it passed; Switches are the
	// loop's switches in order. Otherwise the route leaves Switches'
	// last switch through Port to a place that is not the LID's port.
	Loop     bool           `json:"loop"`
	Switches []*subnet.Node `json:"-"`
	// Refs describes Switches, for JSON.
	Refs []*PortRef `json:"switches"`
	Port int        `json:"port,omitempty"`
	// Reason says what happens there; Affected counts the switches whose
	// route to the LID fails because of it.
	Reason   string `json:"reason"`
	Affected int    `json:"affected_switches"`
}

// Routing follows every end port's LIDs from every switch through the
// forwarding tables read into s (SetLFTBlock): which switches have no
// entry, which routes loop or end at the wrong port, and the hop-count
// histogram of the CA-to-CA routes (ibdiagnet -r's hop-count report and
// route checks; ibdmchk's verification). Destinations are shared out
// over the CPUs; the cost is the number of LIDs times the number of
// switches, memory a few bytes per switch per CPU.
func Routing(s *subnet.Subnet) *RoutingResult { return routing(s, false) }

const sampleLIDs = 16

func routing(s *subnet.Subnet, turns bool) *RoutingResult {
	g := newGraph(s)
	res := &RoutingResult{Switches: len(g.sw), g: g}
	var lids []uint16
	for l := 1; l < 0xc000; l++ {
		if e := g.owner[l]; e >= 0 && g.endSwitch[e] >= 0 {
			lids = append(lids, uint16(l))
		}
	}
	res.LIDs = len(lids)
	words := (g.maxPort + 1 + 63) / 64
	workers := max(1, min(runtime.GOMAXPROCS(0), len(lids)/64))
	type part struct {
		w        *walker
		faults   []RouteFault
		hist     []int64
		pairs    int64
		unrouted []int
		samples  [][]uint16
	}
	parts := make([]*part, workers)
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		p := &part{w: newWalker(g, turns, words), unrouted: make([]int, len(g.sw)), samples: make([][]uint16, len(g.sw))}
		parts[k] = p
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := k; i < len(lids); i += workers {
				lid := lids[i]
				f := p.w.walk(lid)
				if f != nil {
					p.faults = append(p.faults, *f)
				}
				for _, sw := range p.w.missing {
					p.unrouted[sw]++
					if len(p.samples[sw]) < sampleLIDs {
						p.samples[sw] = append(p.samples[sw], lid)
					}
				}
				e := g.owner[lid]
				end := g.ends[e]
				if end.Node.Type == iba.NodeTypeSwitch || first(end) != lid {
					continue
				}
				for sw, n := range g.caCount {
					d := p.w.distOf(int32(sw))
					if n == 0 || d < 0 {
						continue
					}
					c := int64(n)
					if int32(sw) == g.endSwitch[e] {
						c-- // not to itself
					}
					for len(p.hist) <= int(d)+1 {
						p.hist = append(p.hist, 0)
					}
					p.hist[d+1] += c
					p.pairs += c
				}
			}
		}()
	}
	wg.Wait()
	unrouted := make([]int, len(g.sw))
	samples := make([][]uint16, len(g.sw))
	for _, p := range parts {
		res.Faults = append(res.Faults, p.faults...)
		for h, c := range p.hist {
			for len(res.Histogram) <= h {
				res.Histogram = append(res.Histogram, 0)
			}
			res.Histogram[h] += c
		}
		res.Pairs += p.pairs
		for sw, c := range p.unrouted {
			unrouted[sw] += c
			samples[sw] = append(samples[sw], p.samples[sw]...)
		}
		if turns {
			if res.turns == nil {
				res.turns = p.w.turns
				continue
			}
			for c, bits := range p.w.turns {
				for i, b := range bits {
					res.turns[c][i] |= b
				}
			}
			for sw, bits := range p.w.out {
				for i, b := range bits {
					parts[0].w.out[sw][i] |= b
				}
			}
		}
	}
	for h, c := range res.Histogram {
		if c > 0 {
			res.MaxHops = h
		}
	}
	for sw, c := range unrouted {
		if c == 0 {
			continue
		}
		sm := samples[sw]
		sort.Slice(sm, func(i, j int) bool { return sm[i] < sm[j] })
		if len(sm) > sampleLIDs {
			sm = sm[:sampleLIDs]
		}
		res.Unrouted = append(res.Unrouted, SwitchLIDs{Switch: g.sw[sw], Ref: NodeRef(g.sw[sw]), LIDs: sm, Count: c})
	}
	sort.Slice(res.Faults, func(i, j int) bool { return res.Faults[i].LID < res.Faults[j].LID })
	for i := range res.Faults {
		for _, n := range res.Faults[i].Switches {
			res.Faults[i].Refs = append(res.Faults[i].Refs, NodeRef(n))
		}
	}
	if turns {
		// A CA's packets may take any port its switch routes out of,
		// but the one they came in by.
		out := parts[0].w.out
		for e, c := range g.caChan {
			if c < 0 {
				continue
			}
			sw := g.endSwitch[e]
			for i, b := range out[sw] {
				res.turns[c][i] |= b
			}
			in := g.endIn[e]
			res.turns[c][in/64] &^= 1 << (in % 64)
		}
	}
	return res
}

func first(p *subnet.Port) uint16 {
	l, _ := p.LIDs()
	return l
}

// walker follows one destination LID from every switch.
type walker struct {
	g     *graph
	dist  []int32  // links from the switch to the LID's port; -1: fails; -2: on the walk
	stamp []uint32 // dist is valid where stamp is gen
	gen   uint32
	stack []int32
	// missing are the switches without an entry for the LID just walked.
	missing []int32
	// turns and out (with turns on): per channel the out ports routes
	// continue on at its far switch; per switch the ports routes leave by.
	turns  [][]uint64
	out    [][]uint64
	used   []uint32 // switch on a CA's route to the LID, where useGen
	useGen uint32
}

func newWalker(g *graph, turns bool, words int) *walker {
	w := &walker{g: g, dist: make([]int32, len(g.sw)), stamp: make([]uint32, len(g.sw))}
	if turns {
		w.turns = make([][]uint64, g.nChan)
		for i := range w.turns {
			w.turns[i] = make([]uint64, words)
		}
		w.used = make([]uint32, len(g.sw))
		w.out = make([][]uint64, len(g.sw))
		for i := range w.out {
			w.out[i] = make([]uint64, words)
		}
	}
	return w
}

func (w *walker) distOf(s int32) int32 {
	if w.stamp[s] != w.gen {
		return -1
	}
	return w.dist[s]
}

// walk computes every switch's distance to lid and returns the first
// fault found.
func (w *walker) walk(lid uint16) *RouteFault {
	g := w.g
	w.gen++
	w.missing = w.missing[:0]
	owner := g.owner[lid]
	var fault *RouteFault
	for s0 := range g.sw {
		if w.stamp[s0] == w.gen {
			continue
		}
		w.stack = w.stack[:0]
		cur := int32(s0)
		var end int32 // distance past the stack's top, or -1
		for {
			w.stamp[cur], w.dist[cur] = w.gen, -2
			w.stack = append(w.stack, cur)
			o, ok := g.lft(cur, lid)
			if !ok {
				w.missing = append(w.missing, cur)
				end = -1
				break
			}
			if o == 0 {
				if g.ends[owner].Node == g.sw[cur] {
					end = 0
					w.stack = w.stack[:len(w.stack)-1]
					w.dist[cur] = 0
					end = 0
					goto resolve
				}
				if fault == nil {
					fault = &RouteFault{LID: lid, Switches: w.path(), Reason: "the switch forwards it to its own port 0"}
				}
				end = -1
				break
			}
			if int(o) >= len(g.peer[cur]) || g.peer[cur][o].kind == hopNone {
				if fault == nil {
					fault = &RouteFault{LID: lid, Switches: w.path(), Port: int(o), Reason: fmt.Sprintf("port %d leads nowhere (no cable, or no such port)", o)}
				}
				end = -1
				break
			}
			h := g.peer[cur][o]
			if h.kind == hopEnd {
				if lo, hi := g.ends[h.to].LIDs(); h.to == owner || (lid >= lo && lid <= hi) {
					end = 1
					w.stack = w.stack[:len(w.stack)-1]
					w.dist[cur] = 1
					goto resolve
				}
				if fault == nil {
					other := g.ends[h.to]
					fault = &RouteFault{LID: lid, Switches: w.path(), Port: int(o),
						Reason: fmt.Sprintf("port %d leads to %q port %d, which does not have the LID", o, other.Node.Description(), other.Num)}
				}
				end = -1
				break
			}
			t := h.to
			if w.stamp[t] == w.gen {
				switch d := w.dist[t]; {
				case d >= 0:
					w.stack = w.stack[:len(w.stack)-1]
					w.dist[cur] = d + 1
					end = d + 1
					goto resolve
				case d == -2:
					if fault == nil {
						i := len(w.stack) - 1
						for i > 0 && w.stack[i] != t {
							i--
						}
						var loop []*subnet.Node
						for _, s := range w.stack[i:] {
							loop = append(loop, g.sw[s])
						}
						fault = &RouteFault{LID: lid, Loop: true, Switches: loop, Reason: "the route loops"}
					}
					end = -1
				default:
					end = -1
				}
				break
			}
			cur = t
		}
		// The top of the stack failed.
		w.stack = w.stack[:len(w.stack)-1]
		w.dist[cur] = -1
	resolve:
		for i := len(w.stack) - 1; i >= 0; i-- {
			s := w.stack[i]
			if end >= 0 {
				end++
			}
			w.dist[s] = end
		}
	}
	if fault != nil {
		for s := range g.sw {
			if w.dist[s] < 0 {
				fault.Affected++
			}
		}
	}
	if w.turns != nil {
		w.mark(lid)
	}
	return fault
}

// path is the switches of the walk so far.
func (w *walker) path() []*subnet.Node {
	out := make([]*subnet.Node, len(w.stack))
	for i, s := range w.stack {
		out[i] = w.g.sw[s]
	}
	return out
}

// mark records the turns that the routes from the CAs to lid take at
// the switches they cross (ibdiagnet and ibdm follow CA-to-CA routes:
// switches' own LIDs are reached by management packets, which VL15
// carries without credits). A switch is on such a route when a CA other
// than lid's hangs off it, or a switch on one forwards lid to it.
func (w *walker) mark(lid uint16) {
	g := w.g
	e := g.owner[lid]
	if g.ends[e].Node.Type == iba.NodeTypeSwitch {
		return
	}
	w.useGen++
	for u := range g.sw {
		n := g.caCount[u]
		if int32(u) == g.endSwitch[e] {
			n--
		}
		if n <= 0 {
			continue
		}
		for x := int32(u); w.dist[x] >= 1 && w.used[x] != w.useGen; {
			w.used[x] = w.useGen
			o, _ := g.lft(x, lid)
			w.out[x][o/64] |= 1 << (o % 64)
			h := g.peer[x][o]
			if h.kind != hopSwitch || w.dist[h.to] < 1 {
				break
			}
			o2, _ := g.lft(h.to, lid)
			c := g.chanOf[x][o]
			w.turns[c][o2/64] |= 1 << (o2 % 64)
			x = h.to
		}
	}
}

var _ = register(&Check{
	Name: "routing", Severity: Error, Default: true,
	Needs: NeedLFT,
	Doc: `Unicast routing (IBA 14.2.5.10, 18.2.4.3): every switch's linear
forwarding table has an entry for every LID of every end port, and the
route to each LID from every switch ends at the port that has it,
without coming back to a switch (a loop) and without leaving through a
port with no cable or to another node. ibdiagnet's route checks (all
routes traced, "-r"), ibdmchk's verification mode. The hop-count
histogram of the CA-to-CA routes goes into the report. One finding per
switch that lacks entries (naming the first LIDs), one per LID whose
route loops or goes astray; tables that could not be read are reported
too.`,
	run: func(d *Data) []Finding {
		var out []Finding
		for _, f := range d.failures("LinearForwardingTable") {
			out = append(out, Finding{Port: NodeRef(f.Node), Message: fmt.Sprintf("the forwarding table cannot be read: %v", f.Err)})
		}
		r := d.routing()
		for _, u := range r.Unrouted {
			var l []string
			for _, x := range u.LIDs {
				l = append(l, fmt.Sprint(x))
			}
			more := ""
			if u.Count > len(u.LIDs) {
				more = ", ..."
			}
			out = append(out, Finding{Port: u.Ref, LID: u.LIDs[0],
				Message: fmt.Sprintf("the switch has no route for %d LIDs (%s%s)", u.Count, strings.Join(l, ", "), more)})
		}
		for _, f := range r.Faults {
			fd := Finding{LID: f.LID}
			var names []string
			for _, n := range f.Switches {
				fd.Ports = append(fd.Ports, NodeRef(n))
				names = append(names, fmt.Sprintf("%q", n.Description()))
			}
			if len(f.Switches) > 0 {
				fd.Port = NodeRef(f.Switches[len(f.Switches)-1])
				if f.Port != 0 {
					fd.Port.Port = f.Port
				}
			}
			if f.Loop {
				fd.Port = NodeRef(f.Switches[0])
				fd.Message = fmt.Sprintf("the route to LID %d loops: %s, back to %s (%d switches cannot reach the LID)", f.LID, strings.Join(names, " -> "), names[0], f.Affected)
			} else {
				fd.Message = fmt.Sprintf("the route to LID %d fails at %s: %s (%d switches cannot reach the LID)", f.LID, names[len(names)-1], f.Reason, f.Affected)
			}
			out = append(out, fd)
		}
		return out
	},
})

// routing is the routing analysis of the data, made once.
func (d *Data) routing() *RoutingResult {
	d.once.Do(func() { d.rt = routing(d.Subnet, true) })
	return d.rt
}
