package rdmatool

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/nldev"
)

func (r *rd) statHelp() error {
	w := r.out.w
	n := r.name
	for _, l := range []string{
		"Usage: %s [ OPTIONS ] statistic { COMMAND | help }",
		"       %s statistic OBJECT show",
		"       %s statistic OBJECT show link [ DEV/PORT_INDEX ] [ FILTER-NAME FILTER-VALUE ]",
		"       %s statistic OBJECT mode",
		"       %s statistic OBJECT set COUNTER_SCOPE [DEV/PORT_INDEX] auto {CRITERIA | off}",
		"       %s statistic OBJECT bind COUNTER_SCOPE [DEV/PORT_INDEX] [OBJECT-ID] [COUNTER-ID]",
		"       %s statistic OBJECT unbind COUNTER_SCOPE [DEV/PORT_INDEX] [COUNTER-ID]",
		"       %s statistic show",
		"       %s statistic show link [ DEV/PORT_INDEX ]",
		"       %s statistic mode [ supported ]",
		"       %s statistic mode [ supported ] link [ DEV/PORT_INDEX ]",
		"       %s statistic set link [ DEV/PORT_INDEX ] optional-counters [ OPTIONAL-COUNTERS ]",
		"       %s statistic unset link [ DEV/PORT_INDEX ] optional-counters",
	} {
		fmt.Fprintf(w, l+"\n", n)
	}
	fmt.Fprintf(w, "where  OBJECT: = { qp }\n")
	fmt.Fprintf(w, "       CRITERIA : = { type }\n")
	fmt.Fprintf(w, "       COUNTER_SCOPE: = { link | dev }\n")
	fmt.Fprintf(w, "       FILTER_NAME: = { cntn | lqpn | pid }\n")
	fmt.Fprintf(w, "Examples:\n")
	for _, l := range []string{
		"statistic qp show", "statistic qp show link mlx5_2/1", "statistic qp mode", "statistic qp mode link mlx5_0",
		"statistic qp set link mlx5_2/1 auto type on", "statistic qp set link mlx5_2/1 auto off",
		"statistic qp bind link mlx5_2/1 lqpn 178", "statistic qp bind link mlx5_2/1 lqpn 178 cntn 4",
		"statistic qp unbind link mlx5_2/1 cntn 4", "statistic qp unbind link mlx5_2/1 cntn 4 lqpn 178",
		"statistic show", "statistic show link mlx5_2/1", "statistic mode", "statistic mode link mlx5_2/1",
		"statistic mode supported", "statistic mode supported link mlx5_2/1",
		"statistic set link mlx5_2/1 optional-counters cc_rx_ce_pkts,cc_rx_cnp_pkts",
		"statistic unset link mlx5_2/1 optional-counters",
	} {
		fmt.Fprintf(w, "       %s %s\n", n, l)
	}
	return nil
}

func (r *rd) cmdStat() error {
	return r.exec([]command{
		{"", (*rd).statShow},
		{"show", (*rd).statShow},
		{"list", (*rd).statShow},
		{"help", (*rd).statHelp},
		{"qp", (*rd).statQP},
		{"mr", (*rd).statMR},
		{"mode", (*rd).statMode},
		{"set", (*rd).statSet},
		{"unset", (*rd).statUnset},
	}, "statistic command")
}

func (r *rd) statShow() error {
	return r.exec([]command{
		{"", (*rd).statShowLink},
		{"link", (*rd).statShowLink},
		{"mr", (*rd).statMR},
		{"help", (*rd).statHelp},
	}, "parameter")
}

func (r *rd) statShowLink() error {
	return r.execLink(func(r *rd) error {
		if r.portIdx == 0 {
			return nil
		}
		ps, err := r.conn.Stat.Port(r.ctx, r.devIdx, r.portIdx)
		if err != nil {
			return err
		}
		if err := need(ps, nldev.AttrPortIndex, nldev.AttrStatHWCounters); err != nil {
			return err
		}
		o := r.out
		o.openObject()
		o.str(anyOut, "ifname", "link "+ps.DevName+"/", ps.DevName)
		o.num(anyOut, "port", fmt.Sprintf("%d ", ps.Port), uint64(ps.Port))
		r.printHWCounters(ps.HWCounters)
		o.newline()
		return nil
	}, false)
}

func need(ps *nldev.PortStats, attrs ...nldev.Attr) error {
	for _, a := range attrs {
		if !ps.Has(a) {
			return fmt.Errorf("the kernel's reply has no %v", a)
		}
	}
	return nil
}

// printHWCounters is res_get_hwcounters with printing.
func (r *rd) printHWCounters(hw []nldev.HWCounter) {
	for _, h := range hw {
		r.out.newlineIndent()
		r.printU64(h.Name, h.Value, true)
	}
}

// statFilters are stat_valid_filters; iproute2 accepts optional-counters
// as a filter name and filters nothing with it.
var statFilters = []filterDef{{name: "cntn", number: true}, {name: "lqpn", number: true}, {name: "pid", number: true}, {name: "qp-type"},
	{name: "optional-counters"}}

func (r *rd) statQP() error {
	return r.exec([]command{
		{"", (*rd).statQPShow},
		{"show", (*rd).statQPShow},
		{"list", (*rd).statQPShow},
		{"mode", (*rd).statQPMode},
		{"set", (*rd).statQPSet},
		{"bind", (*rd).statQPBind},
		{"unbind", (*rd).statQPUnbind},
		{"help", (*rd).statHelp},
	}, "parameter")
}

func (r *rd) statQPShow() error {
	show := func(r *rd) error {
		return r.execLink(func(r *rd) error {
			if r.portIdx == 0 {
				return nil
			}
			if err := r.buildFilters(statFilters); err != nil {
				return err
			}
			cnts, err := r.conn.Stat.Counters(r.ctx, r.devIdx, r.portIdx)
			if err != nil {
				return err
			}
			for i := range cnts {
				r.counterLine(&cnts[i])
			}
			return nil
		}, false)
	}
	return r.exec([]command{{"", show}, {"link", show}, {"help", (*rd).statHelp}}, "parameter")
}

func (r *rd) counterLine(c *nldev.Counter) {
	t := qpTypeName(c.Type)
	if r.filteredNum("cntn", c.ID, true) || r.filteredStr("qp-type", t) {
		return
	}
	cm := comm(&c.Entry)
	if r.filteredNum("pid", c.PID, c.Has(nldev.AttrResPID)) {
		return
	}
	for _, q := range c.QPs {
		if r.filteredNum("lqpn", q, true) {
			return
		}
	}
	o := r.out
	o.openObject()
	r.printLink(c.DevIndex, c.DevName, c.Port, c.Has(nldev.AttrPortIndex))
	o.num(anyOut, "cntn", fmt.Sprintf("cntn %d ", c.ID), uint64(c.ID))
	if c.Has(nldev.AttrResType) {
		o.str(anyOut, "qp-type", "qp-type "+t+" ", t)
	}
	r.printU64("pid", uint64(c.PID), c.Has(nldev.AttrResPID))
	r.printComm(&c.Entry, cm)
	r.printHWCounters(c.HWCounters)
	o.openArray(jsonOut, "lqpn")
	o.fp(o.sl() + "    LQPN: <")
	for i, q := range c.QPs {
		if i > 0 {
			o.fp(",")
		}
		o.num(anyOut, "", strconv.Itoa(int(int32(q))), uint64(q))
	}
	o.closeArray(anyOut, ">")
	o.newline()
}

func (r *rd) statQPMode() error {
	show := func(r *rd) error { return r.execLink((*rd).statQPModeOne, false) }
	return r.exec([]command{{"", show}, {"link", show}, {"help", (*rd).statHelp}}, "parameter")
}

func (r *rd) statQPModeOne() error {
	if r.portIdx == 0 {
		return nil
	}
	ps, err := r.conn.Stat.Mode(r.ctx, r.devIdx, r.portIdx)
	if err != nil {
		return err
	}
	if err := need(ps, nldev.AttrPortIndex); err != nil {
		return err
	}
	mode := "qp auto off"
	if ps.Mode == nldev.CounterModeAuto {
		if !ps.Has(nldev.AttrStatAutoModeMask) {
			return fmt.Errorf("the kernel's reply has no %v", nldev.AttrStatAutoModeMask)
		}
		mode = autoModeString(ps.AutoMask, ps.OpCounters != 0)
	}
	o := r.out
	o.openObject()
	r.printLink(ps.DevIndex, ps.DevName, ps.Port, true)
	o.str(anyOut, "mode", "mode "+mode+" ", mode)
	o.newline()
	return nil
}

var autoParams = []struct {
	name string
	mask nldev.CounterMask
}{{"type", nldev.CounterMaskQPType}, {"pid", nldev.CounterMaskPID}}

// autoModeString is prepare_auto_mode_str: the criteria of auto mode and
// whether its counters include the optional ones.
func autoModeString(mask nldev.CounterMask, optional bool) string {
	if mask == 0 {
		return "qp auto off"
	}
	var names []string
	for _, p := range autoParams {
		if mask&p.mask != 0 {
			names = append(names, p.name)
		}
	}
	opt := "off"
	if optional {
		opt = "on"
	}
	return "qp auto " + strings.Join(names, ",") + " on optional-counters " + opt
}

func (r *rd) statQPSet() error {
	return r.exec([]command{
		{"", (*rd).statHelp},
		{"link", func(r *rd) error {
			return r.execLink(func(r *rd) error {
				if r.portIdx == 0 {
					return nil
				}
				return r.exec([]command{
					{"", (*rd).statQPModeOne},
					{"auto", (*rd).statQPSetAuto},
				}, "parameter")
			}, false)
		}},
		{"help", (*rd).statHelp},
	}, "parameter")
}

// statQPSetAuto is "auto off" or "auto CRITERIA on", each optionally
// followed by "optional-counters on|off" (iproute2 6.15). A missing or
// unknown word fails as iproute2 fails it, mostly without a message.
func (r *rd) statQPSetAuto() error {
	if r.noArg() {
		return r.errorf("")
	}
	var mask nldev.CounterMask
	if prefixOf(r.arg(), "off") {
		r.next()
		return r.statQPSetAutoSend(mask)
	}
	for _, m := range strings.Split(r.arg(), ",") {
		if m == "" {
			continue
		}
		found := false
		for _, p := range autoParams {
			if m == p.name {
				mask |= p.mask
				found = true
			}
		}
		if !found {
			return r.errorf("Unknown auto mode '%s'.\n", m)
		}
	}
	if mask == 0 {
		return r.errorf("")
	}
	r.next()
	if r.noArg() {
		return r.errorf("")
	}
	if !prefixOf(r.arg(), "on") {
		return r.errorf("Unknown parameter '%s'.\n", r.arg())
	}
	r.next()
	return r.statQPSetAutoSend(mask)
}

// statQPSetAutoSend sends the auto mode, with "optional-counters on|off"
// when words are left.
func (r *rd) statQPSetAutoSend(mask nldev.CounterMask) error {
	var opt *bool
	if !r.noArg() {
		if !prefixOf(r.arg(), "optional-counters") {
			return r.errorf("")
		}
		r.next()
		if strings.ContainsAny(r.arg(), ",-") {
			return r.errorf("The parameter optional-counters shouldn't include range\n")
		}
		v, err := r.onOff("optional-counters")
		if err != nil {
			return err
		}
		opt = &v
		r.next()
	}
	return r.conn.Stat.SetAuto(r.ctx, r.devIdx, r.portIdx, mask, opt)
}

// onOff reads "on" or "off", exactly, as iproute2's parse_on_off.
func (r *rd) onOff(what string) (bool, error) {
	switch {
	case r.noArg():
		// iproute2 reads past the end of its arguments here.
		return false, r.errorf("Error: argument of \"%s\" is missing\n", what)
	case r.arg() == "on":
		return true, nil
	case r.arg() == "off":
		return false, nil
	}
	return false, r.errorf("Error: argument of \"%s\" must be one of \"off\", \"on\", not \"%s\"\n", what, r.arg())
}

// statArg reads "NAME VALUE" for a number without a range (stat_get_arg).
func (r *rd) statArg(name string) (uint32, error) {
	if !r.argIs(name) {
		return 0, r.errorf("Please provide %s.\n", name)
	}
	r.next()
	if strings.ContainsAny(r.arg(), ",-") {
		return 0, r.errorf("The parameter %s shouldn't include range\n", name)
	}
	v := atoiPrefix(r.arg())
	r.next()
	return v, nil
}

func (r *rd) statQPBind() error {
	return r.exec([]command{
		{"", (*rd).statHelp},
		{"link", func(r *rd) error {
			return r.execLink(func(r *rd) error {
				if r.noArg() {
					r.statHelp()
					return r.errorf("")
				}
				lqpn, err := r.statArg("lqpn")
				if err != nil {
					return err
				}
				var cntn uint32
				if !r.noArg() {
					if cntn, err = r.statArg("cntn"); err != nil {
						return err
					}
				}
				return r.conn.Stat.Bind(r.ctx, r.devIdx, r.portIdx, lqpn, cntn)
			}, true)
		}},
		{"help", (*rd).statHelp},
	}, "parameter")
}

func (r *rd) statQPUnbind() error {
	return r.exec([]command{
		{"", (*rd).statHelp},
		{"link", func(r *rd) error {
			return r.execLink(func(r *rd) error {
				if r.noArg() {
					r.statHelp()
					return r.errorf("")
				}
				cntn, err := r.statArg("cntn")
				if err != nil {
					return err
				}
				if !r.noArg() {
					lqpn, err := r.statArg("lqpn")
					if err != nil {
						return err
					}
					return r.conn.Stat.Unbind(r.ctx, r.devIdx, r.portIdx, cntn, lqpn)
				}
				// Without lqpn: unbind every QP of the counter.
				cnts, err := r.conn.Stat.Counter(r.ctx, r.devIdx, r.portIdx, cntn)
				if err != nil {
					return err
				}
				for _, c := range cnts {
					if c.ID != cntn {
						continue
					}
					for _, q := range c.QPs {
						if err := r.conn.Stat.Unbind(r.ctx, r.devIdx, r.portIdx, cntn, q); err != nil {
							return err
						}
					}
				}
				return nil
			}, true)
		}},
		{"help", (*rd).statHelp},
	}, "parameter")
}

func (r *rd) statMode() error {
	mode := func(supported bool) func(*rd) error {
		return func(r *rd) error {
			return r.execLink(func(r *rd) error { return r.statModeOne(supported) }, false)
		}
	}
	return r.exec([]command{
		{"", mode(false)},
		{"link", mode(false)},
		{"show", mode(false)},
		{"supported", func(r *rd) error {
			return r.exec([]command{{"", mode(true)}, {"link", mode(true)}, {"help", (*rd).statHelp}}, "parameter")
		}},
		{"help", (*rd).statHelp},
	}, "parameter")
}

func (r *rd) statModeOne(supported bool) error {
	if r.portIdx == 0 {
		return nil
	}
	ps, err := r.conn.Stat.Status(r.ctx, r.devIdx, r.portIdx)
	if err != nil {
		return err
	}
	if err := need(ps, nldev.AttrPortIndex, nldev.AttrStatHWCounters); err != nil {
		return err
	}
	o := r.out
	first := true
	for _, h := range ps.HWCounters {
		if !h.Optional() || !(supported || h.Enabled != 0) {
			continue
		}
		if first {
			o.openObject()
			o.str(anyOut, "ifname", "link "+ps.DevName+"/", ps.DevName)
			o.num(anyOut, "port", fmt.Sprintf("%d ", ps.Port), uint64(ps.Port))
			key := "optional-counters"
			if supported {
				key = "supported optional-counters"
			}
			o.openArray(anyOut, key)
			o.fp(" ")
			first = false
		} else {
			o.fp(",")
		}
		o.newlineIndent()
		o.str(anyOut, "", h.Name, h.Name)
	}
	if !first {
		o.closeArray(jsonOut, "")
		o.newline()
	}
	return nil
}

func (r *rd) statSet() error {
	return r.exec([]command{
		{"", (*rd).statHelp},
		{"link", func(r *rd) error {
			return r.execLink(func(r *rd) error {
				if r.portIdx == 0 {
					return nil
				}
				ps, err := r.conn.Stat.Status(r.ctx, r.devIdx, r.portIdx)
				if err != nil {
					return err
				}
				if r.noArg() || !r.argIs("optional-counters") {
					r.statHelp()
					return r.errorf("")
				}
				r.next()
				if r.noArg() {
					r.statHelp()
					return r.errorf("")
				}
				var idx []uint32
				for _, name := range strings.Split(r.arg(), ",") {
					if name == "" {
						continue
					}
					found := false
					for _, h := range ps.HWCounters {
						if h.Optional() && h.Name == name {
							idx = append(idx, h.Index)
							found = true
						}
					}
					if !found {
						return r.errorf("Unknown optional counter '%s'.\n", name)
					}
				}
				r.next()
				return r.conn.Stat.SetOptional(r.ctx, r.devIdx, r.portIdx, idx)
			}, true)
		}},
		{"help", (*rd).statHelp},
	}, "parameter")
}

func (r *rd) statUnset() error {
	return r.exec([]command{
		{"", (*rd).statHelp},
		{"link", func(r *rd) error {
			return r.execLink(func(r *rd) error {
				if r.noArg() || !r.argIs("optional-counters") {
					r.statHelp()
					return r.errorf("")
				}
				r.next()
				if !r.noArg() {
					r.statHelp()
					return r.errorf("")
				}
				return r.conn.Stat.SetOptional(r.ctx, r.devIdx, r.portIdx, nil)
			}, true)
		}},
		{"help", (*rd).statHelp},
	}, "parameter")
}

var statMRFilters = []filterDef{{name: "mrn", number: true, doit: true}}

// statMR is "statistic show mr": per-MR counters, device-scoped.
func (r *rd) statMR() error {
	return resFunc(statMRFilters, false, func(r *rd) error {
		q := r.query()
		mrs, err := byID(r, func(id uint32) (*nldev.MR, error) { return r.conn.Stat.MR(r.ctx, q, id) },
			func() ([]nldev.MR, error) { return r.conn.Stat.MRs(r.ctx, q) })
		if err != nil {
			return err
		}
		for i := range mrs {
			m := &mrs[i]
			if r.filteredNum("mrn", m.MRN, m.Has(nldev.AttrResMRN)) {
				continue
			}
			o := r.out
			o.openObject()
			r.printDev(m.DevIndex, m.DevName)
			r.printU32("mrn", m.MRN, m.Has(nldev.AttrResMRN))
			r.printHWCounters(m.HWCounters)
			// iproute2 ends this record with print_nl, not newline.
			o.closeObject()
			o.printNL()
		}
		return nil
	})(r)
}
