package verbs_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"log"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/verbs"
)

// The address vector of datagrams sent along a path the SA gave: a
// PathRecord across a router, so with a GRH.
func ExampleAHAttrFromPath() {
	pr := &iba.PathRecord{
		SGID: iba.MakeGID(0xfe80<<48, 0x0002c90300001491), DGID: iba.MakeGID(0xfec0<<48, 0x0002c9030000a1b2),
		SLID: 4, DLID: 9, HopLimit: 4, TClass: 0x20, FlowLabel: 0x1234, SL: 2, Rate: iba.Rate100Gbps,
	}
	p := ibpath.FromPathRecord(pr)
	// Port 1 with LMC 0; the SGID is entry 0 of its GID table.
	a := verbs.AHAttrFromPath(p, 1, 0, 0)
	fmt.Printf("DLID %d SL %d rate %d port %d\n", a.DLID, a.SL, a.StaticRate, a.PortNum)
	fmt.Printf("GRH to %v from GID %d, hop limit %d, traffic class %#x, flow label %#x\n",
		a.GRH.DGID, a.GRH.SGIDIndex, a.GRH.HopLimit, a.GRH.TrafficClass, a.GRH.FlowLabel)
	// Output:
	// DLID 9 SL 2 rate 16 port 1
	// GRH to fec0::2:c903:0:a1b2 from GID 0, hop limit 4, traffic class 0x20, flow label 0x1234
}

// The path a datagram came by, from its completion and the 40 bytes before
// its payload, and the path of the reply: python-rdma's WCPath and
// reverse. Here a RoCE v2 datagram over IPv4.
func ExampleWCPath() {
	wc := &verbs.WC{Status: verbs.WCSuccess, Opcode: verbs.WCRecv, SrcQP: 0x11, QPNum: 0x12, Flags: verbs.WCWithGRH}
	grh, _ := hex.DecodeString("0000000000000000000000000000000000000000" + // unused before an IPv4 header
		"4500003c00004000401126af" + "0a000002" + "0a000001") // 10.0.0.2 -> 10.0.0.1, TTL 64
	in, err := verbs.WCPath(wc, grh, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("came by:", in)
	fmt.Println("reply:  ", in.Reverse(true))
	// Output:
	// came by: IBPath(DGID=::ffff:10.0.0.1, DLID=0, SGID=::ffff:10.0.0.2, SL=0, SLID=0, dqpn=18, flow_label=0, has_grh=True, hop_limit=64, sqpn=17, traffic_class=0)
	// reply:   IBPath(DGID=::ffff:10.0.0.2, DLID=0, SGID=::ffff:10.0.0.1, SL=0, SLID=0, dqpn=17, flow_label=0, has_grh=True, hop_limit=255, sqpn=18, traffic_class=0)
}

// Listing the RDMA devices. Where libibverbs is not installed the error
// says what to install, and matches ErrNotAvailable.
func ExampleDevices() {
	devs, err := verbs.Devices()
	if errors.Is(err, verbs.ErrNotAvailable) {
		log.Fatal(err) // "verbs: libibverbs is not available: ... (install ...)"
	}
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range devs {
		fmt.Println(d.Name, d.NodeGUID, d.Transport)
	}
}

// Registering memory the program owns: a Go byte slice stays pinned, where
// the adapter may write it, until the MR is closed.
func ExamplePD_RegisterMR() {
	c, err := verbs.Open("") // the first device
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close() // closes the PD and the MR too
	pd, err := c.AllocPD()
	if err != nil {
		log.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	mr, err := pd.RegisterMR(buf, verbs.AccessLocalWrite|verbs.AccessRemoteWrite)
	if err != nil {
		log.Fatal(err)
	}
	// A peer writes into buf by this address and R_Key.
	fmt.Printf("address %#x, R_Key %#x\n", mr.Addr(), mr.RKey())
}
