package fabricsim

import (
	"context"
	"testing"

	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// FuzzConsole feeds arbitrary control-socket lines to the console: a
// clear error or an answer, never a panic.
func FuzzConsole(f *testing.F) {
	for _, s := range []string{"link down hca1 1", "node dead hca2", "drop hca1 1 50", "latency hop=1 sma=2ms queue=3 loss=1",
		"errors hca1 1 symbol=1", "status", "help", "latency off", "link up hca1 1", "node alive hca2", "# x"} {
		f.Add(s)
	}
	top, err := topo.Generate("fattree:k=2,n=2")
	if err != nil {
		f.Fatal(err)
	}
	fab, err := sim.New(top)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { fab.Close() })
	c := &Console{F: fab}
	f.Fuzz(func(t *testing.T, line string) {
		_, _ = c.Exec(context.Background(), line)
		_ = fab.SetLatency(sim.Latency{}) // keep later inputs fast
	})
}
