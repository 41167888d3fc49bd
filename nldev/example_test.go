package nldev_test

import (
	"context"
	"fmt"

	"github.com/rdmakit/rdmakit/nldev"
	"github.com/rdmakit/rdmakit/nldev/nldevtest"
)

type printReporter struct{}

func (printReporter) Errorf(format string, args ...any) { fmt.Printf(format+"\n", args...) }

// The RDMA devices and the queue pairs on them, over the kernel's RDMA
// netlink (rdma dev; rdma resource show qp). On a machine with RDMA,
// nldev.Dial(nil) gives the connection; here it replays what Linux 6.1
// answered in the test VM, so the example runs anywhere.
func Example() {
	var ex []nldevtest.Exchange
	for _, f := range []string{"testdata/replay/dev-list.nl", "testdata/replay/res-qp.nl"} {
		e, err := nldevtest.ReadFile(f)
		if err != nil {
			fmt.Println(err)
			return
		}
		ex = append(ex, e...)
	}
	c := nldevtest.Replay(printReporter{}, ex)
	defer c.Close()
	ctx := context.Background()

	devs, err := c.Dev.List(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range devs {
		fmt.Printf("%d: %s node_guid %v %s\n", d.Index, d.Name, d.NodeGUID, d.Protocol)
	}
	qps, err := c.Res.QPs(ctx, nldev.Query{})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Type and State are the kernel's IB_QPT_* and IB_QPS_* numbers: GSI
	// is 1 and RC 2; INIT is 1, RTR 2 and RTS 3.
	for _, q := range qps[:3] {
		fmt.Printf("%s lqpn %d type %d state %d\n", q.DevName, q.LQPN, q.Type, q.State)
	}
	// Output:
	// 0: rxe0 node_guid 0xf0de06fffe6fd12d roce
	// 1: siw0 node_guid 0x00c5eefffed4f32c iw
	// rxe0 lqpn 17 type 2 state 3
	// rxe0 lqpn 18 type 2 state 3
	// rxe0 lqpn 19 type 2 state 3
}
