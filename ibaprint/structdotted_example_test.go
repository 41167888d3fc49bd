package ibaprint_test

import (
	"fmt"
	"os"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
)

// A NodeInfo in python-rdma's dotted format, as its ibtool query prints a
// reply.
func ExampleStructDotted() {
	ni := iba.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: iba.NodeTypeCA, NumPorts: 2,
		NodeGUID: 0x0002c90300001490, PortGUID: 0x0002c90300001491, PartitionCap: 128, LocalPortNum: 1}
	b := make([]byte, ni.Desc().Size)
	if err := ni.MarshalTo(b); err != nil {
		fmt.Println(err)
		return
	}
	if err := ibaprint.StructDotted(os.Stdout, ni.Desc(), b); err != nil {
		fmt.Println(err)
	}
	// Output:
	// BaseVersion......................1
	// ClassVersion.....................1
	// NodeType.........................Channel Adapter
	// NumPorts.........................2
	// SystemImageGUID..................0x0000000000000000
	// NodeGUID.........................0x0002c90300001490
	// PortGUID.........................0x0002c90300001491
	// PartitionCap.....................128
	// DeviceID.........................0x0000
	// Revision.........................0x00000000
	// LocalPortNum.....................1
	// VendorID.........................0x000000
}
