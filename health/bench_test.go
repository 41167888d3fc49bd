package health

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
)

// BenchmarkRoutingLarge is the routing and credit loop analysis of the
// largest fabric the simulator addresses: a leaf-spine of 1,090 leaves
// and 100 spines with 44 hosts a leaf, 47,960 CAs and 49,150 LIDs — all
// but one of the unicast LIDs. Collecting its 1,190 forwarding tables
// (930,000 LFT blocks read in process) is done once, outside the timing;
// RDMAKIT_BENCH_FABRIC names another generator. The metrics are per
// analysis: LIDs followed from every switch, CA-to-CA routes counted,
// credit loops found, and the heap in use after it.
func BenchmarkRoutingLarge(b *testing.B) {
	spec := "leafspine:leaves=1090,spines=100,hosts=44,uplinks=20"
	if s := os.Getenv("RDMAKIT_BENCH_FABRIC"); s != "" {
		spec = s
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	start := time.Now()
	f, err := fabric.Open(ctx, "sim:"+spec)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	defer f.Sim.Close()
	up := time.Since(start)
	d, err := Collect(ctx, f, NeedLFT, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: SM %v, discovery and %d tables %v", spec, up, len(d.Subnet.NodesOfType(2)), time.Since(start)-up)
	b.ResetTimer()
	var ms runtime.MemStats
	for i := 0; i < b.N; i++ {
		r := routing(d.Subnet, true)
		loops := creditLoops(r, nil, nil)
		if len(r.Faults) != 0 || len(r.Unrouted) != 0 {
			b.Fatalf("%d faults, %d switches with holes", len(r.Faults), len(r.Unrouted))
		}
		// A leaf-spine whose leaves reach 20 of the 100 spines each has
		// leaf pairs that share no spine: their routes turn down and up
		// again at a third leaf, and minimum-hop routing then has credit
		// loops. They are reported, not a failure.
		b.ReportMetric(float64(len(loops)), "credit-loops")
		b.ReportMetric(float64(r.LIDs), "lids")
		b.ReportMetric(float64(r.Pairs), "routes")
	}
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
}
