package health

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
)

func TestPath(t *testing.T) {
	f := openSim(t, faultFabric)
	s := tables(t, f)
	dest := node(t, s, "hca7 HCA-1").Port(1).BaseLID
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := Options{Interval: 20 * time.Millisecond}
	r, err := Path(ctx, f, PathTarget{LID: dest}, o)
	if err != nil {
		t.Fatal(err)
	}
	// hca1, leaf1, a spine, leaf4, hca7.
	if !r.Reached || len(r.Hops) != 5 || len(r.Report.Findings) != 0 {
		t.Fatalf("path %+v, findings %v", r, r.Report.Findings)
	}
	if r.Hops[0].Out == nil || r.Hops[4].In == nil || r.Hops[4].Out != nil || r.Hops[1].Link != "4x 2.5 Active" {
		t.Fatalf("hops %+v %+v %+v", r.Hops[0], r.Hops[1], r.Hops[4])
	}
	// The same by directed route.
	var dr []uint8
	for _, h := range r.Hops[:4] {
		dr = append(dr, uint8(h.Out.Port))
	}
	r2, err := Path(ctx, f, PathTarget{DR: dr}, o)
	if err != nil || !r2.Reached || len(r2.Hops) != 5 || r2.Hops[4].Node.GUID != r.Hops[4].Node.GUID {
		t.Fatalf("by directed route %v: %+v %v", dr, r2, err)
	}

	// A 1x link on the way is the link-width check's.
	if err := f.Sim.SetCableWidths("hca7", 1, iba.LinkWidth1X); err != nil {
		t.Fatal(err)
	}
	r, err = Path(ctx, f, PathTarget{LID: dest}, o)
	if err != nil || len(r.Report.Findings) != 1 || r.Report.Findings[0].Check != "link-width" {
		t.Fatalf("with a 1x link: %v %v", r.Report.Findings, err)
	}
	// A hole in the spine's table stops the route.
	spine := r.Hops[2].Node
	setLFT(t, f, spine, dest, 0xff)
	r, err = Path(ctx, f, PathTarget{LID: dest}, o)
	if err != nil || r.Reached || r.Report.Findings[0].Check != "path" || !strings.Contains(r.Report.Findings[0].Message, "no route for the LID") {
		t.Fatalf("with a hole: %+v %v", r.Report.Findings, err)
	}
	if _, err := Path(ctx, f, PathTarget{}, o); err == nil {
		t.Fatal("an empty target: no error")
	}
}
