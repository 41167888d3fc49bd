package device

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/rdmakit/rdmakit/iba"
)

// Port is one end port of a Device, <Device.Dir>/ports/<Num>. Its fields are
// a snapshot taken when the device list was read; Reload reads them again.
type Port struct {
	Device *Device
	Num    uint8

	State     PortState
	PhysState PhysState
	// Rate is the sysfs text, "100 Gb/sec (4X EDR)"; RateGbps, Width and
	// Speed are parsed from it (zero when the text has another form).
	Rate      string
	RateGbps  float64
	Width     int    // lanes: 1, 2, 4, 8, 12
	Speed     string // "SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR"
	LID       uint16
	SMLID     uint16
	LMC       uint8
	SMSL      uint8
	CapMask   uint32 // PortInfo:CapabilityMask (IBA 14.2.5.6)
	LinkLayer LinkLayer

	// PortGUID is the interface ID of GID 0, the port GUID on InfiniBand.
	PortGUID iba.GUID
	// GIDPrefix is the subnet prefix of GID 0.
	GIDPrefix uint64
	// GIDs are the valid entries of the GID table (all-zero ones skipped).
	GIDs []GIDEntry
	// PKeys are the valid entries of the P_Key table.
	PKeys []PKeyEntry

	// Umad is the port's own umad device (class infiniband_mad, by ibdev
	// and port), Issm its issm device (set IsSM while open); nil when
	// ib_umad is not loaded.
	Umad *CharDev
	Issm *CharDev
	// GSIUmad carries GMPs (QP1) and SMIUmad carries SMPs (QP0) for this
	// port. Both are Umad on an ordinary HCA. On a planarized HCA they may
	// belong to a sibling device with the same port GUID (see doc.go), and
	// SMIUmad is nil where no device offers an SMI for this port (RoCE,
	// iWARP, IsSMDisabled without an SMI sibling).
	GSIUmad *CharDev
	SMIUmad *CharDev
	// GSIPort and SMIPort are the ports GSIUmad and SMIUmad belong to.
	GSIPort *Port
	SMIPort *Port

	// Dir is the port's sysfs directory.
	Dir string
}

// GIDEntry is one valid entry of a port's GID table.
type GIDEntry struct {
	Index int
	GID   iba.GID
	// Type is gid_attrs/types/<i>: "IB/RoCE v1" or "RoCE v2"; empty when
	// the kernel does not say.
	Type string
	// NetDev is gid_attrs/ndevs/<i>, the netdev a RoCE GID belongs to.
	NetDev string
}

// PKeyEntry is one valid entry of a port's P_Key table (IBA 10.9).
type PKeyEntry struct {
	Index int
	PKey  uint16
}

// String names the port as python-rdma and rdma(8) do, "mlx5_0/1".
func (p *Port) String() string { return p.Device.Name + "/" + strconv.Itoa(int(p.Num)) }

// DefaultGID is GID 0, the subnet prefix joined with the port GUID.
func (p *Port) DefaultGID() iba.GID { return iba.MakeGID(p.GIDPrefix, p.PortGUID) }

// IsSMDisabled reports the CapabilityMask bit that marks a port without SMI.
func (p *Port) IsSMDisabled() bool { return p.CapMask&CapMaskIsSMDisabled != 0 }

// PKeyIndex returns the index of pkey in the P_Key table, comparing the low
// 15 bits as IBA 10.9.3 matches partitions; ok is false when it is absent.
func (p *Port) PKeyIndex(pkey uint16) (index int, ok bool) {
	for _, e := range p.PKeys {
		if e.PKey == pkey {
			return e.Index, true
		}
	}
	for _, e := range p.PKeys {
		if e.PKey&0x7fff == pkey&0x7fff {
			return e.Index, true
		}
	}
	return 0, false
}

// GIDIndex returns the table index of gid; ok is false when the port does
// not own it.
func (p *Port) GIDIndex(gid iba.GID) (index int, ok bool) {
	for _, e := range p.GIDs {
		if e.GID == gid {
			return e.Index, true
		}
	}
	return 0, false
}

// Reload reads the port's attributes again (LID, state and SM change while a
// program runs) and returns a new snapshot; character devices and the
// SMI/GSI pairing are carried over.
func (p *Port) Reload() (*Port, error) {
	q, err := readPort(p.Device, p.Num, charDevIndex{})
	if err != nil {
		return nil, err
	}
	q.Umad, q.Issm = p.Umad, p.Issm
	q.GSIUmad, q.SMIUmad, q.GSIPort, q.SMIPort = p.GSIUmad, p.SMIUmad, p.GSIPort, p.SMIPort
	return q, nil
}

func readPort(d *Device, num uint8, chars charDevIndex) (*Port, error) {
	dir := filepath.Join(d.Dir, "ports", strconv.Itoa(int(num)))
	r := attrs{dir: dir}
	p := &Port{
		Device:    d,
		Num:       num,
		State:     PortState(r.numPrefix("state")),
		PhysState: PhysState(r.numPrefix("phys_state")),
		Rate:      r.optional("rate"),
		LID:       uint16(r.uint("lid", 16)),
		SMLID:     uint16(r.uint("sm_lid", 16)),
		LMC:       uint8(r.uint("lid_mask_count", 8)),
		SMSL:      uint8(r.uint("sm_sl", 8)),
		CapMask:   uint32(r.uint("cap_mask", 32)),
		Dir:       dir,
	}
	// libibumad assumes InfiniBand when the kernel predates link_layer.
	p.LinkLayer = LinkLayerInfiniBand
	if ll, ok := r.read("link_layer"); ok {
		p.LinkLayer = parseLinkLayer(ll)
	}
	p.RateGbps, p.Width, p.Speed = parseRate(p.Rate)
	if r.err != nil {
		return nil, fmt.Errorf("reading end port %s/%d: %w", d.Name, num, r.err)
	}
	var err error
	if p.GIDs, err = readGIDs(dir); err != nil {
		return nil, fmt.Errorf("reading end port %s/%d: %w", d.Name, num, err)
	}
	if g0, ok := readGID(filepath.Join(dir, "gids", "0")); ok {
		p.GIDPrefix, p.PortGUID = g0.Prefix(), g0.GUID()
	}
	if p.PKeys, err = readPKeys(dir); err != nil {
		return nil, fmt.Errorf("reading end port %s/%d: %w", d.Name, num, err)
	}
	key := portKey{d.Name, num}
	p.Umad, p.Issm = chars.umad[key], chars.issm[key]
	return p, nil
}

// parseRate splits the kernel's rate text, "%d%s Gb/sec (%dX%s)" in
// drivers/infiniband/core/sysfs.c: "2.5 Gb/sec (1X SDR)", "400 Gb/sec (4X NDR)".
func parseRate(s string) (gbps float64, width int, speed string) {
	num, rest, ok := strings.Cut(s, " Gb/sec")
	if !ok {
		return 0, 0, ""
	}
	gbps, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || gbps < 0 || math.IsNaN(gbps) || math.IsInf(gbps, 0) {
		return 0, 0, ""
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, "(") || !strings.HasSuffix(rest, ")") {
		return gbps, 0, ""
	}
	w, sp, _ := strings.Cut(rest[1:len(rest)-1], "X")
	n, err := strconv.ParseUint(w, 10, 8)
	if err != nil || n == 0 {
		return gbps, 0, ""
	}
	width = int(n)
	return gbps, width, strings.TrimSpace(sp)
}

// numberedFiles lists the entries of dir named by a decimal index, in index
// order.
func numberedFiles(dir string) ([]int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var idx []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n >= 0 {
			idx = append(idx, n)
		}
	}
	sort.Ints(idx)
	return idx, nil
}

func readGID(path string) (iba.GID, bool) {
	b, err := readAttr(path)
	if err != nil {
		return iba.GID{}, false
	}
	g, err := iba.ParseGID(strings.TrimSpace(string(b)))
	return g, err == nil
}

func readGIDs(dir string) ([]GIDEntry, error) {
	idx, err := numberedFiles(filepath.Join(dir, "gids"))
	if err != nil {
		return nil, err
	}
	var out []GIDEntry
	for _, i := range idx {
		s := strconv.Itoa(i)
		g, ok := readGID(filepath.Join(dir, "gids", s))
		if !ok || g == (iba.GID{}) {
			continue
		}
		e := GIDEntry{Index: i, GID: g}
		// The kernel answers EINVAL for the attributes of unused
		// entries and of IB GIDs; such entries just have no type.
		if b, err := readAttr(filepath.Join(dir, "gid_attrs", "types", s)); err == nil {
			e.Type = strings.TrimSpace(string(b))
		}
		if b, err := readAttr(filepath.Join(dir, "gid_attrs", "ndevs", s)); err == nil {
			e.NetDev = strings.TrimSpace(string(b))
		}
		out = append(out, e)
	}
	return out, nil
}

func readPKeys(dir string) ([]PKeyEntry, error) {
	idx, err := numberedFiles(filepath.Join(dir, "pkeys"))
	if err != nil {
		return nil, err
	}
	var out []PKeyEntry
	for _, i := range idx {
		path := filepath.Join(dir, "pkeys", strconv.Itoa(i))
		b, err := readAttr(path)
		if err != nil {
			if unsupported(err) {
				continue
			}
			return nil, err
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 0, 16)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a P_Key", path, strings.TrimSpace(string(b)))
		}
		// 0x0000 and 0x8000 are the invalid P_Key (IBA 10.9.1.2).
		if v&0x7fff == 0 {
			continue
		}
		out = append(out, PKeyEntry{Index: i, PKey: uint16(v)})
	}
	return out, nil
}

// unsupported reports the errors sysfs gives for an attribute the driver
// cannot provide.
func unsupported(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EOPNOTSUPP) ||
		errors.Is(err, syscall.ENODATA) || errors.Is(err, syscall.ENOSYS)
}

// Counters reads the port's PortCounters and PortCountersExtended copies in
// counters/* (port_xmit_data, symbol_error, ...), now. Counters the driver
// cannot read are left out.
func (p *Port) Counters() (map[string]uint64, error) {
	return readCounters(filepath.Join(p.Dir, "counters"))
}

// HWCounters reads the driver's own counters in hw_counters/* (the ones
// `rdma statistic` shows), now. The lifespan setting is not a counter and is
// left out.
func (p *Port) HWCounters() (map[string]uint64, error) {
	return readCounters(filepath.Join(p.Dir, "hw_counters"))
}

func readCounters(dir string) (map[string]uint64, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]uint64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading counters: %w", err)
	}
	out := make(map[string]uint64, len(ents))
	for _, e := range ents {
		if e.IsDir() || e.Name() == "lifespan" {
			continue
		}
		path := filepath.Join(dir, e.Name())
		b, err := readAttr(path)
		if err != nil {
			if unsupported(err) || errors.Is(err, fs.ErrPermission) {
				continue
			}
			return nil, fmt.Errorf("reading counters: %w", err)
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 0, 64)
		if err != nil {
			continue // "N/A" and similar: the driver has no value
		}
		out[e.Name()] = v
	}
	return out, nil
}
