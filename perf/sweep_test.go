package perf

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/subnet"
)

func openSim(t *testing.T, spec string, opts ...fabric.Option) *fabric.Fabric {
	t.Helper()
	f, err := fabric.Open(context.Background(), spec, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Every port's error counters equal what was injected into the simulated
// PMA, every node is streamed once, and the nodes come in libibnetdisc's
// order.
func TestSweepValues(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2")
	inject := map[string]sim.PortErrors{
		"hca3":    {SymbolErrors: 7, RcvErrors: 70000, LinkDowned: 300},
		"ft-l0-2": {XmitDiscards: 5, VL15Dropped: 2},
	}
	for n, e := range inject {
		port := 1
		if err := f.Sim.InjectErrors(n, port, e); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	streamed := map[iba.GUID]int{}
	res, err := Sweep(context.Background(), f, SweepOptions{
		Exceeds: func(k Counter, v uint64) bool { return v > 0 },
		Data:    true,
		OnNode: func(n *NodeResult) {
			mu.Lock()
			streamed[n.GUID]++
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Nodes) != 24 || res.Failures != 0 || len(streamed) != 24 {
		t.Fatalf("%d nodes, %d failures, %d streamed", len(res.Nodes), res.Failures, len(streamed))
	}
	for g, c := range streamed {
		if c != 1 {
			t.Errorf("node %v streamed %d times", g, c)
		}
	}
	order := res.Subnet.IBNDOrder(nil)
	for i, n := range res.Nodes {
		if n.Node != order[i] {
			t.Fatalf("node %d is %v, want %v", i, n.GUID, order[i].GUID)
		}
	}
	found := 0
	for _, n := range res.Nodes {
		name := n.Node.Description()
		for p, pr := range n.Ports {
			if pr == nil {
				continue
			}
			if !pr.OK {
				t.Errorf("%s port %d not read", name, p)
				continue
			}
			var want sim.PortErrors
			if p == 1 {
				for id, e := range inject {
					if name == id+" HCA-1" || name == id {
						want = e
						found++
					}
				}
			}
			check := map[Counter]uint64{SymbolErrorCounter: min(want.SymbolErrors, 0xffff), PortRcvErrors: min(want.RcvErrors, 0xffff),
				LinkDownedCounter: min(want.LinkDowned, 0xff), PortXmitDiscards: want.XmitDiscards, VL15Dropped: want.VL15Dropped}
			for k, v := range check {
				if pr.Values[k] != v {
					t.Errorf("%s port %d %v = %d, want %d", name, p, k, pr.Values[k], v)
				}
			}
			if pr.HasErrors != (want != sim.PortErrors{}) {
				t.Errorf("%s port %d HasErrors %v", name, p, pr.HasErrors)
			}
			// Every CA port has carried MADs.
			if !pr.Is64(PortXmitData) || n.Type == iba.NodeTypeCA && pr.Values[PortXmitData] == 0 {
				t.Errorf("%s port %d data %d (64 bits %v)", name, p, pr.Values[PortXmitData], pr.Is64(PortXmitData))
			}
		}
	}
	if found != 2 {
		t.Errorf("found %d of the 2 injected ports", found)
	}
	if !res.Nodes[0].Caps.Extended() {
		t.Error("the simulated PMA has no PortCountersExtended")
	}
}

// A node that stops answering after the discovery is reported with its
// failed reads, and the rest of the sweep completes.
func TestSweepDeadNode(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2", fabric.WithTimeout(50*time.Millisecond), fabric.WithRetries(1))
	first, err := Sweep(context.Background(), f, SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sim.SetNodeDead("hca5", true); err != nil {
		t.Fatal(err)
	}
	res, err := Sweep(context.Background(), f, SweepOptions{Subnet: first.Subnet})
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, n := range res.Nodes {
		if len(n.Errors) == 0 {
			continue
		}
		bad++
		if n.Node.Description() != "hca5 HCA-1" {
			t.Errorf("%s failed: %v", n.Node.Description(), n.Errors[0])
		}
		var pe *PortError
		if !errors.As(n.Errors[0], &pe) || pe.Attribute != "ClassPortInfo" || pe.Node != n.GUID {
			t.Errorf("error %v", n.Errors[0])
		}
	}
	if bad != 1 || res.Failures == 0 || res.Report != nil {
		t.Errorf("%d nodes failed, %d failures", bad, res.Failures)
	}
}

// A sweep is bounded by its context: with every MAD lost, it returns when
// the deadline passes, not after every retry of every read.
func TestSweepDeadline(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2", fabric.WithTimeout(time.Second), fabric.WithRetries(5))
	first, err := Sweep(context.Background(), f, SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range first.Subnet.Nodes() {
		if err := f.Sim.SetNodeDead(topoID(f, n), true); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Sweep(ctx, f, SweepOptions{Subnet: first.Subnet})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the sweep took %v past a 300 ms deadline", d)
	}
	if res.Failures < len(res.Nodes) {
		t.Errorf("%d failures for %d unreachable nodes", res.Failures, len(res.Nodes))
	}
}

func topoID(f *fabric.Fabric, n *subnet.Node) string {
	for _, tn := range f.Sim.Topology().Nodes {
		if tn.Description() == n.Description() {
			return tn.ID
		}
	}
	return ""
}

// Clear clears what it reads: a second sweep finds the error counters at 0.
func TestSweepClear(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2")
	if err := f.Sim.InjectErrors("hca3", 1, sim.PortErrors{SymbolErrors: 7}); err != nil {
		t.Fatal(err)
	}
	exceeds := func(k Counter, v uint64) bool { return v > 0 }
	res, err := Sweep(context.Background(), f, SweepOptions{Exceeds: exceeds, Clear: ClearSelect{Errors: true, Data: true}})
	if err != nil {
		t.Fatal(err)
	}
	resets := 0
	for _, n := range res.Nodes {
		resets += len(n.Resets)
	}
	if resets == 0 {
		t.Fatal("no resets")
	}
	res, err = Sweep(context.Background(), f, SweepOptions{Subnet: res.Subnet, Exceeds: exceeds})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range res.Nodes {
		for _, pr := range n.Ports {
			if pr != nil && pr.HasErrors {
				t.Errorf("%s port %d still has errors", n.Node.Description(), pr.Port)
			}
		}
	}
}

func TestReadAll(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2")
	ctx := context.Background()
	for _, p := range []int{2, 3} {
		if err := f.Sim.InjectErrors("ft-l0-1", p, sim.PortErrors{LinkDowned: 200}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Sweep(ctx, f, SweepOptions{Select: func(s *subnet.Subnet) []*subnet.Node { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	var sw *subnet.Node
	for _, n := range res.Subnet.NodesOfType(iba.NodeTypeSwitch) {
		if n.Description() == "ft-l0-1" {
			sw = n
		}
	}
	if sw == nil {
		t.Fatal("no switch ft-l0-1")
	}
	tgt := lidTarget(sw.SMALID)
	caps, err := ReadCapabilities(ctx, f.MAD, tgt)
	if err != nil {
		t.Fatal(err)
	}
	sum, each, err := ReadAll(ctx, f.MAD, tgt, []int{1, 2, 3, 4}, caps)
	if err != nil {
		t.Fatal(err)
	}
	if !caps.AllPortSelect() && len(each) != 4 {
		t.Errorf("%d readings", len(each))
	}
	if sum.Values[LinkDownedCounter] != 255 || !sum.Saturated(LinkDownedCounter) {
		t.Errorf("LinkDownedCounter summed to %d", sum.Values[LinkDownedCounter])
	}
	one, err := Read(ctx, f.MAD, tgt, 2, caps)
	if err != nil || one.Values[LinkDownedCounter] != 200 || one.Port != 2 {
		t.Fatalf("port 2: %+v %v", one, err)
	}
	if _, errs := Clear(ctx, f.MAD, tgt, 2, caps, ClearSelect{Errors: true}); len(errs) != 0 {
		t.Fatal(errs[0])
	}
	if one, err = Read(ctx, f.MAD, tgt, 2, caps); err != nil || one.Values[LinkDownedCounter] != 0 {
		t.Errorf("after Clear: %d %v", one.Values[LinkDownedCounter], err)
	}
}

func lidTarget(lid uint16) mad.Target {
	return mad.Route{Addr: mad.Addr{LID: lid, QPN: mad.QP1, QKey: mad.QP1QKey}}
}

// Known capabilities skip ClassPortInfo: the second sweep reads counters
// only, the same values, and counts its reads and MADs.
func TestSweepKnownCapabilities(t *testing.T) {
	f := openSim(t, "sim:fattree:k=4,n=2")
	ctx := context.Background()
	first, err := Sweep(ctx, f, SweepOptions{Data: true})
	if err != nil {
		t.Fatal(err)
	}
	caps := map[*subnet.Node]Capabilities{}
	ports := 0
	for _, n := range first.Nodes {
		caps[n.Node] = n.Caps
		for _, pr := range n.Ports {
			if pr != nil {
				ports++
			}
		}
	}
	// PortCounters and PortCountersExtended per port, ClassPortInfo per node.
	if first.Reads != 2*ports+len(first.Nodes) || first.Sent != first.Reads || first.Timeouts != 0 {
		t.Fatalf("first sweep: %d reads, %d sent, %d timeouts for %d nodes and %d ports", first.Reads, first.Sent, first.Timeouts, len(first.Nodes), ports)
	}
	if err := f.Sim.InjectErrors("hca3", 1, sim.PortErrors{SymbolErrors: 9}); err != nil {
		t.Fatal(err)
	}
	asked := 0
	second, err := Sweep(ctx, f, SweepOptions{Subnet: first.Subnet, Data: true, Capabilities: func(n *subnet.Node) (Capabilities, bool) {
		asked++
		c, ok := caps[n]
		return c, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	if asked != len(first.Nodes) || second.Reads != 2*ports || second.Sent != second.Reads || second.Failures != 0 {
		t.Fatalf("second sweep: asked %d, %d reads, %d sent, %d failures", asked, second.Reads, second.Sent, second.Failures)
	}
	found := false
	for _, n := range second.Nodes {
		if n.Caps != caps[n.Node] {
			t.Errorf("%s: capabilities %+v, want %+v", n.Node.Description(), n.Caps, caps[n.Node])
		}
		for _, pr := range n.Ports {
			if pr == nil {
				continue
			}
			if !pr.OK || !pr.Is64(PortXmitData) {
				t.Errorf("%s port %d: OK %v, 64-bit data %v", n.Node.Description(), pr.Port, pr.OK, pr.Is64(PortXmitData))
			}
			if n.Node.Description() == "hca3 HCA-1" {
				found = pr.Values[SymbolErrorCounter] == 9
			}
		}
	}
	if !found {
		t.Error("hca3's injected symbol errors not read")
	}
}

// With GiveUpSilent a dead switch costs one timed-out read; its other
// reads fail at once with ErrGaveUp, and the other nodes are read.
func TestSweepGiveUpSilent(t *testing.T) {
	f := openSim(t, "sim:leafspine:leaves=4,spines=2,hosts=2,uplinks=2", fabric.WithTimeout(50*time.Millisecond), fabric.WithRetries(1))
	ctx := context.Background()
	first, err := Sweep(ctx, f, SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	caps := map[*subnet.Node]Capabilities{}
	var spine *subnet.Node
	for _, n := range first.Nodes {
		caps[n.Node] = n.Caps
		if n.Type == iba.NodeTypeSwitch && n.Node.NumPorts == 4 && spine == nil {
			spine = n.Node
		}
	}
	if spine == nil {
		t.Fatal("no 4-port spine")
	}
	if err := f.Sim.SetNodeDead(topoID(f, spine), true); err != nil {
		t.Fatal(err)
	}
	known := func(n *subnet.Node) (Capabilities, bool) { c, ok := caps[n]; return c, ok }
	res, err := Sweep(ctx, f, SweepOptions{Subnet: first.Subnet, Capabilities: known, GiveUpSilent: true, PerNode: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The nodes whose route crosses the dead spine time out too, once each.
	timeouts := 1
	for _, n := range res.Nodes {
		if n.Node != spine {
			if len(n.Errors) > 1 || len(n.Errors) == 1 && !errors.Is(n.Errors[0], mad.ErrTimeout) {
				t.Errorf("%s: %v", n.Node.Description(), n.Errors)
			}
			timeouts += len(n.Errors)
			continue
		}
		if len(n.Errors) != 4 || !errors.Is(n.Errors[0], mad.ErrTimeout) {
			t.Fatalf("dead spine: %d errors, first %v", len(n.Errors), n.Errors)
		}
		for _, e := range n.Errors[1:] {
			if !errors.Is(e, ErrGaveUp) {
				t.Errorf("dead spine: %v, want ErrGaveUp", e)
			}
		}
	}
	// Two tries per timeout; the reads given up are neither read nor sent.
	if res.Timeouts != timeouts || res.Sent != res.Reads+timeouts || res.Failures != timeouts+3 {
		t.Errorf("%d timeouts (want %d), %d reads, %d sent, %d failures", res.Timeouts, timeouts, res.Reads, res.Sent, res.Failures)
	}
}
