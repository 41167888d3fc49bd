package diags

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/namemap"
	"github.com/rdmakit/rdmakit/perf"
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
	perf.Reset
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
			return runIBQueryErrors(e, f, cmd)
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

// qeRun is one ibqueryerrors run: the sweep's options made from the flags,
// and the rendering of its result as the C tool prints it.
type qeRun struct {
	e     *Env
	f     *queryErrorsFlags
	names *namemap.Map
	thr   *perf.Thresholds
	// thrText is the summary's "Thresholds: ..." line, nil without a file.
	thrText *string
	sup     map[perf.Counter]bool
}

// qeChecked are the counters ibqueryerrors checks: the error counters but
// QP1Dropped.
var qeChecked = perf.ErrorCounters[:len(perf.ErrorCounters)-1]

func runIBQueryErrors(e *Env, f *queryErrorsFlags, cmd *cobra.Command) error {
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
	q := &qeRun{e: e, f: f, names: names, sup: map[perf.Counter]bool{}}
	if err := q.loadThresholds(cmd.Flags().Changed("threshold-file")); err != nil {
		return err
	}
	for _, n := range f.suppressed {
		if k, ok := perf.ParseCounter(n); ok {
			q.sup[k] = true
		}
	}
	partial := f.df.loadCache == "" && (f.df.guid != "" || f.df.direct != "")
	if partial {
		f.df.hops = 1
	}
	if !(f.switches || f.cas || f.routers) {
		f.switches, f.cas, f.routers = true, true, true
	}
	m, err := e.discoveryMethod(&f.df)
	if err != nil {
		return err
	}
	if f.df.outstanding < 0 || f.df.perNode < 0 {
		return usagef("-o, --per_node_smps and --hops must not be negative")
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

	o := perf.SweepOptions{
		Want:          func(n *subnet.Node) bool { return q.wanted(n.Type) },
		AllPortsFirst: true,
		Exceeds:       q.exceeds,
		Data:          f.data,
		DataOnly:      f.counters,
		Details:       f.details,
		Clear:         perf.ClearSelect{Errors: f.clearErrors, Data: f.clearCounts, Details: f.details},
		// The C tool asks for no SLs when it starts from a port GUID.
		PathSLs:     !f.skipSL && f.df.guid == "",
		MaxInFlight: f.pmaInFlight,
		PerNode:     f.perNodePMA,
	}
	var notFound string
	o.Select = func(s *subnet.Subnet) []*subnet.Node {
		var nodes []*subnet.Node
		switch {
		case f.df.guid != "":
			if p := s.PortByGUID(iba.GUID(cStrtoul(f.df.guid))); p != nil {
				nodes = []*subnet.Node{p.Node}
			} else {
				notFound = f.df.guid
			}
		case f.df.direct != "":
			if n, _ := s.From(); n != nil {
				nodes = []*subnet.Node{n}
			} else {
				notFound = f.df.direct
			}
		default:
			return s.IBNDOrder(func(n *subnet.Node) bool { return q.wanted(n.Type) })
		}
		kept := nodes[:0]
		for _, n := range nodes {
			if q.wanted(n.Type) {
				kept = append(kept, n)
			}
		}
		return kept
	}
	src := "discovery"
	var cacheFn string // --cache to write after the discovery
	if f.df.cache != "" && f.df.loadCache == "" && !partial {
		cacheFn = cacheFileName(f.df.cache, sess.local)
		r, err := e.readDiscoveryCache(&f.df, cacheFn)
		if err != nil {
			return &exitError{err, 255}
		}
		if r != nil {
			o.Subnet, src, cacheFn = r.s, cacheFn, ""
		}
	}
	switch {
	case o.Subnet != nil:
	case f.df.loadCache != "":
		if o.Subnet, err = loadSubnetFile(f.df.loadCache); err != nil {
			return &exitError{err, 255}
		}
		src = f.df.loadCache
	default:
		f.df.progressBar = true
		opt, done, err := e.discoverOptions(sess, &f.df, m, nil)
		if err != nil {
			done()
			var ue *UsageError
			if errors.As(err, &ue) {
				return err
			}
			return &exitError{err, 255}
		}
		o.Discover = opt
		// The discovery's bar goes as the counters' bar comes.
		o.Discover.Settled = nil
		defer done()
	}
	if bar := e.progressBar(true); bar != nil {
		o.Progress = func(p perf.SweepProgress) {
			bar.update(subnet.DiscoverProgress{Done: p.Done, Queued: p.Queued, Nodes: p.Nodes})
		}
		defer bar.done()
	}
	res, err := perf.Sweep(e.Ctx, sess.f, o)
	if err != nil {
		return &exitError{fmt.Errorf("discover failed: %w", err), 255}
	}
	if cacheFn != "" {
		if err := writeDiscoveryCache(cacheFn, res.Subnet); err != nil {
			return err
		}
	}
	r := &discoverResult{s: res.Subnet, report: res.Report, source: src}
	e.warnFailures("ibqueryerrors", r)
	if res.SLError != nil {
		fmt.Fprintf(e.Stderr, "ibqueryerrors: warning: the SA's path records (for the SL of each query): %v; using SL 0\n", res.SLError)
	}
	if notFound != "" {
		fmt.Fprintf(e.Stderr, "Failed to find node: %s\n", notFound)
	}
	return q.render(res, r)
}

// loadThresholds reads --threshold-file. The default file may be absent
// (the summary then says "(null)", as the C tool's does); one named on
// purpose must be there.
func (q *qeRun) loadThresholds(named bool) error {
	if !named {
		if _, err := os.Stat(q.f.thresholdFile); err != nil {
			return nil
		}
	}
	t, err := perf.LoadThresholds(q.f.thresholdFile)
	if err != nil {
		return err
	}
	q.thr = t
	s := "Thresholds: "
	for _, k := range t.Counters() {
		if k.IsError() && k != perf.QP1Dropped {
			s += fmt.Sprintf("[%s = %d]", k, t.Limit(k))
		}
	}
	q.thrText = &s
	return nil
}

// exceeds says whether a checked counter is beyond its threshold and not
// suppressed.
func (q *qeRun) exceeds(k perf.Counter, v uint64) bool {
	return k != perf.QP1Dropped && !q.sup[k] && q.thr.Exceeds(k, v)
}

// wanted says whether --switch, --ca and --router select a node type.
func (q *qeRun) wanted(t iba.NodeType) bool {
	return t == iba.NodeTypeSwitch && q.f.switches || t == iba.NodeTypeCA && q.f.cas || t == iba.NodeTypeRouter && q.f.routers
}

// warning is the C tool's words for a read or reset that failed.
func (q *qeRun) warning(n *perf.NodeResult, name string, pe *perf.PortError) string {
	switch {
	case pe.Attribute == "ClassPortInfo":
		return fmt.Sprintf("classportinfo query failed on %s, Lid %d port %d: %v", name, pe.LID, pe.Port, pe.Err)
	case pe.Op == perf.OpReset && pe.Attribute == "PortCounters":
		return fmt.Sprintf("Failed to reset errors %s port %d: %v", name, pe.Port, pe.Err)
	case pe.Op == perf.OpReset:
		return fmt.Sprintf("Failed to reset extended data counters %s, Lid %d port %d: %v", name, pe.LID, pe.Port, pe.Err)
	case pe.Attribute == "PortCounters":
		return fmt.Sprintf("IB_GSI_PORT_COUNTERS query failed on %s, Lid %d port %d: %v", name, pe.LID, pe.Port, pe.Err)
	case pe.Attribute == "PortCountersExtended":
		return fmt.Sprintf("IB_GSI_PORT_COUNTERS_EXT query failed on %s, Lid %d port %d: %v", name, pe.LID, pe.Port, pe.Err)
	}
	return fmt.Sprintf("%s query failed on %s, Lid %d port %d: %v", pe.Attribute, name, pe.LID, pe.Port, pe.Err)
}

// portJSON is a port's --json record with its error counters.
func (q *qeRun) portJSON(n *perf.NodeResult, pr *perf.PortResult, guid iba.GUID) QEPort {
	j := QEPort{Port: pr.Port, GUID: guid.String(), LID: pr.LID, Counters: map[string]uint64{}}
	for _, k := range qeChecked {
		j.Counters[k.String()] = pr.Values[k]
	}
	j.Extended = pr.Is64(perf.SymbolErrorCounter)
	return j
}

// errorText is print_results: " [Name == N]" for each checked counter
// beyond its threshold, with the details after PortXmitDiscards and
// PortRcvErrors (--details), and the nonzero data counters (--data).
func (q *qeRun) errorText(n *perf.NodeResult, pr *perf.PortResult, j *QEPort) string {
	var b strings.Builder
	for _, k := range qeChecked {
		v := pr.Values[k]
		if !q.exceeds(k, v) {
			continue
		}
		if q.e.JSON {
			if j.Errors == nil {
				j.Errors = map[string]uint64{}
			}
			j.Errors[k.String()] = v
		}
		if pr.Is64(k) {
			b.WriteString(qeCounterText(k.String(), v, false))
		} else {
			fmt.Fprintf(&b, " [%s == %d]", k, v)
		}
		if !q.f.details {
			continue
		}
		// The C tool reads each details attribute but names its fields
		// after the other one (ibqueryerrors.c print_results); the text
		// keeps that, --json names them rightly.
		switch k {
		case perf.PortXmitDiscards:
			if pr.XmitDiscardDetails != nil {
				b.WriteString(q.details(pr.XmitDiscardDetails, qeRcvErrDetail, qeXmitDiscDetail, j))
			}
		case perf.PortRcvErrors:
			if pr.RcvErrorDetails != nil {
				b.WriteString(q.details(pr.RcvErrorDetails, qeXmitDiscDetail, qeRcvErrDetail, j))
			}
		}
	}
	if b.Len() != 0 && q.f.data {
		b.WriteString(q.dataText(n, pr, true, j))
	}
	return b.String()
}

// details is query_and_dump: the nonzero 16-bit fields from bit 32 of a
// details attribute, labelled with printNames.
func (q *qeRun) details(attr iba.Attribute, printNames, realNames []string, j *QEPort) string {
	b := make([]byte, attr.Desc().Size)
	if err := attr.MarshalTo(b); err != nil {
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
			if j.Details == nil {
				j.Details = map[string]uint64{}
			}
			j.Details[realNames[i]] = uint64(v)
		}
		if v != 0 {
			fmt.Fprintf(&s, " [%s == %d]", pn, v)
		}
	}
	return s.String()
}

// qeDataCounters are the data counters in the C tool's order.
var qeDataCounters = []perf.Counter{perf.PortXmitData, perf.PortRcvData, perf.PortXmitPkts, perf.PortRcvPkts,
	perf.PortUnicastXmitPkts, perf.PortUnicastRcvPkts, perf.PortMulticastXmitPkts, perf.PortMulticastRcvPkts}

// dataText prints the data counters of a port read: nonzero ones only
// after errors (--data), all with --counters.
func (q *qeRun) dataText(n *perf.NodeResult, pr *perf.PortResult, nonzero bool, j *QEPort) string {
	d := &QEData{Packets: map[string]uint64{}}
	var s strings.Builder
	last := 4
	if pr.PortCountersExtended != nil {
		d.Extended = true
		if n.Caps.ExtendedUnicast() {
			last = len(qeDataCounters)
		}
	}
	for _, k := range qeDataCounters[:last] {
		v := pr.Values[k]
		switch k {
		case perf.PortXmitData:
			d.XmitDataUnits, d.XmitDataOctets = v, v*4
		case perf.PortRcvData:
			d.RcvDataUnits, d.RcvDataOctets = v, v*4
		default:
			d.Packets[k.String()] = v
		}
		if v != 0 || !nonzero {
			s.WriteString(qeCounterText(k.String(), v, k.IsData()))
		}
	}
	j.Data = d
	return s.String()
}

// render prints what the sweep read in the C tool's order, then the
// summary; exit status 1 when a port has errors, exitIncomplete when a
// node or counter could not be read.
func (q *qeRun) render(res *perf.SweepResult, r *discoverResult) error {
	var b strings.Builder
	var sum QESummary
	var thr map[string]uint64
	if q.thr != nil {
		thr = map[string]uint64{}
		for _, k := range q.thr.Counters() {
			if k.IsError() && k != perf.QP1Dropped {
				thr[k.String()] = q.thr.Limit(k)
			}
		}
	}
	doc := &QueryErrorsResult{Nodes: make([]QENode, 0, len(res.Nodes)), Thresholds: thr, Suppressed: append([]string{}, q.f.suppressed...), Unreachable: unreachableJSON(r)}
	for _, n := range res.Nodes {
		name := nodeName(q.names, n.Node)
		var warnings []string
		for _, pe := range n.Errors {
			w := q.warning(n, name, pe)
			warnings = append(warnings, w)
			fmt.Fprintf(q.e.Stderr, "ibqueryerrors: warning: %s\n", w)
		}
		sum.PMAQueryFailures += len(n.Errors)
		sum.NodesChecked++
		sum.PortsChecked += n.PortsChecked
		jn := QENode{Type: liNodeType(n.Type), GUID: n.GUID.String(), Name: name, LID: n.LID, CapMask: n.Caps.CapMask, CapMask2: n.Caps.CapMask2, Ports: []QEPort{}, Failures: warnings}
		for _, rs := range n.Resets {
			doc.Resets = append(doc.Resets, QEReset{Node: n.GUID.String(), LID: n.LID, Reset: rs})
		}
		header := false
		if q.f.counters {
			for _, pr := range n.Ports {
				if pr == nil || !pr.OK {
					continue
				}
				if !header {
					fmt.Fprintf(&b, "Data Counters for 0x%x \"%s\"\n", uint64(n.GUID), name)
					header = true
				}
				j := QEPort{Port: pr.Port, GUID: n.GUID.String(), LID: pr.LID}
				fmt.Fprintf(&b, "   GUID 0x%x port %d:%s\n", uint64(n.GUID), pr.Port, q.dataText(n, pr, false, &j))
				if q.f.reportPort {
					q.portConfig(&b, n.Node, pr.Port)
				}
				jn.Ports = append(jn.Ports, j)
			}
			doc.Nodes = append(doc.Nodes, jn)
			continue
		}
		errHeader := func() {
			if header {
				return
			}
			if n.Type == iba.NodeTypeSwitch {
				fmt.Fprintf(&b, "Errors for 0x%x \"%s\"\n", uint64(n.PortGUID(0)), name)
			} else {
				fmt.Fprintf(&b, "Errors for \"%s\"\n", name)
			}
			header = true
			sum.BadNodes++
			jn.Bad = true
		}
		if pr := n.All; pr != nil && pr.OK {
			j := q.portJSON(n, pr, n.PortGUID(perf.AllPorts))
			text := q.errorText(n, pr, &j)
			jn.AllPorts = &j
			if text != "" {
				errHeader()
				if n.Type == iba.NodeTypeSwitch {
					fmt.Fprintf(&b, "   GUID 0x%x port ALL:%s\n", uint64(n.PortGUID(0)), text)
				}
			}
		}
		total := &iba.PortCounters{}
		summed := 0
		for _, pr := range n.Ports {
			if pr == nil || !pr.OK {
				continue
			}
			j := q.portJSON(n, pr, n.PortGUID(pr.Port))
			text := q.errorText(n, pr, &j)
			jn.Ports = append(jn.Ports, j)
			perf.AddPortCounters(total, pr.PortCounters)
			summed++
			if text == "" {
				continue
			}
			errHeader()
			fmt.Fprintf(&b, "   GUID 0x%x port %d:%s\n", uint64(n.PortGUID(pr.Port)), pr.Port, text)
			if q.f.reportPort {
				q.portConfig(&b, n.Node, pr.Port)
			}
			sum.BadPorts++
		}
		if !n.Caps.AllPortSelect() && summed > 1 {
			t := QEPort{Port: perf.AllPorts, GUID: n.GUID.String(), LID: n.LID, Counters: map[string]uint64{}}
			c := perf.FromPortCounters(total, n.Caps)
			for _, k := range qeChecked {
				t.Counters[k.String()] = c.Values[k]
			}
			jn.Total = &t
		}
		doc.Nodes = append(doc.Nodes, jn)
	}
	fmt.Fprintf(&b, "\n## Summary: %d nodes checked, %d bad nodes found\n", sum.NodesChecked, sum.BadNodes)
	fmt.Fprintf(&b, "##          %d ports checked, %d ports have errors beyond threshold\n", sum.PortsChecked, sum.BadPorts)
	if q.thrText != nil {
		fmt.Fprintf(&b, "## %s\n", *q.thrText)
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
	var err error
	if q.e.JSON {
		err = q.e.writeJSON("ibqueryerrors", doc)
	} else {
		_, err = io.WriteString(q.e.Stdout, b.String())
	}
	if err != nil {
		return err
	}
	var failed error
	if sum.BadPorts != 0 {
		failed = &exitError{fmt.Errorf("%d ports have errors beyond threshold", sum.BadPorts), 1}
	}
	// What was not read: nodes the discovery lost, counters that did not
	// answer (the C tool's "PMA query failures", which it only counts).
	lost := r.lost()
	if sum.PMAQueryFailures != 0 {
		pma := fmt.Errorf("%d PMA queries failed", sum.PMAQueryFailures)
		if lost == nil {
			lost = pma
		} else {
			lost = fmt.Errorf("%w; %w", lost, pma)
		}
	}
	return incomplete(failed, lost)
}

// portConfig is print_port_config (-r): iblinkinfo's port line after
// "Link info:", the peer always with its GUID.
func (q *qeRun) portConfig(w io.Writer, n *subnet.Node, num int) {
	p := n.Port(num)
	if p == nil {
		return
	}
	link, _, _ := linkState(p)
	var remote string
	if r := p.Remote; r != nil {
		cw, cs := linkCouldBe(p)
		remote = fmt.Sprintf("0x%016x %6d %4d[%2s] \"%s\" (%s %s)\n", uint64(r.GUID), linkPeerLID(r), r.Num, linkExtPort(r), nodeName(q.names, r.Node), cw, cs)
	} else {
		remote = "           [  ] \"\" ( )\n"
	}
	lid := p.BaseLID
	if n.Type == iba.NodeTypeSwitch {
		lid = n.SMALID
	}
	fmt.Fprintf(w, "       Link info: %6d", lid)
	fmt.Fprintf(w, "%4d[%2s] ==%s==>  %s", p.Num, linkExtPort(p), link, remote)
}
