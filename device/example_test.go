package device_test

import (
	"fmt"

	"github.com/rdmakit/rdmakit/device"
)

// The RDMA devices and their end ports from sysfs (python-rdma's
// rdma.get_devices), and the end port an end port string names
// (python-rdma's get_end_port: a device, device/port, port GID or port
// GUID). On a machine with RDMA devices the root is "/sys"; here it is a
// copy of what a soft-RoCE device shows there.
func Example() {
	devs, err := device.List("testdata/rxe/sys")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range devs {
		fmt.Printf("%s %v node GUID %v\n", d.Name, d.NodeType, d.NodeGUID)
		for _, p := range d.Ports {
			fmt.Printf("  port %d %v %s, %s, port GUID %v\n", p.Num, p.State, p.LinkLayer, p.Rate, p.PortGUID)
		}
	}
	p, err := device.FindEndPort(devs, "rxe0/1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("rxe0/1 is", p)
	// Output:
	// rxe0 CA node GUID 0x143df9fffe58006c
	//   port 1 ACTIVE Ethernet, 2.5 Gb/sec (1X SDR), port GUID 0x143df9fffe58006c
	// rxe0/1 is rxe0/1
}
