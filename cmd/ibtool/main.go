// Command ibtool is infiniband-diags and python-rdma's ibtool in one static
// binary. See internal/diags for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"

	"github.com/rdmakit/rdmakit/internal/diags"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// A sweep of a large fabric allocates a little per MAD while the
		// subnet it holds stays live: collecting at twice the live heap
		// instead of at once more halves the collector's share of the CPU
		// (about a tenth on a 10k-node ibqueryerrors) for some 10% more
		// memory. GOGC overrides it.
		debug.SetGCPercent(200)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := diags.Main(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
