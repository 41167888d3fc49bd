package subnet

import (
	"bytes"
	"context"
	"errors"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

// fakeSMA answers directed route SMPs from a fakeFabric, after a random
// delay so that replies come back out of order.
type fakeSMA struct {
	f        *fakeFabric
	from     *fakeNode
	fromPort int
	jitter   time.Duration
	block    chan struct{} // when set, every reply waits for it

	mu       sync.Mutex
	rnd      *rand.Rand
	inFlight int
	peak     int
	calls    int
}

var errFakeTimeout = errors.New("fake: no reply")

func (s *fakeSMA) Do(ctx context.Context, req mad.Request) (*mad.Reply, error) {
	s.mu.Lock()
	s.calls++
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	d := time.Duration(0)
	if s.jitter > 0 {
		d = time.Duration(s.rnd.Int63n(int64(s.jitter)))
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if s.block != nil {
		select {
		case <-s.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	rt := req.Target.Route()
	if rt.DR == nil {
		return nil, errors.New("fake: only directed routes")
	}
	n, entry := s.from, s.fromPort
	for i, hop := range rt.DR.Path[1:] {
		if i > 0 && n.typ != iba.NodeTypeSwitch {
			return nil, errFakeTimeout
		}
		if int(hop) >= len(n.ports) || n.ports[hop].peer == nil {
			return nil, errFakeTimeout
		}
		n, entry = n.ports[hop].peer, n.ports[hop].peerNum
		if n.dead {
			return nil, errFakeTimeout
		}
	}
	var data []byte
	switch req.AttrID {
	case iba.AttrIDNodeInfo:
		data = n.nodeInfo(entry)
	case iba.AttrIDNodeDescription:
		data = make([]byte, AttrSize)
		copy(data, n.desc)
	case iba.AttrIDSwitchInfo:
		data = make([]byte, AttrSize)
		si := iba.SwitchInfo{LinearFDBCap: 49152, LinearFDBTop: 100}
		_ = si.MarshalTo(data)
	case iba.AttrIDPortInfo:
		if int(req.AttrMod) >= len(n.ports) {
			return nil, errFakeTimeout
		}
		data = n.portInfo(int(req.AttrMod))
		if n.typ == iba.NodeTypeSwitch {
			var pi iba.PortInfo
			_ = pi.Unmarshal(data)
			pi.LocalPortNum = uint8(entry)
			_ = pi.MarshalTo(data)
		}
	case iba.AttrIDMlnxExtPortInfo:
		data = make([]byte, AttrSize) // no FDR10
	default:
		return nil, errFakeTimeout
	}
	// A Reply built outside package mad has data offset 0: the attribute
	// is the whole MAD as far as Data is concerned.
	return &mad.Reply{MAD: data}, nil
}

func outputs(t *testing.T, s *Subnet) (string, []byte) {
	return outputsHops(t, s, true)
}

func outputsHops(t *testing.T, s *Subnet, hops bool) (string, []byte) {
	t.Helper()
	var topo, cache bytes.Buffer
	if err := s.WriteTopology(&topo, TopologyOptions{Now: time.Unix(0, 0).UTC(), ReportHops: hops}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteIBNDCache(&cache); err != nil {
		t.Fatal(err)
	}
	return topo.String(), cache.Bytes()
}

// linksProbedTwice counts the links between two switches that a full
// scan probes from both ends: libibnetdisc probes out of every switch
// port but the one the switch was first entered by (the start node's
// too).
func linksProbedTwice(s *Subnet) int {
	from, _ := s.From()
	probed := func(p *Port) bool {
		return p.Node == from || p.Num != int(p.Node.NodeInfo().LocalPortNum)
	}
	n := 0
	for _, node := range s.NodesOfType(iba.NodeTypeSwitch) {
		for _, p := range node.Ports[1:] {
			if p == nil || p.Remote == nil || p.Remote.Node.Type != iba.NodeTypeSwitch {
				continue
			}
			r := p.Remote
			if (node.Index() < r.Node.Index() || node == r.Node && p.Num < r.Num) && probed(p) && probed(r) {
				n++
			}
		}
	}
	return n
}

// TestDiscoverOrderIndependent discovers a fat tree with replies in random
// order, many in flight, and checks the result is byte for byte the one of
// the strictly sequential walk (NoPrefetch, one SMP at a time): the text,
// the cache, the MAD count and hop count. Probes of links already known
// are answered from them: in the sequential walk all of them, in parallel
// those whose other end answered first; with ProbeKnownLinks none, and
// the result is the same.
func TestDiscoverOrderIndependent(t *testing.T) {
	f, first := fatTree(4, 3, 5, 1)
	seq := &fakeSMA{f: f, from: first, fromPort: 1, rnd: rand.New(rand.NewSource(1))}
	want, srep, err := Discover(context.Background(), seq, DiscoverOptions{NoPrefetch: true, MaxInFlight: 1})
	if err != nil {
		t.Fatal(err)
	}
	wantText, wantCache := outputs(t, want)
	twice := linksProbedTwice(want)
	// 12 links; the 3 spines are entered from leaf-1, leaves 2-4 from
	// spine-1.
	if twice != 12-6 {
		t.Errorf("%d links probed from both ends, want 6", twice)
	}
	if srep.FromLinks != twice || srep.Sent != srep.Queries-twice || seq.calls != srep.Sent || srep.Wasted != 0 {
		t.Errorf("sequential: %d queries, %d sent (%d calls), %d from links (want %d), %d wasted", srep.Queries, srep.Sent, seq.calls, srep.FromLinks, twice, srep.Wasted)
	}
	for seed := int64(1); seed <= 5; seed++ {
		for _, probeAll := range []bool{false, true} {
			par := &fakeSMA{f: f, from: first, fromPort: 1, jitter: 2 * time.Millisecond, rnd: rand.New(rand.NewSource(seed))}
			s, rep, err := Discover(context.Background(), par, DiscoverOptions{MaxInFlight: 32, PerNode: 8, ProbeKnownLinks: probeAll})
			if err != nil {
				t.Fatal(err)
			}
			text, cache := outputs(t, s)
			if text != wantText || !bytes.Equal(cache, wantCache) {
				t.Fatalf("seed %d, ProbeKnownLinks %v: parallel discovery differs from the sequential one:\n%s", seed, probeAll, lineDiff(text, wantText))
			}
			if rep.Queries != want.MADs || len(rep.Failures) != 0 {
				t.Errorf("seed %d: %d queries (want %d), failures %v", seed, rep.Queries, want.MADs, rep.Failures)
			}
			// Prefetching follows the walk's own paths: nothing is sent
			// that the walk does not use, whatever order replies come
			// in; what is not sent is answered from a known link.
			if rep.Sent+rep.FromLinks != rep.Queries || par.calls != rep.Sent || rep.Wasted != 0 {
				t.Errorf("seed %d, ProbeKnownLinks %v: %d SMPs sent (%d calls), %d from links, %d wasted, for %d queries", seed, probeAll, rep.Sent, par.calls, rep.FromLinks, rep.Wasted, rep.Queries)
			}
			if probeAll && rep.FromLinks != 0 || !probeAll && (rep.FromLinks == 0 || rep.FromLinks > twice) {
				t.Errorf("seed %d, ProbeKnownLinks %v: %d answers from links, %d links probed twice", seed, probeAll, rep.FromLinks, twice)
			}
			if par.peak < 4 || par.peak > 32 {
				t.Errorf("seed %d: peak %d SMPs in flight, want between 4 and the limit 32", seed, par.peak)
			}
		}
	}
	if s := want.Len(); s != 4+3+20 {
		t.Errorf("%d nodes, want 27", s)
	}
}

// TestDiscoverUnreachable: a dead CA and a dead switch are reported with
// the port that leads to them; everything else is found.
func TestDiscoverUnreachable(t *testing.T) {
	f, first := fatTree(2, 2, 3, 0)
	var deadCA, deadSpine *fakeNode
	for _, n := range f.nodes {
		switch n.desc {
		case "host-5":
			deadCA = n
		case "spine-2":
			deadSpine = n
		}
	}
	deadCA.dead, deadSpine.dead = true, true
	sma := &fakeSMA{f: f, from: first, fromPort: 1, jitter: time.Millisecond, rnd: rand.New(rand.NewSource(3))}
	s, rep, err := Discover(context.Background(), sma, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 2+1+6-1 {
		t.Errorf("%d nodes found, want 8", s.Len())
	}
	var ca, spine int
	for _, u := range rep.Unreachable() {
		if u.Via == nil {
			t.Errorf("no via port: %v", u)
			continue
		}
		switch u.Via.Node.Description() {
		case "leaf-2":
			if u.Via.Num == 2 {
				ca++
			} else {
				spine++
			}
		case "leaf-1":
			spine++
		}
	}
	if ca != 1 || spine != 2 {
		t.Errorf("unreachable: %d to the CA (want 1), %d to the spine (want 2): %v", ca, spine, rep.Unreachable())
	}
	if got := len(s.Unreachable()); got != len(rep.Unreachable()) {
		t.Errorf("subnet lists %d unreachable paths, report %d", got, len(rep.Unreachable()))
	}
}

// TestDiscoverPartial: --hops and -D limit the scan as libibnetdisc's
// max_hops and start portid do.
func TestDiscoverPartial(t *testing.T) {
	f, first := fatTree(3, 2, 2, 0)
	sma := &fakeSMA{f: f, from: first, fromPort: 1, rnd: rand.New(rand.NewSource(1))}
	s, _, err := Discover(context.Background(), sma, DiscoverOptions{MaxHops: 1})
	if err != nil {
		t.Fatal(err)
	}
	// libibnetdisc checks max_hops against the deepest path queued so far,
	// for all paths: once the first node two hops away is queued, nothing
	// more is extended. So: host-1, leaf-1 and leaf-1's port 2 peer.
	if got := s.Len(); got != 3 {
		t.Errorf("--hops 1: %d nodes, want 3", got)
	}
	// From a spine (0,1,3 = host-1 -> leaf-1 port 3): the leaves (leaf-1
	// too: a start switch also goes out through the port it was entered
	// by, as in libibnetdisc) and the first CA two hops away.
	s, _, err = Discover(context.Background(), sma, DiscoverOptions{From: DRPath{1, 3}, MaxHops: 1})
	if err != nil {
		t.Fatal(err)
	}
	from, _ := s.From()
	if from == nil || from.Description() != "spine-1" {
		t.Fatalf("partial scan started at %v", from)
	}
	if got, want := s.Len(), 1+3+1; got != want {
		t.Errorf("-D 0,1,3 --hops 1: %d nodes, want %d", got, want)
	}
	if s.MaxHopsDiscovered != 2+2 {
		t.Errorf("max hops %d, want 4 (2 initial + 2)", s.MaxHopsDiscovered)
	}
	// From a CA one hop from a local switch (-D 0,1 on leaf-1): no
	// directed route goes on through the CA, so its port is left
	// unexplored, and nothing is lost.
	leaf := first.ports[1].peer
	sma = &fakeSMA{f: f, from: leaf, rnd: rand.New(rand.NewSource(1))}
	s, rep, err := Discover(context.Background(), sma, DiscoverOptions{From: DRPath{1}, MaxHops: 1})
	if err != nil {
		t.Fatal(err)
	}
	from, _ = s.From()
	if from == nil || from.Description() != "host-1" || s.Len() != 1 || len(rep.Unreachable()) != 0 || from.Port(1).Remote != nil {
		t.Errorf("-D 0,1 from a switch: started at %v, %d nodes, unreachable %v", from, s.Len(), rep.Unreachable())
	}
}

// TestDiscoverCancel: a cancelled discovery returns at once with what it
// has and the context's error.
func TestDiscoverCancel(t *testing.T) {
	f, first := fatTree(2, 1, 2, 0)
	sma := &fakeSMA{f: f, from: first, fromPort: 1, block: make(chan struct{}), rnd: rand.New(rand.NewSource(1))}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	s, _, err := Discover(ctx, sma, DiscoverOptions{})
	if !errors.Is(err, context.DeadlineExceeded) || s == nil {
		t.Fatalf("err %v, subnet %v", err, s)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v to stop", d)
	}
	if _, _, err := Discover(context.Background(), &fakeSMA{f: f, from: &fakeNode{dead: true}, rnd: rand.New(rand.NewSource(1))}, DiscoverOptions{}); err == nil {
		t.Error("a start node that never answers is not an error")
	}
}

// TestDiscoverRecords: the subnet built from SA records equals the one
// discovered by directed route.
func TestDiscoverRecords(t *testing.T) {
	f, first := fatTree(3, 2, 2, 0)
	sma := &fakeSMA{f: f, from: first, fromPort: 1, rnd: rand.New(rand.NewSource(1))}
	dr, _, err := Discover(context.Background(), sma, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var recs SARecords
	for _, n := range dr.Nodes() {
		for _, p := range n.Ports {
			if p == nil || !p.HasInfo {
				continue
			}
			lid := n.SMALID
			if n.Type != iba.NodeTypeSwitch {
				lid = p.BaseLID
			}
			pi := p.PortInfo()
			recs.Ports = append(recs.Ports, iba.PortInfoRecord{EndportLID: lid, PortNum: uint8(p.Num), PortInfo: pi})
			if p.Num == 0 || n.Type != iba.NodeTypeSwitch {
				ni := n.NodeInfo()
				ni.PortGUID, ni.LocalPortNum = p.GUID, uint8(p.Num)
				var nd iba.NodeDescription
				_ = nd.Unmarshal(n.Desc[:])
				recs.Nodes = append(recs.Nodes, iba.NodeRecord{LID: lid, NodeInfo: ni, NodeDescription: nd})
			}
			if p.Remote != nil && p.Num != 0 {
				r := p.Remote
				rl := r.Node.SMALID
				if r.Node.Type != iba.NodeTypeSwitch {
					rl = r.BaseLID
				}
				recs.Links = append(recs.Links, iba.LinkRecord{FromLID: lid, FromPort: uint8(p.Num), ToLID: rl, ToPort: uint8(r.Num)})
			}
		}
		if n.Type == iba.NodeTypeSwitch {
			var si iba.SwitchInfo
			_ = si.Unmarshal(n.SwitchInfo[:])
			recs.Switches = append(recs.Switches, iba.SwitchInfoRecord{LID: n.SMALID, SwitchInfo: si})
		}
	}
	// The SA lists records in its own order.
	rand.New(rand.NewSource(7)).Shuffle(len(recs.Nodes), func(i, j int) { recs.Nodes[i], recs.Nodes[j] = recs.Nodes[j], recs.Nodes[i] })
	fromSA, rep, err := DiscoverRecords(context.Background(), &recs, first.guid, 1, DiscoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The SA has no MlnxExtPortInfo: fewer queries, the same subnet.
	a, _ := outputsHops(t, dr, false)
	b, _ := outputsHops(t, fromSA, false)
	if a != b {
		t.Errorf("subnet from SA records differs:\n%s", lineDiff(b, a))
	}
	if len(rep.Failures) != 0 {
		t.Errorf("failures: %v", rep.Failures)
	}
}

func TestParseMethod(t *testing.T) {
	for in, want := range map[string]Method{"DR": ByDirectRoute, "lid": ByLID, " SA ": BySA} {
		if m, err := ParseMethod(in); err != nil || m != want {
			t.Errorf("%q: %v %v", in, m, err)
		}
	}
	if _, err := ParseMethod("XX"); err == nil {
		t.Error("XX accepted")
	}
}

// TestDiscoverDiffChecks covers --diffcheck parsing.
func TestDiscoverDiffChecks(t *testing.T) {
	c, err := ParseDiffChecks("sw,CA,port,lid,nodedesc")
	if err != nil || c != DiffSwitch|DiffCA|DiffPort|DiffLID|DiffNodeDesc {
		t.Errorf("%v %v", c, err)
	}
	if _, err := ParseDiffChecks("sw,bogus"); err == nil {
		t.Error("bogus key accepted")
	}
}
