package diags

import (
	"context"
	"fmt"
	"sync"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "dump_fts", make: newDumpFTs})
}

type dumpFTsFlags struct {
	all, brief, multicast bool
	mkey                  string
	nodeNameMap           string
}

func (f *dumpFTsFlags) register(c *cobra.Command, multicastFlag bool) {
	fl := c.Flags()
	fl.BoolVarP(&f.all, "all", "a", false, "show all lids, even invalid entries")
	fl.BoolVarP(&f.brief, "no_dests", "n", false, "do not try to resolve destinations")
	if multicastFlag {
		fl.BoolVarP(&f.multicast, "Multicast", "M", false, "show multicast forwarding tables")
	}
	fl.StringVar(&f.nodeNameMap, "node-name-map", "", "node name map file")
	fl.StringVarP(&f.mkey, "m_key", "y", "", "M_Key to use in requests")
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
			tables, err := runDumpFTs(e, &f, args)
			if err != nil {
				return err
			}
			return e.printTables("dump_fts", tables)
		},
	}
	f.register(c, true)
	return c
}

// dumpFTsFailed is dump_fts' failure: a message on stderr and exit(-1).
type dumpFTsFailed struct{ err error }

func (e *dumpFTsFailed) Error() string { return e.err.Error() }
func (e *dumpFTsFailed) Unwrap() error { return e.err }
func (e *dumpFTsFailed) ExitCode() int { return 255 }
func newDumpFTsFailed(err error) error { return &dumpFTsFailed{err} }

// ftSwitchesAtOnce bounds the switches whose tables are read at once; each
// has ftParallel blocks in flight.
const ftSwitchesAtOnce = 16

// runDumpFTs discovers the subnet and reads the table of every switch, in
// the order of libibnetdisc's switch list (last found first).
func runDumpFTs(e *Env, f *dumpFTsFlags, args []string) ([]*ForwardingTable, error) {
	if len(args) > 2 {
		return nil, usagef("want [<startlid> [<endlid>]]")
	}
	mkey, err := parseMKey(f.mkey)
	if err != nil {
		return nil, err
	}
	start, end := ftRange(args)
	names, err := loadNames(f.nodeNameMap)
	if err != nil {
		return nil, err
	}
	s, err := e.open()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	opt := subnet.DiscoverOptions{LocalLID: s.local.LID, MKey: mkey}
	var sn *subnet.Subnet
	if s.viaSA() {
		sn, _, err = subnet.DiscoverSA(e.Ctx, sa.New(s.mc), s.local, opt)
	} else {
		sn, _, err = subnet.Discover(e.Ctx, s.mc, opt)
	}
	if err != nil {
		return nil, newDumpFTsFailed(fmt.Errorf("Failed to discover fabric: %w", err))
	}
	switches := sn.NodesOfType(iba.NodeTypeSwitch)
	for i, j := 0, len(switches)-1; i < j; i, j = i+1, j-1 {
		switches[i], switches[j] = switches[j], switches[i]
	}
	tables := make([]*ForwardingTable, len(switches))
	sem := make(chan struct{}, ftSwitchesAtOnce)
	var wg sync.WaitGroup
	for i, n := range switches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			tables[i] = dumpSwitchTable(e.Ctx, s, sn, n, f, mkey, names, start, end, e.Verbose > 0)
		}()
	}
	wg.Wait()
	if err := e.Ctx.Err(); err != nil {
		return nil, err
	}
	return tables, nil
}

// dumpSwitchTable reads one switch's table along the directed route
// discovery found it by; destinations come from the discovered subnet.
func dumpSwitchTable(ctx context.Context, s *session, sn *subnet.Subnet, n *subnet.Node, f *dumpFTsFlags, mkey uint64,
	names *namemap.Map, start, end uint32, verbose bool) *ForwardingTable {
	dr := ibpath.NewDR(append([]byte{0}, n.Path...)...)
	setMKey(dr, mkey)
	var si iba.SwitchInfo
	_ = si.Unmarshal(n.SwitchInfo[:])
	sw := &switchFacts{guid: n.GUID, numPorts: n.NumPorts, desc: n.Desc[:], si: si}
	// libibnetdisc's path_portid: a directed route with DrSLID and DrDLID
	// 0, which portid2str prints as such.
	target := fmt.Sprintf("DR path slid 0; dlid 0; %s", n.Path)
	name := names.NameBytes(n.GUID, n.Desc[:])
	o := ftOptions{all: f.all, brief: f.brief, verbose: verbose, names: names,
		failure: func(kind string, status int, am uint32) string {
			return fmt.Sprintf("SubnGet(%s) failed on switch '%s' %s Node GUID 0x%x SMA LID %d; MAD status 0x%x AM 0x%x",
				kind, name, target, uint64(n.GUID), n.SMALID, status, am)
		}}
	var at mad.Target = dr
	if s.viaSA() && n.SMALID != 0 {
		// The SA knows the switch by its LID; the directed route would
		// cost a LinkRecord per hop to translate.
		at = ibpath.NewLID(n.SMALID)
	}
	r := &ftReader{ctx: ctx, mc: s, target: at, mkey: mkey}
	if f.multicast {
		return r.multicastTable(sw, target, start, end, o)
	}
	return r.unicastTable(sw, target, int32(start), int32(end), o, subnetDests(sn))
}

// subnetDests finds destinations in the discovered subnet
// (ibnd_find_port_lid).
func subnetDests(sn *subnet.Subnet) destLookup {
	return func(lids []int) (map[int]*lidDest, string) {
		found := map[int]*lidDest{}
		for _, lid := range lids {
			p := sn.PortByLID(uint16(lid))
			if p == nil {
				continue
			}
			found[lid] = &lidDest{nodeType: p.Node.Type, nodeGUID: p.Node.GUID, portGUID: p.GUID,
				baseLID: p.BaseLID, lmc: p.LMC, desc: p.Node.Desc[:]}
		}
		return found, "node info not available fabric scan"
	}
}
