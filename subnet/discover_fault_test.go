package subnet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// faultFabric is a 3-level 4-ary fat tree (48 switches, 64 CAs) in
// process, configured by the built-in SM (without SA: discovery needs
// none), so that its ports carry LIDs and are Active as on a live subnet.
const liveTimeout = 200 * time.Millisecond

func faultFabric(t *testing.T) *sim.Fabric {
	t.Helper()
	tp, err := topo.FatTree(topo.FatTreeConfig{K: 4, N: 3})
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(tp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := f.RunSM(ctx, sim.SMConfig{Node: "hca64", Port: 1, NoSA: true}); err != nil {
		t.Fatal(err)
	}
	return f
}

// simClient is a MAD client on a CA port of f. The fabric answers in
// microseconds, but a loaded machine (or the race detector) can hold a
// reply up for tens of milliseconds: timeouts that must not fire on a live
// node are 200 ms.
func simClient(t *testing.T, f *sim.Fabric, node string, timeout time.Duration, tries int) *mad.Client {
	t.Helper()
	tr, err := f.Attach(node, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := mad.NewClient(tr, mad.WithTimeout(timeout), mad.WithRetries(tries))
	t.Cleanup(func() { c.Close() })
	return c
}

// discoverBounded runs Discover with a deadline, so that a hang fails the
// test instead of stalling it.
func discoverBounded(t *testing.T, m MADDoer, opt DiscoverOptions, limit time.Duration) (*Subnet, *DiscoverReport, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	s, rep, err := Discover(ctx, m, opt)
	d := time.Since(start)
	if err != nil {
		t.Fatalf("Discover after %v: %v", d, err)
	}
	return s, rep, d
}

// canon describes a subnet independently of the paths it was found by:
// one line per port with its PortInfo (LocalPortNum masked: it names the
// port an SMP came in by) and its peer, sorted. Nodes in skip are left
// out, and links to them are shown as unknown, which is what a discovery
// that could not reach them knows.
func canon(s *Subnet, skip map[iba.GUID]bool) []string {
	var out []string
	for _, n := range s.Nodes() {
		if skip[n.GUID] {
			continue
		}
		out = append(out, fmt.Sprintf("%v node %v %d ports %q info %x", n.GUID, n.Type, n.NumPorts, n.Description(), n.Info[:]))
		if n.Type == iba.NodeTypeSwitch {
			out = append(out, fmt.Sprintf("%v switchinfo %x", n.GUID, n.SwitchInfo[:]))
		}
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			pi := p.PortInfo()
			pi.LocalPortNum = 0
			peer := "-"
			if p.Remote != nil && !skip[p.Remote.Node.GUID] {
				peer = fmt.Sprintf("%v/%d", p.Remote.Node.GUID, p.Remote.Num)
			}
			out = append(out, fmt.Sprintf("%v/%d guid %v lid %d info %v %v peer %s", n.GUID, p.Num, p.GUID, p.BaseLID, p.HasInfo, pi, peer))
		}
	}
	slices.Sort(out)
	return out
}

// canonDiff lists the lines only in a ("-") or only in b ("+").
func canonDiff(a, b []string) string {
	var d strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			fmt.Fprintf(&d, "- %s\n", a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			fmt.Fprintf(&d, "+ %s\n", b[j])
			j++
		default:
			i++
			j++
		}
	}
	return d.String()
}

// byDesc finds a node by its name in the topology, which its
// description starts with ("hca40 HCA-1").
func byDesc(t *testing.T, s *Subnet, desc string) *Node {
	t.Helper()
	for _, n := range s.Nodes() {
		if d := n.Description(); d == desc || strings.HasPrefix(d, desc+" ") {
			return n
		}
	}
	t.Fatalf("no node %q in the clean subnet", desc)
	return nil
}

// TestDiscoverFaults: with 5% of MADs lost and three nodes dead (a CA, a
// leaf switch and a core switch), discovery completes, names each dead
// node by every port that leads to it, and finds everything else exactly
// as on the healthy fabric; the walk is deterministic, so the text and the
// libibnetdisc cache equal those of a loss-free run with the same dead
// nodes.
func TestDiscoverFaults(t *testing.T) {
	f := faultFabric(t)
	clean, crep, cleanTime := discoverBounded(t, simClient(t, f, "hca1", liveTimeout, 2), DiscoverOptions{}, 30*time.Second)
	if len(crep.Failures) != 0 || clean.Len() != 48+64 {
		t.Fatalf("clean run: %d nodes (want 112), failures %v", clean.Len(), crep.Failures)
	}
	if err := crep.Incomplete(clean); err != nil || !crep.Lost().IsZero() {
		t.Errorf("clean run: %v", err)
	}

	// Dead: a CA, a leaf (and so the four CAs behind it, reachable only
	// through it) and a core switch (the fabric routes around it).
	dead := []string{"hca40", "ft-l0-9", "ft-l2-5"}
	skip := map[iba.GUID]bool{}
	for _, name := range dead {
		n := byDesc(t, clean, name)
		skip[n.GUID] = true
		if n.Type == iba.NodeTypeSwitch && strings.HasPrefix(name, "ft-l0-") {
			for _, p := range n.Ports[1:] {
				if p != nil && p.Remote != nil && p.Remote.Node.Type != iba.NodeTypeSwitch {
					skip[p.Remote.Node.GUID] = true // stranded behind the dead leaf
				}
			}
		}
		if err := f.SetNodeDead(name, true); err != nil {
			t.Fatal(err)
		}
	}
	// Every port of a live node that leads to a dead one is probed and
	// must be reported.
	want := map[string]bool{}
	for _, n := range clean.Nodes() {
		if skip[n.GUID] {
			continue
		}
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && skip[p.Remote.Node.GUID] && n.Type == iba.NodeTypeSwitch {
				want[fmt.Sprintf("%s/%d -> %s", n.Description(), p.Num, p.Remote.Node.Description())] = true
			}
		}
	}

	noLoss, nlRep, _ := discoverBounded(t, simClient(t, f, "hca1", liveTimeout, 2), DiscoverOptions{}, 30*time.Second)

	if err := f.SetLatency(sim.Latency{Loss: 5}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.SetLatency(sim.Latency{}) })
	// Five tries: a live node's query fails all of them with odds of
	// 0.05^5, about 3e-7, so none of the ~1300 queries should.
	lossy, rep, lossyTime := discoverBounded(t, simClient(t, f, "hca1", liveTimeout, 5), DiscoverOptions{}, 60*time.Second)
	t.Logf("clean %v, with 5%% loss and %d dead nodes %v: %d queries, %d failures", cleanTime, len(dead), lossyTime, rep.Queries, len(rep.Failures))

	// Names the unreachable nodes: each failed probe leads, on the clean
	// fabric, to a dead node, and together they cover every port that
	// leads to one.
	got := map[string]bool{}
	for _, u := range rep.Unreachable() {
		target := clean.NodeAt(u.Path)
		if target == nil || !skip[target.GUID] {
			t.Errorf("unreachable %v, which leads to %v on the healthy fabric", u, target)
			continue
		}
		if u.Via == nil {
			t.Errorf("unreachable %v names no port", u)
			continue
		}
		got[fmt.Sprintf("%s/%d -> %s", u.Via.Node.Description(), u.Via.Num, target.Description())] = true
		if !strings.Contains(u.Error(), u.Via.Node.Description()) {
			t.Errorf("%q does not name the port's node", u.Error())
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("not reported unreachable: %s", k)
		}
	}
	for _, f := range rep.Failures {
		if !f.Probe {
			t.Errorf("a query to a live node failed: %v", f)
		}
	}
	if n := len(lossy.Unreachable()); n != len(rep.Unreachable()) {
		t.Errorf("the subnet records %d unreachable paths, the report %d", n, len(rep.Unreachable()))
	}
	// What a command turns into its exit status: the count of what was
	// lost.
	err := rep.Incomplete(lossy)
	var ie *IncompleteError
	if !errors.As(err, &ie) || !errors.Is(err, ErrIncomplete) || ie.Lost.Paths != len(rep.Unreachable()) || ie.Lost.Paths == 0 || ie.Found != lossy.Len() {
		t.Errorf("Incomplete: %v, want %d unreachable paths of %d nodes found", err, len(rep.Unreachable()), lossy.Len())
	}

	// The rest is what the healthy fabric has.
	if d := canonDiff(canon(clean, skip), canon(lossy, nil)); d != "" {
		t.Errorf("with faults, the reachable part differs from the clean run:\n%s", d)
	}
	// And, as the walk does not depend on timing, the same bytes as a
	// loss-free run with the same dead nodes.
	a, ac := outputs(t, noLoss)
	b, bc := outputs(t, lossy)
	if a != b || string(ac) != string(bc) {
		t.Errorf("5%% loss changes the result:\n%s", lineDiff(b, a))
	}
	if rep.Queries != nlRep.Queries {
		t.Errorf("%d queries with loss, %d without", rep.Queries, nlRep.Queries)
	}
}

// TestDiscoverLinkFlap pulls a cable mid-discovery and plugs it back
// (trap 128, a resweep by the SM meanwhile): discovery does not hang, and
// what it missed is reported. The cable is the start leaf's first uplink,
// which the walk's first paths to most of the fabric cross.
func TestDiscoverLinkFlap(t *testing.T) {
	f := faultFabric(t)
	clean, _, _ := discoverBounded(t, simClient(t, f, "hca1", liveTimeout, 2), DiscoverOptions{}, 30*time.Second)
	// SMPs cross the fabric in microseconds here; a little latency makes
	// the discovery last long enough for the flap to land inside it.
	if err := f.SetLatency(sim.Latency{Hop: 100 * time.Microsecond, SMA: 200 * time.Microsecond}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.SetLatency(sim.Latency{}) })

	const leaf, uplink = "ft-l0-0", 5 // port k+1: the first uplink
	var once sync.Once
	var mu sync.Mutex
	var flapErr error
	flapped := make(chan struct{})
	opt := DiscoverOptions{Progress: func(p DiscoverProgress) {
		if p.Done < 40 {
			return
		}
		once.Do(func() {
			err := f.SetLink(leaf, uplink, false)
			// Down for longer than a query's tries last, then back.
			time.AfterFunc(500*time.Millisecond, func() {
				defer close(flapped)
				if e := f.SetLink(leaf, uplink, true); e != nil && err == nil {
					err = e
				}
				mu.Lock()
				flapErr = err
				mu.Unlock()
			})
		})
	}}
	// Two tries of 50 ms: queries in flight during the outage fail.
	s, rep, d := discoverBounded(t, simClient(t, f, "hca1", 50*time.Millisecond, 2), opt, 30*time.Second)
	select {
	case <-flapped:
	case <-time.After(5 * time.Second):
		t.Fatal("the link never came back up")
	}
	mu.Lock()
	if flapErr != nil {
		t.Fatal(flapErr)
	}
	mu.Unlock()
	t.Logf("flap: %v, %d of %d nodes, %d queries, %d failures (%d unreachable paths)", d, s.Len(), clean.Len(), rep.Queries, len(rep.Failures), len(rep.Unreachable()))
	if len(rep.Failures) == 0 {
		t.Fatal("a 500 ms outage of a link most paths cross, and no query failed")
	}

	// What is missing is reported: a node not found is where a failed
	// probe's path leads on the healthy fabric, or a neighbour of a node
	// with failed queries; a link not found has a failed query on one of
	// its ends, or an end that was seen down.
	named := map[iba.GUID]bool{}
	for _, u := range rep.Unreachable() {
		if n := clean.NodeAt(u.Path); n != nil {
			named[n.GUID] = true
		}
	}
	failedOn := map[iba.GUID]bool{}
	for _, f := range rep.Failures {
		if f.Node != 0 {
			failedOn[f.Node] = true
		}
		if f.Via != nil {
			failedOn[f.Via.Node.GUID] = true
		}
	}
	for _, n := range clean.Nodes() {
		m := s.Node(n.GUID)
		if m == nil {
			// Named by a failed probe, or behind a node that was found but
			// whose queries failed (the walk, as libibnetdisc's, reads a
			// node once, at the first path that reaches it).
			explained := named[n.GUID]
			for _, p := range n.Ports {
				if p != nil && p.Remote != nil && s.Node(p.Remote.Node.GUID) != nil && failedOn[p.Remote.Node.GUID] {
					explained = true
				}
			}
			if !explained {
				t.Errorf("%q is missing and no failure leads to it", n.Description())
			}
			continue
		}
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil || p.Num == 0 {
				continue
			}
			q := m.Port(p.Num)
			if q != nil && q.Remote != nil {
				if q.Remote.Node.GUID != p.Remote.Node.GUID || q.Remote.Num != p.Remote.Num {
					t.Errorf("%s/%d linked to %v/%d, on the healthy fabric to %v/%d", n.Description(), p.Num, q.Remote.Node.GUID, q.Remote.Num, p.Remote.Node.GUID, p.Remote.Num)
				}
				continue
			}
			seenDown := q != nil && q.HasInfo && q.PortInfo().PortPhysicalState != iba.PhysPortStateLinkUp
			if !seenDown && !failedOn[n.GUID] && !failedOn[p.Remote.Node.GUID] {
				t.Errorf("link %s/%d - %s/%d is missing with no failure or down port to show why", n.Description(), p.Num, p.Remote.Node.Description(), p.Remote.Num)
			}
		}
	}
	// The walk went on after the outage: more was found than what it
	// had when the cable was pulled.
	if s.Len() <= 10 {
		t.Errorf("only %d nodes found: discovery stopped at the outage", s.Len())
	}
}

// TestIncompleteErrorText: the message counts each loss in words that fit
// its number.
func TestIncompleteErrorText(t *testing.T) {
	for _, c := range []struct {
		e    IncompleteError
		want string
	}{
		{IncompleteError{Lost: Lost{Paths: 1, Partial: 1, Queries: 1}, Found: 1},
			"discovery incomplete: 1 node found; 1 port leads to a node that did not answer; 1 node answered only in part (1 query failed)"},
		{IncompleteError{Lost: Lost{Paths: 33, Partial: 9, Queries: 31}, Found: 28},
			"discovery incomplete: 28 nodes found; 33 ports lead to a node that did not answer; 9 nodes answered only in part (31 queries failed)"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}
