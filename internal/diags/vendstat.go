package diags

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibaprint"
	"github.com/rdmakit/rdmakit/mad"
)

func init() {
	register(command{name: "vendstat", make: newVendStat})
}

// vendstat speaks Mellanox's vendor class 0x0A (IBA 16.5.1 format, no
// OUI) as infiniband-diags' vendstat.c does; the layouts are iba's
// MlxGeneralInfo, MlxConfigSpaceAccess, MlxCounterGroupInfo and
// MlxConfigCounterGroup.

// Attributes of the Mellanox vendor class (vendstat.c).
const (
	mlxAttrClassPortInfo      = 0x0001
	mlxAttrGeneralInfo        = 0x17
	mlxAttrConfigSpaceAccess  = 0x50
	mlxAttrCounterGroupInfo   = 0x90
	mlxAttrConfigCounterGroup = 0x91
	// mlxIS3DeviceID is InfiniScale III, the only device -w knows.
	mlxIS3DeviceID = 47396
	// mlxIS3PortXmitWait is the config space address of port 1's
	// PortXmitWait on an InfiniScale III; port p adds p<<12.
	mlxIS3PortXmitWait = 0x10013C
	mlxDataSize        = 232
)

// mlxExtFWDevices are the device ID ranges whose general info carries
// the extended firmware version (vendstat.c ext_fw_info_device).
var mlxExtFWDevices = [][2]uint16{
	{0x0245, 0x0245}, {0xc738, 0xc73b}, {0xcb20, 0xcb20}, {0xcf08, 0xcf08}, {0xd2f0, 0xd2f0},
	{0x01b3, 0x01b3}, {0x1003, 0x101b}, {0xa2d2, 0xa2d2}, {0x1b02, 0x1b02}, {0x1b50, 0x1b50},
	{0x1ba0, 0x1ba0}, {0x1bd0, 0x1bd5}, {0x1bf0, 0x1bf0}, {0x1b33, 0x1b33}, {0x1b73, 0x1b73},
	{0x1b40, 0x1b41}, {0x1b60, 0x1b61}, {0x1b83, 0x1b83}, {0x1b93, 0x1b94}, {0x1bb4, 0x1bb5},
	{0x1bc4, 0x1bc6},
}

func mlxExtFW(id uint16) bool {
	for _, r := range mlxExtFWDevices {
		if r[0] <= id && id <= r[1] {
			return true
		}
	}
	return false
}

// VendStatResult is what vendstat read.
type VendStatResult struct {
	Target string `json:"target"`
	// ClassPortInfo is --cpi's.
	ClassPortInfo json.RawMessage `json:"classPortInfo,omitempty"`
	// GeneralInfo is -N's (and -w's) general information.
	GeneralInfo *VendStatGeneralInfo `json:"generalInfo,omitempty"`
	// XmitWait is -w: PortXmitWait of the ports that have one.
	XmitWait []VendStatXmitWait `json:"xmitWait,omitempty"`
	// CounterGroups is -i: the group masks.
	CounterGroups []uint32 `json:"counterGroups,omitempty"`
	// ConfiguredGroups is -c: the selections written.
	ConfiguredGroups []int `json:"configuredGroups,omitempty"`
	// ConfigSpace is -R and -W: the records read or written.
	ConfigSpace []VendStatRecord `json:"configSpace,omitempty"`
	// Errors are queries that failed without ending the command (as in
	// the C tool, -i, -c, -R and -W exit 0 after a failure).
	Errors []string `json:"errors,omitempty"`

	text strings.Builder
}

// VendStatGeneralInfo is the general information as vendstat prints it.
type VendStatGeneralInfo struct {
	HWRevision uint16 `json:"hwRevision"`
	DeviceID   uint16 `json:"deviceId"`
	Uptime     uint32 `json:"uptime"`
	FWVersion  string `json:"fwVersion"`
	FWBuildID  uint32 `json:"fwBuildId"`
	FWDate     string `json:"fwDate"`
	FWPSID     string `json:"fwPsid"`
	FWINIVer   uint32 `json:"fwIniVersion"`
	SWVersion  string `json:"swVersion"`
}

// VendStatXmitWait is one port's PortXmitWait.
type VendStatXmitWait struct {
	Port     int    `json:"port"`
	XmitWait uint32 `json:"xmitWait"`
}

// VendStatRecord is one config space record.
type VendStatRecord struct {
	Address uint32 `json:"address"`
	Data    uint32 `json:"data"`
	Written bool   `json:"written,omitempty"`
}

type vendstatFlags struct {
	addr          addrFlags
	general       bool
	xmitWait      bool
	counterGroups bool
	configGroups  string
	read          []string
	write         []string
	cpi           bool
}

func newVendStat(e *Env) *cobra.Command {
	var f vendstatFlags
	c := &cobra.Command{
		Use:   "vendstat [flags] [<lid|guid> [port]]",
		Short: "query Mellanox vendor-specific attributes (infiniband-diags vendstat)",
		Long: `vendstat sends Mellanox vendor class (0x0A) MADs as infiniband-diags'
vendstat does: general information, port transmit wait counters of
InfiniScale III, counter groups of InfiniScale IV and config space records.
Without a destination it asks the local port.

Examples:
  vendstat -N 6          # IS3 or IS4 general information
  vendstat -w 6          # IS3 port xmit wait counters
  vendstat -i 6 12       # IS4 port 12 counter group info
  vendstat -c 0,1 6 12   # configure IS4 port 12 counter groups for PortXmitDataSL
  vendstat -R 0x1000 6   # read the config space record at 0x1000`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVendStat(e, &f, args)
		},
	}
	fl := c.Flags()
	fl.BoolVarP(&f.general, "N", "N", false, "show IS3 or IS4 general information")
	fl.BoolVarP(&f.xmitWait, "w", "w", false, "show IS3 port xmit wait counters")
	fl.BoolVarP(&f.counterGroups, "i", "i", false, "show IS4 counter group info")
	fl.StringVarP(&f.configGroups, "c", "c", "", "configure IS4 counter groups (<num,num>)")
	fl.StringArrayVarP(&f.read, "Read", "R", nil, "Read configuration space record at addr (<addr,mask>)")
	fl.StringArrayVarP(&f.write, "Write", "W", nil, "Write configuration space record at addr (<addr,val,mask>)")
	fl.BoolVar(&f.cpi, "cpi", false, "show the vendor class's ClassPortInfo, in python-rdma's dotted format (python-rdma)")
	fl.BoolVarP(&f.addr.direct, "Direct", "D", false, "use Direct address argument: a directed route, to the LID of the port it reaches (python-rdma)")
	fl.BoolVarP(&f.addr.lid, "Lid", "L", false, "use LID address argument")
	fl.BoolVarP(&f.addr.guid, "Guid", "G", false, "use GUID address argument")
	return c
}

// scanHex reads up to n comma-separated hex numbers as sscanf's "%x,%x"
// does: it stops at the first that does not parse.
func scanHex(s string, n int) []uint32 {
	var out []uint32
	for _, part := range strings.SplitN(s, ",", n) {
		part = strings.TrimLeft(part, " \t")
		p := strings.TrimPrefix(strings.TrimPrefix(part, "0x"), "0X")
		end := 0
		for end < len(p) && isDigit(p[end], 16) {
			end++
		}
		if end == 0 {
			break
		}
		v := uint32(0)
		for _, c := range []byte(p[:end]) {
			d := cStrtoul("0x" + string(c))
			v = v<<4 | uint32(d)
		}
		out = append(out, v)
		if end < len(p) {
			break // sscanf stops at what does not match ","
		}
	}
	return out
}

// vendstatRecords reads -R or -W values: at most 18, each needing min
// numbers; the mask defaults to all ones.
func vendstatRecords(vals []string, write bool) ([]iba.MlxConfigSpaceRecord, error) {
	var recs []iba.MlxConfigSpaceRecord
	for _, v := range vals {
		if len(recs) == 18 {
			break
		}
		if write {
			n := scanHex(v, 3)
			if len(n) < 2 {
				return nil, usagef("-W %q: want addr,val[,mask] in hex", v)
			}
			r := iba.MlxConfigSpaceRecord{Address: n[0], Data: n[1], Mask: 0xffffffff}
			if len(n) > 2 {
				r.Mask = n[2]
			}
			recs = append(recs, r)
			continue
		}
		n := scanHex(v, 2)
		if len(n) < 1 {
			return nil, usagef("-R %q: want addr[,mask] in hex", v)
		}
		r := iba.MlxConfigSpaceRecord{Address: n[0], Mask: 0xffffffff}
		if len(n) > 1 {
			r.Mask = n[1]
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// vendstatRun is one vendstat invocation's connection and result.
type vendstatRun struct {
	e      *Env
	s      *session
	target mad.Target
	res    *VendStatResult
}

// do is vendstat's do_vendor: one class 0x0A RPC whose 232 data bytes go
// out and come back in buf.
func (v *vendstatRun) do(method iba.Method, attr uint16, mod uint32, buf []byte) error {
	rep, err := v.s.mc.Do(v.e.Ctx, mad.Request{Target: v.target, Class: iba.ClassMellanox, Method: method,
		AttrID: attr, AttrMod: mod, Data: buf[:mlxDataSize], Unchecked: true})
	if err != nil {
		fmt.Fprintf(v.e.Stderr, "vendstat: method %d, attribute %d failure\n", uint8(method), attr)
		return err
	}
	copy(buf, rep.Data())
	return nil
}

// fail records a failure the C tool only reports.
func (v *vendstatRun) fail(msg string) {
	fmt.Fprintln(v.e.Stderr, msg)
	v.res.Errors = append(v.res.Errors, msg)
}

func runVendStat(e *Env, f *vendstatFlags, args []string) error {
	var cg []int
	if f.configGroups != "" {
		var a, b int
		if n, _ := fmt.Sscanf(f.configGroups, "%d,%d", &a, &b); n != 2 {
			return usagef("-c %q: want <num,num>", f.configGroups)
		}
		cg = []int{a, b}
	}
	reads, err := vendstatRecords(f.read, false)
	if err != nil {
		return err
	}
	writes, err := vendstatRecords(f.write, true)
	if err != nil {
		return err
	}
	port := uint32(0)
	if len(args) > 1 {
		port = uint32(cStrtoul(args[1]))
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	defer s.Close()
	v := &vendstatRun{e: e, s: s, res: &VendStatResult{}}
	if len(args) > 0 {
		if v.target, err = resolveGMPDest(s, args[0], &f.addr); err != nil {
			return err
		}
	} else {
		// resolve_self: the local port, by its LID.
		v.target = mad.Route{Addr: mad.Addr{LID: s.local.LID, QPN: mad.QP1, QKey: mad.QP1QKey}}
		port = uint32(s.local.PortNum)
	}
	v.res.Target = fmt.Sprintf("Lid %d", v.target.Route().Addr.LID)
	switch {
	case f.cpi:
		if err := v.classPortInfo(); err != nil {
			return err
		}
	case f.counterGroups:
		v.counterGroupInfo(port)
	case cg != nil:
		v.configCounterGroups(port, cg)
	case len(reads) > 0 || len(writes) > 0:
		if len(reads) > 0 {
			v.configSpace(false, reads)
		}
		if len(writes) > 0 {
			v.configSpace(true, writes)
		}
	default:
		if err := v.generalAndXmitWait(f.general, f.xmitWait); err != nil {
			return err
		}
	}
	if e.JSON {
		return e.writeJSON("vendstat", v.res)
	}
	_, err = io.WriteString(e.Stdout, v.res.text.String())
	return err
}

// classPortInfo is python-rdma's --cpi: the class's ClassPortInfo
// (IBA 13.4.8.1), printed in its dotted format.
func (v *vendstatRun) classPortInfo() error {
	buf := make([]byte, 1024)
	if err := v.do(iba.MethodGet, mlxAttrClassPortInfo, 0, buf); err != nil {
		return iberror(err, "classportinfo query")
	}
	var cpi iba.ClassPortInfo
	d := cpi.Desc()
	v.res.ClassPortInfo = jsonOf(d, buf[:d.Size])
	return ibaprint.StructDotted(&v.res.text, d, buf[:d.Size])
}

func (v *vendstatRun) counterGroupInfo(port uint32) {
	buf := make([]byte, 1024)
	if v.do(iba.MethodGet, mlxAttrCounterGroupInfo, port, buf) != nil {
		v.fail("counter group info query failure")
		return
	}
	n := int(buf[11])
	fmt.Fprintf(&v.res.text, "counter_group_info:\n%d counter groups\n", n)
	for i := 0; i < n; i++ {
		// The C tool reads past its two masks when a device claims more.
		m := binary.BigEndian.Uint32(buf[12+4*i:])
		v.res.CounterGroups = append(v.res.CounterGroups, m)
		fmt.Fprintf(&v.res.text, "group%d mask %#x\n", i, m)
	}
}

func (v *vendstatRun) configCounterGroups(port uint32, cg []int) {
	fmt.Fprintf(&v.res.text, "counter_groups_config: configuring group0 %d group1 %d\n", cg[0], cg[1])
	buf := make([]byte, 1024)
	buf[15], buf[19] = byte(cg[0]), byte(cg[1])
	if v.do(iba.MethodSet, mlxAttrConfigCounterGroup, port, buf) != nil {
		v.fail("config counter group set failure")
		return
	}
	v.res.ConfiguredGroups = cg
	clear(buf)
	if v.do(iba.MethodGet, mlxAttrConfigCounterGroup, port, buf) != nil {
		v.fail("config counter group query failure")
	}
}

// configSpace is do_config_space_records.
func (v *vendstatRun) configSpace(set bool, recs []iba.MlxConfigSpaceRecord) {
	buf := make([]byte, 1024)
	for i, r := range recs {
		binary.BigEndian.PutUint32(buf[8+12*i:], r.Address)
		binary.BigEndian.PutUint32(buf[12+12*i:], r.Data)
		binary.BigEndian.PutUint32(buf[16+12*i:], r.Mask)
	}
	method, what := iba.MethodGet, "get"
	if set {
		method, what = iba.MethodSet, "set"
	}
	if v.do(method, mlxAttrConfigSpaceAccess, 2<<22|uint32(len(recs))<<16, buf) != nil {
		v.fail(fmt.Sprintf("cannot %s config space records", what))
		return
	}
	for i := range recs {
		addr := binary.BigEndian.Uint32(buf[8+12*i:])
		data := binary.BigEndian.Uint32(buf[12+12*i:]) & binary.BigEndian.Uint32(buf[16+12*i:])
		v.res.ConfigSpace = append(v.res.ConfigSpace, VendStatRecord{Address: addr, Data: data, Written: set})
		fmt.Fprintf(&v.res.text, "Config space record at 0x%x: 0x%x\n", addr, data)
	}
}

func (v *vendstatRun) generalAndXmitWait(general, xmitWait bool) error {
	if !general && !xmitWait {
		return iberror(nil, "at least one of -N and -w must be specified")
	}
	buf := make([]byte, 1024)
	if v.do(iba.MethodGet, mlxAttrClassPortInfo, 0, buf) != nil {
		return iberror(nil, "classportinfo query")
	}
	clear(buf)
	if v.do(iba.MethodGet, mlxAttrGeneralInfo, 0, buf) != nil {
		return iberror(nil, "generalinfo query")
	}
	var gi iba.MlxGeneralInfo
	_ = gi.Unmarshal(buf[:mlxDataSize])
	fwMajor, fwMinor, fwSub := uint32(gi.FWMajor), uint32(gi.FWMinor), uint32(gi.FWSubMinor)
	swMajor, swMinor, swSub := gi.SWMajor, gi.SWMinor, gi.SWSubMinor
	if mlxExtFW(gi.DeviceID) {
		var ext iba.MlxGeneralInfoExt
		_ = ext.Unmarshal(buf[:mlxDataSize])
		fwMajor, fwMinor, fwSub = ext.FWExtMajor, ext.FWExtMinor, ext.FWExtSubMinor
		swMajor, swMinor, swSub = ext.SWMajor, ext.SWMinor, ext.SWSubMinor
	}
	if general {
		g := &VendStatGeneralInfo{
			HWRevision: gi.HWRevision, DeviceID: gi.DeviceID, Uptime: gi.Uptime,
			FWVersion: fmt.Sprintf("%02d.%02d.%02d", fwMajor, fwMinor, fwSub), FWBuildID: gi.FWBuildID,
			FWDate: fmt.Sprintf("%02x/%02x/%04x", gi.FWMonth, gi.FWDay, gi.FWYear),
			// printf's %s: to the first NUL, past the 16 bytes if need be.
			FWPSID: cString(buf[56:]), FWINIVer: gi.FWINIFileVersion,
			SWVersion: fmt.Sprintf("%02d.%02d.%02d", swMajor, swMinor, swSub),
		}
		v.res.GeneralInfo = g
		w := &v.res.text
		fmt.Fprintf(w, "hw_dev_rev:  0x%04x\nhw_dev_id:   0x%04x\nhw_uptime:   0x%08x\n", g.HWRevision, g.DeviceID, g.Uptime)
		fmt.Fprintf(w, "fw_version:  %s\nfw_build_id: 0x%04x\nfw_date:     %s\n", g.FWVersion, g.FWBuildID, g.FWDate)
		fmt.Fprintf(w, "fw_psid:     '%s'\nfw_ini_ver:  %d\nsw_version:  %s\n", g.FWPSID, int32(g.FWINIVer), g.SWVersion)
	}
	if !xmitWait {
		return nil
	}
	if gi.DeviceID != mlxIS3DeviceID {
		return iberror(nil, "Unsupported device ID 0x%x", gi.DeviceID)
	}
	for _, part := range []struct {
		first, n int
		port     func(i int) int
	}{
		{1, 16, func(i int) int { return i + 4 }}, // port 4 is the first
		{17, 8, func(i int) int {
			if i < 4 {
				return i + 21
			}
			return i - 3
		}},
	} {
		clear(buf)
		for i := 0; i < part.n; i++ {
			binary.BigEndian.PutUint32(buf[8+12*i:], mlxIS3PortXmitWait+uint32(part.first+i)<<12)
		}
		if v.do(iba.MethodGet, mlxAttrConfigSpaceAccess, 2<<22|uint32(part.n)<<16, buf) != nil {
			return iberror(nil, "vendstat")
		}
		for i := 0; i < part.n; i++ {
			if d := binary.BigEndian.Uint32(buf[12+12*i:]); d != 0 {
				p := part.port(i)
				v.res.XmitWait = append(v.res.XmitWait, VendStatXmitWait{Port: p, XmitWait: d})
				fmt.Fprintf(&v.res.text, "Port %d: PortXmitWait 0x%x\n", p, d)
			}
		}
	}
	return nil
}
