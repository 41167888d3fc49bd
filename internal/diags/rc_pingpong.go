package diags

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rdmakit/rdmakit/verbs"
)

func init() {
	register(command{name: "rc_pingpong", make: newRCPingpong})
}

func newRCPingpong(e *Env) *cobra.Command {
	var o ppOptions
	return ppCommand(e, "rc_pingpong [options] [HOST]", "ping-pong over an RC connection, as rdma-core's ibv_rc_pingpong",
		`rc_pingpong exchanges messages over a reliable connection (RC QP) with a
peer running rc_pingpong or rdma-core's ibv_rc_pingpong. Without HOST it
waits for a client; with HOST it connects to that server. The QP addresses
(LID, QPN, PSN, GID) go over TCP in ibv_rc_pingpong's format. On RoCE give
a GID index (-g).`,
		func(fs *pflag.FlagSet) { ppFlags(fs, &o, 4096, true) },
		func(args []string) error {
			if len(args) > 1 {
				return usagef("at most one HOST, got %q", args)
			}
			if len(args) == 1 {
				o.Server = args[0]
			}
			if err := o.check(); err != nil {
				return err
			}
			return runPingpong(e, "rc_pingpong", verbs.QPTypeRC, o)
		})
}
