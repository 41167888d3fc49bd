package diags

import "github.com/spf13/cobra"

func init() {
	register(command{name: "dump_mfts", aliases: []string{"dump_mfts.sh"}, make: newDumpMFTs})
}

func newDumpMFTs(e *Env) *cobra.Command {
	var f dumpFTsFlags
	c := &cobra.Command{
		Use:   "dump_mfts [flags] [<startlid> [<endlid>]]",
		Short: "dump every switch's multicast forwarding table (deprecated: dump_fts -M)",
		Long: `dump_mfts is infiniband-diags' dump_mfts.sh: dump_fts -M with the same
arguments, followed by the script's deprecation notice. Like the script it
exits 0 even when dump_fts fails.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.multicast = true
			return runDumpScript(e, "dump_mfts", "dump_fts -M", &f, args)
		},
	}
	// The script passes its arguments on to dump_fts -M, so -M is accepted
	// (and changes nothing).
	f.register(c, true)
	c.Flags().BoolVarP(&f.df.drDiscovery, "Direct", "D", false, "discover by directed route (python-rdma's -D: --discovery DR)")
	return c
}
