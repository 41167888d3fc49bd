// Command rdmatool shows and configures RDMA devices, links, resources and
// counters through the kernel's RDMA netlink: a drop-in for iproute2's
// rdma(8). See docs/rdmatool.md.
package main

import (
	"context"
	"os"

	"github.com/rdmakit/rdmakit/internal/rdmatool"
	"github.com/rdmakit/rdmakit/internal/shutdown"
)

func main() {
	// SIGINT, SIGTERM and SIGHUP end a monitor or a command under way:
	// the netlink socket closes and rdmatool exits 128+signal.
	os.Exit(shutdown.Run(func(ctx context.Context) int {
		return rdmatool.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	}))
}
