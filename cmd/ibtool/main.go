// Command ibtool is infiniband-diags and python-rdma's ibtool in one binary.
// See internal/diags for the commands.
//
// Its man pages, one per command, are generated into docs/man:
//
//go:generate go run ../../internal/cmd/genman -out ../../docs/man
package main

import (
	"context"
	"os"

	"github.com/rdmakit/rdmakit/internal/diags"
	"github.com/rdmakit/rdmakit/internal/shutdown"
)

func main() {
	tuneGC()
	// SIGINT, SIGTERM and SIGHUP cancel the command's context: it closes
	// its fabric (DISCONNECT from ibsim, umad closed) and exits 128+signal.
	os.Exit(shutdown.Run(func(ctx context.Context) int {
		return diags.Main(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	}))
}
