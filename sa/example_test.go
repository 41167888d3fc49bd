package sa_test

import (
	"context"
	"fmt"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/sa"
)

// The NodeRecords of every switch from one SubnAdmGetTable: the record's
// fields that are set go out with their component mask bits (IBA
// 15.2.1.1), named as the IBA names them.
func ExampleGetTable() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()

	q := &iba.NodeRecord{}
	q.NodeInfo.NodeType = iba.NodeTypeSwitch
	recs, err := sa.GetTable(ctx, f.SA(), q, sa.Components("nodeInfo.nodeType"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range recs[:3] {
		fmt.Printf("LID %d %v ports %d %q\n", r.LID, r.NodeInfo.NodeGUID, r.NodeInfo.NumPorts, namemap.Clean(r.NodeDescription.NodeString[:]))
	}
	fmt.Println(len(recs), "switches")
	// Output:
	// LID 1 0x0008f10500000000 ports 8 "ft-l0-0"
	// LID 2 0x0008f10500000004 ports 8 "ft-l1-0"
	// LID 3 0x0008f10500000005 ports 8 "ft-l1-1"
	// 8 switches
}

// python-rdma's SATransactor: SubnGet of the attributes the SA keeps
// records of, answered from those records instead of by SMPs to the node
// (ibtool --sa). A directed route is first turned into a LID.
func ExampleNewSMP() {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()

	smp := sa.NewSMP(f.SA())
	var ni iba.NodeInfo
	if err := smp.SubnGet(ctx, ibpath.NewDR(0, 1).Route(), &ni, 0); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%v %d ports, node GUID %v\n", ni.NodeType, ni.NumPorts, ni.NodeGUID)
	// Output:
	// Switch 8 ports, node GUID 0x0008f10500000000
}
