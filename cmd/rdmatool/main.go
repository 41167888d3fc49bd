// Command rdmatool shows and configures RDMA devices, links, resources and
// counters through the kernel's RDMA netlink: a drop-in for iproute2's
// rdma(8). See docs/rdmatool.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rdmakit/rdmakit/internal/rdmatool"
)

func main() {
	// An interrupt ends a long-running command (monitor) cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := rdmatool.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
