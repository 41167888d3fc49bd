package diags

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/perf"
)

func init() {
	register(command{name: "perfquery", make: newPerfQuery})
}

// maxPortList is perfquery's MAX_PORTS: the most ports a list or range
// names.
const maxPortList = 255

// perfAttr is one of perfquery's per-attribute options: the attribute and
// the name perfquery prints ("# PortXmitDataSL counters: ...").
type perfAttr struct {
	flag, short, usage string
	name               string
	attr               func() iba.Attribute
}

// perfAttrs are the per-attribute options in the order perfquery.c tests
// them: the first one given wins.
var perfAttrs = []perfAttr{
	{"xmtsl", "X", "show Xmt SL port counters", "PortXmitDataSL", func() iba.Attribute { return &iba.PortXmitDataSL{} }},
	{"rcvsl", "S", "show Rcv SL port counters", "PortRcvDataSL", func() iba.Attribute { return &iba.PortRcvDataSL{} }},
	{"xmtdisc", "D", "show Xmt Discard Details", "PortXmitDiscardDetails", func() iba.Attribute { return &iba.PortXmitDiscardDetails{} }},
	{"rcverr", "E", "show Rcv Error Details", "PortRcvErrorDetails", func() iba.Attribute { return &iba.PortRcvErrorDetails{} }},
	{"extended_speeds", "T", "show port extended speeds counters", "", nil},
	{"oprcvcounters", "", "show Rcv Counters per Op code", "PortOpRcvCounters", func() iba.Attribute { return &iba.PortOpRcvCounters{} }},
	{"flowctlcounters", "", "show flow control counters", "PortFlowCtlCounters", func() iba.Attribute { return &iba.PortFlowCtlCounters{} }},
	{"vloppackets", "", "show packets received per Op code per VL", "PortVLOpPackets", func() iba.Attribute { return &iba.PortVLOpPackets{} }},
	{"vlopdata", "", "show data received per Op code per VL", "PortVLOpData", func() iba.Attribute { return &iba.PortVLOpData{} }},
	{"vlxmitflowctlerrors", "", "show flow control update errors per VL", "PortVLXmitFlowCtlUpdateErrors", func() iba.Attribute { return &iba.PortVLXmitFlowCtlUpdateErrors{} }},
	{"vlxmitcounters", "", "show ticks waiting to transmit counters per VL", "PortVLXmitWaitCounters", func() iba.Attribute { return &iba.PortVLXmitWaitCounters{} }},
	{"swportvlcong", "", "show sw port VL congestion", "SwPortVLCongestion", func() iba.Attribute { return &iba.SwPortVLCongestion{} }},
	{"rcvcc", "", "show Rcv congestion control counters", "PortRcvConCtrl", func() iba.Attribute { return &iba.PortRcvConCtrl{} }},
	{"slrcvfecn", "", "show SL Rcv FECN counters", "PortSLRcvFECN", func() iba.Attribute { return &iba.PortSLRcvFECN{} }},
	{"slrcvbecn", "", "show SL Rcv BECN counters", "PortSLRcvBECN", func() iba.Attribute { return &iba.PortSLRcvBECN{} }},
	{"xmitcc", "", "show Xmit congestion control counters", "PortXmitConCtrl", func() iba.Attribute { return &iba.PortXmitConCtrl{} }},
	{"vlxmittimecc", "", "show VL Xmit Time congestion control counters", "PortVLXmitTimeCong", func() iba.Attribute { return &iba.PortVLXmitTimeCong{} }},
	{"smplctl", "c", "show samples control", "", nil},
}

type perfQueryFlags struct {
	addr      addrFlags
	extended  bool
	selected  []bool // by perfAttrs index
	allPorts  bool
	loopPorts bool
	reset     bool
	resetOnly bool
}

// PerfQueryResult is what perfquery read and reset.
type PerfQueryResult struct {
	// Target is the destination as perfquery prints it ("Lid 4").
	Target string `json:"target"`
	LID    uint16 `json:"lid"`
	// CapMask and CapMask2 are the PMA's ClassPortInfo capability masks
	// (CapabilityMask2 as its 27 bits).
	CapMask  uint16 `json:"capMask"`
	CapMask2 uint32 `json:"capMask2"`
	// Counters are the attributes read, one per port queried.
	Counters []PerfCounters `json:"counters"`
	// Aggregate is the sum that -a prints, computed here when the PMA has
	// no AllPortSelect or a port list was given: narrow counters saturate
	// at their width, as they do in the PMA.
	Aggregate *PerfCounters `json:"aggregate,omitempty"`
	// Resets are the PerformanceSets sent (-r, -R).
	Resets []perf.Reset `json:"resets,omitempty"`
}

// PerfCounters is one attribute of one port, decoded by IBA names.
type PerfCounters struct {
	Port      int             `json:"port"`
	Attribute string          `json:"attribute"`
	Data      json.RawMessage `json:"data"`
}

func newPerfQuery(e *Env) *cobra.Command { return newPerfQueryWith(e, e.open) }

// newPerfQueryWith is perfquery on the sessions open gives (tests give an
// in-memory fabric).
func newPerfQueryWith(e *Env, open func() (*session, error)) *cobra.Command {
	f := &perfQueryFlags{selected: make([]bool, len(perfAttrs))}
	c := &cobra.Command{
		Use:   "perfquery [flags] [<lid|guid> [[port(s)] [reset_mask]]]",
		Short: "read or reset a port's performance counters (infiniband-diags perfquery)",
		Long: `perfquery reads the PerfMgt counters of a port (the local one without a
destination) and prints them as infiniband-diags' perfquery does; -r and -R
reset them (the only writes it makes). Ports may be a number, a list (1,4,8)
or a range (1-10).

Examples:
  perfquery                   # read local port's performance counters
  perfquery 32 1              # read performance counters from lid 32, port 1
  perfquery -x 32 1           # read extended performance counters from lid 32, port 1
  perfquery -a 32             # read performance counters from lid 32, all ports
  perfquery -r 32 1           # read performance counters and reset
  perfquery -R 32 2 0x0fff    # reset only error counters of port 2
  perfquery -a 32 1-10        # ports 1-10 of lid 32, aggregate output
  perfquery -l 32 1,4,8       # ports 1, 4 and 8 of lid 32, output each port`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return perfQueryWith(e, f, args, open)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&f.extended, "extended", "x", false, "show extended port counters")
	for i, a := range perfAttrs {
		fl.BoolVarP(&f.selected[i], a.flag, a.short, false, a.usage)
	}
	// python-rdma's names of four of them.
	for _, py := range []struct{ diags, name, short string }{
		{"flowctlcounters", "flow", "F"}, {"vlxmitflowctlerrors", "vl-xmit-errs", ""},
		{"vlxmitcounters", "vl-xmit-wait", ""}, {"swportvlcong", "vl-congestion", ""},
	} {
		for i, a := range perfAttrs {
			if a.flag == py.diags {
				fl.BoolVarP(&f.selected[i], py.name, py.short, false, a.usage+" (python-rdma; --"+a.flag+")")
			}
		}
	}
	fl.BoolVarP(&f.allPorts, "all_ports", "a", false, "show aggregated counters")
	fl.BoolVarP(&f.loopPorts, "loop_ports", "l", false, "iterate through each port")
	fl.BoolVarP(&f.reset, "reset_after_read", "r", false, "reset counters after read")
	fl.BoolVarP(&f.resetOnly, "Reset_only", "R", false, "only reset counters")
	fl.BoolVar(&f.addr.direct, "Direct", false, "use Direct address argument: a directed route, to the LID of the port it reaches (python-rdma)")
	fl.BoolVarP(&f.addr.lid, "Lid", "L", false, "use LID address argument")
	fl.BoolVarP(&f.addr.guid, "Guid", "G", false, "use GUID address argument")
	return c
}

// perfRun is one perfquery run.
type perfRun struct {
	e      *Env
	s      *session
	f      *perfQueryFlags
	target mad.Target // GMPs
	smp    ibpath.Path
	res    *PerfQueryResult
	out    bytes.Buffer // the text, flushed also when a later step fails
}

// parsePorts reads perfquery's port argument: a number, a list or a range.
func parsePorts(arg string) (port int, list []int, err error) {
	switch {
	case strings.Contains(arg, ","):
		for _, t := range strings.Split(arg, ",") {
			if t == "" {
				continue
			}
			list = append(list, int(int32(cStrtoul(t))))
		}
	case strings.Contains(arg, "-"):
		lo, hi, _ := strings.Cut(arg, "-")
		pmin, pmax := int(int32(cStrtoul(lo))), int(int32(cStrtoul(hi)))
		if pmin >= pmax {
			return 0, nil, iberror(nil, "max port must be greater than min port in range")
		}
		if pmax-pmin+1 > maxPortList {
			return 0, nil, iberror(nil, "port range %s names more than %d ports", arg, maxPortList)
		}
		for p := pmin; p <= pmax; p++ {
			list = append(list, p)
		}
	default:
		return int(int32(cStrtoul(arg))), nil, nil
	}
	if len(list) > maxPortList {
		return 0, nil, iberror(nil, "port list %s names more than %d ports", arg, maxPortList)
	}
	if len(list) == 0 {
		return 0, nil, nil
	}
	return list[0], list, nil
}

// perfQueryWith runs perfquery on the session open gives.
func perfQueryWith(e *Env, f *perfQueryFlags, args []string, open func() (*session, error)) error {
	if len(args) > 3 {
		return usagef("want [<lid|guid> [[port(s)] [reset_mask]]]")
	}
	port := 0
	if f.allPorts {
		port = perf.AllPorts
	}
	var ports []int
	var err error
	if len(args) > 1 {
		if port, ports, err = parsePorts(args[1]); err != nil {
			return err
		}
	}
	mask := uint32(0xffff)
	extMask := uint64(math.MaxUint64)
	if len(args) > 2 {
		extMask = cStrtoul(args[2])
		mask = uint32(extMask)
	}
	s, err := open()
	if err != nil {
		return err
	}
	defer s.Close()
	r := &perfRun{e: e, s: s, f: f, res: &PerfQueryResult{}}
	if len(args) > 0 {
		t, err := resolveGMPDest(s, args[0], &f.addr)
		if err != nil {
			return err
		}
		r.target = t
	} else {
		if s.local.LID == 0 {
			return iberror(nil, "can't resolve self port %s: the local port has no LID", s.local.Name)
		}
		t, err := s.gmpTarget(fmt.Sprint(s.local.LID), &addrFlags{})
		if err != nil {
			return iberror(err, "can't resolve self port")
		}
		r.target = t
		port = int(s.local.PortNum)
	}
	lid := r.target.Route().Addr.LID
	r.smp = ibpath.NewLID(lid)
	r.res.LID = lid
	r.res.Target = fmt.Sprintf("Lid %d", lid)
	if len(args) == 1 && !f.allPorts {
		// No port named: a CA's own port, as python-rdma reads it (its
		// LocalPortNum), where the C tool asks for port 0, which a CA's
		// PMA need not have; a switch's port 0 as the C tool.
		var ni iba.NodeInfo
		if err := s.SubnGet(e.Ctx, r.smp, &ni, 0); err == nil && ni.NodeType != iba.NodeTypeSwitch {
			port = int(ni.LocalPortNum)
		}
	}
	err = r.run(port, ports, mask, extMask, len(args))
	if e.JSON {
		if err != nil {
			return err
		}
		return e.writeJSON("perfquery", r.res)
	}
	if _, werr := e.Stdout.Write(r.out.Bytes()); werr != nil && err == nil {
		err = werr
	}
	return err
}

// run is perfquery.c's main after the target is resolved.
func (r *perfRun) run(port int, ports []int, mask uint32, extMask uint64, nargs int) error {
	f := r.f
	var cpi iba.ClassPortInfo
	if err := r.s.mc.PerformanceGet(r.e.Ctx, r.target, &cpi, 0); err != nil {
		return iberror(err, "classportinfo query")
	}
	capMask, capMask2 := cpi.CapabilityMask, cpi.CapabilityMask2
	r.res.CapMask, r.res.CapMask2 = capMask, capMask2

	allPortsLoop := false
	if capMask&iba.PMCapAllPortSelect == 0 {
		if !f.allPorts && port == perf.AllPorts {
			return iberror(nil, "AllPortSelect not supported")
		}
		if f.allPorts && port == perf.AllPorts {
			allPortsLoop = true
		}
	}

	for i, a := range perfAttrs {
		if !f.selected[i] {
			continue
		}
		switch a.flag {
		case "extended_speeds":
			return r.extendedSpeeds(port, extMask, capMask)
		case "smplctl":
			return r.samplesControl(port)
		}
		return r.common(port, port, mask, !f.resetOnly, f.resetOnly || f.reset, a.name, a.attr)
	}

	loop := allPortsLoop || (f.loopPorts && (f.allPorts || port == perf.AllPorts))
	start, numPorts := 1, 0
	if loop {
		var ni iba.NodeInfo
		if err := r.s.SubnGet(r.e.Ctx, r.smp, &ni, 0); err != nil {
			return iberror(err, "smp query nodeinfo failed")
		}
		numPorts = int(ni.NumPorts)
		if numPorts == 0 {
			return iberror(nil, "smp query nodeinfo: num ports invalid")
		}
		if ni.NodeType == iba.NodeTypeSwitch {
			var si iba.SwitchInfo
			if err := r.s.SubnGet(r.e.Ctx, r.smp, &si, 0); err != nil {
				return iberror(err, "smp query nodeinfo failed")
			}
			if si.EnhancedPort0 != 0 {
				start = 0
			}
		}
		if allPortsLoop && !f.loopPorts {
			fmt.Fprintf(r.e.Stderr, "perfquery: Emulating AllPortSelect by iterating through all ports\n")
		}
	}
	var each []int
	switch {
	case loop:
		for i := start; i <= numPorts; i++ {
			each = append(each, i)
		}
	case len(ports) > 1:
		each = ports
	default:
		each = []int{port}
	}

	if !f.resetOnly {
		aggregate := false
		switch {
		case loop:
			aggregate = allPortsLoop && !f.loopPorts
		case len(ports) > 1:
			aggregate = f.allPorts && !f.loopPorts
		}
		sum := &perfSum{}
		for _, p := range each {
			if err := r.dump(p, capMask, capMask2, aggregate, sum); err != nil {
				return err
			}
		}
		if aggregate {
			if err := r.outputAggregate(sum, capMask, capMask2); err != nil {
				return err
			}
		}
		if !f.reset {
			return nil
		}
	}

	if nargs <= 2 && !f.extended {
		if capMask&iba.PMCapPortCountersXmitWait != 0 {
			mask |= 1 << 16
		}
		if capMask&iba.PMCapQP1Dropped != 0 {
			mask |= 1 << 17
		}
	}
	if f.extended {
		mask |= 0xfff0000
		if capMask&iba.PMCapPortCountersXmitWait != 0 {
			mask |= 1 << 28
		}
		if capMask&iba.PMCapQP1Dropped != 0 {
			mask |= 1 << 29
		}
	}
	for _, p := range each {
		if f.extended {
			if err := r.reset(p, mask, &iba.PortCountersExtended{}); err != nil {
				return iberror(err, "perf ext reset")
			}
		} else if err := r.reset(p, mask, &iba.PortCounters{}); err != nil {
			return iberror(err, "perf reset")
		}
	}
	return nil
}

// query reads a PerfMgt attribute of one port and returns it encoded,
// for the printers.
func (r *perfRun) query(port int, attr iba.Attribute) ([]byte, error) {
	// PortSelect is a byte: perfquery's port goes in as the C tool's does.
	if err := perf.Get(r.e.Ctx, r.s.mc, r.target, port&0xff, attr); err != nil {
		return nil, errors.Unwrap(err)
	}
	b := make([]byte, attr.Desc().Size)
	if err := attr.MarshalTo(b); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", attr.Desc().Name, err)
	}
	return b, nil
}

// record adds an attribute read to the JSON result.
func (r *perfRun) record(port int, d *iba.Struct, b []byte) (*PerfCounters, error) {
	var j bytes.Buffer
	if err := ibaprint.JSON(&j, d, b); err != nil {
		return nil, err
	}
	return &PerfCounters{Port: port, Attribute: d.Name, Data: bytes.TrimSpace(j.Bytes())}, nil
}

// reset is libibmad's performance_reset_via (perf.ResetCounters).
func (r *perfRun) reset(port int, mask uint32, attr iba.Attribute) error {
	rs, err := perf.ResetCounters(r.e.Ctx, r.s.mc, r.target, port, attr, mask)
	if err != nil {
		return errors.Unwrap(err)
	}
	r.res.Resets = append(r.res.Resets, rs)
	return nil
}

// common is perfquery.c's common_func: query and print one attribute,
// then reset it (on resetPort, which perfquery takes from its port
// argument).
func (r *perfRun) common(port, resetPort int, mask uint32, query, reset bool, name string, newAttr func() iba.Attribute) error {
	if query {
		attr := newAttr()
		b, err := r.query(port, attr)
		if err != nil {
			return iberror(err, "cannot query %s", name)
		}
		rec, err := r.record(port, attr.Desc(), b)
		if err != nil {
			return err
		}
		r.res.Counters = append(r.res.Counters, *rec)
		fmt.Fprintf(&r.out, "# %s counters: %s port %d\n", name, r.res.Target, port)
		if err := ibaprint.PerfQuery(&r.out, name, b); err != nil {
			return err
		}
	}
	if reset {
		if err := r.reset(resetPort, mask, newAttr()); err != nil {
			return iberror(err, "cannot reset %s", name)
		}
	}
	return nil
}

// extendedSpeeds is -T: PortExtendedSpeedsCounters in the layout the port's
// FEC mode gives it, then the reset that -r and -R ask for.
func (r *perfRun) extendedSpeeds(port int, extMask uint64, capMask uint16) error {
	if !r.f.resetOnly {
		rsfec, err := r.rsfecActive(port, capMask)
		if err != nil {
			return err
		}
		name := "PortExtendedSpeedsCounters"
		if rsfec {
			name = "PortExtendedSpeedsCounters with RS-FEC Active"
		}
		attr := &iba.PortExtendedSpeedsCounters{}
		b, err := r.query(port, attr)
		if err != nil {
			return iberror(err, "cannot query %s", name)
		}
		d := attr.Desc()
		if rsfec {
			d = (&iba.PortExtendedSpeedsCountersRSFEC{}).Desc()
		}
		rec, err := r.record(port, d, b)
		if err != nil {
			return err
		}
		r.res.Counters = append(r.res.Counters, *rec)
		fmt.Fprintf(&r.out, "# %s counters: %s port %d\n", name, r.res.Target, port)
		if err := ibaprint.PortExtendedSpeedsCounters(&r.out, b, rsfec); err != nil {
			return err
		}
	}
	if r.f.resetOnly || r.f.reset {
		if extMask == 0 {
			extMask = math.MaxUint64
		}
		attr := &iba.PortExtendedSpeedsCounters{}
		b := make([]byte, attr.Desc().Size)
		b[1] = byte(port)
		binary.BigEndian.PutUint64(b[8:], extMask)
		rs, err := perf.Set(r.e.Ctx, r.s.mc, r.target, port, extMask, attr, b)
		if err != nil {
			return iberror(errors.Unwrap(err), "cannot reset PortExtendedSpeedsCounters")
		}
		r.res.Resets = append(r.res.Resets, rs)
	}
	return nil
}

// rsfecActive is perfquery's is_rsfec_mode_active: the PMA has RS-FEC
// counters and PortInfoExtended says the port runs RS-FEC.
func (r *perfRun) rsfecActive(port int, capMask uint16) (bool, error) {
	if capMask&iba.PMCapRSFECCounters == 0 {
		return false, nil
	}
	get := func(a iba.Attribute, mod uint32) error { return r.s.SubnGet(r.e.Ctx, r.smp, a, mod) }
	ok, err := portInfoExtendedSupported(r.e.Stderr, "perfquery", port, get)
	if err != nil {
		return false, err
	}
	if !ok {
		fmt.Fprintf(r.e.Stderr, "perfquery: Port Info Extended not supported\n")
		return false, nil
	}
	var pie iba.PortInfoExtended
	if err := get(&pie, uint32(port)); err != nil {
		return false, iberror(err, "smp query portinfo extended failed")
	}
	const fecModeSupported, rsFEC, rsFEC2 = 1, 2, 4
	return pie.CapabilityMask&fecModeSupported != 0 && (pie.FECModeActive == rsFEC || pie.FECModeActive == rsFEC2), nil
}

// samplesControl is -c.
func (r *perfRun) samplesControl(port int) error {
	attr := &iba.PortSamplesControl{}
	b, err := r.query(port, attr)
	if err != nil {
		return iberror(err, "sampctlquery")
	}
	rec, err := r.record(port, attr.Desc(), b)
	if err != nil {
		return err
	}
	r.res.Counters = append(r.res.Counters, *rec)
	fmt.Fprintf(&r.out, "# PortSamplesControl: %s port %d\n", r.res.Target, port)
	return ibaprint.PortSamplesControl(&r.out, b)
}

// dump is perfquery.c's dump_perfcounters: PortCounters, or
// PortCountersExtended with -x, of one port, printed or added to sum.
func (r *perfRun) dump(port int, capMask uint16, capMask2 uint32, aggregate bool, sum *perfSum) error {
	if !r.f.extended {
		var pc iba.PortCounters
		b, err := r.query(port, &pc)
		if err != nil {
			return iberror(err, "perfquery")
		}
		if capMask&iba.PMCapPortCountersXmitWait == 0 {
			// PortXmitWait is not counted: perfquery shows 0.
			pc.PortXmitWait = 0
			binary.BigEndian.PutUint32(b[40:], 0)
		}
		rec, err := r.record(port, pc.Desc(), b)
		if err != nil {
			return err
		}
		r.res.Counters = append(r.res.Counters, *rec)
		if aggregate {
			perf.AddPortCounters(&sum.basic, &pc)
			return nil
		}
		fmt.Fprintf(&r.out, "# Port counters: %s port %d (CapMask: 0x%02X)\n", r.res.Target, port, capMask)
		return ibaprint.PortCounters(&r.out, b, capMask)
	}
	if capMask&(iba.PMCapExtendedWidth|iba.PMCapExtendedWidthNoIETF) == 0 {
		fmt.Fprintf(r.e.Stderr, "perfquery: PerfMgt ClassPortInfo CapMask 0x%02X; No extended counter support indicated\n", capMask)
	}
	var pc iba.PortCountersExtended
	b, err := r.query(port, &pc)
	if err != nil {
		return iberror(err, "perfextquery")
	}
	rec, err := r.record(port, pc.Desc(), b)
	if err != nil {
		return err
	}
	r.res.Counters = append(r.res.Counters, *rec)
	if aggregate {
		perf.AddPortCountersExtended(&sum.ext, &pc, perf.Capabilities{CapMask: capMask, CapMask2: capMask2})
		return nil
	}
	fmt.Fprintf(&r.out, "# Port extended counters: %s port %d (CapMask: 0x%02X CapMask2: 0x%07X)\n", r.res.Target, port, capMask, capMask2)
	return ibaprint.PortCountersExtended(&r.out, b, capMask, capMask2)
}

// outputAggregate prints the sum as port 255, as the PMA would have
// answered PortSelect 0xFF.
func (r *perfRun) outputAggregate(sum *perfSum, capMask uint16, capMask2 uint32) error {
	var attr iba.Attribute = &sum.basic
	if r.f.extended {
		attr = &sum.ext
	}
	d := attr.Desc()
	b := make([]byte, d.Size)
	if err := attr.MarshalTo(b); err != nil {
		return err
	}
	rec, err := r.record(perf.AllPorts, d, b)
	if err != nil {
		return err
	}
	r.res.Aggregate = rec
	if r.f.extended {
		fmt.Fprintf(&r.out, "# Port extended counters: %s port %d (CapMask: 0x%02X CapMask2: 0x%07X)\n", r.res.Target, perf.AllPorts, capMask, capMask2)
		return ibaprint.PortCountersExtended(&r.out, b, capMask, capMask2)
	}
	fmt.Fprintf(&r.out, "# Port counters: %s port %d (CapMask: 0x%02X)\n", r.res.Target, perf.AllPorts, capMask)
	return ibaprint.PortCounters(&r.out, b, capMask)
}

// perfSum adds counters of several ports as perfquery's AllPortSelect
// emulation does (perf.AddPortCounters, perf.AddPortCountersExtended).
type perfSum struct {
	basic iba.PortCounters
	ext   iba.PortCountersExtended
}
