package traceroute_test

import (
	"context"
	"fmt"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/traceroute"
)

// The route from one host to another through a fat tree, read from the
// switches' forwarding tables hop by hop (ibtracert 9 24).
func ExampleTracer_Unicast() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	t := &traceroute.Tracer{Getter: f}
	r, err := t.Unicast(ctx, 9, 24)
	if err != nil {
		fmt.Println(err, r.Warnings)
		return
	}
	for _, h := range r.Hops {
		switch h.Kind {
		case traceroute.From:
			fmt.Printf("from %q lid %d\n", h.Desc, h.LID)
		case traceroute.Through:
			fmt.Printf("  out port %d to %q port %d\n", h.OutPort, h.Desc, h.PortNum)
		case traceroute.To:
			fmt.Printf("to %q lid %d\n", h.Desc, h.LID)
		}
	}
	// Output:
	// from "hca1 HCA-1" lid 9
	//   out port 1 to "ft-l0-0" port 1
	//   out port 7 to "ft-l1-2" port 1
	//   out port 4 to "ft-l0-3" port 7
	//   out port 4 to "hca16 HCA-1" port 1
	// to "hca16 HCA-1" lid 24
}
