package diags

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibpath"
)

// The local RDMA devices as libibumad and the ibstatus script see them,
// for ibstat and ibstatus: sysfs on the umad fabric, and on any other the
// files libumad2sim makes up for an ibsim client.

// caView is one RDMA device as libibumad and the ibstatus script see it:
// the text of its sysfs attribute files. On the umad fabric they are the
// files under /sys/class/infiniband/<dev> (found through package device); on
// any other fabric there is no sysfs for the attached port, so they are made
// up from SMPs to it the way libumad2sim writes its fake sysfs for an ibsim
// client, and the C tools run under libumad2sim print the same.
type caView struct {
	name  string
	dir   string            // the device's sysfs directory, or ""
	files map[string]string // the made-up files when dir is ""
	ports []string          // the entries of ports/, in the shell's glob order
}

// read returns a file's contents as read(2) gives them, at most a page (a
// sysfs attribute's size; libibumad reads 256 bytes of it): a sysfs root
// that points at something else is not read to its end. ok is false when
// the file cannot be read.
func (c *caView) read(rel string) (string, bool) {
	if c.dir == "" {
		s, ok := c.files[rel]
		return s, ok
	}
	f, err := os.Open(filepath.Join(c.dir, filepath.FromSlash(rel)))
	if err != nil {
		return "", false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", false
	}
	return string(b), true
}

// sysString is libibumad's sys_read_string: the text up to the last newline.
func (c *caView) sysString(rel string) (string, bool) {
	s, ok := c.read(rel)
	if !ok {
		return "", false
	}
	if len(s) > 255 {
		s = s[:255]
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s, true
}

// sysUint is sys_read_uint: strtoul(text, NULL, 0), which takes "4: ACTIVE"
// as 4, "0x1a" as 26 and "100 Gb/sec (4X EDR)" as 100.
func (c *caView) sysUint(rel string) (uint32, bool) {
	s, ok := c.sysString(rel)
	return uint32(cStrtoul(s)), ok
}

// sysGroups is sys_read_guid (and the interface half of sys_read_gid): colon
// separated 16-bit hex groups.
func (c *caView) sysGroups(rel string, n int) ([]uint16, bool) {
	s, ok := c.sysString(rel)
	if !ok {
		return nil, false
	}
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == ' ' || r == '\t' || r == '\n' })
	if len(parts) < n {
		return nil, false
	}
	out := make([]uint16, n)
	for i := range out {
		v, _ := strconv.ParseUint(hexPrefix(parts[i]), 16, 64)
		out[i] = uint16(v)
	}
	return out, true
}

func hexPrefix(s string) string {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i], 16) {
			return s[:i]
		}
	}
	return s
}

// sysfsCAs lists the devices of the live (or RDMAKIT_SYSFS) sysfs.
func sysfsCAs() ([]*caView, error) {
	devs, err := device.List(fabric.SysfsRoot())
	if err != nil && !errors.Is(err, device.ErrNoDevices) {
		return nil, fmt.Errorf("listing RDMA devices: %w", err)
	}
	var out []*caView
	for _, d := range devs {
		c := &caView{name: d.Name, dir: d.Dir}
		ents, err := os.ReadDir(filepath.Join(d.Dir, "ports"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading RDMA device %s: %w", d.Name, err)
		}
		for _, e := range ents {
			c.ports = append(c.ports, e.Name())
		}
		sort.Strings(c.ports)
		out = append(out, c)
	}
	return out, nil
}

// simulatedCA is the attached port of a fabric without sysfs, described as
// libumad2sim describes an ibsim port in its fake sysfs (device ibsim0,
// type "simulator", firmware 1, hardware version the NodeInfo revision, one
// port directory named after PortInfo:LocalPortNum, no link_layer file),
// from NodeInfo and PortInfo read by directed route 0.
func (e *Env) simulatedCA() (*caView, error) {
	s, err := e.open()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	self := ibpath.NewDR(0)
	var ni iba.NodeInfo
	if err := s.mc.SubnGet(e.Ctx, self, &ni, 0); err != nil {
		return nil, fmt.Errorf("reading NodeInfo of the local port %s: %w", s.local.Name, err)
	}
	var pi iba.PortInfo
	if err := s.mc.SubnGet(e.Ctx, self, &pi, 0); err != nil {
		return nil, fmt.Errorf("reading PortInfo of the local port %s: %w", s.local.Name, err)
	}
	return simulatedFiles(&ni, &pi), nil
}

func simulatedFiles(ni *iba.NodeInfo, pi *iba.PortInfo) *caView {
	types := map[iba.NodeType]string{iba.NodeTypeCA: "CA", iba.NodeTypeSwitch: "SWITCH", iba.NodeTypeRouter: "ROUTER"}
	nt, ok := types[ni.NodeType]
	if !ok {
		nt = "<unknown>"
	}
	guid4 := func(g uint64) string {
		return fmt.Sprintf("%04x:%04x:%04x:%04x", uint16(g>>48), uint16(g>>32), uint16(g>>16), uint16(g))
	}
	port := strconv.Itoa(int(pi.LocalPortNum))
	p := "ports/" + port + "/"
	states := []string{"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}
	st := "<unknown>"
	if int(pi.PortState) < len(states) {
		st = states[pi.PortState]
	}
	phys := []string{"", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "Phy Test"}
	ph := "<unknown>"
	if v := int(pi.PortPhysicalState); v > 0 && v < len(phys) {
		ph = phys[v]
	}
	files := map[string]string{
		"node_type":          fmt.Sprintf("%x: %s\n", uint8(ni.NodeType), nt),
		"fw_ver":             "1\n",
		"hw_rev":             fmt.Sprintf("%x\n", ni.Revision),
		"hca_type":           "simulator\n",
		"node_guid":          guid4(uint64(ni.NodeGUID)) + "\n",
		"sys_image_guid":     guid4(uint64(ni.SystemImageGUID)) + "\n",
		p + "lid_mask_count": strconv.Itoa(int(pi.LMC)),
		p + "sm_lid":         fmt.Sprintf("0x%x", pi.MasterSMLID),
		p + "sm_sl":          strconv.Itoa(int(pi.MasterSMSL)),
		p + "lid":            fmt.Sprintf("0x%x", pi.LID),
		p + "state":          fmt.Sprintf("%d: %s\n", pi.PortState, st),
		p + "phys_state":     fmt.Sprintf("%d: %s\n", pi.PortPhysicalState, ph),
		p + "rate":           simulatedRate(pi),
		p + "cap_mask":       fmt.Sprintf("0x%08x", pi.CapabilityMask),
		p + "gids/0":         guid4(pi.GIDPrefix) + ":" + guid4(uint64(ni.NodeGUID)+uint64(pi.LocalPortNum)) + "\n",
		p + "pkeys/0":        "0xffff\n",
	}
	return &caView{name: "ibsim0", files: files, ports: []string{port}}
}

// simulatedRate is libumad2sim's rate file, its arithmetic included (EDR
// counts 26 Gb/s a lane there).
func simulatedRate(pi *iba.PortInfo) string {
	speed := 0
	if pi.CapabilityMask&iba.PortCapIsExtendedSpeedsSupported != 0 {
		speed = int(pi.LinkSpeedExtActive)
	}
	lanes := map[uint8]int{1: 1, 2: 4, 4: 8, 8: 12}[pi.LinkWidthActive]
	if speed == 0 {
		speed = int(pi.LinkSpeedActive)
		name := map[int]string{2: " DDR", 4: " QDR"}[speed]
		half := ""
		if lanes*speed*25%10 != 0 {
			half = ".5"
		}
		return fmt.Sprintf("%d%s Gb/sec (%dX%s)\n", lanes*speed*25/10, half, lanes, name)
	}
	name := map[int]string{1: " FDR", 2: " EDR", 4: " HDR", 8: " NDR"}[speed]
	g := 26 * lanes
	if speed == 1 {
		g = 14 * lanes
	}
	return fmt.Sprintf("%d Gb/sec (%dX%s)\n", g, lanes, name)
}

// localCAs is the device list of ibstat and ibstatus on the fabric the
// flags select.
func (e *Env) localCAs() ([]*caView, error) {
	if e.isUmad() {
		return sysfsCAs()
	}
	c, err := e.simulatedCA()
	if err != nil {
		return nil, err
	}
	return []*caView{c}, nil
}
