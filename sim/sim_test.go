package sim

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sim/topo"
)

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func fatTree(t testing.TB, k, n int) *Fabric {
	t.Helper()
	top, err := topo.FatTree(topo.FatTreeConfig{K: k, N: n})
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(top)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func client(t testing.TB, f *Fabric, node string, port int, opts ...mad.Option) *mad.Client {
	t.Helper()
	tr, err := f.Attach(node, port)
	if err != nil {
		t.Fatal(err)
	}
	c := mad.NewClient(tr, append([]mad.Option{mad.WithTimeout(3 * time.Second), mad.WithRetries(1)}, opts...)...)
	t.Cleanup(func() { c.Close() })
	return c
}

func dr(path ...byte) mad.Route {
	return mad.Route{DR: &mad.DirectedRoute{Path: append([]byte{0}, path...)}}
}

func lid(l uint16) mad.Route { return mad.Route{Addr: mad.Addr{LID: l}} }

func TestSMBringUpFatTree(t *testing.T) {
	f := fatTree(t, 4, 3)
	ctx := ctxT(t)
	res, err := f.RunSM(ctx, SMConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Switches != 48 || res.CAs != 64 || res.EndPorts != 112 || res.MaxLID != 112 {
		t.Fatalf("SM result %+v", res)
	}
	if f.SMState() != iba.SMStateMaster {
		t.Fatalf("SM state %v", f.SMState())
	}
	top := f.Topology()
	lids := map[uint16]string{}
	var cas []string
	for i := range top.Nodes {
		n := &top.Nodes[i]
		if n.Type != iba.NodeTypeCA {
			continue
		}
		cas = append(cas, n.ID)
		st, phys, l, _, err := f.PortState(n.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if st != iba.PortStateActive || phys != iba.PhysPortStateLinkUp || l == 0 {
			t.Fatalf("%s: state %v %v LID %d", n.ID, st, phys, l)
		}
		if other, dup := lids[l]; dup {
			t.Fatalf("LID %d on %s and %s", l, other, n.ID)
		}
		lids[l] = n.ID
	}
	// Every LID answers a LID-routed NodeInfo from every CA.
	var wg sync.WaitGroup
	errs := make(chan error, len(cas))
	for _, ca := range cas {
		c := client(t, f, ca, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l := uint16(1); l <= res.MaxLID; l++ {
				var ni iba.NodeInfo
				if err := c.SubnGet(ctx, lid(l), &ni, 0); err != nil {
					errs <- fmt.Errorf("from %s to LID %d: %w", ca, l, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func contextWithCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// quick gives a route a short timeout, for requests the fabric must drop.
func quick(r mad.Route) mad.Route {
	r.Timeout = 150 * time.Millisecond
	return r
}
