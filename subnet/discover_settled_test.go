package subnet

import (
	"context"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/sim/topo"
)

// nodeShape is what Settled promises about a node: its ports and LIDs.
type nodeShape struct {
	smaLID uint16
	ports  [8]uint16 // base LID of ports 0..7, 0xffff where there is none
}

func shapeOf(n *Node) nodeShape {
	var sh nodeShape
	sh.smaLID = n.SMALID
	for p := range sh.ports {
		sh.ports[p] = 0xffff
		if pp := n.Port(p); pp != nil {
			sh.ports[p] = pp.BaseLID
		}
	}
	return sh
}

// TestDiscoverSettled checks the Settled hook on fabrics whose HCAs have
// two ports cabled to different switches (rails): every node is settled,
// and the shape at its last Settled call is its final one; an HCA's first
// call may come before its second port is found, and then a later call
// follows.
func TestDiscoverSettled(t *testing.T) {
	for _, spec := range []string{"fattree:k=4,n=2,hcaports=2", "leafspine:leaves=4,spines=2,hosts=4,uplinks=2,hcaports=2", "dragonfly:a=4,p=2,h=2"} {
		t.Run(spec, func(t *testing.T) {
			tp, err := topo.Generate(spec)
			if err != nil {
				t.Fatal(err)
			}
			_, mc, lid := simFabric(t, tp)
			for _, m := range []Method{ByDirectRoute, ByLID} {
				last := map[*Node]nodeShape{}
				calls := 0
				opt := DiscoverOptions{Method: m, LocalLID: lid, Settled: func(n *Node) {
					calls++
					last[n] = shapeOf(n)
				}}
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				s, _, err := Discover(ctx, mc, opt)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if len(last) != s.Len() {
					t.Errorf("%v: %d nodes settled, %d discovered", m, len(last), s.Len())
				}
				for _, n := range s.Nodes() {
					sh, ok := last[n]
					if !ok {
						t.Errorf("%v: %v %q never settled", m, n.GUID, n.Description())
						continue
					}
					if sh != shapeOf(n) {
						t.Errorf("%v: %v %q changed after it last settled: %+v, now %+v", m, n.GUID, n.Description(), sh, shapeOf(n))
					}
				}
				if calls < s.Len() {
					t.Errorf("%v: %d calls for %d nodes", m, calls, s.Len())
				}
				t.Logf("%v: %d nodes, %d Settled calls", m, s.Len(), calls)
			}
		})
	}
}
