package diags

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/ibpath"
	"github.com/rdmakit/rdmakit/mad"
)

func init() {
	register(command{name: "ibportstate", make: newIBPortState})
}

// The ops of ibportstate.c, in its order: the first group changes the
// port's state (one at most), the second sets a PortInfo field to a value.
var (
	portStateOps = []string{"query", "enable", "reset", "disable", "down", "arm", "active", "on", "off"}
	portValueOps = []string{"speed", "espeed", "fdr10", "width", "vls", "mtu", "lid", "smlid", "lmc", "mkey", "mkeylease", "mkeyprot"}
)

// IBPortStateResult is what ibportstate read and changed.
type IBPortStateResult struct {
	Target   string `json:"target"`
	Port     int    `json:"port"`
	IsSwitch bool   `json:"isSwitch"`
	// Op is the state op (query, enable, disable, ...); Values the fields
	// asked to change.
	Op     string            `json:"op"`
	Values map[string]uint64 `json:"values,omitempty"`
	// Initial is PortInfo before any change; After the SMA's answer to the
	// SubnSet, when one was sent.
	Initial json.RawMessage `json:"initial"`
	After   json.RawMessage `json:"after,omitempty"`
	// MlnxExtPortInfo is read on Mellanox devices that have it, and
	// MlnxExtAfter is the answer to its SubnSet (fdr10).
	MlnxExtPortInfo json.RawMessage `json:"mlnxExtPortInfo,omitempty"`
	MlnxExtAfter    json.RawMessage `json:"mlnxExtAfter,omitempty"`
	// Peer is the port at the other end of an active switch port queried.
	Peer *IBPortStatePeer `json:"peer,omitempty"`
	// Warnings are the differences between the peers' enabled and active
	// link widths and speeds.
	Warnings []string `json:"warnings,omitempty"`
	// Message is a note the C tool prints instead of changing anything.
	Message string `json:"message,omitempty"`
}

// IBPortStatePeer is the peer port of a switch port.
type IBPortStatePeer struct {
	Target          string          `json:"target"`
	Port            int             `json:"port"`
	IsSwitch        bool            `json:"isSwitch"`
	PortInfo        json.RawMessage `json:"portInfo"`
	MlnxExtPortInfo json.RawMessage `json:"mlnxExtPortInfo,omitempty"`
}

type ibportstateFlags struct {
	direct, lid, guid, showKeys bool
}

func newIBPortState(e *Env) *cobra.Command {
	var f ibportstateFlags
	c := &cobra.Command{
		Use:   "ibportstate [flags] <dest dr_path|lid|guid> <portnum> [<op> [value]]...",
		Short: "query or change the state, speed and width of a port (infiniband-diags ibportstate)",
		Long: `ibportstate shows a port's states, LIDs, link widths and speeds, and
changes them with a SubnSet(PortInfo) when an op asks to, printing the port
before and after. Querying an active switch port also shows the peer port
and warns when the two do not run at the best width and speed they share.

Supported ops: enable, disable, on, off, reset, speed, espeed, fdr10,
	width, query, down, arm, active, vls, mtu, lid, smlid, lmc,
	mkey, mkeylease, mkeyprot

Examples:
  ibportstate 3 1 disable          # by lid, physical port number
  ibportstate -D 0 1               # (query) by direct route
  ibportstate 3 1 reset            # by lid
  ibportstate 3 1 speed 1          # by lid
  ibportstate 3 1 width 1          # by lid
  ibportstate -D 0 1 lid 0x1234 arm`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIBPortState(e, &f, args)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&f.direct, "Direct", "D", false, "use Direct address argument")
	fl.BoolVarP(&f.lid, "Lid", "L", false, "use LID address argument")
	fl.BoolVarP(&f.guid, "Guid", "G", false, "use GUID address argument")
	fl.BoolVarP(&f.showKeys, "show_keys", "K", false, "display security keys in output")
	return c
}

// portStateRun is one ibportstate run.
type portStateRun struct {
	e    *Env
	s    *session
	get  mad.SubnGetter // the session's (--sa) for a query, SMPs before a Set
	f    *ibportstateFlags
	out  *bytes.Buffer
	res  *IBPortStateResult
	warn func(string, ...any)
}

func runIBPortState(e *Env, f *ibportstateFlags, args []string) error {
	if len(args) < 2 {
		return usagef("want <dest dr_path|lid|guid> <portnum> [<op>]")
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	defer s.Close()
	target, err := resolveSMPDest(s, args[0], &addrFlags{direct: f.direct, lid: f.lid, guid: f.guid})
	if err != nil {
		return err
	}
	portnum := int(int32(cStrtoul(args[1])))
	op, values, err := parsePortOps(args[2:])
	if err != nil {
		return err
	}
	r := &portStateRun{e: e, s: s, f: f, out: &bytes.Buffer{},
		res: &IBPortStateResult{Target: portidString(target), Port: portnum, Op: op, Values: values}}
	// A Set writes back the PortInfo it read, so that is read from the
	// port itself even with --sa; a query reads as --sa says.
	r.get = s
	if op != "query" || len(values) > 0 {
		r.get = s.mc
	}
	r.warn = func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		r.res.Warnings = append(r.res.Warnings, msg)
		fmt.Fprintf(e.Stderr, "ibportstate: warning: %s\n", msg)
	}
	err = r.run(target, portnum)
	// What was printed before a failure stays printed, as the C tool's
	// stdout does.
	if e.JSON {
		if err != nil {
			return err
		}
		return e.writeJSON("ibportstate", r.res)
	}
	if _, werr := e.Stdout.Write(r.out.Bytes()); werr != nil && err == nil {
		err = werr
	}
	return err
}

// parsePortOps reads the ops as ibportstate.c does: exact names, one state
// op at most, and a checked value after each value op.
func parsePortOps(args []string) (string, map[string]uint64, error) {
	op := ""
	values := map[string]uint64{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if contains(portStateOps, a) {
			if op != "" {
				return "", nil, iberror(nil, "%s only one of: query, enable, disable, reset, down, arm, active, can be specified", a)
			}
			op = a
			continue
		}
		if !contains(portValueOps, a) {
			return "", nil, iberror(nil, "invalid operation: %s", a)
		}
		i++
		if i >= len(args) {
			return "", nil, iberror(nil, "%s requires an additional parameter", a)
		}
		v := cStrtoull(args[i])
		bad := ""
		switch a {
		case "speed":
			bad = when(v > 15, "invalid speed value %d")
		case "espeed":
			bad = when(v > 31, "invalid extended speed value %d")
		case "fdr10":
			bad = when(v > 1, "invalid fdr10 speed value %d")
		case "width":
			bad = when(v > 31 && v != 255, "invalid width value %d")
		case "vls":
			bad = when(v == 0 || v > 5, "invalid vls value %d")
		case "mtu":
			bad = when(v == 0 || v > 5, "invalid mtu value %d")
		case "lid":
			bad = when(v == 0 || v >= 0xc000, "invalid lid value 0x%x")
		case "smlid":
			bad = when(v == 0 || v >= 0xc000, "invalid smlid value 0x%x")
		case "lmc":
			bad = when(v > 7, "invalid lmc value %d")
		case "mkey":
			// All 64-bit values are legal, but only as a whole number; the C
			// tool then asks on the terminal, which a script cannot answer.
			k, err := strconv.ParseUint(args[i], 0, 64)
			if err != nil {
				return "", nil, iberror(nil, "Bad new M_Key")
			}
			v = k
		case "mkeylease":
			bad = when(v > 0xffff, "invalid mkey lease time %d")
		case "mkeyprot":
			bad = when(v > 3, "invalid mkey protection bit setting %d")
		}
		if bad != "" {
			return "", nil, iberror(nil, bad, v)
		}
		values[a] = v
	}
	if op == "" {
		op = "query"
	}
	return op, values, nil
}

func when(cond bool, msg string) string {
	if cond {
		return msg
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cStrtoull is strtoull(s, NULL, 0): cStrtoul is 64 bits wide already.
func cStrtoull(s string) uint64 { return cStrtoul(s) }

// mlnxExtPortInfoSupported is infiniband-diags' is_mlnx_ext_port_info_supported
// (ibdiag.conf MLX_EPI, on by default): Mellanox switches and HCAs that
// carry attribute 0xFF90.
func mlnxExtPortInfoSupported(vendor uint32, dev uint16) bool {
	in := func(lo, hi uint16) bool { return dev >= lo && dev <= hi }
	bull := vendor == 0x119f
	if in(0xc738, 0xc73b) || dev == 0xc839 || dev == 0xcb20 || dev == 0xcf08 || dev == 0xcf09 || dev == 0xd2f0 ||
		(bull && (dev == 0x1b02 || dev == 0x1b50 || dev == 0x1ba0 || in(0x1bd0, 0x1bd5) || dev == 0x1bf0)) {
		return true
	}
	return in(0x1003, 0x101b) || dev == 0xa2d2 ||
		(bull && (dev == 0x1b33 || dev == 0x1b73 || dev == 0x1b40 || dev == 0x1b41 || dev == 0x1b60 || dev == 0x1b61 ||
			dev == 0x1b83 || dev == 0x1b93 || dev == 0x1b94 || dev == 0x1bb4 || dev == 0x1bb5 || in(0x1bc4, 0x1bc6)))
}

const fdr10 = 0x01 // MlnxExtPortInfo link speed bit of FDR10

// extCaps is what get_port_info returns: which groups of extended speeds
// the port's capability masks (a switch's port 0) say it has: ext the
// first (IsExtendedSpeedsSupported), ext2 the second, XDR
// (IsExtendedSpeeds2Supported in a valid CapabilityMask2; infiniband-diags
// 56 and later).
type extCaps struct{ ext, ext2 bool }

func (c extCaps) any() bool { return c.ext || c.ext2 }

// nodeInfo is get_node_info.
func (r *portStateRun) nodeInfo(t mad.Target) (*iba.NodeInfo, error) {
	var ni iba.NodeInfo
	if err := r.get.SubnGet(r.e.Ctx, t, &ni, 0); err != nil {
		return nil, iberror(err, "smp query nodeinfo failed")
	}
	return &ni, nil
}

// portInfo is get_port_info: the port's PortInfo, and which extended
// speeds apply (from port 0 on a switch).
func (r *portStateRun) portInfo(t mad.Target, port int, isSwitch bool) (*iba.PortInfo, extCaps, error) {
	var capInfo iba.PortInfo
	if isSwitch {
		if err := r.get.SubnGet(r.e.Ctx, t, &capInfo, 0); err != nil {
			return nil, extCaps{}, iberror(err, "smp query port 0 portinfo failed")
		}
	}
	var pi iba.PortInfo
	if err := r.get.SubnGet(r.e.Ctx, t, &pi, uint32(port)); err != nil {
		return nil, extCaps{}, iberror(err, "smp query portinfo failed")
	}
	if !isSwitch {
		capInfo = pi
	}
	return &pi, extCaps{
		ext: capInfo.CapabilityMask&iba.PortCapIsExtendedSpeedsSupported != 0,
		ext2: capInfo.CapabilityMask&iba.PortCapIsCapabilityMask2Supported != 0 &&
			capInfo.CapabilityMask2&iba.PortCap2IsExtendedSpeeds2Supported != 0,
	}, nil
}

func (r *portStateRun) mlnxExt(t mad.Target, port int) (*iba.MlnxExtPortInfo, error) {
	var x iba.MlnxExtPortInfo
	if err := r.get.SubnGet(r.e.Ctx, t, &x, uint32(port)); err != nil {
		return nil, iberror(err, "smp query ext portinfo failed")
	}
	return &x, nil
}

// raw encodes an attribute for the printers and the JSON.
func raw(a iba.Attribute) ([]byte, json.RawMessage) {
	d := a.Desc()
	b := make([]byte, d.Size)
	if err := a.MarshalTo(b); err != nil {
		return b, nil
	}
	var j bytes.Buffer
	if err := ibaprint.JSON(&j, d, b); err != nil {
		return b, nil
	}
	return b, bytes.TrimSpace(j.Bytes())
}

// showPortInfo is show_port_info: the states, LIDs, widths and speeds of
// the PortInfo printout, each group of extended speeds that applies, and
// the M_Key fields on a CA or a switch's port 0.
func (r *portStateRun) showPortInfo(t ibpath.Path, pi *iba.PortInfo, port int, espeed extCaps, isSwitch bool) error {
	b, _ := raw(pi)
	var full strings.Builder
	pr := ibaprint.SMPPortInfo
	if r.f.showKeys {
		pr = ibaprint.SMPPortInfoKeys
	}
	if err := pr(&full, b); err != nil {
		return err
	}
	lines := map[string]string{}
	for _, l := range strings.Split(full.String(), "\n") {
		if label, _, ok := strings.Cut(l, ":"); ok {
			lines[label] = l
		}
	}
	labels := []string{"LinkState", "PhysLinkState", "Lid", "SMLid", "LMC", "LinkWidthSupported", "LinkWidthEnabled",
		"LinkWidthActive", "LinkSpeedSupported", "LinkSpeedEnabled", "LinkSpeedActive"}
	if espeed.ext {
		labels = append(labels, "LinkSpeedExtSupported", "LinkSpeedExtEnabled", "LinkSpeedExtActive")
	}
	if espeed.ext2 {
		labels = append(labels, "LinkSpeedExtSupported2", "LinkSpeedExtEnabled2", "LinkSpeedExtActive2")
	}
	if !isSwitch || port == 0 {
		labels = append(labels, "Mkey", "MkeyLeasePeriod", "ProtectBits")
	}
	fmt.Fprintf(r.out, "# Port info: %s port %d\n", portidString(t), port)
	for _, l := range labels {
		line, ok := lines[l]
		if !ok {
			return fmt.Errorf("PortInfo printer has no %s line", l)
		}
		fmt.Fprintln(r.out, line)
	}
	return nil
}

func (r *portStateRun) showMlnxExt(t ibpath.Path, x *iba.MlnxExtPortInfo, port int) error {
	b, _ := raw(x)
	fmt.Fprintf(r.out, "# MLNX ext Port info: %s port %d\n", portidString(t), port)
	return ibaprint.SMPMlnxExtPortInfo(r.out, b)
}

func (r *portStateRun) run(target ibpath.Path, portnum int) error {
	res := r.res
	ni, err := r.nodeInfo(target)
	if err != nil {
		return err
	}
	isSwitch := ni.NodeType == iba.NodeTypeSwitch
	res.IsSwitch = isSwitch
	_, k1 := res.Values["mkey"]
	_, k2 := res.Values["mkeylease"]
	_, k3 := res.Values["mkeyprot"]
	if (k1 || k2 || k3) && isSwitch && portnum != 0 {
		return iberror(nil, "Can't set M_Key fields on switch port != 0")
	}
	change := res.Op != "query" || len(res.Values) > 0
	kind := "CA/RT"
	if isSwitch {
		kind = "Switch"
	}
	if change {
		fmt.Fprintf(r.out, "Initial %s PortInfo:\n", kind)
	} else {
		fmt.Fprintf(r.out, "%s PortInfo:\n", kind)
	}
	pi, espeed, err := r.portInfo(target, portnum, isSwitch)
	if err != nil {
		return err
	}
	_, res.Initial = raw(pi)
	if err := r.showPortInfo(target, pi, portnum, espeed, isSwitch); err != nil {
		return err
	}
	mlnx := mlnxExtPortInfoSupported(ni.VendorID, ni.DeviceID)
	ext := &iba.MlnxExtPortInfo{}
	if mlnx {
		if ext, err = r.mlnxExt(target, portnum); err != nil {
			return err
		}
		_, res.MlnxExtPortInfo = raw(ext)
		if err := r.showMlnxExt(target, ext, portnum); err != nil {
			return err
		}
	}
	if change {
		return r.set(target, pi, ext, portnum, espeed, isSwitch)
	}
	if isSwitch && portnum != 0 && pi.PortState == iba.PortState(4) {
		return r.peer(target, pi, ext, portnum, espeed)
	}
	return nil
}

// set changes the port: PortInfo as read with the states made NOPs and the
// asked fields written (speeds and width always, 0 meaning no change).
func (r *portStateRun) set(target ibpath.Path, pi *iba.PortInfo, ext *iba.MlnxExtPortInfo, portnum int, espeed extCaps, isSwitch bool) error {
	v := r.res.Values
	has := func(k string) bool { _, ok := v[k]; return ok }
	physState := pi.PortPhysicalState
	// An SMA refuses a LID it cannot have: keep an unassigned one valid.
	if !has("lid") && (pi.LID == 0 || pi.LID == 0xffff) {
		pi.LID = 0x1234
	}
	if !has("smlid") && (pi.MasterSMLID == 0 || pi.MasterSMLID == 0xffff) {
		pi.MasterSMLID = 0x1234
	}
	pi.PortState, pi.PortPhysicalState = 0, 0
	switch r.res.Op {
	case "on":
		if physState != 3 {
			r.res.Message = "Port is already in enable state"
			fmt.Fprintln(r.out, r.res.Message)
			return nil
		}
		pi.PortPhysicalState = 2
	case "enable", "reset":
		pi.PortPhysicalState = 2 // Polling
	case "off", "disable":
		r.res.Message = "Disable may be irreversible"
		fmt.Fprintln(r.out, r.res.Message)
		pi.PortPhysicalState = 3 // Disabled
	case "down":
		pi.PortState = 1
	case "arm":
		pi.PortState = 3
	case "active":
		pi.PortState = 4
	}
	pi.LinkSpeedEnabled = uint8(v["speed"]) & 0xf
	pi.LinkSpeedExtEnabled = uint8(v["espeed"]) & 0x1f
	pi.LinkSpeedExtEnabled2 = uint8(v["espeed"] >> 5) // 0, no change: espeed is at most 31
	pi.LinkWidthEnabled = uint8(v["width"])
	if has("vls") {
		pi.OperationalVLs = uint8(v["vls"])
	}
	if has("mtu") {
		pi.NeighborMTU = iba.MTU(v["mtu"])
	}
	if has("lid") {
		pi.LID = uint16(v["lid"])
	}
	if has("smlid") {
		pi.MasterSMLID = uint16(v["smlid"])
	}
	if has("lmc") {
		pi.LMC = uint8(v["lmc"])
	}
	if has("fdr10") {
		ext.StateChangeEnable = fdr10
		ext.LinkSpeedEnabled = uint8(v["fdr10"])
		if err := r.s.mc.SubnSet(r.e.Ctx, target, ext, uint32(portnum)); err != nil {
			return iberror(err, "smp set MLNX ext portinfo failed")
		}
		_, r.res.MlnxExtAfter = raw(ext)
		fmt.Fprintf(r.out, "\nAfter MLNXExtendedPortInfo set:\n")
		if err := r.showMlnxExt(target, ext, portnum); err != nil {
			return err
		}
	}
	if has("mkey") {
		pi.MKey = v["mkey"]
	}
	if has("mkeylease") {
		pi.MKeyLeasePeriod = uint16(v["mkeylease"])
	}
	if has("mkeyprot") {
		pi.MKeyProtectBits = uint8(v["mkeyprot"])
	}
	mod := uint32(portnum)
	if espeed.any() {
		mod |= 1 << 31
	}
	if err := r.s.mc.SubnSet(r.e.Ctx, target, pi, mod); err != nil {
		return iberror(err, "smp set portinfo failed")
	}
	_, r.res.After = raw(pi)
	fmt.Fprintf(r.out, "\nAfter PortInfo set:\n")
	return r.showPortInfo(target, pi, portnum, espeed, isSwitch)
}

// peerTarget is the port at the other end of a switch port: one more hop
// on a directed route, or from a LID one directed hop out of the port with
// the local port's LID as DrSLID.
func (r *portStateRun) peerTarget(target ibpath.Path, portnum int) (ibpath.Path, error) {
	if dr, ok := target.(*ibpath.DRPath); ok && (dr.DLID == 0 || dr.DLID == mad.LIDPermissive) {
		if len(dr.DrPath) >= mad.MaxHops+1 {
			return nil, iberror(nil, "Too many hops")
		}
		hops := append(append([]byte{}, dr.DrPath...), byte(portnum))
		return ibpath.NewDR(hops...), nil
	}
	var lid uint16
	switch v := target.(type) {
	case *ibpath.IBPath:
		lid = v.DLID
	case *ibpath.DRPath:
		lid = v.DLID
	}
	p := ibpath.NewDR(0, byte(portnum))
	p.DLID = lid
	p.DrSLID = r.s.local.LID
	p.Mark("DLID")
	p.Mark("drSLID")
	return p, nil
}

func (r *portStateRun) peer(target ibpath.Path, pi *iba.PortInfo, ext *iba.MlnxExtPortInfo, portnum int, espeed extCaps) error {
	pt, err := r.peerTarget(target, portnum)
	if err != nil {
		return err
	}
	pni, err := r.nodeInfo(pt)
	if err != nil {
		return err
	}
	peerSwitch := pni.NodeType == iba.NodeTypeSwitch
	peerPort := int(pni.LocalPortNum)
	fmt.Fprintf(r.out, "Peer PortInfo:\n")
	ppi, peerESpeed, err := r.portInfo(pt, peerPort, peerSwitch)
	if err != nil {
		return err
	}
	peer := &IBPortStatePeer{Target: portidString(pt), Port: peerPort, IsSwitch: peerSwitch}
	_, peer.PortInfo = raw(ppi)
	r.res.Peer = peer
	mlnx := mlnxExtPortInfoSupported(pni.VendorID, pni.DeviceID)
	pext := &iba.MlnxExtPortInfo{}
	if mlnx {
		if pext, err = r.mlnxExt(pt, peerPort); err != nil {
			return err
		}
		_, peer.MlnxExtPortInfo = raw(pext)
	}
	if err := r.showPortInfo(pt, ppi, peerPort, peerESpeed, peerSwitch); err != nil {
		return err
	}
	if mlnx {
		if err := r.showMlnxExt(pt, pext, peerPort); err != nil {
			return err
		}
	}
	// The C tool compares with the peer's MlnxExtPortInfo even where it
	// did not read it (zeros then).
	if !mlnx {
		pext = &iba.MlnxExtPortInfo{}
	}
	pick := func(enabled, supported, all uint8) uint8 {
		if enabled == all {
			return supported
		}
		return enabled
	}
	width := pick(pi.LinkWidthEnabled, pi.LinkWidthSupported, 255)
	peerWidth := pick(ppi.LinkWidthEnabled, ppi.LinkWidthSupported, 255)
	for _, w := range []struct {
		bit, active uint8
		name        string
	}{{0x8, 8, "12x"}, {0x4, 4, "8x"}, {0x2, 2, "4x"}, {0x10, 16, "2x"}, {0x1, 1, "1x"}} {
		if width&peerWidth&w.bit != 0 {
			if pi.LinkWidthActive != w.active {
				r.warn("Peer ports operating at active width %d rather than %d (%s)", pi.LinkWidthActive, w.active, w.name)
			}
			break
		}
	}
	speed := pick(pi.LinkSpeedEnabled, pi.LinkSpeedSupported, 15)
	peerSpeed := pick(ppi.LinkSpeedEnabled, ppi.LinkSpeedSupported, 15)
	for _, s := range []struct {
		bit  uint8
		name string
	}{{4, "10.0 Gbps"}, {2, "5.0 Gbps"}, {1, "2.5 Gbps"}} {
		if speed&peerSpeed&s.bit != 0 {
			if pi.LinkSpeedActive != s.bit {
				r.warn("Peer ports operating at active speed %d rather than %d (%s)", pi.LinkSpeedActive, s.bit, s.name)
			}
			break
		}
	}
	if espeed.any() && peerESpeed.any() {
		// Both groups as one mask, with each port's PortInfo as its own
		// capability port (a switch port's masks are 0: its extended
		// speeds count as none), as ibportstate 56 reads them.
		lsea, lses, lsee := pi.ExtSpeeds(pi)
		_, plses, plsee := ppi.ExtSpeeds(ppi)
		linkSpeedExt := func(enabled, supported uint8) uint8 {
			if enabled&iba.LinkSpeedExtXDR != 0 || enabled != 31 {
				return enabled
			}
			return supported
		}
		es, pes := linkSpeedExt(lsee, lses), linkSpeedExt(plsee, plses)
		for _, s := range []struct {
			bit  uint8
			name string
		}{{iba.LinkSpeedExtXDR, "212.5 Gbps"}, {8, "106.25 Gbps"}, {4, "53.125 Gbps"}, {2, "25.78125 Gbps"}, {1, "14.0625 Gbps"}} {
			if es&pes&s.bit != 0 {
				if lsea != s.bit {
					r.warn("Peer ports operating at active extended speed %d rather than %d (%s)", lsea, s.bit, s.name)
				}
				break
			}
		}
	} else if ext.LinkSpeedEnabled&fdr10 != 0 && pext.LinkSpeedEnabled&fdr10 != 0 && ext.LinkSpeedActive&fdr10 == 0 {
		r.warn("Peer ports operating at active speed %d rather than FDR10", pi.LinkSpeedActive)
	}
	return nil
}
