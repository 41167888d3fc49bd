package health_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/health"
	"github.com/rdmakit/rdmakit/iba"
)

// Run every check on a simulated leaf-spine after pulling two lanes of a
// cable: the link-width check finds it.
func ExampleRun() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:leafspine:leaves=2,spines=2,hosts=2,uplinks=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	defer f.Sim.Close()
	_ = f.Sim.SetCableWidths("hca3", 1, iba.LinkWidth1X)

	r, err := health.Run(ctx, f, health.Options{Interval: 10 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d nodes, %d links, %d master SM\n", r.Summary.Nodes, r.Summary.Links, r.Summary.Masters)
	fmt.Printf("errors %d, warnings %d\n", r.Counts[health.Error], r.Counts[health.Warning])
	for _, fd := range r.Findings {
		fmt.Printf("%s %s: %s port %d\n", fd.Severity.Tag(), fd.Check, fd.Port.Desc, fd.Port.Port)
	}
	fmt.Println("CA-to-CA routes by hops:", r.Routing.Histogram)
	// Output:
	// 8 nodes, 8 links, 1 master SM
	// errors 0, warnings 1
	// -W- link-width: leaf2 port 1
	// CA-to-CA routes by hops: [0 0 4 0 8]
}

// Check one switch's forwarding tables, read into the subnet, without
// the rest: Routing works from the tables alone.
func ExampleRouting() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	defer f.Sim.Close()
	d, err := health.Collect(ctx, f, health.NeedLFT, health.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := health.Routing(d.Subnet)
	fmt.Printf("%d switches, %d LIDs, %d faults, longest route %d hops\n", r.Switches, r.LIDs, len(r.Faults), r.MaxHops)
	// Output:
	// 8 switches, 24 LIDs, 0 faults, longest route 4 hops
}
