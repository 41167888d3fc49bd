package diags

import (
	"bufio"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/perf"
)

// ibswportwatch: python-rdma's counter watch (libibtool/perfquery.py
// cmd_ibswportwatch). It reads a port's counters every -p seconds and
// prints each counter with its increase per second since the previous
// read (-b, the default), or with -t only the counters that increase
// faster than their threshold (ibcheckerrors' file). It runs until
// interrupted or for -n reads.

func init() {
	register(command{name: "ibswportwatch", aliases: []string{"ibswportwatch.pl"}, make: func(e *Env) *cobra.Command {
		return newIBSwPortWatchWith(e, e.open)
	}})
}

// watchAttrs are the counter sets python-rdma's Querier offers.
var watchAttrs = []struct {
	flag, short, usage string
	attr               func() iba.Attribute
}{
	{"extended", "x", "show extended port counters", func() iba.Attribute { return &iba.PortCountersExtended{} }},
	{"xmtsl", "X", "show transmit SL port counters", func() iba.Attribute { return &iba.PortXmitDataSL{} }},
	{"rcvsl", "S", "show receive SL port counters", func() iba.Attribute { return &iba.PortRcvDataSL{} }},
	{"xmtdisc", "D", "show transmit discard details", func() iba.Attribute { return &iba.PortXmitDiscardDetails{} }},
	{"rcverr", "E", "show receive error details", func() iba.Attribute { return &iba.PortRcvErrorDetails{} }},
	{"flow", "F", "show port flow control counters", func() iba.Attribute { return &iba.PortFlowCtlCounters{} }},
	{"vl-xmit-errs", "", "show port flow control transmit update errors", func() iba.Attribute { return &iba.PortVLXmitFlowCtlUpdateErrors{} }},
	{"vl-xmit-wait", "", "show port flow control transmit wait counts", func() iba.Attribute { return &iba.PortVLXmitWaitCounters{} }},
	{"vl-congestion", "", "show switch port per VL congestion", func() iba.Attribute { return &iba.SwPortVLCongestion{} }},
}

// WatchSample is one read: the time since the first, and each counter
// with its increase per second since the previous read.
type WatchSample struct {
	Seconds  float64        `json:"seconds"`
	Counters []WatchCounter `json:"counters"`
}

// WatchCounter is one counter of a sample.
type WatchCounter struct {
	Name  string   `json:"name"`
	Value uint64   `json:"value"`
	Rate  *float64 `json:"ratePerSecond,omitempty"`
}

// WatchResult is what ibswportwatch read.
type WatchResult struct {
	LID       uint16        `json:"lid"`
	Port      int           `json:"port"`
	Attribute string        `json:"attribute"`
	Samples   []WatchSample `json:"samples"`
}

type watchFlags struct {
	addr      addrFlags
	count     int
	period    float64
	delta     bool
	threshold bool
	threshFil string
	all       bool
	sel       []bool
}

func newIBSwPortWatchWith(e *Env, open func() (*session, error)) *cobra.Command {
	f := &watchFlags{sel: make([]bool, len(watchAttrs))}
	c := &cobra.Command{
		Use:   "ibswportwatch [flags] [TARGET [PORT]]",
		Short: "watch a port's counters and their rates (python-rdma ibswportwatch)",
		Long: `ibswportwatch reads a port's PerfMgt counters (the local port without a
TARGET) every -p seconds and prints each with its increase per second
since the previous read, until interrupted or for -n reads. With
--threshold (python-rdma's -t, which is ibtool's --timeout) it
prints only the counters that increase faster than their threshold, the
thresholds being ibcheckerrors' (-T FILE). Despite the name it works on
CA ports as well. PortXmitData and PortRcvData count 4-octet words.`,
		RunE: func(cmd *cobra.Command, args []string) error { return runWatch(e, f, args, open) },
	}
	fl := c.Flags()
	fl.IntVarP(&f.count, "count", "n", 0, "number of reads (default: until interrupted)")
	fl.Float64VarP(&f.period, "period", "p", 1, "seconds between reads")
	fl.BoolVarP(&f.delta, "delta", "b", false, "show every counter with its rate (the default)")
	// python-rdma's -t is ibtool's global --timeout: only the long form.
	fl.BoolVar(&f.threshold, "threshold", false, "show only counters rising faster than their threshold per second")
	fl.StringVarP(&f.threshFil, "thresholds", "T", "", "load threshold values from this file")
	fl.BoolVarP(&f.all, "all_ports", "a", false, "watch all ports at once (PortSelect 255)")
	for i, a := range watchAttrs {
		fl.BoolVarP(&f.sel[i], a.flag, a.short, false, a.usage)
	}
	fl.BoolVar(&f.addr.direct, "Direct", false, "use Direct address argument: a directed route, to the LID of the port it reaches (python-rdma)")
	fl.BoolVarP(&f.addr.lid, "Lid", "L", false, "use LID address argument")
	fl.BoolVarP(&f.addr.guid, "Guid", "G", false, "use GUID address argument")
	return c
}

func runWatch(e *Env, f *watchFlags, args []string, open func() (*session, error)) error {
	if len(args) > 2 {
		return usagef("want [TARGET [PORT]]")
	}
	if f.count < 0 || f.period <= 0 {
		return usagef("-n must not be negative and -p must be positive")
	}
	if f.delta && f.threshold {
		return usagef("-b and -t exclude each other")
	}
	var thresh map[string]uint64
	if f.threshold {
		t, err := loadThresholds(f.threshFil)
		if err != nil {
			return err
		}
		thresh = t
	}
	newAttr := func() iba.Attribute { return &iba.PortCounters{} }
	for i, a := range watchAttrs {
		if f.sel[i] {
			newAttr = a.attr
			break
		}
	}
	s, err := open()
	if err != nil {
		return err
	}
	defer s.Close()
	var target mad.Target
	port := int(s.local.PortNum)
	if len(args) > 0 {
		if target, err = s.gmpTarget(args[0], &f.addr); err != nil {
			return fmt.Errorf("resolving %s: %w", args[0], err)
		}
		port = 1
		var ni iba.NodeInfo
		if err := s.SubnGet(e.Ctx, ibpath.NewLID(target.Route().Addr.LID), &ni, 0); err == nil && ni.NodeType != iba.NodeTypeSwitch {
			port = int(ni.LocalPortNum)
		}
	} else if target, err = s.gmpTarget(fmt.Sprint(s.local.LID), &addrFlags{}); err != nil {
		return fmt.Errorf("resolving the local port: %w", err)
	}
	if len(args) > 1 {
		port = cPort(args[1])
	}
	if f.all {
		port = perf.AllPorts
	}
	d := newAttr().Desc()
	res := &WatchResult{LID: target.Route().Addr.LID, Port: port, Attribute: d.Name}
	w := bufio.NewWriter(e.Stdout)
	var last []uint64
	var lastTime time.Time
	start := time.Now()
	for n := 0; f.count == 0 || n < f.count; n++ {
		attr := newAttr()
		if err := perf.Get(e.Ctx, s.mc, target, port, attr); err != nil {
			return err
		}
		b, err := marshal(attr)
		if err != nil {
			return err
		}
		now := time.Now()
		dt := 0.0
		if last != nil {
			dt = now.Sub(lastTime).Seconds()
		}
		lastTime = now
		sample := WatchSample{Seconds: now.Sub(start).Seconds()}
		if !e.JSON {
			fmt.Fprintf(w, "# Port counters: Lid %d port %d\n", res.LID, port)
		}
		var cur []uint64
		i := 0
		for _, fd := range d.Fields {
			if fd.Reserved || fd.Kind != iba.KindUint || strings.HasPrefix(fd.Name, "portSelect") || strings.HasPrefix(fd.Name, "counterSelect") {
				continue
			}
			for k := 0; k < fd.Count; k++ {
				path, name := fd.Name, strings.ToUpper(fd.Name[:1])+fd.Name[1:]
				if fd.Count > 1 {
					path, name = fmt.Sprintf("%s[%d]", fd.Name, k), fmt.Sprintf("%s[%d]", name, k)
				}
				ref, err := d.Lookup(path)
				if err != nil {
					return err
				}
				v := ref.Uint(b)
				cur = append(cur, v)
				c := WatchCounter{Name: name, Value: v}
				prev := v
				if last != nil {
					prev = last[i]
				}
				i++
				var line string
				if v != prev && dt > 0 {
					rate := float64(v-prev) / dt
					c.Rate = &rate
					line = fmt.Sprintf("%-8d (+ %.3f/s)", v, rate)
				} else {
					line = fmt.Sprint(v)
				}
				sample.Counters = append(sample.Counters, c)
				if e.JSON {
					continue
				}
				if f.threshold {
					limit, ok := thresh[fd.Name]
					if c.Rate == nil || (ok && *c.Rate < float64(limit)) || (!ok && *c.Rate < 0xffffffff) {
						continue
					}
				}
				fmt.Fprintf(w, "%s%s%s\n", name, strings.Repeat(".", max(0, 33-len(name))), line)
			}
		}
		last = cur
		res.Samples = append(res.Samples, sample)
		if err := w.Flush(); err != nil {
			return err
		}
		if f.count != 0 && n+1 == f.count {
			break
		}
		// Aim at start + n*period, so that the reads keep their pace.
		wait := time.Until(start.Add(time.Duration(float64(n+1) * f.period * float64(time.Second))))
		select {
		case <-e.Ctx.Done(): // interrupted: stop, keeping what was read
		case <-time.After(wait):
		}
		if e.Ctx.Err() != nil {
			break
		}
	}
	if e.JSON {
		return e.writeJSON("ibswportwatch", res)
	}
	return nil
}
