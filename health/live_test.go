package health

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/internal/testbed"
)

// The checks against the real peers: ibsim's SMAs and PMAs, OpenSM's
// LIDs, routes, SMInfo and SA (floor 3, internal/testbed), with faults
// staged from ibsim's console. ibtool runs on H-2, OpenSM on H-1.
func liveBed(t *testing.T) (*testbed.IBSim, *fabric.Fabric) {
	t.Helper()
	testbed.Require(t)
	ft, err := testbed.FatTree{Leaves: 2, Spines: 2, HCAsPerLeaf: 2}.Build()
	if err != nil {
		t.Fatal(err)
	}
	topo, err := ft.Topology()
	if err != nil {
		t.Fatal(err)
	}
	sim := testbed.StartIBSim(t, topo)
	testbed.StartOpenSM(t, sim, "H-1")
	t.Setenv("IBSIM_SOCKNAME", sim.SockName)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := fabric.Open(ctx, "ibsim:H-2", fabric.WithTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return sim, f
}

func TestLiveClean(t *testing.T) {
	_, f := liveBed(t)
	r := run(t, f, Options{})
	for _, fd := range r.Findings {
		t.Errorf("%v", fd)
	}
	if r.Summary.Masters != 1 || r.Routing == nil || r.Routing.Pairs != 4*3 {
		t.Fatalf("summary %+v, routing %+v", r.Summary, r.Routing)
	}
}

func TestLiveDuplicateGUID(t *testing.T) {
	sim, f := liveBed(t)
	h4 := testbed.HCAGUIDBase + 4<<4
	if out, err := sim.Console(fmt.Sprintf("Guid \"H-3\" %#x", uint64(h4))); err != nil || strings.TrimSpace(out) != "" {
		t.Fatalf("console: %q %v", out, err)
	}
	fd := only(t, f, "duplicate-node-guids", Options{})
	if uint64(fd.GUID) != uint64(h4) {
		t.Fatalf("finding %+v", fd)
	}
}

func TestLiveCountersRise(t *testing.T) {
	sim, f := liveBed(t)
	o := Options{Interval: 300 * time.Millisecond}
	o.Progress = func(stage string) {
		if stage == "counter interval" {
			if out, err := sim.Console(`PerformanceSet "H-3"[1] PortCounters.SymbolErrorCounter=7`); err != nil || !strings.Contains(out, "has been set to 7") {
				t.Errorf("console: %q %v", out, err)
			}
		}
	}
	fd := only(t, f, "counters", o)
	if !strings.Contains(fd.Message, "SymbolErrorCounter rose by 7") {
		t.Fatalf("finding %+v", fd)
	}
}

// An LFT entry set to loop between a leaf and a spine (ibsim takes
// LinearForwardingTable Sets as a switch does) is the routing check's.
func TestLiveLFTLoop(t *testing.T) {
	_, f := liveBed(t)
	s := tables(t, f)
	dest := node(t, s, "H-1").Port(1).BaseLID
	leaf2 := node(t, s, "S-leaf-2")
	// H-2 shares H-1's leaf, so its own route to H-1 crosses no spine:
	// leaf 2 and a spine send H-1's LID to each other.
	spine := node(t, s, "S-spine-1")
	setLFT(t, f, leaf2, dest, portTo(t, leaf2, spine))
	setLFT(t, f, spine, dest, portTo(t, spine, leaf2))
	fd := only(t, f, "routing", Options{})
	if fd.LID != dest || !strings.Contains(fd.Message, "loops") {
		t.Fatalf("finding %+v", fd)
	}
}
