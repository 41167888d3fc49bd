// Command ibtool is infiniband-diags and python-rdma's ibtool in one binary.
// See internal/diags for the commands.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/rdmakit/rdmakit/internal/diags"
)

func main() {
	tuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := diags.Main(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
