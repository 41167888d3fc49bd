package ibpath_test

import (
	"context"
	"errors"
	"testing"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
)

// TestNodesDescribed finds a switch and a CA of the simulated fabric by
// their NodeDescription through the SA, and nothing for a description no
// node has.
func TestNodesDescribed(t *testing.T) {
	ctx := context.Background()
	f, err := fabric.Open(ctx, "sim:fattree:k=4,n=2")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, dr := range [][]byte{{0}, {0, 1}} {
		var nd iba.NodeDescription
		var ni iba.NodeInfo
		p := ibpath.NewDR(dr...)
		if err := f.MAD.SubnGet(ctx, p, &nd, 0); err != nil {
			t.Fatal(err)
		}
		if err := f.MAD.SubnGet(ctx, p, &ni, 0); err != nil {
			t.Fatal(err)
		}
		desc := string(nd.NodeString[:])
		for i, c := range nd.NodeString {
			if c == 0 {
				desc = string(nd.NodeString[:i])
				break
			}
		}
		got, err := f.Resolver.NodesDescribed(ctx, desc)
		if err != nil || len(got) != 1 || got[0] != ni.NodeGUID {
			t.Errorf("%q: %v %v, want %v", desc, got, err, ni.NodeGUID)
		}
	}
	if got, err := f.Resolver.NodesDescribed(ctx, "no such node"); err != nil || len(got) != 0 {
		t.Errorf("no such node: %v %v", got, err)
	}
	if _, err := f.Resolver.NodesDescribed(ctx, ""); !errors.Is(err, ibpath.ErrNotFound) {
		t.Errorf("empty description: %v", err)
	}
}
