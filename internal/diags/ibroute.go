package diags

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "ibroute", make: newIBRoute})
}

type ibrouteFlags struct {
	addr        addrFlags
	all         bool
	brief       bool
	multicast   bool
	nodeNameMap string
	df          discoverFlags
}

func newIBRoute(e *Env) *cobra.Command {
	var f ibrouteFlags
	c := &cobra.Command{
		Use:   "ibroute [flags] <dest dr_path|lid|guid> [<startlid> [<endlid>]]",
		Short: "show a switch's unicast or multicast forwarding table (infiniband-diags ibroute)",
		Long: `ibroute reads the linear (unicast) or multicast forwarding table of a
switch and prints it as infiniband-diags' ibroute does, naming the
destination of every LID.

Examples:
  ibroute 4                 # LIDs with a valid out port of the switch at LID 4
  ibroute -a 4              # every LID, even with an invalid out port
  ibroute -n 4              # no destination names
  ibroute 4 0x10 0x20       # a LID range
  ibroute -G 0x08f1040023   # the switch by GUID
  ibroute -D 0,1            # the switch by directed route
  ibroute -M 4 0xc010 0xc020  # multicast, with a range

With --discovery or --cache (python-rdma), the destinations are named from
the discovered (or cached) subnet instead of a NodeInfo per LID.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIBRoute(e, &f, args)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&f.all, "all", "a", false, "show all lids, even invalid entries")
	fl.BoolVarP(&f.brief, "no_dests", "n", false, "do not try to resolve destinations")
	fl.BoolVarP(&f.multicast, "Multicast", "M", false, "show multicast forwarding tables")
	fl.StringVar(&f.nodeNameMap, "node-name-map", "", "node name map file")
	fl.BoolVarP(&f.addr.direct, "Direct", "D", false, "use Direct address argument")
	fl.BoolVarP(&f.addr.lid, "Lid", "L", false, "use LID address argument")
	fl.BoolVarP(&f.addr.guid, "Guid", "G", false, "use GUID address argument")
	f.df.register(c, false)
	return c
}

func runIBRoute(e *Env, f *ibrouteFlags, args []string) error {
	if len(args) < 1 {
		return usagef("want <dest dr_path|lid|guid> [<startlid> [<endlid>]]")
	}
	start, end := ftRange(args[1:])
	names, err := loadNames(f.nodeNameMap)
	if err != nil {
		return err
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	defer s.Close()
	s.names = names
	target, err := resolveSMPDest(s, args[0], &f.addr)
	if err != nil {
		return err
	}
	dests := smpDests(e.Ctx, s)
	if f.df.cache != "" || f.df.cmd.Flags().Changed("discovery") {
		sn, _, err := e.discoverWith(s, f.df, false)
		if err != nil {
			return err
		}
		dests = subnetDests(sn)
	}
	sn := subnet.New()
	sw, err := sn.ReadSwitch(e.Ctx, s, target, nil)
	if err != nil {
		return iberrorCause(err, "dump tables: %s", checkSwitchMessage(err))
	}
	q := &ftRequest{multicast: f.multicast, start: start, end: end,
		o: ftOptions{all: f.all, brief: f.brief, verbose: e.Verbose > 0, names: names}}
	failed, err := failedReads(sn.ReadSwitchTables(e.Ctx, s, sw, q.tableOptions(func(*subnet.Node) mad.Target { return target })))
	if err != nil {
		return err
	}
	t := q.layout(sw, failed, portidString(target), dests)
	return e.printTables("ibroute", t)
}

// checkSwitchMessage is what ibroute's check_switch says about a switch it
// could not read.
func checkSwitchMessage(err error) string {
	var ae *subnet.AttrError
	switch {
	case errors.Is(err, subnet.ErrNotSwitch):
		return "not a switch"
	case !errors.As(err, &ae):
		return err.Error()
	case ae.Attr == iba.AttrIDNodeInfo:
		return "node info failed: valid addr?"
	case ae.Attr == iba.AttrIDNodeDescription:
		return "node desc failed"
	}
	return "switch info failed: is a switch node?"
}
