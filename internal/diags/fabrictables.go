package diags

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/subnet"
)

// The forwarding tables of the discovered fabric's switches, as
// infiniband-diags' dump_fts reads them: discovery, then every switch's
// table through subnet.ReadTables, laid out as ibroute shows one. dump_fts,
// its scripts dump_lfts and dump_mfts, and ibfindnodesusing use it.

type dumpFTsFlags struct {
	all, brief, multicast bool
	nodeNameMap           string
	df                    discoverFlags
}

func (f *dumpFTsFlags) register(c *cobra.Command, multicastFlag bool) {
	fl := c.Flags()
	fl.BoolVarP(&f.all, "all", "a", false, "show all lids, even invalid entries")
	fl.BoolVarP(&f.brief, "no_dests", "n", false, "do not try to resolve destinations")
	if multicastFlag {
		fl.BoolVarP(&f.multicast, "Multicast", "M", false, "show multicast forwarding tables")
	}
	fl.StringVar(&f.nodeNameMap, "node-name-map", "", "node name map file")
	f.df.register(c, false)
}

// dumpFTsFailed is dump_fts' failure: a message on stderr and exit(-1).
type dumpFTsFailed struct{ err error }

func (e *dumpFTsFailed) Error() string { return e.err.Error() }
func (e *dumpFTsFailed) Unwrap() error { return e.err }
func (e *dumpFTsFailed) ExitCode() int { return 255 }

// runDumpFTs discovers the subnet and reads the table of every switch, in
// the order of libibnetdisc's switch list (last found first). lost is what
// the discovery could not read (the switches behind it are missing from
// the tables), for the caller to return once it has printed them.
func runDumpFTs(e *Env, f *dumpFTsFlags, args []string) (tables []*ForwardingTable, lost, err error) {
	if len(args) > 2 {
		return nil, nil, usagef("want [<startlid> [<endlid>]]")
	}
	start, end := ftRange(args)
	names, err := loadNames(f.nodeNameMap)
	if err != nil {
		return nil, nil, err
	}
	s, err := e.open()
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	sn, rep, err := e.discoverWith(s, f.df, false)
	if err != nil {
		var ue *UsageError
		if errors.As(err, &ue) {
			return nil, nil, err
		}
		return nil, nil, &dumpFTsFailed{fmt.Errorf("Failed to discover fabric: %w", err)}
	}
	q := &ftRequest{multicast: f.multicast, start: start, end: end,
		o: ftOptions{all: f.all, brief: f.brief, verbose: e.Verbose > 0, names: names}}
	tables, err = readFabricTables(e.Ctx, s, sn, sn.IBNDOrder(isSwitch), q)
	return tables, rep.Incomplete(sn), err
}

func isSwitch(n *subnet.Node) bool { return n.Type == iba.NodeTypeSwitch }

// readFabricTables reads the table q asks for of each switch, along the
// directed route discovery found it by (by LID with --sa: the SA knows the
// switch by its LID, and the directed route would cost a LinkRecord per
// hop to translate), and lays it out; destinations come from the
// discovered subnet.
func readFabricTables(ctx context.Context, s *session, sn *subnet.Subnet, switches []*subnet.Node, q *ftRequest) ([]*ForwardingTable, error) {
	target := func(n *subnet.Node) mad.Target {
		if s.viaSA() && n.SMALID != 0 {
			return ibpath.NewLID(n.SMALID)
		}
		return ibpath.NewDR(append([]byte{0}, n.Path...)...)
	}
	failed, err := sn.ReadTables(ctx, s, switches, q.tableOptions(target))
	if err != nil {
		return nil, err
	}
	bySwitch := map[*subnet.Node]error{}
	for _, te := range failed {
		bySwitch[te.Node] = te
	}
	tables := make([]*ForwardingTable, len(switches))
	for i, n := range switches {
		reads, _ := failedReads(bySwitch[n])
		// libibnetdisc's path_portid: a directed route with DrSLID and
		// DrDLID 0, which portid2str prints as such.
		name := fmt.Sprintf("DR path slid 0; dlid 0; %s", n.Path)
		qn := *q
		swName := q.o.names.NameBytes(n.GUID, n.Desc[:])
		qn.o.failure = func(kind string, status int, am uint32) string {
			return fmt.Sprintf("SubnGet(%s) failed on switch '%s' %s Node GUID 0x%x SMA LID %d; MAD status 0x%x AM 0x%x",
				kind, swName, name, uint64(n.GUID), n.SMALID, status, am)
		}
		tables[i] = qn.layout(n, reads, name, subnetDests(sn))
	}
	return tables, nil
}

// runDumpScript is dump_lfts.sh and dump_mfts.sh: dump_fts, whose failure
// is only reported, then the notice that names its replacement. Switches
// the discovery lost are not only reported: the exit status says the dump
// is partial (exitIncomplete).
func runDumpScript(e *Env, cmd, replacement string, f *dumpFTsFlags, args []string) error {
	tables, lost, err := runDumpFTs(e, f, args)
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
		return incomplete(e.writeJSON(cmd, tables), lost)
	}
	if err := e.printTables(cmd, tables); err != nil {
		return err
	}
	_, werr := fmt.Fprintf(e.Stdout, "\n*** WARNING ***: this command has been replaced by %s\n\n\n", replacement)
	return incomplete(werr, lost)
}
