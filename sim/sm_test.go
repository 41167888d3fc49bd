package sim

import (
	"errors"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/sim/topo"
)

func TestSMGenerated(t *testing.T) {
	cases := []struct {
		name string
		gen  func() (*topo.Topology, error)
		cfg  SMConfig
	}{
		{"dragonfly", func() (*topo.Topology, error) { return topo.Dragonfly(topo.DragonflyConfig{A: 3, P: 2, H: 1}) }, SMConfig{}},
		{"random with LMC 2", func() (*topo.Topology, error) {
			return topo.Random(topo.RandomConfig{Switches: 12, Radix: 8, Hosts: 20, ExtraLinks: 6, Seed: 9})
		}, SMConfig{LMC: 2}},
		{"leaf/spine, dual-port HCAs, routers, SM on a switch", func() (*topo.Topology, error) {
			return topo.LeafSpine(topo.LeafSpineConfig{Leaves: 6, Spines: 4, HostsPerLeaf: 6, Uplinks: 2, HCAPorts: 2, Routers: 2, Seed: 4})
		}, SMConfig{Node: "spine2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top, err := c.gen()
			if err != nil {
				t.Fatal(err)
			}
			f, err := New(top)
			if err != nil {
				t.Fatal(err)
			}
			ctx := ctxT(t)
			res, err := f.RunSM(ctx, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			s, ca, rt := top.Counts()
			if res.Switches != s || res.CAs != ca || res.Routers != rt {
				t.Fatalf("SM found %+v; topology has %d/%d/%d", res, s, ca, rt)
			}
			seen := map[uint16]bool{}
			var probe string
			for i := range top.Nodes {
				n := &top.Nodes[i]
				for p := 0; p <= int(n.NumPorts); p++ {
					if (n.Type == iba.NodeTypeSwitch) != (p == 0) || (p > 0 && top.Port(i, p).Peer < 0) {
						continue
					}
					st, _, l, lmc, err := f.PortState(n.ID, p)
					if err != nil {
						t.Fatal(err)
					}
					if st != iba.PortStateActive || l == 0 || (n.Type != iba.NodeTypeSwitch && lmc != c.cfg.LMC) {
						t.Fatalf("%s/%d: %v LID %d LMC %d", n.ID, p, st, l, lmc)
					}
					for k := uint16(0); k < 1<<lmc; k++ {
						if seen[l+k] {
							t.Fatalf("LID %d twice", l+k)
						}
						seen[l+k] = true
					}
					if n.Type == iba.NodeTypeCA && probe == "" {
						probe = n.ID
					}
				}
			}
			// Every LID, all of each LMC range, answers from a CA.
			cl := client(t, f, probe, 1)
			for l := range seen {
				var ni iba.NodeInfo
				if err := cl.SubnGet(ctx, lid(l), &ni, 0); err != nil {
					t.Fatalf("LID %d: %v", l, err)
				}
			}
		})
	}
}

func TestSMErrors(t *testing.T) {
	f := lineFabric(t, false)
	ctx := ctxT(t)
	if _, err := f.RunSM(ctx, SMConfig{Node: "nope"}); !errors.Is(err, ErrNoNode) {
		t.Fatalf("SM on an unknown node: %v", err)
	}
	if _, err := f.RunSM(ctx, SMConfig{Node: "sw1", Port: 2}); err == nil {
		t.Fatal("SM on a switch's port 2")
	}
	if _, err := f.RunSM(ctx, SMConfig{LMC: 9}); err == nil {
		t.Fatal("LMC 9")
	}
	// A resweep is harmless.
	if _, err := f.RunSM(ctx, SMConfig{}); err != nil {
		t.Fatal(err)
	}
	res, err := f.RunSM(ctx, SMConfig{})
	if err != nil || res.MaxLID != 5 {
		t.Fatalf("resweep: %+v %v", res, err)
	}
	// A cancelled context stops the sweep.
	cctx, cancel := contextWithCancel(ctx)
	cancel()
	if _, err := f.RunSM(cctx, SMConfig{}); err == nil {
		t.Fatal("SM with a cancelled context")
	}
}
