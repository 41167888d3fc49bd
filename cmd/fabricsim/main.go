// Command fabricsim is the InfiniBand fabric simulator: it serves a
// simulated fabric over ibsim's protocol (so OpenSM and the C diags run
// against it through libumad2sim, and ibtool through --fabric ibsim),
// writes generated topology files, and takes fault and latency commands
// on a control socket. See internal/fabricsim.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rdmakit/rdmakit/internal/fabricsim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := fabricsim.Main(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
