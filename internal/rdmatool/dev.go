package rdmatool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rdmakit/rdmakit/nldev"
)

func (r *rd) devHelp() error {
	w := r.out.w
	fmt.Fprintf(w, "Usage: %s dev show [DEV]\n", r.name)
	fmt.Fprintf(w, "       %s dev add DEVNAME type TYPE parent PARENT_DEVNAME\n", r.name)
	fmt.Fprintf(w, "       %s dev delete DEVNAME\n", r.name)
	fmt.Fprintf(w, "       %s dev set [DEV] name DEVNAME\n", r.name)
	fmt.Fprintf(w, "       %s dev set [DEV] netns NSNAME\n", r.name)
	fmt.Fprintf(w, "       %s dev set [DEV] adaptive-moderation [on|off]\n", r.name)
	return nil
}

func (r *rd) cmdDev() error {
	return r.exec([]command{
		{"", (*rd).devShow},
		{"add", (*rd).devAdd},
		{"delete", (*rd).devDelete},
		{"show", (*rd).devShow},
		{"list", (*rd).devShow},
		{"set", (*rd).devSet},
		{"help", (*rd).devHelp},
	}, "dev command")
}

func (r *rd) devShow() error {
	return r.execDev(func(r *rd) error {
		return r.exec([]command{{"", (*rd).devShowOne}}, "parameter")
	})
}

// Capability names by bit of IB_DEVICE_* as iproute2 prints them
// (including its spelling of bit 6).
var devCapNames = map[int]string{
	0: "RESIZE_MAX_WR", 1: "BAD_PKEY_CNTR", 2: "BAD_QKEY_CNTR", 3: "RAW_MULTI", 4: "AUTO_PATH_MIG",
	5: "CHANGE_PHY_PORT", 6: "UD_AV_PORT_ENFORCE_PORT_ENFORCE", 7: "CURR_QP_STATE_MOD", 8: "SHUTDOWN_PORT",
	9: "INIT_TYPE", 10: "PORT_ACTIVE_EVENT", 11: "SYS_IMAGE_GUID", 12: "RC_RNR_NAK_GEN", 13: "SRQ_RESIZE",
	14: "N_NOTIFY_CQ", 15: "LOCAL_DMA_LKEY", 17: "MEM_WINDOW", 18: "UD_IP_CSUM", 19: "UD_TSO", 20: "XRC",
	21: "MEM_MGT_EXTENSIONS", 22: "BLOCK_MULTICAST_LOOPBACK", 23: "MEM_WINDOW_TYPE_2A", 24: "MEM_WINDOW_TYPE_2B",
	25: "RC_IP_CSUM", 26: "RAW_IP_CSUM", 27: "CROSS_CHANNEL", 29: "MANAGED_FLOW_STEERING",
	30: "SIGNATURE_HANDOVER", 31: "ON_DEMAND_PAGING",
	// The high word: iproute2 indexes it from the size of the low table (32).
	32: "SG_GAPS_REG", 33: "VIRTUAL_FUNCTION", 34: "RAW_SCATTER_FCS", 35: "RDMA_NETDEV_OPA_VNIC", 36: "PCI_WRITE_END_PADDING",
}

// printCaps prints a capability mask as "\n    caps: <A, B>" or a JSON array.
func (r *rd) printCaps(caps uint64, names map[int]string) {
	r.out.fp(r.out.sl() + "    caps: <")
	r.out.openArray(jsonOut, "caps")
	for idx := 0; caps != 0; idx++ {
		if caps&1 != 0 {
			n, ok := names[idx]
			if !ok {
				n = "UNKNOWN"
			}
			txt := n
			if caps>>1 != 0 {
				txt += ", "
			}
			r.out.str(anyOut, "", txt, n)
		}
		caps >>= 1
	}
	r.out.closeArray(anyOut, ">")
}

var nodeTypes = []string{"unknown", "ca", "switch", "router", "rnic", "usnic", "usnic_udp", "unspecified"}

func nodeTypeName(t uint8) string {
	if int(t) < len(nodeTypes) {
		return nodeTypes[t]
	}
	return "unknown"
}

func (r *rd) devShowOne() error {
	d, err := r.conn.Dev.Get(r.ctx, r.devIdx)
	if err != nil {
		return err
	}
	o := r.out
	o.openObject()
	o.num(anyOut, "ifindex", fmt.Sprintf("%d: ", d.Index), uint64(d.Index))
	o.str(anyOut, "ifname", d.Name+": ", d.Name)
	if d.Has(nldev.AttrDevNodeType) {
		n := nodeTypeName(d.NodeType)
		o.str(anyOut, "node_type", "node_type "+n+" ", n)
	}
	if d.Has(nldev.AttrDevProtocol) {
		o.str(anyOut, "protocol", "protocol "+d.Protocol+" ", d.Protocol)
	}
	if d.Has(nldev.AttrFWVersion) {
		o.str(anyOut, "fw", "fw "+d.FWVersion+" ", d.FWVersion)
	}
	if d.Has(nldev.AttrNodeGUID) {
		g := d.NodeGUID.Colon()
		o.str(anyOut, "node_guid", "node_guid "+g+" ", g)
	}
	if d.Has(nldev.AttrSysImageGUID) {
		g := d.SysImageGUID.Colon()
		o.str(anyOut, "sys_image_guid", "sys_image_guid "+g+" ", g)
	}
	if d.Has(nldev.AttrDevType) {
		t := "unknown"
		if d.Type == nldev.DeviceTypeSMI {
			t = "smi"
		}
		o.str(anyOut, "type", "type "+t+" ", t)
	}
	if d.Has(nldev.AttrParentName) {
		o.str(anyOut, "parent", "parent "+d.ParentName+" ", d.ParentName)
	}
	if r.opt.details {
		if d.Has(nldev.AttrDevDIM) && d.DIM <= 1 {
			o.onOff(anyOut, "adaptive-moderation", "adaptive-moderation %s ", d.DIM == 1)
		}
		if d.Has(nldev.AttrCapFlags) {
			r.printCaps(d.CapFlags, devCapNames)
		}
	}
	o.newline()
	return nil
}

func (r *rd) devSet() error {
	return r.execRequireDev(func(r *rd) error {
		return r.exec([]command{
			{"", (*rd).devHelp},
			{"name", (*rd).devSetName},
			{"netns", (*rd).devSetNetns},
			{"adaptive-moderation", (*rd).devSetDIM},
		}, "parameter")
	})
}

func (r *rd) devSetName() error {
	if r.noArg() {
		return r.errorf("Please provide device new name.\n")
	}
	return r.conn.Dev.SetName(r.ctx, r.devIdx, r.arg())
}

// netnsRunDir is where ip-netns(8) keeps named network namespaces.
const netnsRunDir = "/var/run/netns"

func (r *rd) devSetNetns() error {
	if r.noArg() {
		return r.errorf("Please provide device name.\n")
	}
	f, err := os.Open(filepath.Join(netnsRunDir, r.arg()))
	if err != nil {
		return r.errorf("Cannot open network namespace \"%s\": %s\n", r.arg(), errnoText(err))
	}
	defer f.Close()
	return r.conn.Dev.SetNetNS(r.ctx, r.devIdx, uint32(f.Fd()))
}

func (r *rd) devSetDIM() error {
	return r.exec([]command{
		{"", (*rd).devHelp},
		{"on", func(r *rd) error { return r.conn.Dev.SetAdaptiveModeration(r.ctx, r.devIdx, true) }},
		{"off", func(r *rd) error { return r.conn.Dev.SetAdaptiveModeration(r.ctx, r.devIdx, false) }},
	}, "parameter")
}

// devAdd is "dev add NAME type TYPE parent PARENT": a sub-device of
// PARENT (today only type smi, an SMI port of a planarized HCA; Linux
// 6.11 and later).
func (r *rd) devAdd() error {
	if r.noArg() {
		return r.errorf("Please provide a device name to add.\n")
	}
	name := r.arg()
	r.next()
	return r.exec([]command{
		{"", (*rd).devHelp},
		{"type", func(r *rd) error {
			if r.noArg() {
				return r.errorf("Please provide a device type name.\n")
			}
			if !strings.EqualFold(r.arg(), "smi") {
				return r.errorf("Invalid device type %s\n", r.arg())
			}
			r.next()
			return r.exec([]command{
				{"", (*rd).devHelp},
				{"parent", func(r *rd) error {
					return r.execRequireDev(func(r *rd) error {
						return r.conn.Dev.Add(r.ctx, r.devIdx, name, nldev.DeviceTypeSMI)
					})
				}},
			}, "parameter")
		}},
	}, "parameter")
}

// devDelete is "dev delete NAME": removes a sub-device made by dev add.
func (r *rd) devDelete() error {
	return r.execRequireDev(func(r *rd) error {
		if !r.noArg() {
			return r.errorf("Unknown parameter %s\n", r.arg())
		}
		return r.conn.Dev.Delete(r.ctx, r.devIdx)
	})
}
