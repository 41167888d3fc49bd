package subnet_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/subnet"
)

// TestFind looks every port of a discovered fat tree up by each target
// form and wants that port back; forms that name nothing are ErrNotFound.
func TestFind(t *testing.T) {
	_, sn := openTables(t)
	local, localPort := sn.From()
	routes := sn.RoutesAvoiding(nil, localPort)
	parse := func(s string) ibpath.Path {
		p, err := ibpath.Parse(s, ibpath.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, n := range sn.Nodes() {
		want := n.EndPort()
		if n == local {
			want = local.Port(localPort)
		}
		route, _ := routes.Node(n)
		hops := []string{"0"}
		for _, h := range route {
			hops = append(hops, fmt.Sprint(h))
		}
		dr := strings.Join(hops, ",")
		if len(route) == 0 {
			dr = "0,"
		}
		for _, target := range []string{
			dr,
			fmt.Sprint(want.BaseLID),
			fmt.Sprintf("%#x", want.BaseLID),
			fmt.Sprintf("0x%016x", uint64(want.GUID)),
			iba.MakeGID(0xfe80<<48, want.GUID).String(),
			fmt.Sprintf("IBPath(DLID=%d)", want.BaseLID),
		} {
			got, err := sn.Find(parse(target))
			if err != nil || got != want {
				t.Errorf("%s: %v (%v), want %s port %d", target, got, err, n.Description(), want.Num)
			}
		}
		// A node GUID where a port GUID is expected finds the node.
		if got, err := sn.Find(ibpath.NewGID(iba.MakeGID(0xfe80<<48, n.GUID))); err != nil || got.Node != n {
			t.Errorf("node GUID %v: %v %v", n.GUID, got, err)
		}
	}
	for _, target := range []string{"0,99", "0xbfff", "0x00000000deadbeef", "IBDRPath(drPath=0:1:,drDLID=5)"} {
		if _, err := sn.Find(parse(target)); !errors.Is(err, subnet.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", target, err)
		}
	}
}

// TestNodesNamed finds nodes by description and by a node name map's
// name, the map first.
func TestNodesNamed(t *testing.T) {
	_, sn := openTables(t)
	sw := sn.NodesOfType(iba.NodeTypeSwitch)[0]
	ca := sn.NodesOfType(iba.NodeTypeCA)[0]
	names, err := namemap.Parse(strings.NewReader(fmt.Sprintf("%#x \"core\"\n%#x %q\n", uint64(sw.GUID), uint64(ca.GUID), sw.Description())), "map")
	if err != nil {
		t.Fatal(err)
	}
	if got := sn.NodesNamed("core", names); len(got) != 1 || got[0] != sw {
		t.Errorf("core: %v", got)
	}
	if got := sn.NodesNamed(sw.Description(), names); len(got) != 2 || got[0] != ca || got[1] != sw {
		t.Errorf("%q: %v, want the mapped CA then the switch", sw.Description(), got)
	}
	if got := sn.NodesNamed("no such node", nil); len(got) != 0 {
		t.Errorf("no such node: %v", got)
	}
}
