package diags

import (
	"github.com/spf13/cobra"
)

func init() {
	register(command{name: "dump_lfts", aliases: []string{"dump_lfts.sh"}, make: newDumpLFTs})
}

func newDumpLFTs(e *Env) *cobra.Command {
	var f dumpFTsFlags
	c := &cobra.Command{
		Use:   "dump_lfts [flags] [<startlid> [<endlid>]]",
		Short: "dump every switch's unicast forwarding table (deprecated: dump_fts)",
		Long: `dump_lfts is infiniband-diags' dump_lfts.sh: dump_fts with the same
arguments, followed by the script's deprecation notice. Like the script it
exits 0 even when dump_fts fails.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDumpScript(e, "dump_lfts", "dump_fts", &f, args)
		},
	}
	f.register(c, true)
	c.Flags().BoolVarP(&f.df.drDiscovery, "Direct", "D", false, "discover by directed route (python-rdma's -D: --discovery DR)")
	return c
}
