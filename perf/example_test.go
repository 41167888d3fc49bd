package perf_test

import (
	"context"
	"fmt"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/perf"
	"github.com/rdmakit/rdmakit/sim"
)

// The counters of every port of a fabric: discover it, read every PMA, and
// report the ports whose error counters moved — what ibqueryerrors does.
func ExampleSweep() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	// A flaky cable at hca7's port.
	_ = f.Sim.InjectErrors("hca7", 1, sim.PortErrors{SymbolErrors: 12, LinkErrorRecovery: 3})

	res, err := perf.Sweep(ctx, f, perf.SweepOptions{
		Exceeds: func(k perf.Counter, v uint64) bool { return v > 0 },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d nodes read, %d failures\n", len(res.Nodes), res.Failures)
	for _, n := range res.Nodes {
		for _, p := range n.Ports {
			if p == nil || !p.HasErrors {
				continue
			}
			for _, k := range perf.ErrorCounters {
				if v, _ := p.Get(k); v > 0 {
					fmt.Printf("%s port %d: %v = %d\n", n.Node.Description(), p.Port, k, v)
				}
			}
		}
	}
	// Output:
	// 24 nodes read, 0 failures
	// hca7 HCA-1 port 1: SymbolErrorCounter = 12
	// hca7 HCA-1 port 1: LinkErrorRecoveryCounter = 3
}

// Two readings of a port, and what its counters did in between: the data
// counters count 4-octet units, Rate gives octets per second.
func ExampleDiff() {
	var prev, cur perf.Counters
	prev.Set(perf.PortXmitData, 1000, true)
	cur.Set(perf.PortXmitData, 1250, true)
	prev.Set(perf.SymbolErrorCounter, 40, false)
	cur.Set(perf.SymbolErrorCounter, 2, false) // cleared in between

	d, _ := perf.Diff(&prev, &cur, perf.PortXmitData)
	fmt.Printf("PortXmitData: +%d units, %d octets\n", d.Value, perf.Octets(perf.PortXmitData, d.Value))
	d, _ = perf.Diff(&prev, &cur, perf.SymbolErrorCounter)
	fmt.Printf("SymbolErrorCounter: +%d (cleared: %v)\n", d.Value, d.Reset)
	// Output:
	// PortXmitData: +250 units, 1000 octets
	// SymbolErrorCounter: +2 (cleared: true)
}
