package traceroute_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
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

// The directed route from the local port to LID 24, found through the
// switches' forwarding tables with directed-route SMPs only, as
// iblinkinfo -G finds the start of its scan; a SMP sent along it reaches
// the port.
func ExampleTracer_DirectedRoute() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	t := &traceroute.Tracer{Getter: f}
	path, err := t.DirectedRoute(ctx, 24)
	if err != nil {
		fmt.Println(err)
		return
	}
	var nd iba.NodeDescription
	if err := f.SubnGet(ctx, ibpath.NewDR(append([]byte{0}, path...)...).Route(), &nd, 0); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%v reaches %q\n", path, strings.TrimRight(string(nd.NodeString[:]), "\x00"))
	// Output:
	// 0,1,7,4,4 reaches "hca16 HCA-1"
}
