package subnet_test

import (
	"context"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/subnet"
)

// TestRoutesAvoiding: with nothing avoided every node has a route, and an
// SMP sent along it reaches that node; with all but one of the local
// leaf's uplinks avoided, every route to the rest of the fabric takes the
// remaining uplink; with all of them avoided only the leaf and its CAs are
// reached. Port gives a CA port through its switch, never through an
// avoided link.
func TestRoutesAvoiding(t *testing.T) {
	f, sn := openTables(t)
	ctx := context.Background()
	local, localPort := sn.From()
	routes := sn.RoutesAvoiding(nil, localPort)
	for _, n := range sn.Nodes() {
		route, ok := routes.Node(n)
		if !ok {
			t.Fatalf("no route to %s", n.Description())
		}
		if got := sn.NodeAt(route); got != n {
			t.Fatalf("route %v to %s ends at %v", route, n.Description(), got)
		}
		var ni iba.NodeInfo
		if err := f.SubnGet(ctx, ibpath.NewDR(append([]byte{0}, route...)...), &ni, 0); err != nil || ni.NodeGUID != n.GUID {
			t.Fatalf("NodeInfo along %v: %v %v, want %v", route, ni.NodeGUID, err, n.GUID)
		}
	}
	for _, ca := range sn.NodesOfType(iba.NodeTypeCA) {
		route, ok := routes.Port(ca, 1)
		if !ok {
			t.Fatalf("no route to %s port 1", ca.Description())
		}
		var pi iba.PortInfo
		if err := f.SubnGet(ctx, ibpath.NewDR(append([]byte{0}, route...)...), &pi, 1); err != nil || pi.LID != ca.EndPort().BaseLID {
			t.Fatalf("PortInfo along %v: LID %d %v, want %s's", route, pi.LID, err, ca.Description())
		}
	}

	leaf := local.Port(localPort).Remote.Node
	var uplinks []*subnet.Port
	for _, p := range leaf.Ports {
		if p != nil && p.Remote != nil && p.Remote.Node.Type == iba.NodeTypeSwitch {
			uplinks = append(uplinks, p)
		}
	}
	if len(uplinks) < 2 {
		t.Fatalf("leaf %s has %d uplinks", leaf.Description(), len(uplinks))
	}
	avoid := map[subnet.PortKey]bool{}
	for _, p := range uplinks[1:] {
		avoid[p.Key()] = true
	}
	routes = sn.RoutesAvoiding(avoid, localPort)
	for _, n := range sn.Nodes() {
		route, ok := routes.Node(n)
		if !ok {
			t.Fatalf("no route to %s around %d uplinks", n.Description(), len(avoid))
		}
		if len(route) > 1 && avoid[leaf.Port(int(route[1])).Key()] {
			t.Errorf("route %v to %s leaves the leaf by port %d, an avoided uplink", route, n.Description(), route[1])
		}
	}
	avoid[uplinks[0].Remote.Key()] = true // the far end counts as well
	routes = sn.RoutesAvoiding(avoid, localPort)
	for _, n := range sn.Nodes() {
		_, ok := routes.Node(n)
		near := n == leaf || (n.Type == iba.NodeTypeCA && n.Port(1).Remote.Node == leaf)
		if ok != near {
			t.Errorf("%s: routed %v, want %v", n.Description(), ok, near)
		}
	}
	if _, ok := routes.Port(local, localPort); !ok {
		t.Errorf("the start port must be reached by the empty route")
	}
	avoid[leaf.Port(local.Port(localPort).Remote.Num).Key()] = true
	routes = sn.RoutesAvoiding(avoid, localPort)
	for _, ca := range sn.NodesOfType(iba.NodeTypeCA) {
		if _, ok := routes.Port(ca, 1); ok && ca != local {
			t.Errorf("%s port 1 routed with the start's own link avoided", ca.Description())
		}
	}
}
