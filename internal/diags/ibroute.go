package diags

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/sched"
)

func init() {
	register(command{name: "ibroute", make: newIBRoute})
}

// LID ranges of IBA 4.1.3 as libibmad names them (IB_MAX_UCAST_LID,
// IB_MIN_MCAST_LID, IB_MAX_MCAST_LID).
const (
	maxUnicastLID   = 0xbfff
	minMulticastLID = 0xc000
	maxMulticastLID = 0xfffe
)

// lidsPerLFTBlock and mlidsPerMFTBlock are the entries of one
// LinearForwardingTable (IBA 14.2.5.10) and MulticastForwardingTable
// (14.2.5.12) block; one MFT block covers 16 ports.
const (
	lidsPerLFTBlock  = 64
	mlidsPerMFTBlock = 32
)

// ForwardingTable is one switch's unicast or multicast forwarding table as
// ibroute and dump_fts read it.
type ForwardingTable struct {
	// SwitchGUID is the node GUID, Name the node description (or its name
	// in the node name map), Target the address as the C tools print it.
	SwitchGUID string `json:"switchGuid"`
	Name       string `json:"name"`
	Target     string `json:"target"`
	NumPorts   int    `json:"numPorts"`
	Multicast  bool   `json:"multicast"`
	// First and Last are the LID or MLID range shown.
	First uint32 `json:"first"`
	Last  uint32 `json:"last"`
	// MulticastCap and MulticastTop are SwitchInfo's MulticastFDBCap and
	// MulticastFDBTop (multicast only); LinearTop is LinearFDBTop.
	MulticastCap *int `json:"multicastCap,omitempty"`
	MulticastTop *int `json:"multicastTop,omitempty"`
	LinearTop    *int `json:"linearTop,omitempty"`
	// Unicast lists the LIDs shown: those with a valid port, or all with
	// -a. Multicast lists the MLIDs with a port (all with -a).
	Unicast          []UnicastEntry   `json:"unicast,omitempty"`
	MulticastEntries []MulticastEntry `json:"multicastEntries,omitempty"`
	// Dumped is the count the C tools print; ReadError says that a block
	// could not be read (the table stops there, and the C tools print no
	// count).
	Dumped    int    `json:"dumped"`
	ReadError string `json:"readError,omitempty"`
	// Errors are the blocks dump_fts could not read; it goes on with the
	// block read before, as the C tool does.
	Errors []string `json:"errors,omitempty"`

	all, brief, verbose bool
	warnings            []string
}

// UnicastEntry is one LID of a linear forwarding table.
type UnicastEntry struct {
	LID   int  `json:"lid"`
	Port  int  `json:"port"`
	Valid bool `json:"valid"`
	// Info is the destination as the C tools print it, without ": ("
	// and ")": "Switch portguid 0x...: 'name'", "path #2 out of 4", ...
	Info string `json:"info,omitempty"`
	// NodeType, PortGUID and NodeName are the destination port, when known.
	NodeType string `json:"nodeType,omitempty"`
	PortGUID string `json:"portGuid,omitempty"`
	NodeName string `json:"nodeName,omitempty"`
}

// MulticastEntry is one MLID of a multicast forwarding table.
type MulticastEntry struct {
	MLID  int      `json:"mlid"`
	Ports []int    `json:"ports"`
	Masks []uint16 `json:"masks"`
}

type ibrouteFlags struct {
	addr        addrFlags
	all         bool
	brief       bool
	multicast   bool
	mkey        string
	nodeNameMap string
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
  ibroute -M 4 0xc010 0xc020  # multicast, with a range`,
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
	fl.StringVarP(&f.mkey, "m_key", "y", "", "M_Key to use in request")
	return c
}

// ftRange is the start and end arguments, read as strtoul reads them into
// an unsigned int.
func ftRange(args []string) (start, end uint32) {
	if len(args) > 0 {
		start = uint32(cStrtoul(args[0]))
	}
	if len(args) > 1 {
		end = uint32(cStrtoul(args[1]))
	}
	return start, end
}

func runIBRoute(e *Env, f *ibrouteFlags, args []string) error {
	if len(args) < 1 {
		return usagef("want <dest dr_path|lid|guid> [<startlid> [<endlid>]]")
	}
	mkey, err := parseMKey(f.mkey)
	if err != nil {
		return err
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
	target, err := resolveSMPDest(s, args[0], &f.addr)
	if err != nil {
		return err
	}
	setMKey(target, mkey)
	r := &ftReader{ctx: e.Ctx, mc: s, target: target, mkey: mkey}
	sw, err := r.checkSwitch()
	if err != nil {
		return iberror(nil, "dump tables: %s", err)
	}
	o := ftOptions{all: f.all, brief: f.brief, verbose: e.Verbose > 0, names: names}
	var t *ForwardingTable
	if f.multicast {
		t = r.multicastTable(sw, portidString(target), start, end, o)
	} else {
		t = r.unicastTable(sw, portidString(target), int32(start), int32(end), o, r.queryDests)
	}
	return e.printTables("ibroute", t)
}

// printTables prints a *ForwardingTable or a list of them as text, or t as
// JSON.
func (e *Env) printTables(cmd string, t any) error {
	if e.JSON {
		return e.writeJSON(cmd, t)
	}
	var list []*ForwardingTable
	switch v := t.(type) {
	case *ForwardingTable:
		list = []*ForwardingTable{v}
	case []*ForwardingTable:
		list = v
	}
	for _, ft := range list {
		for _, w := range ft.warnings {
			fmt.Fprintf(e.Stderr, "ibwarn: [%d] %s\n", os.Getpid(), w)
		}
		if err := ft.writeText(e.Stdout); err != nil {
			return err
		}
		for _, m := range ft.Errors {
			fmt.Fprintln(e.Stderr, m)
		}
		if ft.ReadError != "" {
			fmt.Fprintln(e.Stderr, ft.ReadError)
		}
	}
	return nil
}

// ftOptions are ibroute's and dump_fts' display flags.
type ftOptions struct {
	all, brief, verbose bool
	names               *namemap.Map
	// failure, when set, words a block that could not be read (kind LFT
	// or MFT) and the table goes on; nil stops it as ibroute does.
	failure func(kind string, status int, am uint32) string
}

// switchFacts is what check_switch learns of a switch.
type switchFacts struct {
	guid     iba.GUID
	numPorts int
	desc     []byte
	si       iba.SwitchInfo
}

// ftReader reads forwarding tables of one switch through SMPs (or SA
// records with --sa), many blocks at a time.
type ftReader struct {
	ctx    context.Context
	mc     mad.SubnGetter
	target mad.Target
	mkey   uint64
}

// ftParallel bounds the table blocks read at once from one switch: a
// switch SMA serves SMPs one at a time, so more only queue there.
const ftParallel = 4

// checkSwitch is ibroute's check_switch: NodeInfo, NodeDescription and
// SwitchInfo, with its messages.
func (r *ftReader) checkSwitch() (*switchFacts, error) {
	var ni iba.NodeInfo
	if err := r.mc.SubnGet(r.ctx, r.target, &ni, 0); err != nil {
		return nil, errors.New("node info failed: valid addr?")
	}
	var nd iba.NodeDescription
	if err := r.mc.SubnGet(r.ctx, r.target, &nd, 0); err != nil {
		return nil, errors.New("node desc failed")
	}
	if ni.NodeType != iba.NodeTypeSwitch {
		return nil, errors.New("not a switch")
	}
	sw := &switchFacts{guid: ni.NodeGUID, numPorts: int(ni.NumPorts), desc: ftDescBytes(&nd)}
	if err := r.mc.SubnGet(r.ctx, r.target, &sw.si, 0); err != nil {
		return nil, errors.New("switch info failed: is a switch node?")
	}
	return sw, nil
}

func ftDescBytes(nd *iba.NodeDescription) []byte {
	b := make([]byte, 64)
	_ = nd.MarshalTo(b)
	return b
}

// blockReads runs n block reads in parallel, at most ftParallel at once,
// and returns the error of each (all of them the context's when it ended
// first).
func (r *ftReader) blockReads(n int, read func(ctx context.Context, i int) error) []error {
	errs := make([]error, max(n, 0))
	if n <= 0 {
		return errs
	}
	sc := sched.New(r.ctx, sched.Options{MaxInFlight: ftParallel, PerTarget: ftParallel, Busy: ftBusy})
	for i := 0; i < n; i++ {
		sc.Submit("switch", fmt.Sprintf("block %d", i), func(ctx context.Context) error {
			errs[i] = read(ctx, i)
			return errs[i]
		})
	}
	if _, err := sc.Wait(); err != nil {
		for i := range errs {
			errs[i] = err
		}
	}
	return errs
}

// readFailed handles a block that could not be read: ibroute stops the
// table there (stop is true); dump_fts says so and goes on with the
// previous block's data, as the C tool does.
func (t *ForwardingTable) readFailed(o ftOptions, err error, kind string, am uint32) (stop bool) {
	if o.failure == nil {
		t.ReadError = fmt.Sprintf("SubnGet() failed; MAD status 0x%x AM 0x%x", ftMADStatus(err), am)
		return true
	}
	t.Errors = append(t.Errors, o.failure(kind, ftMADStatus(err), am))
	return false
}

func ftBusy(err error) bool { return errors.Is(err, mad.ErrBusy) }

// ftMADStatus is the MAD status of a failed RPC as libibmad's
// smp_query_status_via gives it: the reply's status, 0 for a timeout.
func ftMADStatus(err error) int {
	var se *mad.StatusError
	if errors.As(err, &se) {
		return int(se.Status)
	}
	return 0
}

// unicastRange is dump_unicast_tables' range arithmetic.
func unicastRange(top int, start, end int32) (int32, int32, []string) {
	var warn []string
	if end == 0 || end > int32(top) {
		end = int32(top)
	}
	if end > maxUnicastLID {
		warn = append(warn, fmt.Sprintf("dump_unicast_tables: illegal lft top %d, truncate to %d", end, maxUnicastLID))
		end = maxUnicastLID
	}
	return start, end, warn
}

// lidDest is what is known of the port a LID leads to.
type lidDest struct {
	nodeType iba.NodeType
	nodeGUID iba.GUID
	portGUID iba.GUID
	baseLID  uint16
	lmc      uint8
	desc     []byte
}

// destLookup finds the destination of a set of LIDs; miss is the text
// shown for a LID it does not know.
type destLookup func(lids []int) (found map[int]*lidDest, miss string)

// unicastTable reads and lays out the LFT of a switch (dump_unicast_tables
// of ibroute.c and dump_fts.c).
func (r *ftReader) unicastTable(sw *switchFacts, target string, start, end int32, o ftOptions, dests destLookup) *ForwardingTable {
	top := int(sw.si.LinearFDBTop)
	start, end, warn := unicastRange(top, start, end)
	t := &ForwardingTable{
		SwitchGUID: fmt.Sprintf("0x%016x", uint64(sw.guid)), Name: o.names.NameBytes(sw.guid, sw.desc),
		Target: target, NumPorts: sw.numPorts, First: uint32(start), Last: uint32(end), LinearTop: &top,
		all: o.all, brief: o.brief, verbose: o.verbose, warnings: warn,
	}
	startBlock := int(start / lidsPerLFTBlock)
	// ALIGN(endlid, 64) / 64: an end on a block boundary leaves its block
	// unread, as in the C tools.
	endBlock := int((end + lidsPerLFTBlock - 1) &^ (lidsPerLFTBlock - 1) / lidsPerLFTBlock)
	nb := max(endBlock-startBlock, 0)
	blocks := make([][lidsPerLFTBlock]uint8, nb)
	errs := r.blockReads(nb, func(ctx context.Context, i int) error {
		var lft iba.LinearForwardingTable
		if err := r.mc.SubnGet(ctx, r.target, &lft, uint32(startBlock+i)); err != nil {
			return err
		}
		blocks[i] = lft.PortBlock
		return nil
	})
	type row struct{ lid, port int }
	var rows []row
	var lft [lidsPerLFTBlock]uint8
	for b := 0; b < nb; b++ {
		block := startBlock + b
		if errs[b] != nil {
			if t.readFailed(o, errs[b], "LFT", uint32(block)) {
				break
			}
		} else {
			lft = blocks[b]
		}
		i, e := int32(block*lidsPerLFTBlock), int32(block*lidsPerLFTBlock+lidsPerLFTBlock)
		i = max(i, start)
		e = min(e, end+1)
		for ; i < e; i++ {
			port := int(lft[i%lidsPerLFTBlock])
			if port > sw.numPorts && !o.all {
				continue
			}
			rows = append(rows, row{int(i), port})
		}
	}
	var found map[int]*lidDest
	var miss string
	if !o.brief {
		var lids []int
		for _, rw := range rows {
			if rw.port <= sw.numPorts {
				lids = append(lids, rw.lid)
			}
		}
		found, miss = dests(lids)
	}
	var st lmcState
	for _, rw := range rows {
		en := UnicastEntry{LID: rw.lid, Port: rw.port, Valid: rw.port <= sw.numPorts}
		if !o.brief {
			st.describe(&en, found, miss, o.names)
		}
		t.Unicast = append(t.Unicast, en)
	}
	t.Dumped = len(t.Unicast)
	return t
}

// lmcState is dump_lid's memory of the last LMC range seen: the LIDs of a
// port's range after its base are shown as paths to it.
type lmcState struct {
	last, base int
	portGUID   iba.GUID
}

func (st *lmcState) describe(en *UnicastEntry, found map[int]*lidDest, miss string, names *namemap.Map) {
	lid := en.LID
	if lid <= st.last {
		switch {
		case !en.Valid:
			en.Info = fmt.Sprintf("path #%d - illegal port", lid-st.base)
		case st.portGUID == 0:
			en.Info = fmt.Sprintf("path #%d out of %d", lid-st.base+1, st.last-st.base+1)
		default:
			en.Info = fmt.Sprintf("path #%d out of %d: portguid 0x%016x", lid-st.base+1, st.last-st.base+1, uint64(st.portGUID))
		}
		return
	}
	if !en.Valid {
		en.Info = "illegal port"
		return
	}
	st.portGUID = 0
	d := found[lid]
	if d == nil {
		en.Info = miss
		return
	}
	st.portGUID = d.portGUID
	if d.lmc > 0 {
		st.base = int(d.baseLID)
		st.last = int(d.baseLID) + 1<<d.lmc - 1
	}
	en.NodeType = ftNodeType(d.nodeType)
	en.PortGUID = fmt.Sprintf("0x%016x", uint64(d.portGUID))
	en.NodeName = names.NameBytes(d.nodeGUID, d.desc)
	en.Info = fmt.Sprintf("%s portguid %s: '%s'", en.NodeType, en.PortGUID, en.NodeName)
}

// ftNodeType is libibmad's mad_dump_node_type.
func ftNodeType(t iba.NodeType) string {
	switch t {
	case iba.NodeTypeCA:
		return "Channel Adapter"
	case iba.NodeTypeSwitch:
		return "Switch"
	case iba.NodeTypeRouter:
		return "Router"
	}
	return fmt.Sprintf("?(%d)?", int(t))
}

// destTimeout is the wait for one answer about a destination LID
// (ibroute's dump_lid asks with 100 ms).
const destTimeout = 100 * time.Millisecond

// queryDests asks every LID for NodeDescription, PortInfo and NodeInfo, as
// ibroute's dump_lid does, many LIDs at once.
func (r *ftReader) queryDests(lids []int) (map[int]*lidDest, string) {
	found := map[int]*lidDest{}
	var mu sync.Mutex
	sc := sched.New(r.ctx, sched.Options{Busy: ftBusy})
	for _, lid := range lids {
		sc.Submit(strconv.Itoa(lid), fmt.Sprintf("LID %d", lid), func(ctx context.Context) error {
			t := mad.Route{Addr: mad.Addr{LID: uint16(lid)}, Timeout: destTimeout, MKey: r.mkey}
			var nd iba.NodeDescription
			var pi iba.PortInfo
			var ni iba.NodeInfo
			for _, a := range []iba.Attribute{&nd, &pi, &ni} {
				if err := r.mc.SubnGet(ctx, t, a, 0); err != nil {
					return err
				}
			}
			mu.Lock()
			found[lid] = &lidDest{nodeType: ni.NodeType, nodeGUID: ni.NodeGUID, portGUID: ni.PortGUID,
				baseLID: pi.LID, lmc: pi.LMC, desc: ftDescBytes(&nd)}
			mu.Unlock()
			return nil
		})
	}
	_, _ = sc.Wait() // a LID that does not answer is shown as unknown
	return found, "unknown node and type"
}

// multicastRange is dump_multicast_tables' range arithmetic.
func multicastRange(cap, top int, start, end uint32, all bool) (uint32, uint32, []string) {
	var warn []string
	if end == 0 || end > uint32(minMulticastLID+cap-1) {
		end = uint32(minMulticastLID + cap - 1)
	}
	if !all && top != 0 && uint32(top) < end {
		if top < minMulticastLID-1 {
			warn = append(warn, fmt.Sprintf("dump_multicast_tables: illegal top mlid %x", top))
		} else {
			end = uint32(top)
		}
	}
	if start == 0 {
		start = minMulticastLID
	} else if start < minMulticastLID {
		warn = append(warn, fmt.Sprintf("dump_multicast_tables: illegal start mlid %x, set to %x", start, minMulticastLID))
		start = minMulticastLID
	}
	if end > maxMulticastLID {
		warn = append(warn, fmt.Sprintf("dump_multicast_tables: illegal end mlid %x, truncate to %x", end, maxMulticastLID))
		end = maxMulticastLID
	}
	return start, end, warn
}

// multicastTable reads and lays out the MFT of a switch
// (dump_multicast_tables).
func (r *ftReader) multicastTable(sw *switchFacts, target string, start, end uint32, o ftOptions) *ForwardingTable {
	mcap, top := int(sw.si.MulticastFDBCap), int(sw.si.MulticastFDBTop)
	start, end, warn := multicastRange(mcap, top, start, end, o.all)
	t := &ForwardingTable{
		SwitchGUID: fmt.Sprintf("0x%016x", uint64(sw.guid)), Name: o.names.NameBytes(sw.guid, sw.desc),
		Target: target, NumPorts: sw.numPorts, Multicast: true, First: start, Last: end,
		MulticastCap: &mcap, MulticastTop: &top, all: o.all, brief: o.brief, verbose: o.verbose, warnings: warn,
	}
	chunks := (sw.numPorts + 1 + 15) / 16
	startBlock, lastBlock := int(start/mlidsPerMFTBlock), int(end/mlidsPerMFTBlock)
	nb := max(lastBlock-startBlock+1, 0)
	// masks[block][chunk][mlid%32]
	masks := make([][][mlidsPerMFTBlock]uint16, nb)
	for i := range masks {
		masks[i] = make([][mlidsPerMFTBlock]uint16, chunks)
	}
	mod := func(b, j int) uint32 { return uint32(startBlock+b-minMulticastLID/mlidsPerMFTBlock) | uint32(j)<<28 }
	errs := r.blockReads(nb*chunks, func(ctx context.Context, i int) error {
		b, j := i/chunks, i%chunks
		var mft iba.MulticastForwardingTable
		if err := r.mc.SubnGet(ctx, r.target, &mft, mod(b, j)); err != nil {
			return err
		}
		masks[b][j] = mft.PortMaskBlock
		return nil
	})
	cur := make([][mlidsPerMFTBlock]uint16, chunks)
blocks:
	for b := 0; b < nb; b++ {
		for j := 0; j < chunks; j++ {
			if err := errs[b*chunks+j]; err != nil {
				if t.readFailed(o, err, "MFT", mod(b, j)) {
					break blocks
				}
			} else {
				cur[j] = masks[b][j]
			}
		}
		block := startBlock + b
		i, e := uint32(block*mlidsPerMFTBlock), uint32(block*mlidsPerMFTBlock+mlidsPerMFTBlock)
		i = max(i, start)
		e = min(e, end+1)
		for ; i < e; i++ {
			en := MulticastEntry{MLID: int(i), Ports: []int{}}
			nonzero := false
			for j := 0; j < chunks; j++ {
				m := cur[j][i%mlidsPerMFTBlock]
				en.Masks = append(en.Masks, m)
				nonzero = nonzero || m != 0
				for bit := 0; bit < 16; bit++ {
					if p := j*16 + bit; p <= sw.numPorts && m&(1<<bit) != 0 {
						en.Ports = append(en.Ports, p)
					}
				}
			}
			if !nonzero && !o.all {
				continue
			}
			t.MulticastEntries = append(t.MulticastEntries, en)
		}
	}
	t.Dumped = len(t.MulticastEntries)
	return t
}

// writeText prints the table as ibroute does.
func (t *ForwardingTable) writeText(w io.Writer) error {
	var b strings.Builder
	if t.Multicast {
		t.multicastText(&b)
	} else {
		t.unicastText(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (t *ForwardingTable) countLine(b *strings.Builder, what string) {
	if t.ReadError != "" {
		return
	}
	valid := "valid "
	if t.all {
		valid = ""
	}
	fmt.Fprintf(b, "%d %s%s dumped \n", t.Dumped, valid, what)
}

func (t *ForwardingTable) unicastText(b *strings.Builder) {
	fmt.Fprintf(b, "Unicast lids [0x%x-0x%x] of switch %s guid %s (%s):\n", t.First, t.Last, t.Target, t.SwitchGUID, t.Name)
	b.WriteString("  Lid  Out   Destination\n       Port     Info \n")
	for _, en := range t.Unicast {
		info := ""
		if en.Info != "" {
			info = ": (" + en.Info + ")"
		}
		fmt.Fprintf(b, "0x%04x %03d %s\n", en.LID, en.Port, info)
	}
	t.countLine(b, "lids")
}

func (t *ForwardingTable) multicastText(b *strings.Builder) {
	fmt.Fprintf(b, "Multicast mlids [0x%x-0x%x] of switch %s guid %s (%s):\n", t.First, t.Last, t.Target, t.SwitchGUID, t.Name)
	if t.brief {
		b.WriteString(" MLid       Port Mask\n")
	} else {
		if t.NumPorts > 9 {
			b.WriteString("            ")
			for i := 0; i <= t.NumPorts; i++ {
				c := byte(' ')
				if i%10 == 0 {
					c = byte('0' + i/10)
				}
				b.WriteByte(c)
				b.WriteByte(' ')
			}
			b.WriteByte('\n')
		}
		b.WriteString("     Ports: ")
		for i := 0; i <= t.NumPorts; i++ {
			fmt.Fprintf(b, "%d ", i%10)
		}
		b.WriteString("\n MLid\n")
	}
	if t.verbose && t.MulticastCap != nil && t.MulticastTop != nil {
		fmt.Fprintf(b, "Switch multicast mlid capability is %d top is 0x%x\n", *t.MulticastCap, *t.MulticastTop)
	}
	for _, en := range t.MulticastEntries {
		fmt.Fprintf(b, "0x%04x      ", en.MLID)
		if t.brief {
			for _, m := range en.Masks {
				fmt.Fprintf(b, "%04x", m)
			}
		} else {
			for i := 0; i <= t.NumPorts; i++ {
				c := byte(' ')
				if i/16 < len(en.Masks) && en.Masks[i/16]&(1<<(i%16)) != 0 {
					c = 'x'
				}
				b.WriteByte(c)
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	t.countLine(b, "mlids")
}
