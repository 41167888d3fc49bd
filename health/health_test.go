package health

import (
	"context"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
)

func openSim(t *testing.T, spec string) *fabric.Fabric {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := fabric.Open(ctx, "sim:"+spec, fabric.WithTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.Close()
		f.Sim.Close()
	})
	return f
}

func run(t *testing.T, f *fabric.Fabric, o Options) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if o.Interval == 0 {
		o.Interval = 50 * time.Millisecond
	}
	if o.Checks == nil {
		o.Checks = []string{"all"}
	}
	r, err := Run(ctx, f, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCleanFabric(t *testing.T) {
	f := openSim(t, "fattree:k=4,n=3")
	r := run(t, f, Options{VLRouting: true})
	for _, fd := range r.Findings {
		t.Errorf("%v", fd)
	}
	if r.Summary.Switches != 48 || r.Summary.CAs != 64 {
		t.Errorf("summary %+v", r.Summary)
	}
	if r.Routing == nil || r.Routing.Pairs != 64*63 {
		t.Errorf("routing %+v", r.Routing)
	}
	t.Logf("histogram %v, %d checks, %v", r.Routing.Histogram, len(r.Checks), r.Elapsed)
}
