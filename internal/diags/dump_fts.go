package diags

import (
	"github.com/spf13/cobra"
)

func init() {
	register(command{name: "dump_fts", make: newDumpFTs})
}

func newDumpFTs(e *Env) *cobra.Command {
	var f dumpFTsFlags
	c := &cobra.Command{
		Use:   "dump_fts [flags] [<startlid> [<endlid>]]",
		Short: "dump the forwarding tables of every switch (infiniband-diags dump_fts)",
		Long: `dump_fts discovers the subnet and prints the unicast (or, with -M, the
multicast) forwarding table of every switch, as ibroute prints one, in the
order of infiniband-diags' dump_fts. The tables are read in parallel.

Examples:
  dump_fts -a               # every LID, even with an invalid out port
  dump_fts -n               # no destination names
  dump_fts 0x10 0x20        # a LID range
  dump_fts -M 0xc010 0xc020 # multicast, with a range`,
		RunE: func(cmd *cobra.Command, args []string) error {
			tables, lost, err := runDumpFTs(e, &f, args)
			if err != nil {
				return err
			}
			return incomplete(e.printTables("dump_fts", tables), lost)
		},
	}
	f.register(c, true)
	return c
}
