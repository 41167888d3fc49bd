package diags

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/sched"
	"github.com/rdmakit/rdmakit/subnet"
)

func init() {
	register(command{name: "ibqueryerrors", aliases: []string{"ibqueryerrors.pl"}, make: newIBQueryErrors})
}

// Counter semantics (IBA 16.1.3.5, 16.1.4.11).
//
// PortCounters' error counters are 4 to 16 bits wide and stop at all ones
// rather than wrap; PortCountersExtended has the same counters in 64 bits
// when the PMA sets CapabilityMask2.AdditionalPortCountersExtended, and
// then they are the ones compared with the qeThresholds. The data counters
// (PortXmitData, PortRcvData) count in units of 4 octets (IBA 16.1.3.5:
// "divided by 4"): the text output shows the raw count and, like the C
// tool, a human-readable figure in octets (the count times 4, "KB", "MB");
// --json gives both, as `*_units` (4-octet units) and `*_octets`. The
// 64-bit data counters are read from PortCountersExtended whenever the PMA
// has it (CapabilityMask ExtendedWidth or ExtendedWidthNoIETF), the 32-bit
// ones otherwise. A switch whose PMA has AllPortSelect is read once with
// PortSelect 0xFF first and port by port only when that shows errors, as
// the C tool does; for a node without it --json's node total is the
// per-port sum, saturating at each counter's width as the PMA would
// (perfquery's AllPortSelect emulation).

// qeDefaultThresholdFile is infiniband-diags' IBDIAG_CONFIG_PATH
// "/error_thresholds".
const qeDefaultThresholdFile = "/etc/infiniband-diags/error_thresholds"

// qePCFields are libibmad's PortCounters field names in order
// (IB_PC_FIRST_F .. IB_PC_XMT_WAIT_F): what -s may name.
var qePCFields = []string{"PortSelect", "CounterSelect", "SymbolErrorCounter", "LinkErrorRecoveryCounter",
	"LinkDownedCounter", "PortRcvErrors", "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors",
	"PortXmitDiscards", "PortXmitConstraintErrors", "PortRcvConstraintErrors", "CounterSelect2",
	"LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped", "PortXmitData",
	"PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortXmitWait"}

// qeCounter is one error counter in both layouts.
type qeCounter struct {
	name  string
	basic func(*iba.PortCounters) uint64
	ext   func(*iba.PortCountersExtended) uint64
}

// qeErrCounters are the counters ibqueryerrors checks, in its order
// (IB_PC_ERR_SYM_F .. IB_PC_VL15_DROPPED_F, then PortXmitWait).
var qeErrCounters = []qeCounter{
	{"SymbolErrorCounter", func(p *iba.PortCounters) uint64 { return uint64(p.SymbolErrorCounter) }, func(p *iba.PortCountersExtended) uint64 { return p.SymbolErrorCounter }},
	{"LinkErrorRecoveryCounter", func(p *iba.PortCounters) uint64 { return uint64(p.LinkErrorRecoveryCounter) }, func(p *iba.PortCountersExtended) uint64 { return p.LinkErrorRecoveryCounter }},
	{"LinkDownedCounter", func(p *iba.PortCounters) uint64 { return uint64(p.LinkDownedCounter) }, func(p *iba.PortCountersExtended) uint64 { return p.LinkDownedCounter }},
	{"PortRcvErrors", func(p *iba.PortCounters) uint64 { return uint64(p.PortRcvErrors) }, func(p *iba.PortCountersExtended) uint64 { return p.PortRcvErrors }},
	{"PortRcvRemotePhysicalErrors", func(p *iba.PortCounters) uint64 { return uint64(p.PortRcvRemotePhysicalErrors) }, func(p *iba.PortCountersExtended) uint64 { return p.PortRcvRemotePhysicalErrors }},
	{"PortRcvSwitchRelayErrors", func(p *iba.PortCounters) uint64 { return uint64(p.PortRcvSwitchRelayErrors) }, func(p *iba.PortCountersExtended) uint64 { return p.PortRcvSwitchRelayErrors }},
	{"PortXmitDiscards", func(p *iba.PortCounters) uint64 { return uint64(p.PortXmitDiscards) }, func(p *iba.PortCountersExtended) uint64 { return p.PortXmitDiscards }},
	{"PortXmitConstraintErrors", func(p *iba.PortCounters) uint64 { return uint64(p.PortXmitConstraintErrors) }, func(p *iba.PortCountersExtended) uint64 { return p.PortXmitConstraintErrors }},
	{"PortRcvConstraintErrors", func(p *iba.PortCounters) uint64 { return uint64(p.PortRcvConstraintErrors) }, func(p *iba.PortCountersExtended) uint64 { return p.PortRcvConstraintErrors }},
	{"LocalLinkIntegrityErrors", func(p *iba.PortCounters) uint64 { return uint64(p.LocalLinkIntegrityErrors) }, func(p *iba.PortCountersExtended) uint64 { return p.LocalLinkIntegrityErrors }},
	{"ExcessiveBufferOverrunErrors", func(p *iba.PortCounters) uint64 { return uint64(p.ExcessiveBufferOverrunErrors) }, func(p *iba.PortCountersExtended) uint64 { return p.ExcessiveBufferOverrunErrors }},
	{"VL15Dropped", func(p *iba.PortCounters) uint64 { return uint64(p.VL15Dropped) }, func(p *iba.PortCountersExtended) uint64 { return p.VL15Dropped }},
	{"PortXmitWait", func(p *iba.PortCounters) uint64 { return uint64(p.PortXmitWait) }, func(p *iba.PortCountersExtended) uint64 { return p.PortXmitWait }},
}

// qeDataCounter is one data counter: its name and whether it counts
// 4-octet units.
type qeDataCounter struct {
	name   string
	octets bool
	basic  func(*iba.PortCounters) uint64
	ext    func(*iba.PortCountersExtended) uint64
}

var qeDataCounters = []qeDataCounter{
	{"PortXmitData", true, func(p *iba.PortCounters) uint64 { return uint64(p.PortXmitData) }, func(p *iba.PortCountersExtended) uint64 { return p.PortXmitData }},
	{"PortRcvData", true, func(p *iba.PortCounters) uint64 { return uint64(p.PortRcvData) }, func(p *iba.PortCountersExtended) uint64 { return p.PortRcvData }},
	{"PortXmitPkts", false, func(p *iba.PortCounters) uint64 { return uint64(p.PortXmitPkts) }, func(p *iba.PortCountersExtended) uint64 { return p.PortXmitPkts }},
	{"PortRcvPkts", false, func(p *iba.PortCounters) uint64 { return uint64(p.PortRcvPkts) }, func(p *iba.PortCountersExtended) uint64 { return p.PortRcvPkts }},
	{"PortUnicastXmitPkts", false, nil, func(p *iba.PortCountersExtended) uint64 { return p.PortUnicastXmitPkts }},
	{"PortUnicastRcvPkts", false, nil, func(p *iba.PortCountersExtended) uint64 { return p.PortUnicastRcvPkts }},
	{"PortMulticastXmitPkts", false, nil, func(p *iba.PortCountersExtended) uint64 { return p.PortMulticastXmitPkts }},
	{"PortMulticastRcvPkts", false, nil, func(p *iba.PortCountersExtended) uint64 { return p.PortMulticastRcvPkts }},
}

// The details attributes' field names (libibmad IB_PC_RCV_LOCAL_PHY_ERR_F
// .. and IB_PC_XMT_INACT_DISC_F ..), 16 bits each from bit 32.
var (
	qeRcvErrDetail   = []string{"PortLocalPhysicalErrors", "PortMalformedPktErrors", "PortBufferOverrunErrors", "PortDLIDMappingErrors", "PortVLMappingErrors", "PortLoopingErrors"}
	qeXmitDiscDetail = []string{"PortInactiveDiscards", "PortNeighborMTUDiscards", "PortSwLifetimeLimitDiscards", "PortSwHOQLifetimeLimitDiscards"}
)

// qeSuppress collects -s and -c in command-line order.
type qeSuppress struct{ names *[]string }

func (s qeSuppress) String() string { return strings.Join(*s.names, ",") }
func (s qeSuppress) Type() string   { return "err1,err2,..." }
func (s qeSuppress) Set(v string) error {
	for _, n := range strings.Split(v, ",") {
		for _, f := range qePCFields {
			if n == f {
				*s.names = append(*s.names, n)
			}
		}
	}
	return nil
}

// qeSuppressCommon is -c: it adds the "common" error to the same list.
type qeSuppressCommon struct{ names *[]string }

func (s qeSuppressCommon) String() string   { return "false" }
func (s qeSuppressCommon) Type() string     { return "bool" }
func (s qeSuppressCommon) IsBoolFlag() bool { return true }
func (s qeSuppressCommon) Set(v string) error {
	if v == "true" {
		*s.names = append(*s.names, "PortRcvSwitchRelayErrors")
	}
	return nil
}

type queryErrorsFlags struct {
	df                         discoverFlags
	suppressed                 []string
	nodeNameMap, thresholdFile string
	data, counters, details    bool
	switches, cas, routers     bool
	skipSL, reportPort         bool
	clearErrors, clearCounts   bool
	perNodePMA, pmaInFlight    int
}

// QueryErrorsResult is ibqueryerrors' --json document.
type QueryErrorsResult struct {
	Nodes       []QENode          `json:"nodes"`
	Thresholds  map[string]uint64 `json:"qeThresholds"`
	Suppressed  []string          `json:"suppressed"`
	Summary     QESummary         `json:"summary"`
	Unreachable []FailureJSON     `json:"unreachable"`
	Resets      []QEReset         `json:"resets,omitempty"`
}

// QESummary is the "## Summary" block.
type QESummary struct {
	NodesChecked     int `json:"nodes_checked"`
	BadNodes         int `json:"bad_nodes"`
	PortsChecked     int `json:"ports_checked"`
	BadPorts         int `json:"bad_ports"`
	PMAQueryFailures int `json:"pma_query_failures"`
}

// QENode is one node checked.
type QENode struct {
	Type     string   `json:"type"`
	GUID     string   `json:"guid"`
	Name     string   `json:"name"`
	LID      uint16   `json:"lid"`
	CapMask  uint16   `json:"cap_mask"`
	CapMask2 uint32   `json:"cap_mask2"`
	AllPorts *QEPort  `json:"all_ports,omitempty"`
	Total    *QEPort  `json:"total,omitempty"` // the saturating per-port sum, without AllPortSelect
	Ports    []QEPort `json:"ports"`
	Failures []string `json:"failures,omitempty"`
	Bad      bool     `json:"bad"`
}

// QEPort is one port's counters: Errors holds those beyond their
// threshold (and not suppressed), Counters every error counter read.
type QEPort struct {
	Port     int               `json:"port"` // 255: PortSelect 0xFF
	GUID     string            `json:"guid"`
	LID      uint16            `json:"lid"`
	Extended bool              `json:"extended_errors"` // 64-bit error counters in use
	Counters map[string]uint64 `json:"counters"`
	Errors   map[string]uint64 `json:"errors,omitempty"`
	Details  map[string]uint64 `json:"details,omitempty"`
	Data     *QEData           `json:"data,omitempty"`
}

// QEData are the data counters: XmitData and RcvData in IBA's 4-octet
// units and in octets, the packet counts as read.
type QEData struct {
	Extended       bool              `json:"extended"` // 64-bit PortCountersExtended
	XmitDataUnits  uint64            `json:"xmit_data_units"`
	RcvDataUnits   uint64            `json:"rcv_data_units"`
	XmitDataOctets uint64            `json:"xmit_data_octets"`
	RcvDataOctets  uint64            `json:"rcv_data_octets"`
	Packets        map[string]uint64 `json:"packets"`
}

// QEReset is one counter reset sent (-k, -K).
type QEReset struct {
	Node string `json:"node_guid"`
	LID  uint16 `json:"lid"`
	PerfReset
}

func newIBQueryErrors(e *Env) *cobra.Command {
	f := &queryErrorsFlags{}
	c := &cobra.Command{
		Use:   "ibqueryerrors",
		Short: "report the ports whose error counters exceed their qeThresholds (infiniband-diags ibqueryerrors)",
		Long: `ibqueryerrors discovers the subnet (or loads --load-cache), reads the
performance counters of every port and prints those whose error counters
exceed the qeThresholds (0 unless --threshold-file says otherwise), with a
summary; exit status 1 when a port has errors. Output is infiniband-diags'
ibqueryerrors byte for byte; the counters are read in parallel (-o and
--per_node_pma bound how many at once) rather than one port at a time.

-k and -K reset the error and the data counters after reading them (the
only writes). Error counters come from PortCountersExtended (64 bits) when
the PMA has the additional extended counters, from PortCounters otherwise;
data counters are in 4-octet units as read, shown in octets alongside.
The SL of each query comes from an SA PathRecord table as in the C tool;
without an SA (the C tool then stops) a warning is printed and SL 0 used.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIBQueryErrors(e, f)
		},
	}
	fl := c.Flags()
	fl.VarP(qeSuppress{&f.suppressed}, "suppress", "s", "suppress errors listed")
	fl.VarP(qeSuppressCommon{&f.suppressed}, "suppress-common", "c", "suppress some of the common counters")
	fl.Lookup("suppress-common").NoOptDefVal = "true"
	fl.StringVar(&f.nodeNameMap, "node-name-map", "", "node name map file")
	fl.StringVarP(&f.df.guid, "port-guid", "G", "", "report the node containing the port with this GUID")
	fl.StringVarP(&f.df.guid, "S", "S", "", "same as -G for backward compatibility")
	fl.StringVarP(&f.df.direct, "Direct", "D", "", "report the node containing the port at this directed route")
	fl.BoolVar(&f.skipSL, "skip-sl", false, "don't obtain SL to all destinations")
	fl.BoolVarP(&f.reportPort, "report-port", "r", false, "report port link information")
	fl.StringVar(&f.thresholdFile, "threshold-file", qeDefaultThresholdFile, "alternate threshold file")
	fl.BoolP("GNDN", "R", false, "(obsolete, does nothing)")
	fl.BoolVar(&f.data, "data", false, "include data counters for ports with errors")
	fl.BoolVar(&f.switches, "switch", false, "print data for switches only")
	fl.BoolVar(&f.cas, "ca", false, "print data for CA's only")
	fl.BoolVar(&f.routers, "router", false, "print data for routers only")
	fl.BoolVar(&f.details, "details", false, "include transmit discard details")
	fl.BoolVar(&f.counters, "counters", false, "print data counters only")
	fl.BoolVarP(&f.clearErrors, "clear-errors", "k", false, "clear error counters after read")
	fl.BoolVarP(&f.clearCounts, "clear-counts", "K", false, "clear data counters after read")
	fl.StringVar(&f.df.loadCache, "load-cache", "", "load the subnet from this ibnetdiscover cache instead of discovering")
	fl.IntVar(&f.perNodePMA, "per_node_pma", 0, "PMA queries outstanding at once to one node (default 4)")
	fl.IntVar(&f.pmaInFlight, "pma_in_flight", 0, "PMA queries outstanding at once in all (default 256)")
	f.df.register(c, false)
	return c
}

// qeThresholds is the threshold file as set_thresholds reads it: NAME=VALUE
// lines for the error counters, # comments; the text is the summary's
// "Thresholds: [NAME = VALUE]..." line, nil when the file is missing.
type qeThresholds struct {
	val  map[string]uint64
	text *string
}

func qeReadThresholds(path string) qeThresholds {
	t := qeThresholds{val: map[string]uint64{}}
	fh, err := os.Open(path)
	if err != nil {
		return t
	}
	defer fh.Close()
	s := "Thresholds: "
	br := bufio.NewReader(fh)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			// strtok(buf, "\n") then strtok(p, "=") and strtok(NULL, "\n").
			l := strings.TrimLeft(strings.TrimRight(line, "\n"), "\n")
			if l != "" && l[0] != '#' {
				l = strings.TrimLeft(l, "=")
				name, val, ok := strings.Cut(l, "=")
				if !ok {
					// No value: the C tool crashes on it; ignore the line.
					continue
				}
				v := cStrtoul(strings.TrimLeft(val, "="))
				for _, c := range qeErrCounters {
					if c.name == name {
						t.val[name] = v
						s += fmt.Sprintf("[%s = %d]", name, v)
					}
				}
			}
		}
		if err != nil {
			break
		}
	}
	t.text = &s
	return t
}

// qeHumanReadable is ibdiag_common.c's conv_cnt_human_readable, in single
// precision as there: data counters (4-octet units) are shown in octets.
func qeHumanReadable(v uint64, data bool) (float32, string) {
	ui := 0
	div := uint64(1)
	for tmp := v / 1024; tmp != 0; tmp /= 1024 {
		ui++
		div *= 1024
	}
	val := float32(v)
	if data {
		val *= 4
		if val/float32(div) > 1024 {
			ui++
			div *= 1024
		}
	}
	val /= float32(div)
	units := []string{"", "K", "M", "G", "T", "P", "E"}
	if data {
		units = []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
	}
	if ui < len(units) {
		return val, units[ui]
	}
	return val, ""
}

func qeCounterText(name string, v uint64, data bool) string {
	f, unit := qeHumanReadable(v, data)
	return fmt.Sprintf(" [%s == %d (%5.3f%s)]", name, v, float64(f), unit)
}

// qeRun is one ibqueryerrors run.
type qeRun struct {
	e     *Env
	f     *queryErrorsFlags
	s     *session
	sn    *subnet.Subnet
	names *namemap.Map
	thr   qeThresholds
	sup   map[string]bool
	sl    map[uint16]uint8
	sched *sched.Scheduler
	// early holds the nodes whose reading began while the discovery ran.
	early   map[*subnet.Node]*qeNode
	backlog []*qeNode // settled before the SLs were in
	cancel  context.CancelFunc

	mu     sync.Mutex
	resets []QEReset
	done   atomic.Int64
	total  atomic.Int64
}

// qeNode is what was read from one node, filled by its jobs.
type qeNode struct {
	n        *subnet.Node
	snap     qeSnap // what the queries use of n, copied when they began
	key      string // the node in sched
	name     string
	lid      uint16
	capMask  uint16
	capMask2 uint32
	allPort  bool
	all      *qePort
	ports    []*qePort // by port number, nil when not queried
	checked  int
	mu       sync.Mutex
	warnings []string
	fails    int
	pending  atomic.Int32
}

// qeSnap is what a node's queries need of it: its type, ports and LIDs as
// the discovery had them when the queries began. The queries may begin
// while the discovery still runs (and may still add a port to a CA), so
// they read this copy, never the node.
type qeSnap struct {
	typ      iba.NodeType
	numPorts int
	smaLID   uint16
	enhSP0   bool
	ports    []qeSnapPort // by port number; present false where ibnd has no port
}

type qeSnapPort struct {
	present bool
	lid     uint16
	guid    iba.GUID
}

func snapNode(n *subnet.Node) qeSnap {
	sn := qeSnap{typ: n.Type, numPorts: n.NumPorts, smaLID: n.SMALID, enhSP0: n.EnhancedSP0, ports: make([]qeSnapPort, n.NumPorts+1)}
	for p := range sn.ports {
		if pp := n.Port(p); pp != nil {
			sn.ports[p] = qeSnapPort{true, pp.BaseLID, pp.GUID}
		}
	}
	return sn
}

func (a *qeSnap) equal(b *qeSnap) bool {
	if a.typ != b.typ || a.numPorts != b.numPorts || a.smaLID != b.smaLID || a.enhSP0 != b.enhSP0 || len(a.ports) != len(b.ports) {
		return false
	}
	for i := range a.ports {
		if a.ports[i] != b.ports[i] {
			return false
		}
	}
	return true
}

// port is ibnd's node->ports[p] != NULL.
func (a *qeSnap) port(p int) bool { return p >= 0 && p < len(a.ports) && a.ports[p].present }

// qePort is one port's reading and the text it prints.
type qePort struct {
	num      int
	lid      uint16
	ok       bool
	text     string // " [Name == N]..." of print_results or print_data_cnts
	json     QEPort
	pc       iba.PortCounters
	pce      *iba.PortCountersExtended
	hasError bool
}

func (n *qeNode) warn(format string, a ...any) {
	n.mu.Lock()
	n.warnings = append(n.warnings, fmt.Sprintf(format, a...))
	n.fails++
	n.mu.Unlock()
}

func runIBQueryErrors(e *Env, f *queryErrorsFlags) error {
	if f.df.direct != "" && f.df.loadCache != "" {
		return &exitError{errors.New("Cannot specify cache and direct route path"), 255}
	}
	if f.perNodePMA < 0 || f.pmaInFlight < 0 {
		return usagef("--per_node_pma and --pma_in_flight must not be negative")
	}
	names, err := loadNames(f.nodeNameMap)
	if err != nil {
		return err
	}
	partial := f.df.loadCache == "" && (f.df.guid != "" || f.df.direct != "")
	if partial {
		f.df.hops = 1
	}
	sess, err := e.open()
	if err != nil {
		var ue *UsageError
		if errors.As(err, &ue) {
			return err
		}
		return &exitError{err, 255}
	}
	defer sess.Close()
	q := &qeRun{e: e, f: f, s: sess, names: names, thr: qeReadThresholds(f.thresholdFile), sup: map[string]bool{}}
	for _, n := range f.suppressed {
		q.sup[n] = true
	}
	// The path records (for SLs) come while the subnet is discovered; -D
	// asks for one destination only, known once the scan is done.
	var slDone chan struct{}
	if !f.skipSL && f.df.guid == "" && f.df.direct == "" {
		slDone = make(chan struct{})
		go func() {
			defer close(slDone)
			q.sl = q.pathSLs(0)
		}()
	}
	if !(f.switches || f.cas || f.routers) {
		f.switches, f.cas, f.routers = true, true, true
	}
	// A whole-subnet sweep reads each node's counters as soon as the
	// discovery is done with the node, not after the whole walk: the
	// fabric answers both at once. Not when the sweep resets counters: a
	// node the discovery changes afterwards is read again, and must read
	// the same counters.
	if !partial && f.df.loadCache == "" && !f.clearErrors && !f.clearCounts {
		q.startSched()
		defer q.stopSched() // a no-op once sweep has waited
		q.early = map[*subnet.Node]*qeNode{}
		f.df.settled = func(n *subnet.Node) { q.settled(n, slDone) }
	}
	f.df.progressBar = true
	r, err := e.discover(&f.df, nil)
	if slDone != nil {
		<-slDone
	}
	q.launchBacklog()
	if err != nil {
		var ue *UsageError
		if errors.As(err, &ue) {
			return err
		}
		return &exitError{err, 255}
	}
	e.warnFailures("ibqueryerrors", r)
	q.sn = r.s

	// Which nodes: the one -G or -D names, or all of the types asked for.
	var nodes []*subnet.Node
	var dguid iba.GUID
	switch {
	case f.df.guid != "":
		if p := r.s.PortByGUID(iba.GUID(cStrtoul(f.df.guid))); p != nil {
			nodes = []*subnet.Node{p.Node}
		} else {
			fmt.Fprintf(e.Stderr, "Failed to find node: %s\n", f.df.guid)
		}
	case f.df.direct != "":
		if n, _ := r.s.From(); n != nil {
			nodes = []*subnet.Node{n}
			dguid = n.NodeInfo().PortGUID
		} else {
			fmt.Fprintf(e.Stderr, "Failed to find node: %s\n", f.df.direct)
		}
	default:
		nodes = ibndOrder(r.s, 0)
	}
	kept := nodes[:0]
	for _, n := range nodes {
		if q.wanted(n.Type) {
			kept = append(kept, n)
		}
	}
	nodes = kept
	if !f.skipSL && f.df.direct != "" && dguid != 0 {
		q.sl = q.pathSLs(dguid)
	}

	res := q.sweep(nodes)
	return q.render(res, r)
}

// pathSLs is path_record_query: the SL of the path to every destination
// LID (or to dguid only), from one SA PathRecord table.
func (q *qeRun) pathSLs(dguid iba.GUID) map[uint16]uint8 {
	lp := q.s.local
	pr := &iba.PathRecord{SGID: iba.MakeGID(lp.GIDPrefix, lp.PortGUID), NumbPath: 1, Reversible: 1}
	comps := []string{"SGID", "NumbPath", "Reversible"}
	if dguid != 0 {
		pr.DGID = iba.MakeGID(lp.GIDPrefix, dguid)
		comps = append(comps, "DGID")
	}
	ctx, cancel := context.WithTimeout(q.e.Ctx, 10*time.Second)
	defer cancel()
	// One try: the SLs only refine the queries, and an SA that cannot
	// send the table (ibsim carries no RMPP) must not cost the retries.
	c := sa.New(q.s.mc)
	t, err := c.Target(ctx)
	if err == nil {
		r := t.Route()
		r.Tries = 1
		var recs []iba.PathRecord
		recs, err = sa.GetTable(ctx, sa.New(q.s.mc, sa.WithTarget(r)), pr, sa.Components(comps...))
		if err == nil {
			m := make(map[uint16]uint8, len(recs))
			for _, r := range recs {
				m[r.DLID] = r.SL
			}
			return m
		}
	}
	{
		fmt.Fprintf(q.e.Stderr, "ibqueryerrors: warning: the SA's path records (for the SL of each query): %v; using SL 0\n", err)
		return nil
	}
}

// target is the PMA of a LID, on the SL the path records give.
func (q *qeRun) target(lid uint16) mad.Target {
	return mad.Route{Addr: mad.Addr{LID: lid, SL: q.sl[lid], QPN: mad.QP1, QKey: mad.QP1QKey}, Name: "Lid " + strconv.Itoa(int(lid))}
}

// perf is a perfquery run aimed at lid, to reuse its query and reset.
func (q *qeRun) perf(lid uint16) *perfRun {
	return &perfRun{e: q.e, s: q.s, f: &perfQueryFlags{}, target: q.target(lid), res: &PerfQueryResult{}}
}

func (q *qeRun) submit(n *qeNode, name string, fn func(ctx context.Context)) {
	q.total.Add(1)
	n.pending.Add(1)
	q.sched.Submit(n.key, name, func(ctx context.Context) error {
		fn(ctx)
		q.jobDone(n)
		return nil
	})
}

// submitAsync queues a job of n that holds no goroutine while its MAD is
// out (sched.SubmitAsync): fn calls finish once, when it is over. fn's
// continuations run on the MAD client's reader, so they may submit but
// must not wait for another MAD.
func (q *qeRun) submitAsync(n *qeNode, name string, fn func(ctx context.Context, finish func())) {
	q.total.Add(1)
	n.pending.Add(1)
	q.sched.SubmitAsync(n.key, name, func(ctx context.Context, done func(error)) {
		fn(ctx, func() {
			q.jobDone(n)
			done(nil)
		})
	})
}

func (q *qeRun) jobDone(n *qeNode) {
	q.done.Add(1)
	if n.pending.Add(-1) == 0 {
		q.nodeDone(n)
	}
}

// nodeDone runs once a node's reads are all in: the AllPortSelect reset
// comes after them, as in the C tool.
func (q *qeRun) nodeDone(n *qeNode) {
	if n.allPort && (q.f.clearErrors || q.f.clearCounts) && n.all != nil {
		q.sched.Submit(n.key, "clear", func(ctx context.Context) error {
			q.clearPort(n, n.lid, allPorts)
			return nil
		})
	}
}

// sweep reads every node's counters through the scheduler: many nodes at
// once, a few queries per node.
func (q *qeRun) sweep(nodes []*subnet.Node) []*qeNode {
	q.startSched()
	bar := q.e.progressBar(true)
	stop := make(chan struct{})
	if bar != nil {
		go func() {
			t := time.NewTicker(100 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					bar.update(subnet.DiscoverProgress{Done: int(q.done.Load()), Queued: int(q.total.Load()), Nodes: len(nodes)})
				}
			}
		}()
	}
	res := make([]*qeNode, len(nodes))
	for i, n := range nodes {
		if qn := q.early[n]; qn != nil {
			if sn := snapNode(n); qn.snap.equal(&sn) {
				res[i] = qn
				continue
			}
			// The discovery changed the node after its queries began:
			// read it again, as it is now.
		}
		res[i] = q.newNode(n)
		q.launch(res[i])
	}
	_, _ = q.sched.Wait()
	close(stop)
	if bar != nil {
		bar.done()
	}
	return res
}

// wanted says whether --switch, --ca and --router select a node type.
func (q *qeRun) wanted(t iba.NodeType) bool {
	return t == iba.NodeTypeSwitch && q.f.switches || t == iba.NodeTypeCA && q.f.cas || t == iba.NodeTypeRouter && q.f.routers
}

// settled runs on the discovery's walk each time it has processed every
// query about node n: the node's reading can begin (once the SLs are in,
// which the queries use). A node changed later is read again by sweep.
func (q *qeRun) settled(n *subnet.Node, slDone chan struct{}) {
	if q.early[n] != nil || !q.wanted(n.Type) {
		return
	}
	if n.Type != iba.NodeTypeSwitch {
		// A CA with a port not found yet may be reached by it later in
		// the walk (rails): read it when the walk is over, not twice.
		for p := 1; p <= n.NumPorts; p++ {
			if n.Port(p) == nil {
				return
			}
		}
	}
	qn := q.newNode(n)
	q.early[n] = qn
	q.backlog = append(q.backlog, qn)
	if slDone != nil {
		select {
		case <-slDone:
		default:
			return
		}
	}
	q.launchBacklog()
}

func (q *qeRun) launchBacklog() {
	for _, qn := range q.backlog {
		q.launch(qn)
	}
	q.backlog = nil
}

// startSched makes the scheduler of the counter reads.
func (q *qeRun) startSched() {
	if q.sched != nil {
		return
	}
	ctx, cancel := context.WithCancel(q.e.Ctx)
	q.cancel = cancel
	q.sched = sched.New(ctx, sched.Options{MaxInFlight: q.f.pmaInFlight, PerTarget: q.f.perNodePMA,
		Busy: func(err error) bool { return errors.Is(err, mad.ErrBusy) }})
}

// stopSched drops the reads still queued and waits for those running.
func (q *qeRun) stopSched() {
	if q.sched != nil && q.cancel != nil {
		q.cancel()
		_, _ = q.sched.Wait()
	}
}

// newNode prepares the reading of one node as the discovery has it now.
func (q *qeRun) newNode(n *subnet.Node) *qeNode {
	qn := &qeNode{n: n, snap: snapNode(n), key: n.GUID.String(), name: nodeName(q.names, n), ports: make([]*qePort, n.NumPorts+1)}
	if n.Type == iba.NodeTypeSwitch {
		qn.lid = qn.snap.smaLID
	} else {
		for p := 1; p <= qn.snap.numPorts; p++ {
			if qn.snap.port(p) {
				qn.lid = qn.snap.ports[p].lid
				break
			}
		}
	}
	return qn
}

// launch queues a node's first query; the rest follow from its answers.
func (q *qeRun) launch(qn *qeNode) {
	q.submitAsync(qn, "ClassPortInfo", func(ctx context.Context, finish func()) { q.startNode(ctx, qn, finish) })
}

// startNode is print_node up to the port loop: the PMA's capabilities, then
// the AllPortSelect read or the ports.
func (q *qeRun) startNode(ctx context.Context, n *qeNode, finish func()) {
	cpi := &iba.ClassPortInfo{}
	q.s.mc.StartPerformanceGet(ctx, q.target(n.lid), cpi, 0, func(err error) {
		q.capabilities(n, cpi, err)
		finish()
	})
}

// capabilities takes in the PMA's ClassPortInfo (or the failure to read
// it) and queues the node's counter reads.
func (q *qeRun) capabilities(n *qeNode, cpi *iba.ClassPortInfo, err error) {
	cpiPort := 0
	if n.snap.typ != iba.NodeTypeSwitch {
		for p := 1; p <= n.snap.numPorts; p++ {
			if n.snap.port(p) {
				cpiPort = p
				break
			}
		}
	}
	if err != nil {
		n.warn("classportinfo query failed on %s, Lid %d port %d: %v", n.name, n.lid, cpiPort, err)
	} else {
		n.capMask, n.capMask2 = cpi.CapabilityMask, cpi.CapabilityMask2
		n.allPort = cpi.CapabilityMask&iba.PMCapAllPortSelect != 0
	}
	if n.allPort && !q.f.counters {
		q.readErrorsJob(n, "PortCounters ALL", allPorts, n.lid, func(pr *qePort) {
			n.all = pr
			if pr.ok && pr.hasError {
				q.portLoop(n)
				return
			}
			n.checked += n.snap.numPorts
		})
		return
	}
	q.portLoop(n)
}

// readErrorsJob queues readErrors of one port (or allPorts) and then
// then(its result). When the reading is one PortCounters and nothing
// follows it (no PortCountersExtended, details or reset), the job holds
// no goroutine while the MAD is out and then runs on the MAD client's
// reader; otherwise it runs on a goroutine of its own.
func (q *qeRun) readErrorsJob(n *qeNode, name string, port int, lid uint16, then func(*qePort)) {
	if q.f.details || q.f.clearErrors || q.f.clearCounts || q.wantExt(n) {
		q.submit(n, name, func(ctx context.Context) {
			pr := q.readErrors(n, port, lid)
			then(pr)
			if !n.allPort && port != allPorts {
				q.clearPort(n, lid, port)
			}
		})
		return
	}
	q.submitAsync(n, name, func(ctx context.Context, finish func()) {
		pr, r := q.newPort(n, port, lid)
		r.start(ctx, port, &pr.pc, func(_ []byte, err error) {
			q.errorsRead(n, pr, r, port, err)
			then(pr)
			finish()
		})
	})
}

func (q *qeRun) startPort(n *qeNode) int {
	if n.snap.typ == iba.NodeTypeSwitch && n.snap.enhSP0 {
		return 0
	}
	return 1
}

func (q *qeRun) portLoop(n *qeNode) {
	for p := q.startPort(n); p <= n.snap.numPorts; p++ {
		if !n.snap.port(p) {
			continue
		}
		lid := n.snap.smaLID
		if n.snap.typ != iba.NodeTypeSwitch {
			lid = n.snap.ports[p].lid
		}
		n.checked++
		if !q.f.counters {
			q.readErrorsJob(n, "PortCounters", p, lid, func(pr *qePort) { n.ports[p] = pr })
			continue
		}
		q.submit(n, "PortCounters", func(ctx context.Context) {
			n.ports[p] = q.readData(n, p, lid)
			if !n.allPort {
				q.clearPort(n, lid, p)
			}
		})
	}
}

// wantExt says whether print_errors reads PortCountersExtended after
// PortCounters on n.
func (q *qeRun) wantExt(n *qeNode) bool {
	return q.extCapable(n) && (n.capMask2&iba.PMCap2AdditionalPortCountersExtended != 0 || q.f.data)
}

func (q *qeRun) extCapable(n *qeNode) bool {
	return n.capMask&(iba.PMCapExtendedWidth|iba.PMCapExtendedWidthNoIETF) != 0
}

func (q *qeRun) portGUID(n *qeNode, port int) iba.GUID {
	if port == allPorts || n.snap.typ == iba.NodeTypeSwitch {
		if n.snap.port(0) {
			return n.snap.ports[0].guid
		}
		return n.n.GUID
	}
	if n.snap.port(port) {
		return n.snap.ports[port].guid
	}
	return 0
}

// portJSON starts a port's --json record; the text output needs none of
// it, and a sweep of a large fabric makes one per port.
func (q *qeRun) portJSON(port int, guid iba.GUID, lid uint16) QEPort {
	j := QEPort{Port: port, LID: lid}
	if q.e.JSON {
		j.GUID, j.Counters = guid.String(), map[string]uint64{}
	}
	return j
}

// readErrors is print_errors and print_results: read PortCounters (and
// PortCountersExtended when the PMA has it) and compose the line.
func (q *qeRun) readErrors(n *qeNode, port int, lid uint16) *qePort {
	pr, r := q.newPort(n, port, lid)
	_, err := r.query(port, &pr.pc)
	q.errorsRead(n, pr, r, port, err)
	return pr
}

// newPort starts the record of a port's reading, and the perfquery run
// that reads it.
func (q *qeRun) newPort(n *qeNode, port int, lid uint16) (*qePort, *perfRun) {
	pr := &qePort{num: port, lid: lid}
	pr.json = q.portJSON(port, q.portGUID(n, port), lid)
	return pr, q.perf(lid)
}

// errorsRead is readErrors once PortCounters is in (or failed with err):
// it reads what else the port's line needs (PortCountersExtended, the
// details) and composes it.
func (q *qeRun) errorsRead(n *qeNode, pr *qePort, r *perfRun, port int, err error) {
	lid := pr.lid
	if err != nil {
		n.warn("IB_GSI_PORT_COUNTERS query failed on %s, Lid %d port %d: %v", n.name, lid, port, err)
		return
	}
	// PortCountersExtended matters when its 64-bit error counters are in
	// use or --data shows its data counters; the C tool reads it whenever
	// the PMA has it, which prints the same and costs a MAD per port.
	if q.wantExt(n) {
		pce := &iba.PortCountersExtended{}
		if _, err := r.query(port, pce); err != nil {
			n.warn("IB_GSI_PORT_COUNTERS_EXT query failed on %s, Lid %d port %d: %v", n.name, lid, port, err)
			return
		}
		pr.pce = pce
	}
	pr.ok = true
	if n.capMask&iba.PMCapPortCountersXmitWait == 0 {
		pr.pc.PortXmitWait = 0
	}
	useExt := pr.pce != nil && n.capMask2&iba.PMCap2AdditionalPortCountersExtended != 0
	pr.json.Extended = useExt
	var b2 strings.Builder
	for _, c := range qeErrCounters {
		var v uint64
		if useExt {
			v = c.ext(pr.pce)
		} else {
			v = c.basic(&pr.pc)
		}
		if pr.json.Counters != nil {
			pr.json.Counters[c.name] = v
		}
		if q.sup[c.name] || v <= q.thr.val[c.name] {
			continue
		}
		if pr.json.Errors == nil {
			pr.json.Errors = map[string]uint64{}
		}
		pr.json.Errors[c.name] = v
		if useExt {
			b2.WriteString(qeCounterText(c.name, v, false))
		} else {
			fmt.Fprintf(&b2, " [%s == %d]", c.name, v)
		}
		if q.f.details {
			// The C tool reads each details attribute but names its fields
			// after the other one (ibqueryerrors.c print_results); the
			// text keeps that, --json names them rightly.
			switch c.name {
			case "PortXmitDiscards":
				b2.WriteString(q.details(n, pr, r, port, &iba.PortXmitDiscardDetails{}, "PortXmitDiscardDetails", qeRcvErrDetail, qeXmitDiscDetail))
			case "PortRcvErrors":
				b2.WriteString(q.details(n, pr, r, port, &iba.PortRcvErrorDetails{}, "PortRcvErrorDetails", qeXmitDiscDetail, qeRcvErrDetail))
			}
		}
	}
	pr.text = b2.String()
	pr.hasError = pr.text != ""
	if pr.hasError && q.f.data {
		pr.text += q.dataText(n, pr, true)
	}
}

// details is query_and_dump: the nonzero 16-bit fields from bit 32 of a
// details attribute, labelled with printNames.
func (q *qeRun) details(n *qeNode, pr *qePort, r *perfRun, port int, attr iba.Attribute, name string, printNames, realNames []string) string {
	b, err := r.query(port, attr)
	if err != nil {
		n.warn("%s query failed on %s, Lid %d port %d: %v", name, n.name, pr.lid, port, err)
		return ""
	}
	var s strings.Builder
	for i, pn := range printNames {
		off := 4 + 2*i
		if off+2 > len(b) {
			break
		}
		v := binary.BigEndian.Uint16(b[off:])
		if i < len(realNames) && v != 0 {
			if pr.json.Details == nil {
				pr.json.Details = map[string]uint64{}
			}
			pr.json.Details[realNames[i]] = uint64(v)
		}
		if v != 0 {
			fmt.Fprintf(&s, " [%s == %d]", pn, v)
		}
	}
	return s.String()
}

// dataText prints the data counters of a port read: nonzero ones only
// after errors (--data), all with --counters.
func (q *qeRun) dataText(n *qeNode, pr *qePort, nonzero bool) string {
	d := &QEData{Packets: map[string]uint64{}}
	var s strings.Builder
	last := 4
	if pr.pce != nil {
		d.Extended = true
		if n.capMask&iba.PMCapExtendedWidth != 0 {
			last = len(qeDataCounters)
		}
	}
	for _, c := range qeDataCounters[:last] {
		var v uint64
		if pr.pce != nil {
			v = c.ext(pr.pce)
		} else {
			v = c.basic(&pr.pc)
		}
		switch c.name {
		case "PortXmitData":
			d.XmitDataUnits, d.XmitDataOctets = v, v*4
		case "PortRcvData":
			d.RcvDataUnits, d.RcvDataOctets = v, v*4
		default:
			d.Packets[c.name] = v
		}
		if v != 0 || !nonzero {
			s.WriteString(qeCounterText(c.name, v, c.octets))
		}
	}
	pr.json.Data = d
	return s.String()
}

// readData is print_data_cnts (--counters).
func (q *qeRun) readData(n *qeNode, port int, lid uint16) *qePort {
	pr := &qePort{num: port, lid: lid}
	pr.json = q.portJSON(port, n.n.GUID, lid)
	r := q.perf(lid)
	if q.extCapable(n) {
		pce := &iba.PortCountersExtended{}
		if _, err := r.query(port, pce); err != nil {
			n.warn("IB_GSI_PORT_COUNTERS_EXT query failed on %s, Lid %d port %d: %v", n.name, lid, port, err)
			return pr
		}
		pr.pce = pce
	} else if _, err := r.query(port, &pr.pc); err != nil {
		n.warn("IB_GSI_PORT_COUNTERS query failed on %s, Lid %d port %d: %v", n.name, lid, port, err)
		return pr
	}
	pr.ok = true
	pr.text = q.dataText(n, pr, false)
	return pr
}

// clearPort is clear_port: -k resets the error counters (and the details
// with --details), -K the data counters, in PortCounters and, where the
// PMA has it, PortCountersExtended (IBA 16.1.3.5 CounterSelect bits).
func (q *qeRun) clearPort(n *qeNode, lid uint16, port int) {
	r := q.perf(lid)
	mask := uint32(0)
	if q.f.clearErrors {
		mask |= 0xfff
		if n.capMask&iba.PMCapPortCountersXmitWait != 0 {
			mask |= 0x10000
		}
	}
	if q.f.clearCounts {
		mask |= 0xf000
	}
	if mask != 0 {
		if err := r.reset(port, mask, "PortCounters", &iba.PortCounters{}); err != nil {
			n.warn("Failed to reset errors %s port %d: %v", n.name, port, err)
		}
	}
	if q.f.clearErrors && q.f.details {
		_ = r.reset(port, 0xf, "PortXmitDiscardDetails", &iba.PortXmitDiscardDetails{})
		_ = r.reset(port, 0x3f, "PortRcvErrorDetails", &iba.PortRcvErrorDetails{})
	}
	if q.extCapable(n) {
		mask = 0
		if q.f.clearCounts {
			mask = 0x0f
			if n.capMask&iba.PMCapExtendedWidth != 0 {
				mask = 0xff
			}
		}
		if q.f.clearErrors && n.capMask2&iba.PMCap2AdditionalPortCountersExtended != 0 {
			mask |= 0xfff0000
			if n.capMask&iba.PMCapPortCountersXmitWait != 0 {
				mask |= 1 << 28
			}
		}
		if mask != 0 {
			if err := r.reset(port, mask, "PortCountersExtended", &iba.PortCountersExtended{}); err != nil {
				n.warn("Failed to reset extended data counters %s, Lid %d port %d: %v", n.name, lid, port, err)
			}
		}
	}
	q.mu.Lock()
	for _, rs := range r.res.Resets {
		q.resets = append(q.resets, QEReset{Node: n.n.GUID.String(), LID: lid, PerfReset: rs})
	}
	q.mu.Unlock()
}

// render prints what the sweep read in the C tool's order, then the
// summary; exit status 1 when a port has errors.
func (q *qeRun) render(nodes []*qeNode, r *discoverResult) error {
	var b strings.Builder
	var sum QESummary
	doc := &QueryErrorsResult{Nodes: make([]QENode, 0, len(nodes)), Thresholds: q.thr.val, Suppressed: append([]string{}, q.f.suppressed...), Unreachable: []FailureJSON{}, Resets: q.resets}
	for _, n := range nodes {
		for _, w := range n.warnings {
			fmt.Fprintf(q.e.Stderr, "ibqueryerrors: warning: %s\n", w)
		}
		sum.PMAQueryFailures += n.fails
		sum.NodesChecked++
		sum.PortsChecked += n.checked
		jn := QENode{Type: liNodeType(n.n.Type), GUID: n.n.GUID.String(), Name: n.name, LID: n.lid, CapMask: n.capMask, CapMask2: n.capMask2, Ports: []QEPort{}, Failures: n.warnings}
		header := false
		if q.f.counters {
			for _, pr := range n.ports {
				if pr == nil || !pr.ok {
					continue
				}
				if !header {
					fmt.Fprintf(&b, "Data Counters for 0x%x \"%s\"\n", uint64(n.n.GUID), n.name)
					header = true
				}
				fmt.Fprintf(&b, "   GUID 0x%x port %d:%s\n", uint64(n.n.GUID), pr.num, pr.text)
				if q.f.reportPort {
					q.portConfig(&b, n.n, pr.num)
				}
				jn.Ports = append(jn.Ports, pr.json)
			}
		} else {
			errHeader := func() {
				if header {
					return
				}
				if n.n.Type == iba.NodeTypeSwitch {
					fmt.Fprintf(&b, "Errors for 0x%x \"%s\"\n", uint64(q.portGUID(n, 0)), n.name)
				} else {
					fmt.Fprintf(&b, "Errors for \"%s\"\n", n.name)
				}
				header = true
				sum.BadNodes++
				jn.Bad = true
			}
			if pr := n.all; pr != nil && pr.ok {
				j := pr.json
				jn.AllPorts = &j
				if pr.hasError {
					errHeader()
					if n.n.Type == iba.NodeTypeSwitch {
						fmt.Fprintf(&b, "   GUID 0x%x port ALL:%s\n", uint64(q.portGUID(n, 0)), pr.text)
					}
				}
			}
			total := &perfSum{}
			summed := 0
			for _, pr := range n.ports {
				if pr == nil || !pr.ok {
					continue
				}
				jn.Ports = append(jn.Ports, pr.json)
				total.addBasic(&pr.pc)
				summed++
				if !pr.hasError {
					continue
				}
				errHeader()
				fmt.Fprintf(&b, "   GUID 0x%x port %d:%s\n", uint64(q.portGUID(n, pr.num)), pr.num, pr.text)
				if q.f.reportPort {
					q.portConfig(&b, n.n, pr.num)
				}
				sum.BadPorts++
			}
			if !n.allPort && summed > 1 {
				t := QEPort{Port: allPorts, GUID: n.n.GUID.String(), LID: n.lid, Counters: map[string]uint64{}}
				for _, c := range qeErrCounters {
					t.Counters[c.name] = c.basic(&total.basic)
				}
				jn.Total = &t
			}
		}
		doc.Nodes = append(doc.Nodes, jn)
	}
	fmt.Fprintf(&b, "\n## Summary: %d nodes checked, %d bad nodes found\n", sum.NodesChecked, sum.BadNodes)
	fmt.Fprintf(&b, "##          %d ports checked, %d ports have errors beyond threshold\n", sum.PortsChecked, sum.BadPorts)
	if q.thr.text != nil {
		fmt.Fprintf(&b, "## %s\n", *q.thr.text)
	} else {
		b.WriteString("## (null)\n")
	}
	if sum.PMAQueryFailures != 0 {
		fmt.Fprintf(&b, "##          %d PMA query failures\n", sum.PMAQueryFailures)
	}
	b.WriteString("## Suppressed:")
	for _, s := range q.f.suppressed {
		b.WriteString(" " + s)
	}
	b.WriteString("\n")
	doc.Summary = sum
	if r.report != nil {
		for _, f := range r.report.Unreachable() {
			fj := FailureJSON{Path: f.Path.String(), Attribute: smpAttrName(f.Attr), Error: f.Err.Error()}
			if f.Via != nil {
				fj.Via = &PeerJSON{GUID: f.Via.Node.GUID.String(), Port: f.Via.Num, Description: f.Via.Node.Description()}
			}
			doc.Unreachable = append(doc.Unreachable, fj)
		}
	}
	var err error
	if q.e.JSON {
		err = q.e.writeJSON("ibqueryerrors", doc)
	} else {
		_, err = io.WriteString(q.e.Stdout, b.String())
	}
	if err != nil {
		return err
	}
	if sum.BadPorts != 0 {
		return &exitError{fmt.Errorf("%d ports have errors beyond threshold", sum.BadPorts), 1}
	}
	return nil
}

// portConfig is print_port_config (-r): iblinkinfo's port line after
// "Link info:", the peer always with its GUID.
func (q *qeRun) portConfig(w io.Writer, n *subnet.Node, num int) {
	p := n.Port(num)
	if p == nil {
		return
	}
	link, _, _ := liLinkState(p)
	var remote string
	if r := p.Remote; r != nil {
		cw, cs := liCouldBe(p)
		remote = fmt.Sprintf("0x%016x %6d %4d[%2s] \"%s\" (%s %s)\n", uint64(r.GUID), liPeerLID(r), r.Num, liExtPort(r), nodeName(q.names, r.Node), cw, cs)
	} else {
		remote = "           [  ] \"\" ( )\n"
	}
	lid := p.BaseLID
	if n.Type == iba.NodeTypeSwitch {
		lid = n.SMALID
	}
	fmt.Fprintf(w, "       Link info: %6d", lid)
	fmt.Fprintf(w, "%4d[%2s] ==%s==>  %s", p.Num, liExtPort(p), link, remote)
}
