// Command fabricsim is the InfiniBand fabric simulator: it serves a
// simulated fabric over ibsim's protocol (so OpenSM and the C diags run
// against it through libumad2sim, and ibtool through --fabric ibsim),
// writes generated topology files, and takes fault and latency commands
// on a control socket. See internal/fabricsim.
package main

import (
	"context"
	"os"

	"github.com/rdmakit/rdmakit/internal/fabricsim"
	"github.com/rdmakit/rdmakit/internal/shutdown"
)

func main() {
	// SIGINT, SIGTERM and SIGHUP stop the server (its clients' sockets
	// close) and fabricsim exits 128+signal.
	os.Exit(shutdown.Run(func(ctx context.Context) int {
		return fabricsim.Main(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	}))
}
