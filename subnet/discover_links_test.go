package subnet

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// countingDoer counts the SMPs that reach the fabric.
type countingDoer struct {
	m MADDoer
	n atomic.Int64
}

func (c *countingDoer) Do(ctx context.Context, req mad.Request) (*mad.Reply, error) {
	c.n.Add(1)
	return c.m.Do(ctx, req)
}

// simFabric brings up tp in process, configured by the built-in SM, and
// returns it with a MAD client on hca1 and that port's LID.
func simFabric(t testing.TB, tp *topo.Topology) (*sim.Fabric, *mad.Client, uint16) {
	t.Helper()
	f, err := sim.New(tp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := f.RunSM(ctx, sim.SMConfig{NoSA: true}); err != nil {
		t.Fatal(err)
	}
	tr, err := f.Attach("hca1", 1)
	if err != nil {
		t.Fatal(err)
	}
	mc := mad.NewClient(tr, mad.WithTimeout(liveTimeout), mad.WithRetries(2))
	t.Cleanup(func() { mc.Close() })
	lp, err := mc.LocalPort(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return f, mc, lp.LID
}

// knownLinksRun is one discovery and what it showed and sent.
type knownLinksRun struct {
	s     *Subnet
	rep   *DiscoverReport
	shown string
	calls int
	text  string
	cache []byte
}

func discoverCounted(t *testing.T, m MADDoer, opt DiscoverOptions) knownLinksRun {
	t.Helper()
	var shown []string
	opt.ShowNode = func(l string) { shown = append(shown, l) }
	c := &countingDoer{m: m}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, rep, err := Discover(ctx, c, opt)
	if err != nil {
		t.Fatalf("Discover %+v: %v", opt, err)
	}
	text, cache := outputs(t, s)
	return knownLinksRun{s: s, rep: rep, shown: strings.Join(shown, "\n"), calls: int(c.n.Load()), text: text, cache: cache}
}

// TestDiscoverKnownLinks discovers generated fabrics through the simulator
// with and without ProbeKnownLinks: a fat tree, a leaf-spine with two
// cables between every leaf and spine, a dragonfly and a random fabric
// (whose switch links also join switches at the same depth); from a CA
// and from a switch, by directed route and LID routed, a partial scan, and
// with a dead switch. The subnet (text, -s lines, libibnetdisc cache,
// MADs, failures) is the same both ways; only what was sent differs: the
// links probed from both ends, each once, all of them when the walk sends
// one query at a time.
func TestDiscoverKnownLinks(t *testing.T) {
	fabrics := map[string]func() (*topo.Topology, error){
		"fattree": func() (*topo.Topology, error) { return topo.FatTree(topo.FatTreeConfig{K: 4, N: 3}) },
		"leafspine-2x": func() (*topo.Topology, error) {
			return topo.LeafSpine(topo.LeafSpineConfig{Leaves: 6, Spines: 3, HostsPerLeaf: 3, Uplinks: 6})
		},
		"dragonfly": func() (*topo.Topology, error) { return topo.Dragonfly(topo.DragonflyConfig{A: 4, P: 2, H: 2}) },
		"random": func() (*topo.Topology, error) {
			return topo.Random(topo.RandomConfig{Switches: 24, Radix: 12, Hosts: 30, ExtraLinks: 20, Seed: 3})
		},
	}
	for name, gen := range fabrics {
		t.Run(name, func(t *testing.T) {
			tp, err := gen()
			if err != nil {
				t.Fatal(err)
			}
			f, mc, lid := simFabric(t, tp)
			cases := []struct {
				name  string
				opt   DiscoverOptions
				exact bool // one query at a time: every second probe is skipped
			}{
				{"DR", DiscoverOptions{}, false},
				{"sequential", DiscoverOptions{NoPrefetch: true, MaxInFlight: 1}, true},
				{"LID", DiscoverOptions{Method: ByLID, LocalLID: lid}, false},
				{"from switch", DiscoverOptions{From: DRPath{1}}, false},
				{"partial", DiscoverOptions{From: DRPath{1, 0}, MaxHops: 1}, false},
			}
			for _, c := range cases {
				if c.name == "partial" {
					// The start leaf's first up port, whatever the shape.
					leaf := discoverCounted(t, mc, DiscoverOptions{MaxHops: 0, From: DRPath{1}, NoPrefetch: true, MaxInFlight: 1}).s
					from, _ := leaf.From()
					for _, p := range from.Ports[1:] {
						if p != nil && p.Remote != nil && p.Remote.Node.Type == iba.NodeTypeSwitch {
							c.opt.From[1] = uint8(p.Num)
							break
						}
					}
				}
				probeAll := c.opt
				probeAll.ProbeKnownLinks = true
				all := discoverCounted(t, mc, probeAll)
				some := discoverCounted(t, mc, c.opt)
				compareKnownLinks(t, c.name, all, some)
				twice := linksProbedTwice(all.s)
				if c.opt.MaxHops == 0 && (twice == 0 || some.rep.FromLinks == 0) {
					t.Errorf("%s: %d links probed from both ends, %d answers from links", c.name, twice, some.rep.FromLinks)
				}
				// LID routed, a switch's PortInfo tells the port the LID
				// route entered by, not the directed route's, and the
				// walk probes back through the port it came in by too:
				// those probes are answered from links as well.
				if some.rep.FromLinks > twice && c.opt.MaxHops == 0 && c.opt.Method != ByLID {
					t.Errorf("%s: %d answers from links, but only %d links are probed twice", c.name, some.rep.FromLinks, twice)
				}
				if c.exact && (some.rep.FromLinks != twice || some.rep.Sent != all.rep.Sent-twice) {
					t.Errorf("%s: %d sent, %d from links; with every probe %d sent, %d links probed twice", c.name, some.rep.Sent, some.rep.FromLinks, all.rep.Sent, twice)
				}
				t.Logf("%s: %d nodes, %d queries: %d sent (%d wasted) with every probe, %d sent (%d wasted) + %d from links without; %d links probed twice",
					c.name, all.s.Len(), all.rep.Queries, all.rep.Sent, all.rep.Wasted, some.rep.Sent, some.rep.Wasted, some.rep.FromLinks, twice)
			}

			// A dead switch: nothing is made up for it, and what the walk
			// reports is the same both ways.
			clean := discoverCounted(t, mc, DiscoverOptions{}).s
			var victim *Node
			for _, n := range clean.NodesOfType(iba.NodeTypeSwitch) {
				if n.Index() > clean.Len()/3 { // not the start leaf
					victim = n
					break
				}
			}
			if victim == nil {
				t.Fatal("no switch to kill")
			}
			dead := strings.Fields(victim.Description())[0]
			if err := f.SetNodeDead(dead, true); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.SetNodeDead(dead, false) }()
			all := discoverCounted(t, mc, DiscoverOptions{ProbeKnownLinks: true})
			some := discoverCounted(t, mc, DiscoverOptions{})
			compareKnownLinks(t, "dead "+dead, all, some)
			if len(some.rep.Unreachable()) == 0 || some.s.Node(victim.GUID) != nil {
				t.Errorf("dead %s: found %v, %d unreachable", dead, some.s.Node(victim.GUID) != nil, len(some.rep.Unreachable()))
			}
		})
	}
}

// compareKnownLinks checks that a discovery without ProbeKnownLinks (some)
// found what one with it (all) did, and that the counts add up.
func compareKnownLinks(t *testing.T, name string, all, some knownLinksRun) {
	t.Helper()
	if some.text != all.text || string(some.cache) != string(all.cache) {
		t.Errorf("%s: the subnet differs from the one found with every probe sent:\n%s", name, lineDiff(some.text, all.text))
	}
	if some.shown != all.shown {
		t.Errorf("%s: the -s lines differ:\n%s", name, lineDiff(some.shown, all.shown))
	}
	if some.s.MADs != all.s.MADs || some.rep.Queries != all.rep.Queries || some.s.MaxHopsDiscovered != all.s.MaxHopsDiscovered {
		t.Errorf("%s: MADs %d (%d queries), hops %d; with every probe %d (%d), %d", name, some.s.MADs, some.rep.Queries, some.s.MaxHopsDiscovered, all.s.MADs, all.rep.Queries, all.s.MaxHopsDiscovered)
	}
	if len(some.rep.Failures) != len(all.rep.Failures) || len(some.s.Unreachable()) != len(all.s.Unreachable()) {
		t.Errorf("%s: %d failures, %d unreachable; with every probe %d, %d", name, len(some.rep.Failures), len(some.s.Unreachable()), len(all.rep.Failures), len(all.s.Unreachable()))
	}
	for i := range min(len(some.rep.Failures), len(all.rep.Failures)) {
		a, b := some.rep.Failures[i], all.rep.Failures[i]
		if a.Path.String() != b.Path.String() || a.Attr != b.Attr || a.Mod != b.Mod || a.Probe != b.Probe {
			t.Errorf("%s: failure %d is %v, with every probe %v", name, i, a, b)
		}
	}
	// The walk may ask a query twice (LID routed, the probe back into the
	// port a switch was entered by can be one already asked); it is sent
	// once.
	if all.rep.FromLinks != 0 || all.calls != all.rep.Sent || all.rep.Sent-all.rep.Wasted > all.rep.Queries {
		t.Errorf("%s, every probe: %d sent (%d calls), %d wasted, %d from links, %d queries", name, all.rep.Sent, all.calls, all.rep.Wasted, all.rep.FromLinks, all.rep.Queries)
	}
	if some.calls != some.rep.Sent || some.rep.Sent-some.rep.Wasted+some.rep.FromLinks > some.rep.Queries {
		t.Errorf("%s: %d sent (%d calls), %d wasted, %d from links, %d queries; with every probe %d sent", name, some.rep.Sent, some.calls, some.rep.Wasted, some.rep.FromLinks, some.rep.Queries, all.rep.Sent)
	}
}

// TestNodeInfoLocalPortNum: the byte a link answer sets is NodeInfo's
// LocalPortNum and nothing else.
func TestNodeInfoLocalPortNum(t *testing.T) {
	ni := iba.NodeInfo{LocalPortNum: 0xa5}
	b := make([]byte, AttrSize)
	if err := ni.MarshalTo(b); err != nil {
		t.Fatal(err)
	}
	for i, v := range b {
		want := byte(0)
		if i == nodeInfoLocalPortNum {
			want = 0xa5
		}
		if v != want {
			t.Errorf("byte %d is %#x, want %#x (LocalPortNum at byte %d)", i, v, want, nodeInfoLocalPortNum)
		}
	}
}
