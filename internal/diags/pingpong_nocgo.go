//go:build !cgo

package diags

import (
	"errors"

	"github.com/spf13/cobra"
)

// Without cgo there is no libibverbs: the verbs commands exist and say so.
func init() {
	for _, c := range []struct{ name, short string }{
		{"rc_pingpong", "ping-pong over an RC connection (needs a cgo build)"},
		{"ud_pingpong", "ping-pong over UD datagrams (needs a cgo build)"},
		{"rdma_bw", "RDMA WRITE bandwidth and latency (needs a cgo build)"},
	} {
		register(command{name: c.name, make: func(e *Env) *cobra.Command {
			return &cobra.Command{
				Use:                c.name + " [options] [HOST]",
				Short:              c.short,
				DisableFlagParsing: true,
				RunE:               func(*cobra.Command, []string) error { return errNeedsCgo },
			}
		}})
	}
}

// errNeedsCgo is what the pingpong commands say in a build without cgo.
var errNeedsCgo = errors.New("this ibtool was built without cgo; the verbs commands need libibverbs: build with CGO_ENABLED=1 (and libibverbs-dev installed)")
