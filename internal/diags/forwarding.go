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

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/sched"
	"github.com/rdmakit/rdmakit/subnet"
)

// Forwarding tables as infiniband-diags' ibroute and dump_fts show them:
// the C tools' LID ranges, the layout of what subnet.ReadTables recorded of
// a switch (with the C tools' handling of blocks that could not be read),
// the destination of every LID, and the text.

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

// ftOptions are ibroute's and dump_fts' display flags.
type ftOptions struct {
	all, brief, verbose bool
	names               *namemap.Map
	// failure, when set, words a block that could not be read (kind LFT
	// or MFT) and the table goes on; nil stops it as ibroute does.
	failure func(kind string, status int, am uint32) string
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

// unicastRange is dump_unicast_tables' range arithmetic.
func unicastRange(top int, start, end int32) (int32, int32, []string) {
	var warn []string
	if end == 0 || end > int32(top) {
		end = int32(top)
	}
	if end > subnet.MaxUnicastLID {
		warn = append(warn, fmt.Sprintf("dump_unicast_tables: illegal lft top %d, truncate to %d", end, subnet.MaxUnicastLID))
		end = subnet.MaxUnicastLID
	}
	return start, end, warn
}

// unicastBlocks are the LFT blocks dump_unicast_tables reads for LIDs
// start to end: ALIGN(end, 64) / 64 ends them, so an end on a block
// boundary leaves its block unread, as in the C tools.
func unicastBlocks(start, end int32) subnet.BlockRange {
	const per = subnet.LIDsPerLFTBlock
	return subnet.BlockRange{First: int(start / per), End: int((end + per - 1) &^ (per - 1) / per)}
}

// multicastRange is dump_multicast_tables' range arithmetic.
func multicastRange(cap, top int, start, end uint32, all bool) (uint32, uint32, []string) {
	var warn []string
	if end == 0 || end > uint32(subnet.MinMulticastLID+cap-1) {
		end = uint32(subnet.MinMulticastLID + cap - 1)
	}
	if !all && top != 0 && uint32(top) < end {
		if top < subnet.MinMulticastLID-1 {
			warn = append(warn, fmt.Sprintf("dump_multicast_tables: illegal top mlid %x", top))
		} else {
			end = uint32(top)
		}
	}
	if start == 0 {
		start = subnet.MinMulticastLID
	} else if start < subnet.MinMulticastLID {
		warn = append(warn, fmt.Sprintf("dump_multicast_tables: illegal start mlid %x, set to %x", start, subnet.MinMulticastLID))
		start = subnet.MinMulticastLID
	}
	if end > subnet.MaxMulticastLID {
		warn = append(warn, fmt.Sprintf("dump_multicast_tables: illegal end mlid %x, truncate to %x", end, subnet.MaxMulticastLID))
		end = subnet.MaxMulticastLID
	}
	return start, end, warn
}

// multicastBlocks are the MFT blocks from the one of MLID start to the one
// of end, numbered from MLID 0xC000.
func multicastBlocks(start, end uint32) subnet.BlockRange {
	const per, first = subnet.MLIDsPerMFTBlock, subnet.MinMulticastLID / subnet.MLIDsPerMFTBlock
	return subnet.BlockRange{First: int(start/per) - first, End: int(end/per) - first + 1}
}

// ftRequest is which table of a switch to read and show, and how.
type ftRequest struct {
	multicast  bool
	start, end uint32
	o          ftOptions
}

// lids and mlids are the ranges of n's tables the request shows, with the
// C tools' warnings about them.
func (q *ftRequest) lids(n *subnet.Node) (int32, int32, []string) {
	return unicastRange(int(n.DecodeSwitchInfo().LinearFDBTop), int32(q.start), int32(q.end))
}

func (q *ftRequest) mlids(n *subnet.Node) (uint32, uint32, []string) {
	si := n.DecodeSwitchInfo()
	return multicastRange(int(si.MulticastFDBCap), int(si.MulticastFDBTop), q.start, q.end, q.o.all)
}

// tableOptions asks subnet.ReadTables for the blocks the request shows.
func (q *ftRequest) tableOptions(target func(*subnet.Node) mad.Target) subnet.TableOptions {
	o := subnet.TableOptions{Target: target, PerSwitch: ftParallel, Switches: ftSwitchesAtOnce}
	if q.multicast {
		o.MFT = func(n *subnet.Node) subnet.BlockRange {
			start, end, _ := q.mlids(n)
			return multicastBlocks(start, end)
		}
	} else {
		o.LFT = func(n *subnet.Node) subnet.BlockRange {
			start, end, _ := q.lids(n)
			return unicastBlocks(start, end)
		}
	}
	return o
}

// ftParallel bounds the table blocks read at once from one switch, and
// ftSwitchesAtOnce the switches: a switch SMA serves SMPs one at a time, so
// more only queue there.
const (
	ftParallel       = 4
	ftSwitchesAtOnce = 16
)

// failedReads indexes the reads subnet.ReadTables reports failed, by
// attribute modifier; any other error is returned.
func failedReads(err error) (map[uint32]error, error) {
	var te *subnet.TableError
	if err == nil || !errors.As(err, &te) {
		return nil, err
	}
	m := map[uint32]error{}
	for _, f := range te.Failed {
		if f.Attr != iba.AttrIDSwitchInfo { // the range is then empty
			m[f.Mod] = f.Err
		}
	}
	return m, nil
}

// layout lays out the table the request shows of switch n, whose blocks
// were read (failed says which were not); target names the switch as the
// C tools print it.
func (q *ftRequest) layout(n *subnet.Node, failed map[uint32]error, target string, dests destLookup) *ForwardingTable {
	if q.multicast {
		return q.multicastTable(n, failed, target)
	}
	return q.unicastTable(n, failed, target, dests)
}

// readFailed handles a block that could not be read: ibroute stops the
// table there (stop is true); dump_fts says so and goes on with the
// previous block's data, as the C tool does.
func (t *ForwardingTable) readFailed(o ftOptions, err error, kind string, am uint32) (stop bool) {
	if o.failure == nil {
		t.ReadError = fmt.Sprintf("SubnGet() failed; MAD status 0x%x AM 0x%x", madStatus(err), am)
		return true
	}
	t.Errors = append(t.Errors, o.failure(kind, madStatus(err), am))
	return false
}

// madStatus is the MAD status of a failed RPC as libibmad's
// smp_query_status_via gives it: the reply's status, 0 for a timeout.
func madStatus(err error) int {
	var se *mad.StatusError
	if errors.As(err, &se) {
		return int(se.Status)
	}
	return 0
}

func ftBusy(err error) bool { return errors.Is(err, mad.ErrBusy) }

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

// unicastTable lays out the LFT of a switch (dump_unicast_tables of
// ibroute.c and dump_fts.c).
func (q *ftRequest) unicastTable(sw *subnet.Node, failed map[uint32]error, target string, dests destLookup) *ForwardingTable {
	o := q.o
	top := int(sw.DecodeSwitchInfo().LinearFDBTop)
	start, end, warn := q.lids(sw)
	t := &ForwardingTable{
		SwitchGUID: fmt.Sprintf("0x%016x", uint64(sw.GUID)), Name: o.names.NameBytes(sw.GUID, sw.Desc[:]),
		Target: target, NumPorts: sw.NumPorts, First: uint32(start), Last: uint32(end), LinearTop: &top,
		all: o.all, brief: o.brief, verbose: o.verbose, warnings: warn,
	}
	const per = subnet.LIDsPerLFTBlock
	blocks := unicastBlocks(start, end)
	type row struct{ lid, port int }
	var rows []row
	var lft [per]uint8
	for block := blocks.First; block < blocks.End; block++ {
		if err, bad := failed[uint32(block)]; bad {
			if t.readFailed(o, err, "LFT", uint32(block)) {
				break
			}
		} else if block >= 0 && block*per < len(sw.LFT) {
			copy(lft[:], sw.LFT[block*per:])
		}
		i, e := int32(block*per), int32(block*per+per)
		i = max(i, start)
		e = min(e, end+1)
		for ; i < e; i++ {
			port := int(lft[i%per])
			if port > sw.NumPorts && !o.all {
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
			if rw.port <= sw.NumPorts {
				lids = append(lids, rw.lid)
			}
		}
		found, miss = dests(lids)
	}
	var st lmcState
	for _, rw := range rows {
		en := UnicastEntry{LID: rw.lid, Port: rw.port, Valid: rw.port <= sw.NumPorts}
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
	en.NodeType = madNodeType(d.nodeType)
	en.PortGUID = fmt.Sprintf("0x%016x", uint64(d.portGUID))
	en.NodeName = names.NameBytes(d.nodeGUID, d.desc)
	en.Info = fmt.Sprintf("%s portguid %s: '%s'", en.NodeType, en.PortGUID, en.NodeName)
}

// destTimeout is the wait for one answer about a destination LID
// (ibroute's dump_lid asks with 100 ms).
const destTimeout = 100 * time.Millisecond

// smpDests asks every LID for NodeDescription, PortInfo and NodeInfo, as
// ibroute's dump_lid does, many LIDs at once.
func smpDests(ctx context.Context, g mad.SubnGetter) destLookup {
	return func(lids []int) (map[int]*lidDest, string) {
		found := map[int]*lidDest{}
		var mu sync.Mutex
		sc := sched.New(ctx, sched.Options{Busy: ftBusy})
		for _, lid := range lids {
			sc.Submit(strconv.Itoa(lid), fmt.Sprintf("LID %d", lid), func(ctx context.Context) error {
				t := mad.Route{Addr: mad.Addr{LID: uint16(lid)}, Timeout: destTimeout}
				var nd iba.NodeDescription
				var pi iba.PortInfo
				var ni iba.NodeInfo
				for _, a := range []iba.Attribute{&nd, &pi, &ni} {
					if err := g.SubnGet(ctx, t, a, 0); err != nil {
						return err
					}
				}
				mu.Lock()
				found[lid] = &lidDest{nodeType: ni.NodeType, nodeGUID: ni.NodeGUID, portGUID: ni.PortGUID,
					baseLID: pi.LID, lmc: pi.LMC, desc: nd.NodeString[:]}
				mu.Unlock()
				return nil
			})
		}
		_, _ = sc.Wait() // a LID that does not answer is shown as unknown
		return found, "unknown node and type"
	}
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

// multicastTable lays out the MFT of a switch (dump_multicast_tables).
func (q *ftRequest) multicastTable(sw *subnet.Node, failed map[uint32]error, target string) *ForwardingTable {
	o := q.o
	si := sw.DecodeSwitchInfo()
	mcap, top := int(si.MulticastFDBCap), int(si.MulticastFDBTop)
	start, end, warn := q.mlids(sw)
	t := &ForwardingTable{
		SwitchGUID: fmt.Sprintf("0x%016x", uint64(sw.GUID)), Name: o.names.NameBytes(sw.GUID, sw.Desc[:]),
		Target: target, NumPorts: sw.NumPorts, Multicast: true, First: start, Last: end,
		MulticastCap: &mcap, MulticastTop: &top, all: o.all, brief: o.brief, verbose: o.verbose, warnings: warn,
	}
	const per = subnet.MLIDsPerMFTBlock
	positions := subnet.MFTPositions(sw)
	blocks := multicastBlocks(start, end)
	cur := make([][per]uint16, positions)
blocks:
	for b := blocks.First; b < blocks.End; b++ {
		for j := 0; j < positions; j++ {
			mod := subnet.MFTModifier(b, j)
			if err, bad := failed[mod]; bad {
				if t.readFailed(o, err, "MFT", mod) {
					break blocks
				}
			} else if j < len(sw.MFT) && b*per < len(sw.MFT[j]) {
				copy(cur[j][:], sw.MFT[j][b*per:])
			}
		}
		block := b + subnet.MinMulticastLID/per
		i, e := uint32(block*per), uint32(block*per+per)
		i = max(i, start)
		e = min(e, end+1)
		for ; i < e; i++ {
			en := MulticastEntry{MLID: int(i), Ports: []int{}}
			nonzero := false
			for j := 0; j < positions; j++ {
				m := cur[j][i%per]
				en.Masks = append(en.Masks, m)
				nonzero = nonzero || m != 0
				for bit := 0; bit < subnet.PortsPerMFTPosition; bit++ {
					if p := j*subnet.PortsPerMFTPosition + bit; p <= sw.NumPorts && m&(1<<bit) != 0 {
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
