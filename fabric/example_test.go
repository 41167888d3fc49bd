package fabric_test

import (
	"context"
	"fmt"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
)

// The PortInfo of the local port by SubnGet, python-rdma's first example:
// open the fabric (here a simulated fat tree, brought up by the built-in
// subnet manager), then one SMP by its IBA name.
func ExampleOpen() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()

	var pi iba.PortInfo
	// A directed route of no hops reaches the local port's own node.
	if err := f.MAD.SubnGet(ctx, ibpath.NewDR(0).Route(), &pi, uint32(f.Local.PortNum)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s port %d: LID %d, SM LID %d, %v, %d-lane link\n",
		f.Local.Name, f.Local.PortNum, pi.LID, pi.MasterSMLID, pi.PortState, iba.LinkWidthLanes(pi.LinkWidthActive))
	// Output:
	// sim:hca1/1 port 1: LID 9, SM LID 9, Active, 4-lane link
}

// A subnet whose ports are M_Key protected answers SMPs only with the key:
// WithMKey puts it into every SMP the fabric's client sends. Here the
// example protects the local leaf switch at level 3 itself, then reads it.
func ExampleWithMKey() {
	ctx := context.Background()
	const key = 0x1234
	f, err := fabric.Open(ctx, "sim:fattree:k=2,n=1", fabric.WithMKey(key))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()

	sw := ibpath.NewDR(0, 1).Route()
	var pi iba.PortInfo
	if err := f.MAD.SubnGet(ctx, sw, &pi, 0); err != nil {
		fmt.Println(err)
		return
	}
	pi.MKey, pi.MKeyProtectBits = key, 3
	pi.PortState, pi.PortPhysicalState, pi.LinkWidthEnabled, pi.LinkSpeedEnabled = 0, 0, 0, 0
	if err := f.MAD.SubnSet(ctx, sw, &pi, 0); err != nil {
		fmt.Println(err)
		return
	}
	pi = iba.PortInfo{}
	if err := f.MAD.SubnGet(ctx, sw, &pi, 0); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("switch port 0: M_Key %#x, protection level %d\n", pi.MKey, pi.MKeyProtectBits)
	// Output:
	// switch port 0: M_Key 0x1234, protection level 3
}
