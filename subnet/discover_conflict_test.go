package subnet

import (
	"strings"
	"testing"
	"time"
)

// A CA given another CA's node GUID is merged into it by the walk, as in
// libibnetdisc, and reported as a Conflict: its port 1 has another port
// GUID than the known node's.
func TestDiscoverConflictDuplicateNodeGUID(t *testing.T) {
	f := faultFabric(t)
	tp := f.Topology()
	guid := tp.Nodes[f.NodeCount()-2].NodeGUID // hca63's; hca64 is where the walk starts
	if err := f.SetNodeGUID("hca1", guid); err != nil {
		t.Fatal(err)
	}
	c := simClient(t, f, "hca64", liveTimeout, 3)
	_, rep, _ := discoverBounded(t, c, DiscoverOptions{}, 30*time.Second)
	if len(rep.Conflicts) != 1 {
		for _, x := range rep.Conflicts {
			t.Logf("conflict at %v: %s", x.Path, x.Reason)
		}
		t.Fatalf("%d conflicts, want 1", len(rep.Conflicts))
	}
	x := rep.Conflicts[0]
	if x.Node.GUID != guid || x.NodeInfo().NodeGUID != guid || !strings.Contains(x.Reason, "port 1 has GUID") {
		t.Fatalf("conflict %+v: %s", x, x.Reason)
	}
}

// The same fabric without the fault has no conflict.
func TestDiscoverNoConflict(t *testing.T) {
	f := faultFabric(t)
	c := simClient(t, f, "hca64", liveTimeout, 3)
	_, rep, _ := discoverBounded(t, c, DiscoverOptions{}, 30*time.Second)
	if len(rep.Conflicts) != 0 {
		t.Fatalf("conflicts on a clean fabric: %s", rep.Conflicts[0].Reason)
	}
}
