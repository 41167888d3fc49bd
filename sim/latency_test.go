package sim

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
)

func TestLatencyModel(t *testing.T) {
	f := upFabric(t, ftTopo(t, 2, 2), SMConfig{NoSA: true})
	ctx := ctxT(t)
	c := client(t, f, "hca1", 1)
	_, _, l, _, _ := f.PortState("hca4", 1)
	var ni iba.NodeInfo
	// Off: answers at once.
	start := time.Now()
	if err := c.SubnGet(ctx, lid(l), &ni, 0); err != nil {
		t.Fatal(err)
	}
	fast := time.Since(start)
	if err := f.SetLatency(Latency{Hop: 10 * time.Millisecond, SMA: 20 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	mads0, delay0 := f.Delayed()
	start = time.Now()
	if err := c.SubnGet(ctx, lid(l), &ni, 0); err != nil {
		t.Fatal(err)
	}
	// hca1 to hca4 in a 2-ary 2-tree: 4 links each way.
	slow := time.Since(start)
	if slow < 100*time.Millisecond || slow > 2*time.Second {
		t.Fatalf("with 10 ms per hop and 20 ms per SMA: %v (off: %v)", slow, fast)
	}
	if mads, delay := f.Delayed(); mads != mads0+1 || delay-delay0 < 99*time.Millisecond || delay-delay0 > 101*time.Millisecond {
		t.Errorf("Delayed: %d MADs, %v more; want 1 MAD and 8 hops + 1 SMA, 100 ms", mads-mads0, delay-delay0)
	}
	// The SMA serves one request at a time: ten at once take ten SMA
	// times, and a queue of 4 drops the rest.
	if err := f.SetLatency(Latency{SMA: 20 * time.Millisecond, QueueDepth: 4}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ok, lost int
	before := runtime.NumGoroutine()
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ni iba.NodeInfo
			err := c.SubnGet(ctx, quick(lid(l)), &ni, 0)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, mad.ErrTimeout):
				lost++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	_ = before
	if ok == 0 || lost == 0 || f.QueueDrops() == 0 {
		t.Fatalf("queue of 4: %d answered, %d lost, %d queue drops", ok, lost, f.QueueDrops())
	}
	if err := f.SetLatency(Latency{Loss: 100}); err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, quick(lid(l)), &ni, 0); !errors.Is(err, mad.ErrTimeout) {
		t.Fatalf("100%% loss: %v", err)
	}
	if err := f.SetLatency(Latency{Loss: 101}); err == nil {
		t.Fatal("a loss of 101%")
	}
	if err := f.SetLatency(Latency{}); err != nil || f.Latency() != (Latency{}) {
		t.Fatal(err)
	}
}

func TestDeadNode(t *testing.T) {
	f := upFabric(t, ftTopo(t, 2, 2), SMConfig{NoSA: true})
	ctx := ctxT(t)
	c := client(t, f, "hca1", 1)
	_, _, l, _, _ := f.PortState("hca4", 1)
	var ni iba.NodeInfo
	if err := f.SetNodeDead("hca4", true); err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, quick(lid(l)), &ni, 0); !errors.Is(err, mad.ErrTimeout) {
		t.Fatalf("dead node answered: %v", err)
	}
	// A dead switch does not forward either.
	sw, _ := f.peerOf("hca4", 1)
	if err := f.SetNodeDead("hca4", false); err != nil {
		t.Fatal(err)
	}
	if err := f.SetNodeDead(sw, true); err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, quick(lid(l)), &ni, 0); !errors.Is(err, mad.ErrTimeout) {
		t.Fatalf("through a dead switch: %v", err)
	}
	if err := f.SetNodeDead(sw, false); err != nil {
		t.Fatal(err)
	}
	if err := c.SubnGet(ctx, lid(l), &ni, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.SetNodeDead("nope", true); !errors.Is(err, ErrNoNode) {
		t.Fatal(err)
	}
}

// A link flap: trap 128 reaches the SM, which sweeps again; the SA
// reports the trap to a subscriber; the ports come back Active with
// their LIDs.
func TestLinkFlapTrap(t *testing.T) {
	f := upFabric(t, ftTopo(t, 2, 2), SMConfig{})
	ctx := ctxT(t)
	_, _, lid4, _, _ := f.PortState("hca4", 1)
	// A subscriber to trap 128: a raw agent answering Reports.
	tr, err := f.Attach("hca2", 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	mc := mad.NewClient(tr, mad.WithTimeout(time.Second))
	t.Cleanup(func() { mc.Close() })
	reports := make(chan iba.Notice, 8)
	sctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	go mc.Serve(sctx, iba.ClassSubnAdm, 2, []iba.Method{iba.MethodReport}, func(_ context.Context, r *mad.ServerRequest) (*mad.ServerReply, error) {
		var n iba.Notice
		if err := n.Unmarshal(r.Data()); err == nil {
			reports <- n
		}
		return &mad.ServerReply{Data: r.Data()}, nil
	})
	i2, _ := f.portIndex("hca2", 1)
	waitFor(t, func() bool { return f.serverAgent(i2, uint8(iba.ClassSubnAdm), uint8(iba.MethodReport)) != nil })
	sc := sa.New(client(t, f, "hca2", 1))
	tg, err := sc.Target(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in := iba.InformInfo{IsGeneric: 1, Subscribe: 1, Type: 0xFFFF, TrapNumber: 128, ProducerType: 0xFFFFFF, LIDRangeBegin: 0xFFFF}
	if _, err := sc.MAD().Do(ctx, mad.Request{Target: tg, Class: iba.ClassSubnAdm, Method: iba.MethodSet, AttrID: 3, Data: marshal(t, &in)}); err != nil {
		t.Fatal(err)
	}
	recs, err := sa.GetTable(ctx, sc, &iba.InformInfoRecord{})
	if err != nil || len(recs) != 1 {
		t.Fatalf("InformInfoRecords %+v %v", recs, err)
	}
	sweeps := f.Sweeps()
	sw, sp := f.peerOf("hca4", 1)
	if err := f.SetLink(sw, sp, false); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-reports:
		if n.TrapNumber != 128 {
			t.Fatalf("report %+v", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no report of trap 128")
	}
	waitFor(t, func() bool { return f.Sweeps() > sweeps })
	if st, phys, _, _, _ := f.PortState("hca4", 1); st != iba.PortStateDown || phys != iba.PhysPortStatePolling {
		t.Fatalf("hca4 after the cable is pulled: %v %v", st, phys)
	}
	sweeps = f.Sweeps()
	if err := f.SetLink("hca4", 1, true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		st, _, l, _, _ := f.PortState("hca4", 1)
		return f.Sweeps() > sweeps && st == iba.PortStateActive && l == lid4
	})
	c := client(t, f, "hca1", 1)
	var ni iba.NodeInfo
	if err := c.SubnGet(ctx, lid(lid4), &ni, 0); err != nil {
		t.Fatalf("after the flap: %v", err)
	}
	if err := f.SetLink("hca4", 7, true); err == nil {
		t.Fatal("a link on port 7 of a one-port HCA")
	}
}

func marshal(t testing.TB, a iba.Attribute) []byte {
	b := make([]byte, a.Desc().Size)
	if err := a.MarshalTo(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSetLatencyRefuses(t *testing.T) {
	f := fatTree(t, 2, 2)
	for _, l := range []Latency{{Loss: math.NaN()}, {Loss: -1}, {Loss: 101}, {Loss: math.Inf(1)},
		{Hop: -1}, {SMA: MaxLatency + 1}, {Agent: -time.Second}, {QueueDepth: -1}} {
		if err := f.SetLatency(l); err == nil {
			t.Errorf("SetLatency(%+v) accepted", l)
		}
	}
	if f.Latency() != (Latency{}) {
		t.Errorf("a refused model took effect: %+v", f.Latency())
	}
}
