package rdmatool

import (
	"fmt"
	"slices"

	"github.com/rdmakit/rdmakit/nldev"
)

func (r *rd) sysHelp() error {
	fmt.Fprintf(r.out.w, "Usage: %s system show [ netns ]\n", r.name)
	fmt.Fprintf(r.out.w, "       %s system set netns { shared | exclusive }\n", r.name)
	return nil
}

func (r *rd) cmdSys() error {
	return r.exec([]command{
		{"", (*rd).sysShow},
		{"show", (*rd).sysShow},
		{"set", (*rd).sysSet},
		{"help", (*rd).sysHelp},
	}, "system command")
}

var netnsModes = []string{"exclusive", "shared"}

func (r *rd) sysShow() error {
	return r.exec([]command{
		{"", (*rd).sysShowAll},
		{"netns", (*rd).sysShowAll},
		{"privileged-qkey", (*rd).sysShowAll},
		{"monitor", (*rd).sysShowAll},
	}, "parameter")
}

// sysShowAll prints the system settings: the netns mode, the privileged
// Q_Key mode (Linux 6.7+), whether the kernel sends monitor events ("off"
// before Linux 6.10, which does not say) and copy-on-fork. iproute2 opens
// no JSON document here, so -j prints text; rdmatool prints JSON
// (docs/rdmatool.md).
func (r *rd) sysShowAll() error {
	si, err := r.conn.Sys.Get(r.ctx)
	if err != nil {
		return err
	}
	o := r.out
	if o.json {
		o.jw = &jsonWriter{w: o.w, pretty: o.pretty}
		defer func() { o.jw.destroy(); o.jw = nil }()
		o.openObject()
		defer o.closeObject()
	}
	if si.Has(nldev.AttrSysNetNSMode) {
		m := "unknown"
		if int(si.NetNSMode) < len(netnsModes) {
			m = netnsModes[si.NetNSMode]
		}
		o.str(anyOut, "netns", "netns "+m+" ", m)
	}
	if si.Has(nldev.AttrSysPrivilegedQKeyMode) {
		o.onOff(anyOut, "privileged-qkey", "privileged-qkey %s ", si.PrivilegedQKey != 0)
	}
	o.onOff(anyOut, "monitor", "monitor %s ", si.MonitorMode != 0)
	o.onOff(anyOut, "copy-on-fork", "copy-on-fork %s", si.CopyOnFork != 0)
	o.printNL()
	return nil
}

func (r *rd) sysSet() error {
	setHelp := func(r *rd) error {
		fmt.Fprintf(r.out.w, "Usage: %s system set [PARAM] value\n", r.name)
		fmt.Fprintf(r.out.w, "            system set netns { shared | exclusive }\n")
		fmt.Fprintf(r.out.w, "            system set privileged-qkey { on | off }\n")
		return nil
	}
	return r.exec([]command{
		{"", setHelp},
		{"help", setHelp},
		{"netns", func(r *rd) error {
			if r.noArg() || !slices.Contains(netnsModes, r.arg()) {
				return r.errorf("valid options are: { shared | exclusive }\n")
			}
			return r.conn.Sys.SetNetNSMode(r.ctx, r.arg() == "shared")
		}},
		{"privileged-qkey", func(r *rd) error {
			if r.noArg() {
				return r.errorf("valid options are: { on | off }\n")
			}
			on, err := r.onOff("privileged-qkey")
			if err != nil {
				return err
			}
			return r.conn.Sys.SetPrivilegedQKey(r.ctx, on)
		}},
	}, "parameter")
}
