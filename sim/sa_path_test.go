package sim

import (
	"errors"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// TestSAPathHalfWorld: the query infiniband-diags' ibqueryerrors makes for
// the SL of every destination (SGID, NumbPath 1, Reversible 1, no
// destination) is answered on a subnet of more than saMaxWorld ports, one
// path per destination, as OpenSM answers it; the whole world is not.
func TestSAPathHalfWorld(t *testing.T) {
	top, err := topo.LeafSpine(topo.LeafSpineConfig{Leaves: 36, Spines: 2, HostsPerLeaf: 32, Uplinks: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := upFabric(t, top, SMConfig{})
	ctx := ctxT(t)
	sc, _ := saClient(t, f, "hca1")
	s, ca, _ := f.Topology().Counts()
	if s+ca <= saMaxWorld {
		t.Fatalf("%d end ports: not more than %d", s+ca, saMaxWorld)
	}
	_, _, l1, _, _ := f.PortState("hca1", 1)
	paths, err := sa.GetTable(ctx, sc, &iba.PathRecord{SGID: gidOf(f, "hca1", 1), NumbPath: 1, Reversible: 1})
	if err != nil || len(paths) != s+ca {
		t.Fatalf("%d paths for %d end ports: %v", len(paths), s+ca, err)
	}
	seen := map[uint16]bool{}
	for _, p := range paths {
		if p.SLID != l1 || p.DLID == 0 || seen[p.DLID] || p.Reversible != 1 {
			t.Fatalf("path %+v", p)
		}
		seen[p.DLID] = true
	}
	// By SLID too, and NumbPath 0 asks for no path at all.
	if paths, err := sa.GetTable(ctx, sc, &iba.PathRecord{SLID: l1}); err != nil || len(paths) != s+ca {
		t.Fatalf("by SLID: %d paths: %v", len(paths), err)
	}
	if paths, err := sa.GetTable(ctx, sc, &iba.PathRecord{SLID: l1}, sa.Components("numbPath")); err != nil || len(paths) != 0 {
		t.Fatalf("NumbPath 0: %d paths: %v", len(paths), err)
	}
	if _, err := sa.GetTable(ctx, sc, &iba.PathRecord{}); !errors.Is(err, mad.ErrSAReqInsufficientComponents) {
		t.Fatalf("the whole world: %v", err)
	}
}
