package diags

import (
	"fmt"

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
	return c
}

// runDumpScript is dump_lfts.sh and dump_mfts.sh: dump_fts, whose failure
// is only reported, then the notice that names its replacement.
func runDumpScript(e *Env, cmd, replacement string, f *dumpFTsFlags, args []string) error {
	tables, err := runDumpFTs(e, f, args)
	if err != nil {
		if _, usage := err.(*UsageError); usage {
			return err
		}
		fmt.Fprintf(e.Stderr, "%s: %v\n", cmd, err)
	}
	if e.JSON {
		if tables == nil {
			tables = []*ForwardingTable{}
		}
		return e.writeJSON(cmd, tables)
	}
	if err := e.printTables(cmd, tables); err != nil {
		return err
	}
	_, werr := fmt.Fprintf(e.Stdout, "\n*** WARNING ***: this command has been replaced by %s\n\n\n", replacement)
	return werr
}
