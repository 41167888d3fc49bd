package diags

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rdmakit/rdmakit/verbs"
)

func init() {
	register(command{name: "ud_pingpong", make: newUDPingpong})
}

func newUDPingpong(e *Env) *cobra.Command {
	var o ppOptions
	return ppCommand(e, "ud_pingpong [options] [HOST]", "ping-pong over UD datagrams, as rdma-core's ibv_ud_pingpong",
		`ud_pingpong exchanges datagrams between two UD QPs with a peer running
ud_pingpong or rdma-core's ibv_ud_pingpong (Q_Key 0x11111111). Without
HOST it waits for a client; with HOST it connects to that server. The size
may not exceed the port's active MTU. On RoCE give a GID index (-g).`,
		func(fs *pflag.FlagSet) { ppFlags(fs, &o, 1024, false) },
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
			return runPingpong(e, "ud_pingpong", verbs.QPTypeUD, o)
		})
}
