package diags

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

func init() {
	register(command{name: "ibstat", make: newIBStat})
}

func joinGroups(g []uint16) uint64 {
	var v uint64
	for _, x := range g {
		v = v<<16 | uint64(x)
	}
	return v
}

// IBStatResult is what ibstat read: the devices, or with -l their names, or
// with -p their port GUIDs.
type IBStatResult struct {
	CAs       []IBStatCA `json:"cas,omitempty"`
	Names     []string   `json:"names,omitempty"`
	PortGUIDs []string   `json:"portGUIDs,omitempty"`
}

// IBStatCA is one device as libibumad's umad_get_ca reads it.
type IBStatCA struct {
	Name            string       `json:"name"`
	NodeType        string       `json:"nodeType"`
	CAType          string       `json:"caType"`
	NumPorts        int          `json:"numPorts"`
	FirmwareVersion string       `json:"firmwareVersion"`
	HardwareVersion string       `json:"hardwareVersion"`
	NodeGUID        string       `json:"nodeGUID"`
	SystemImageGUID string       `json:"systemImageGUID"`
	Ports           []IBStatPort `json:"ports,omitempty"`

	nodeType uint32
}

// IBStatPort is one port of a device.
type IBStatPort struct {
	Port           int    `json:"port"`
	State          string `json:"state"`
	PhysicalState  string `json:"physicalState"`
	Rate           string `json:"rate"`
	BaseLID        uint32 `json:"baseLID"`
	LMC            uint32 `json:"lmc"`
	SMLID          uint32 `json:"smLID"`
	CapabilityMask uint32 `json:"capabilityMask"`
	PortGUID       string `json:"portGUID"`
	LinkLayer      string `json:"linkLayer"`
}

var (
	caNodeTypes    = []string{"???", "CA", "Switch", "Router", "iWARP RNIC"}
	ibstatStates   = []string{"???", "Down", "Initializing", "Armed", "Active"}
	ibstatPhysical = []string{"No state change", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest"}
)

func pickName(names []string, v uint32) string {
	if int64(v) < int64(len(names)) {
		return names[v]
	}
	return "???"
}

// isIBType is libibumad's is_ib_type: node_type 1 to 3.
func (c *caView) isIBType() bool {
	t, ok := c.sysUint("node_type")
	return ok && t >= 1 && t <= 3
}

// stat is umad_get_ca: every file it needs must be there.
func (c *caView) stat() (*IBStatCA, error) {
	t, ok := c.sysUint("node_type")
	if !ok {
		return nil, fmt.Errorf("%s: no node_type", c.name)
	}
	ca := &IBStatCA{Name: c.name, nodeType: t, NodeType: pickName(caNodeTypes, t)}
	ca.FirmwareVersion, _ = c.sysString("fw_ver")
	ca.HardwareVersion, _ = c.sysString("hw_rev")
	ca.CAType, _ = c.sysString("hca_type")
	for _, g := range []struct {
		file string
		to   *string
	}{{"node_guid", &ca.NodeGUID}, {"sys_image_guid", &ca.SystemImageGUID}} {
		v, ok := c.sysGroups(g.file, 4)
		if !ok {
			return nil, fmt.Errorf("%s: no %s", c.name, g.file)
		}
		*g.to = fmt.Sprintf("0x%016x", joinGroups(v))
	}
	for _, name := range c.ports {
		n, err := strconv.Atoi(name)
		if err != nil || n < 0 || (n == 0 && name != "0") || n >= 255 {
			return nil, fmt.Errorf("%s: bad port directory %q", c.name, name)
		}
		p, err := c.statPort(n)
		if err != nil {
			return nil, err
		}
		ca.Ports = append(ca.Ports, *p)
		if n > ca.NumPorts {
			ca.NumPorts = n
		}
	}
	sort.Slice(ca.Ports, func(i, j int) bool { return ca.Ports[i].Port < ca.Ports[j].Port })
	return ca, nil
}

func (c *caView) statPort(n int) (*IBStatPort, error) {
	dir := "ports/" + strconv.Itoa(n) + "/"
	vals := map[string]uint32{}
	for _, f := range []string{"lid_mask_count", "sm_lid", "sm_sl", "lid", "state", "phys_state", "rate", "cap_mask"} {
		v, ok := c.sysUint(dir + f)
		if !ok {
			return nil, fmt.Errorf("%s port %d: no %s", c.name, n, f)
		}
		vals[f] = v
	}
	gid, ok := c.sysGroups(dir+"gids/0", 8)
	if !ok {
		return nil, fmt.Errorf("%s port %d: no gids/0", c.name, n)
	}
	if !c.hasPKeys(dir + "pkeys") {
		return nil, fmt.Errorf("%s port %d: no pkeys", c.name, n)
	}
	ll, ok := c.sysString(dir + "link_layer")
	if !ok {
		ll = "IB"
	}
	rate := strconv.Itoa(int(int32(vals["rate"])))
	switch {
	case c.isFDR10(dir):
		rate += " (FDR10)"
	case vals["rate"] == 2: // 1x SDR
		rate = "2.5"
	}
	return &IBStatPort{
		Port:           n,
		State:          pickName(ibstatStates, vals["state"]),
		PhysicalState:  pickName(ibstatPhysical, vals["phys_state"]),
		Rate:           rate,
		BaseLID:        vals["lid"],
		LMC:            vals["lid_mask_count"],
		SMLID:          vals["sm_lid"],
		CapabilityMask: vals["cap_mask"],
		PortGUID:       fmt.Sprintf("0x%016x", joinGroups(gid[4:])),
		LinkLayer:      ll,
	}, nil
}

func (c *caView) hasPKeys(rel string) bool {
	if c.dir == "" {
		_, ok := c.files[rel+"/0"]
		return ok
	}
	ents, err := os.ReadDir(filepath.Join(c.dir, filepath.FromSlash(rel)))
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.Name() != "" && e.Name()[0] >= '0' && e.Name()[0] <= '9' {
			return true
		}
	}
	return false
}

// isFDR10 is ibstat's is_fdr10: the rate text ends its parenthesis in
// "FDR10".
func (c *caView) isFDR10(dir string) bool {
	s, ok := c.sysString(dir + "rate")
	if !ok {
		return false
	}
	i := strings.IndexByte(s, ')')
	return i >= 5 && strings.EqualFold(s[i-5:i], "fdr10")
}

type ibstatFlags struct {
	list, short, portList bool
}

func newIBStat(e *Env) *cobra.Command {
	var f ibstatFlags
	c := &cobra.Command{
		Use:   "ibstat [flags] [<ca_name>] [portnum]",
		Short: "show the local RDMA devices and their ports (infiniband-diags ibstat)",
		Long: `ibstat prints the local RDMA devices and their ports as libibumad reads
them from sysfs. On a fabric other than umad it describes the attached port
from SMPs, as libumad2sim's fake sysfs would.

Examples:
  ibstat -l        # list all IB devices
  ibstat mthca0 2  # stat port 2 of 'mthca0'`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIBStat(e, &f, args)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&f.list, "list_of_cas", "l", false, "list all IB devices")
	fl.BoolVarP(&f.short, "short", "s", false, "short output")
	fl.BoolVarP(&f.portList, "port_list", "p", false, "show port list")
	return c
}

func runIBStat(e *Env, f *ibstatFlags, args []string) error {
	// -C and -P name the device and port as the arguments do.
	if len(args) == 0 && e.CA != "" {
		args = append(args, e.CA)
		if e.Port != "" {
			args = append(args, e.Port)
		}
	}
	all, err := e.localCAs()
	if err != nil {
		return err
	}
	var cas []*caView
	for _, c := range all {
		if c.isIBType() {
			cas = append(cas, c)
		}
	}
	portnum := -1
	if len(args) > 1 {
		portnum = int(int32(cStrtoul(args[1])))
	}
	if len(args) > 0 {
		var found *caView
		for _, c := range cas {
			if c.name == args[0] {
				found = c
			}
		}
		if found == nil {
			return iberror(nil, "'%s' IB device can't be found", args[0])
		}
		cas = []*caView{found}
	}
	res := &IBStatResult{}
	var text strings.Builder
	// A device (or the port asked for) that cannot be shown is reported
	// and the others are shown, as infiniband-diags 56 does; the exit
	// status is IBEXIT's, as 44's was (docs/ibtool.md): the last failure is
	// returned, the ones before it are printed.
	var failed error
	fail := func(err error, name string) {
		if failed != nil {
			fmt.Fprintf(e.Stderr, "ibstat: %v\n", failed)
		}
		failed = iberror(err, "stat of IB device '%s' failed", name)
	}
	switch {
	case f.portList:
		for _, c := range cas {
			ca, err := c.stat()
			if err != nil {
				return iberror(err, "can't list ports")
			}
			for _, p := range ca.Ports {
				if p.PortGUID != "0x0000000000000000" {
					res.PortGUIDs = append(res.PortGUIDs, p.PortGUID)
					fmt.Fprintln(&text, p.PortGUID)
				}
			}
		}
	case f.list:
		for _, c := range cas {
			res.Names = append(res.Names, c.name)
			fmt.Fprintln(&text, c.name)
		}
	default:
		for _, c := range cas {
			ca, err := c.stat()
			if err != nil {
				fail(err, c.name)
				continue
			}
			if ca.nodeType == 0 {
				continue
			}
			if !f.short && portnum >= 0 {
				var port *IBStatPort
				for i := range ca.Ports {
					if ca.Ports[i].Port == portnum {
						port = &ca.Ports[i]
					}
				}
				if port == nil {
					fmt.Fprintf(e.Stderr, "ibstat: %s: '%s' has no port number %d - max (%d)\n", ca.NodeType, ca.Name, portnum, ca.NumPorts)
					fail(nil, c.name)
					continue
				}
				fmt.Fprintf(&text, "%s: '%s'\n", ca.NodeType, ca.Name)
				writeIBStatPort(&text, port, "", "")
				ca.Ports = []IBStatPort{*port}
				res.CAs = append(res.CAs, *ca)
				continue
			}
			writeIBStatCA(&text, ca)
			if f.short {
				ca.Ports = nil
			} else {
				for i := range ca.Ports {
					writeIBStatPort(&text, &ca.Ports[i], "\t", "\t\t")
				}
			}
			res.CAs = append(res.CAs, *ca)
		}
	}
	if e.JSON {
		if err := e.writeJSON("ibstat", res); err != nil {
			return err
		}
		return failed
	}
	if _, err := io.WriteString(e.Stdout, text.String()); err != nil {
		return err
	}
	return failed
}

func writeIBStatCA(w io.Writer, ca *IBStatCA) {
	fmt.Fprintf(w, "%s '%s'\n", ca.NodeType, ca.Name)
	fmt.Fprintf(w, "\t%s type: %s\n", ca.NodeType, ca.CAType)
	fmt.Fprintf(w, "\tNumber of ports: %d\n", ca.NumPorts)
	fmt.Fprintf(w, "\tFirmware version: %s\n", ca.FirmwareVersion)
	fmt.Fprintf(w, "\tHardware version: %s\n", ca.HardwareVersion)
	fmt.Fprintf(w, "\tNode GUID: %s\n", ca.NodeGUID)
	fmt.Fprintf(w, "\tSystem image GUID: %s\n", ca.SystemImageGUID)
}

func writeIBStatPort(w io.Writer, p *IBStatPort, hdr, pre string) {
	fmt.Fprintf(w, "%sPort %d:\n", hdr, p.Port)
	fmt.Fprintf(w, "%sState: %s\n", pre, p.State)
	fmt.Fprintf(w, "%sPhysical state: %s\n", pre, p.PhysicalState)
	fmt.Fprintf(w, "%sRate: %s\n", pre, p.Rate)
	fmt.Fprintf(w, "%sBase lid: %d\n", pre, int32(p.BaseLID))
	fmt.Fprintf(w, "%sLMC: %d\n", pre, int32(p.LMC))
	fmt.Fprintf(w, "%sSM lid: %d\n", pre, int32(p.SMLID))
	fmt.Fprintf(w, "%sCapability mask: 0x%08x\n", pre, p.CapabilityMask)
	fmt.Fprintf(w, "%sPort GUID: %s\n", pre, p.PortGUID)
	fmt.Fprintf(w, "%sLink layer: %s\n", pre, p.LinkLayer)
}
