package sim

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
)

func gsi(l uint16) mad.Route {
	return mad.Route{Addr: mad.Addr{LID: l, QPN: mad.QP1, QKey: mad.QP1QKey}}
}

func TestPMA(t *testing.T) {
	f := lineFabric(t, true)
	c := client(t, f, "hca1", 1)
	ctx := ctxT(t)
	s1 := gsi(lidOf(t, f, "sw1", 0))
	var cpi iba.ClassPortInfo
	if err := c.PerformanceGet(ctx, s1, &cpi, 0); err != nil || cpi.CapabilityMask != 0x1300 || cpi.RespTimeValue != 0x12 {
		t.Fatalf("switch ClassPortInfo %+v (%v)", cpi, err)
	}
	if err := c.PerformanceGet(ctx, gsi(lidOf(t, f, "hca2", 1)), &cpi, 0); err != nil || cpi.CapabilityMask != 0x1200 {
		t.Fatalf("CA ClassPortInfo %+v (%v)", cpi, err)
	}
	// Traffic and injected errors show up; AllPortSelect is the sum of
	// the ports.
	if err := f.Traffic("hca1", 1, lidOf(t, f, "hca2", 1), 1000, 4_000_000); err != nil {
		t.Fatal(err)
	}
	if err := f.InjectErrors("sw1", 3, PortErrors{SymbolErrors: 7, LinkDowned: 300, XmitDiscards: 2}); err != nil {
		t.Fatal(err)
	}
	if err := f.InjectErrors("sw1", 1, PortErrors{SymbolErrors: 5}); err != nil {
		t.Fatal(err)
	}
	var sum iba.PortCounters
	var ports [5]iba.PortCounters
	for p := 0; p <= 4; p++ {
		ports[p].PortSelect = uint8(p)
		if err := c.PerformanceGet(ctx, s1, &ports[p], 0); err != nil {
			t.Fatal(err)
		}
		sum.SymbolErrorCounter += ports[p].SymbolErrorCounter
		sum.PortXmitData += ports[p].PortXmitData
		sum.PortRcvPkts += ports[p].PortRcvPkts
	}
	if ports[3].PortXmitPkts < 1000 || ports[3].PortXmitData < 1_000_000 || ports[3].SymbolErrorCounter != 7 || ports[3].LinkDownedCounter != 255 {
		t.Fatalf("port 3 counters %+v", ports[3])
	}
	all := iba.PortCounters{PortSelect: 0xFF}
	if err := c.PerformanceGet(ctx, s1, &all, 0); err != nil {
		t.Fatal(err)
	}
	// The Gets themselves crossed sw1's ports in between: compare the
	// counters that only the injections and the traffic moved.
	if all.SymbolErrorCounter != 12 || all.SymbolErrorCounter != sum.SymbolErrorCounter || all.PortXmitData < sum.PortXmitData {
		t.Fatalf("AllPortSelect %+v, per-port sum %+v", all, sum)
	}
	ext := iba.PortCountersExtended{PortSelect: 3}
	if err := c.PerformanceGet(ctx, s1, &ext, 0); err != nil || ext.PortXmitData < 1_000_000 || ext.PortUnicastXmitPkts < 1000 || ext.PortUnicastXmitPkts >= ext.PortXmitPkts {
		t.Fatalf("PortCountersExtended %+v (%v)", ext, err)
	}
	// Set clears what CounterSelect names, on all ports with 0xFF.
	clr := iba.PortCounters{PortSelect: 0xFF, CounterSelect: 0x0001}
	if err := c.PerformanceSet(ctx, s1, &clr, 0); err != nil {
		t.Fatal(err)
	}
	ports[3] = iba.PortCounters{PortSelect: 3}
	if err := c.PerformanceGet(ctx, s1, &ports[3], 0); err != nil || ports[3].SymbolErrorCounter != 0 || ports[3].LinkDownedCounter != 255 {
		t.Fatalf("after clearing SymbolErrorCounter: %+v (%v)", ports[3], err)
	}
	// AllPortSelect is a switch capability; a CA refuses it, and a port
	// beyond the node too.
	if err := c.PerformanceGet(ctx, gsi(lidOf(t, f, "hca2", 1)), &iba.PortCounters{PortSelect: 0xFF}, 0); !errors.Is(err, mad.ErrInvalidField) {
		t.Fatalf("AllPortSelect at a CA: %v", err)
	}
	if err := c.PerformanceGet(ctx, s1, &iba.PortCounters{PortSelect: 9}, 0); !errors.Is(err, mad.ErrInvalidField) {
		t.Fatalf("PortSelect 9: %v", err)
	}
	// A drop rate of 100% on sw1 port 1 loses everything it receives.
	if err := f.SetDropRate("sw1", 1, 100); err != nil {
		t.Fatal(err)
	}
	if err := c.PerformanceGet(ctx, quick(s1), &cpi, 0); !errors.Is(err, mad.ErrTimeout) {
		t.Fatalf("through a 100%% drop: %v", err)
	}
	if err := f.SetDropRate("sw1", 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Traffic("hca1", 1, 999, 1, 1); err == nil {
		t.Fatal("traffic to an unrouted LID succeeded")
	}
}

func TestPKeyCheck(t *testing.T) {
	f := lineFabric(t, true)
	c := client(t, f, "hca1", 1)
	ctx := ctxT(t)
	// Give hca2 a table with only the limited member key 0x0001.
	var pk iba.PKeyTable
	pk.PKeyBlock[0] = 0x0001
	if err := c.SubnSet(ctx, dr(1, 3, 1), &pk, 0); err != nil {
		t.Fatal(err)
	}
	h2 := gsi(lidOf(t, f, "hca2", 1))
	// 0xFFFF and 0x0001 differ: the PMA never sees the request.
	if err := c.PerformanceGet(ctx, quick(h2), &iba.ClassPortInfo{}, 0); !errors.Is(err, mad.ErrTimeout) {
		t.Fatalf("mismatched P_Key: %v", err)
	}
	var pi iba.PortInfo
	if err := c.SubnGet(ctx, dr(1, 3, 1), &pi, 0); err != nil || pi.PKeyViolations == 0 {
		t.Fatalf("P_Key violations %d (%v)", pi.PKeyViolations, err)
	}
	// A full member 0x8001 on the sender's side matches the limited 0x0001.
	pk.PKeyBlock[0], pk.PKeyBlock[1] = 0xFFFF, 0x8001
	if err := c.SubnSet(ctx, dr(), &pk, 0); err != nil {
		t.Fatal(err)
	}
	r := h2
	r.Addr.PKeyIndex = 1
	if err := c.PerformanceGet(ctx, r, &iba.ClassPortInfo{}, 0); err != nil {
		t.Fatalf("matching P_Key: %v", err)
	}
	// Two limited members do not match.
	pk.PKeyBlock[1] = 0x0001
	if err := c.SubnSet(ctx, dr(), &pk, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.PerformanceGet(ctx, quick(r), &iba.ClassPortInfo{}, 0); !errors.Is(err, mad.ErrTimeout) {
		t.Fatalf("two limited members: %v", err)
	}
}

func TestTransport(t *testing.T) {
	f := lineFabric(t, true)
	tr, err := f.Attach("hca1", 1)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := tr.LocalPort(context.Background())
	if err != nil || lp.LID != lidOf(t, f, "hca1", 1) || lp.SMLID != lp.LID || lp.PortNum != 1 || lp.PortGUID != guidOf(f, "hca1")+1 {
		t.Fatalf("LocalPort %+v (%v)", lp, err)
	}
	if tr.KernelRMPP() {
		t.Fatal("KernelRMPP")
	}
	// Recv honours its context.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := tr.Recv(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Recv: %v", err)
	}
	// Bad sends are errors, not panics.
	if err := tr.Send(context.Background(), &mad.Packet{Agent: 7, MAD: make([]byte, 256)}); err == nil {
		t.Fatal("send on an unregistered agent")
	}
	ag, _ := tr.Register(mad.AgentSpec{Class: 0x81, ClassVersion: 1})
	if err := tr.Send(context.Background(), &mad.Packet{Agent: ag, MAD: make([]byte, 300)}); err == nil {
		t.Fatal("send of 300 bytes")
	}
	garbage := make([]byte, 256)
	for i := range garbage {
		garbage[i] = byte(i * 7)
	}
	if err := tr.Send(context.Background(), &mad.Packet{Agent: ag, MAD: garbage}); err != nil {
		t.Fatal(err)
	}
	// Close wakes a blocked Recv and refuses further use.
	done := make(chan error)
	go func() {
		_, err := tr.Recv(context.Background())
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	tr.Close()
	if err := <-done; !errors.Is(err, mad.ErrClosed) {
		t.Fatalf("Recv after Close: %v", err)
	}
	if err := tr.Send(context.Background(), &mad.Packet{Agent: ag, MAD: make([]byte, 256)}); !errors.Is(err, mad.ErrClosed) {
		t.Fatalf("Send after Close: %v", err)
	}
	if _, err := f.Attach("sw1", 2); !errors.Is(err, ErrNoPort) {
		t.Fatalf("attach to a switch's port 2: %v", err)
	}
	if _, err := f.Attach("nope", 1); !errors.Is(err, ErrNoNode) {
		t.Fatalf("attach to nothing: %v", err)
	}
}

// Many goroutines on several attachments, mixing SMA Gets, PMA Gets,
// state-changing Sets and injections, for the race detector.
func TestConcurrent(t *testing.T) {
	f := fatTree(t, 4, 2)
	ctx := ctxT(t)
	if _, err := f.RunSM(ctx, SMConfig{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 1; w <= 8; w++ {
		c := client(t, f, "hca"+itoa(w), 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				var ni iba.NodeInfo
				if err := c.SubnGet(ctx, dr(1, uint8(1+i%4)), &ni, 0); err != nil {
					t.Error(err)
					return
				}
				pc := iba.PortCounters{PortSelect: 0xFF}
				if err := c.PerformanceGet(ctx, gsi(uint16(1+i%8)), &pc, 0); err != nil {
					t.Error(err)
					return
				}
				if i%50 == 0 {
					var pi iba.PortInfo
					if err := c.SubnGet(ctx, dr(1), &pi, uint32(1+i%4)); err != nil {
						t.Error(err)
						return
					}
					pi.PortState, pi.PortPhysicalState, pi.LinkWidthEnabled, pi.LinkSpeedEnabled = 0, 0, 0, 0
					if err := c.SubnSet(ctx, dr(1), &pi, uint32(1+i%4)); err != nil {
						t.Error(err)
						return
					}
					f.InjectErrors("ft-l0-0", 1, PortErrors{RcvErrors: 1})
				}
			}
		}()
	}
	wg.Wait()
}
