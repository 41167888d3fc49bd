package rdmatool

import (
	"fmt"

	"github.com/rdmakit/rdmakit/nldev"
)

func (r *rd) linkHelp() error {
	w := r.out.w
	fmt.Fprintf(w, "Usage: %s link show [DEV/PORT_INDEX]\n", r.name)
	fmt.Fprintf(w, "Usage: %s link add NAME type TYPE netdev NETDEV\n", r.name)
	fmt.Fprintf(w, "Usage: %s link delete NAME\n", r.name)
	return nil
}

func (r *rd) cmdLink() error {
	return r.exec([]command{
		{"", (*rd).linkShow},
		{"add", (*rd).linkAdd},
		{"delete", (*rd).linkDel},
		{"show", (*rd).linkShow},
		{"list", (*rd).linkShow},
		{"help", (*rd).linkHelp},
	}, "link command")
}

// Port capability names by bit of PortInfo:CapabilityMask (IBA 14.2.5.6)
// and CapabilityMask2, as iproute2 6.1 prints them, typos included.
var portCapNames = map[int]string{
	0: "RESERVED", 1: "SM", 2: "NOTICE", 3: "TRAP", 4: "OPT_IPD", 5: "AUTO_MIGR", 6: "SL_MAP", 7: "MKEY_NVRAM",
	8: "PKEY_NVRAM", 9: "LED_INFO", 10: "SM_DISABLED", 11: "SYS_IMAGE_GUID", 12: "PKEY_SW_EXT_PORT_TRAP",
	13: "CABLE_INFO", 14: "EXTENDED_SPEEDS", 15: "CAP_MASK2", 16: "CM", 17: "SNMP_TUNNEL", 18: "REINIT",
	19: "DEVICE_MGMT", 20: "VENDOR_CLASS", 21: "DR_NOTICE", 22: "CAP_MASK_NOTICE", 23: "BOOT_MGMT",
	24: "LINK_LATENCY", 25: "CLIENT_REG", 26: "OTHER_LOCAL_CHANGES", 27: "LINK_SPPED_WIDTH",
	28: "VENDOR_SPECIFIC_MADS", 29: "MULT_PKER_TRAP", 30: "MULT_FDB", 31: "HIERARCHY_INFO",
	32: "SET_NODE_DESC", 33: "EXT_INFO", 34: "VIRT", 35: "SWITCH_POR_STATE_TABLE", 36: "LINK_WIDTH_2X", 37: "LINK_SPEED_HDR",
}

var portStates = []string{"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}

var physStates = []string{"NOP", "SLEEP", "POLLING", "DISABLED", "ARMED", "LINK_UP", "LINK_ERROR_RECOVER",
	"PHY_TEST", "UNKNOWN", "OPA_OFFLINE", "UNKNOWN", "OPA_TEST"}

func enumName(names []string, v uint64) string {
	if v < uint64(len(names)) {
		return names[v]
	}
	return "UNKNOWN"
}

func (r *rd) linkShow() error {
	return r.execLink(func(r *rd) error {
		if r.portIdx == 0 {
			return nil
		}
		return r.exec([]command{{"", (*rd).linkShowOne}}, "parameter")
	}, true)
}

func (r *rd) linkShowOne() error {
	p, err := r.conn.Link.Get(r.ctx, r.devIdx, r.portIdx)
	if err != nil {
		return err
	}
	o := r.out
	o.openObject()
	o.num(jsonOut, "ifindex", "", uint64(p.DevIndex))
	o.str(anyOut, "ifname", "link "+p.DevName+"/", p.DevName)
	o.num(anyOut, "port", fmt.Sprintf("%d ", p.Port), uint64(p.Port))
	if p.Has(nldev.AttrSubnetPrefix) {
		s := p.SubnetPrefix.Colon()
		o.str(anyOut, "subnet_prefix", "subnet_prefix "+s+" ", s)
	}
	if p.Has(nldev.AttrLID) {
		o.num(anyOut, "lid", fmt.Sprintf("lid %d ", p.LID), uint64(p.LID))
	}
	if p.Has(nldev.AttrSMLID) {
		o.num(anyOut, "sm_lid", fmt.Sprintf("sm_lid %d ", p.SMLID), uint64(p.SMLID))
	}
	if p.Has(nldev.AttrLMC) {
		o.num(anyOut, "lmc", fmt.Sprintf("lmc %d ", p.LMC), uint64(p.LMC))
	}
	if p.Has(nldev.AttrPortState) {
		s := enumName(portStates, uint64(p.State))
		o.str(anyOut, "state", "state "+s+" ", s)
	}
	if p.Has(nldev.AttrPortPhysState) {
		s := enumName(physStates, uint64(p.PhysState))
		o.str(anyOut, "physical_state", "physical_state "+s+" ", s)
	}
	if p.Has(nldev.AttrNdevName) && p.Has(nldev.AttrNdevIndex) {
		o.str(anyOut, "netdev", "netdev "+p.NdevName+" ", p.NdevName)
		txt := ""
		if r.opt.details {
			txt = fmt.Sprintf("netdev_index %d ", p.NdevIndex)
		}
		o.num(anyOut, "netdev_index", txt, uint64(p.NdevIndex))
	}
	if r.opt.details && p.Has(nldev.AttrCapFlags) {
		r.printCaps(p.CapFlags, portCapNames)
	}
	o.newline()
	return nil
}

func (r *rd) linkAdd() error {
	if r.noArg() {
		return r.errorf("Please provide a link name to add.\n")
	}
	name := r.arg()
	r.next()
	return r.exec([]command{
		{"", (*rd).linkHelp},
		{"type", func(r *rd) error {
			if r.noArg() {
				return r.errorf("Please provide a link type name.\n")
			}
			typ := r.arg()
			r.next()
			return r.exec([]command{
				{"", (*rd).linkHelp},
				{"netdev", func(r *rd) error {
					if r.noArg() {
						return r.errorf("Please provide a net device name.\n")
					}
					return r.conn.Link.Add(r.ctx, name, typ, r.arg())
				}},
			}, "parameter")
		}},
	}, "parameter")
}

func (r *rd) linkDel() error {
	return r.execRequireDev(func(r *rd) error {
		if !r.noArg() {
			return r.errorf("Unknown parameter %s\n", r.arg())
		}
		return r.conn.Link.Delete(r.ctx, r.devIdx)
	})
}
