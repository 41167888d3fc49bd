package sim

import (
	"context"
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// leafSpine10k is 300 leaves of 32 hosts and 16 uplinks over 100 spines:
// 9,600 HCAs and 400 switches.
var leafSpine10k = topo.LeafSpineConfig{Leaves: 300, Spines: 100, HostsPerLeaf: 32, Uplinks: 16, Seed: 1}

// leafSpine100k is 3,000 leaves and 1,000 spines with 96,000 HCAs: more
// end ports than the 49,151 unicast LIDs of one subnet (IBA 4.1.3), so the
// SM brings up as many as the LID space holds and reports the rest.
var leafSpine100k = topo.LeafSpineConfig{Leaves: 3000, Spines: 1000, HostsPerLeaf: 32, Uplinks: 16, Seed: 1}

// leafSpine45k is the largest of these shapes whose end ports all get a
// LID: 1,400 leaves of 32 hosts and 400 spines, 44,800 HCAs and 1,800
// switches, 46,600 LIDs of the 49,151.
var leafSpine45k = topo.LeafSpineConfig{Leaves: 1400, Spines: 400, HostsPerLeaf: 32, Uplinks: 16, Seed: 1}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchBringUp(b *testing.B, cfg topo.LeafSpineConfig) {
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		start, cpu0 := time.Now(), cpuTime()
		top, err := topo.LeafSpine(cfg)
		if err != nil {
			b.Fatal(err)
		}
		f, err := New(top)
		if err != nil {
			b.Fatal(err)
		}
		load := time.Since(start)
		res, err := f.RunSM(context.Background(), SMConfig{})
		if err != nil && res == nil {
			b.Fatal(err)
		}
		total, cpu := time.Since(start), cpuTime()-cpu0
		f.Close()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(load.Seconds(), "load-s")
		b.ReportMetric(total.Seconds(), "total-s")
		b.ReportMetric(cpu.Seconds(), "cpu-s")
		b.ReportMetric(float64(res.SMPs), "SMPs")
		b.ReportMetric(float64(after.HeapInuse)/(1<<20), "heap-MiB")
		b.ReportMetric(float64(after.Sys)/(1<<20), "sys-MiB")
		b.Logf("%d nodes: load %v, discover %v, route %v, SM total %v (CPU %v over both), %d SMPs, max LID %d, %d end ports without LID (%v)",
			len(top.Nodes), load, res.Discover, res.Route, res.Total, cpu, res.SMPs, res.MaxLID, res.Unassigned, err)
		runtime.KeepAlive(f)
	}
}

func BenchmarkBringUp10k(b *testing.B) { benchBringUp(b, leafSpine10k) }

func BenchmarkBringUp45k(b *testing.B) {
	if testing.Short() {
		b.Skip("45k-node fabric in -short mode")
	}
	benchBringUp(b, leafSpine45k)
}

func BenchmarkBringUp100k(b *testing.B) {
	if testing.Short() {
		b.Skip("100k-node fabric in -short mode")
	}
	benchBringUp(b, leafSpine100k)
}

// BenchmarkSMPs measures directed-route SMPs per second through the
// transport: one sender per CPU, each keeping a window of requests in
// flight on its own attachment, two hops to a switch and back.
func BenchmarkSMPs(b *testing.B) {
	f := fatTree(b, 4, 3)
	if _, err := f.RunSM(context.Background(), SMConfig{}); err != nil {
		b.Fatal(err)
	}
	workers := runtime.GOMAXPROCS(0)
	const window = 64
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < workers; w++ {
		tr, err := f.Attach("hca"+itoa(w+1), 1)
		if err != nil {
			b.Fatal(err)
		}
		ag, err := tr.Register(mad.AgentSpec{Class: 0x81, ClassVersion: 1})
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer tr.Close()
			ctx := context.Background()
			req := make([]byte, 256)
			req[0], req[1], req[2], req[3] = 1, 0x81, 1, 1
			req[7] = 2
			binary.BigEndian.PutUint16(req[16:], 0x11)
			binary.BigEndian.PutUint16(req[32:], 0xFFFF)
			binary.BigEndian.PutUint16(req[34:], 0xFFFF)
			req[129], req[130] = 1, 5
			pkt := &mad.Packet{Agent: ag, Addr: mad.Addr{LID: 0xFFFF}, MAD: req}
			inflight := 0
			for {
				for inflight < window && left.Add(-1) >= 0 {
					if err := tr.Send(ctx, pkt); err != nil {
						b.Error(err)
						return
					}
					inflight++
				}
				if inflight == 0 {
					return
				}
				p, err := tr.Recv(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				if p.MAD[3] != 0x81 || binary.BigEndian.Uint16(p.MAD[4:])&0x7fff != 0 {
					b.Errorf("reply %x", p.MAD[:8])
					return
				}
				inflight--
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "SMPs/s")
}

// BenchmarkClientSMPs is the same through mad.Client: one RPC at a time
// per goroutine, 16 goroutines per CPU.
func BenchmarkClientSMPs(b *testing.B) {
	f := fatTree(b, 4, 3)
	if _, err := f.RunSM(context.Background(), SMConfig{}); err != nil {
		b.Fatal(err)
	}
	c := client(b, f, "hca1", 1)
	ctx := context.Background()
	b.SetParallelism(16)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var ni iba.NodeInfo
		for pb.Next() {
			if err := c.SubnGet(ctx, dr(1, 5), &ni, 0); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "SMPs/s")
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// BenchmarkLatencyInFlight keeps b.N SMPs in flight at once under a
// 200 ms per-hop latency and reports the CPU the wait cost: the delays
// are timers, so it stays near the cost of sending and receiving.
func BenchmarkLatencyInFlight(b *testing.B) {
	f := fatTree(b, 4, 3)
	if _, err := f.RunSM(context.Background(), SMConfig{NoSA: true}); err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := f.SetLatency(Latency{Hop: 200 * time.Millisecond}); err != nil {
		b.Fatal(err)
	}
	tr, err := f.Attach("hca1", 1)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	ag, err := tr.Register(mad.AgentSpec{Class: 0x81, ClassVersion: 1})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	req := make([]byte, 256)
	req[0], req[1], req[2], req[3] = 1, 0x81, 1, 1
	req[7] = 2
	binary.BigEndian.PutUint16(req[16:], 0x11)
	binary.BigEndian.PutUint16(req[32:], 0xFFFF)
	binary.BigEndian.PutUint16(req[34:], 0xFFFF)
	req[129], req[130] = 1, 5
	pkt := &mad.Packet{Agent: ag, Addr: mad.Addr{LID: 0xFFFF}, MAD: req}
	n := min(b.N, recvQueue)
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < n; i++ {
		if err := tr.Send(ctx, pkt); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if _, err := tr.Recv(ctx); err != nil {
			b.Fatal(err)
		}
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	if wall < 800*time.Millisecond {
		b.Fatalf("%d SMPs over 4 hops of 200 ms answered in %v", n, wall)
	}
	b.ReportMetric(float64(n), "in-flight")
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(cpu.Seconds()*1000, "cpu-ms")
}
