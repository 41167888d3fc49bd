package ibpath_test

import (
	"context"
	"fmt"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
)

// A GID resolved to a path through an SA PathRecord (python-rdma's
// resolve_path): the SL, P_Key, MTU and rate come from the SM, never
// guessed, and the path's spec is the one ibtool accepts back.
func ExampleResolver_GMP() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()

	// hca5's port, by its GID: the subnet prefix and the port GUID.
	target, err := ibpath.Parse("fe80::2:c903:0:9", ibpath.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := f.Resolver.GMP(ctx, target)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("DLID %d SLID %d SL %d P_Key %#04x MTU %v rate %v\n", p.DLID, p.SLID, p.SL, p.PKey, iba.MTU(p.MTU), iba.Rate(p.Rate))
	// Output:
	// DLID 13 SLID 9 SL 0 P_Key 0xffff MTU 2048 rate 10 Gb/sec
}
