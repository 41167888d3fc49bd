package device

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CharDev is one character device of the RDMA stack: umadN, issmN (class
// infiniband_mad) or uverbsN (class infiniband_verbs).
type CharDev struct {
	Name string // "umad0"
	// Path is the device node, <DevRoot>/infiniband/<Name>, the name
	// libibumad opens.
	Path string
	// Major and Minor come from the class device's dev file; both are 0
	// when it is missing.
	Major, Minor uint32
	// SysDir is the class device's sysfs directory.
	SysDir string
}

func (c *CharDev) String() string { return c.Path }

type portKey struct {
	dev  string
	port uint8
}

type charDevIndex struct {
	umad, issm map[portKey]*CharDev
	verbs      map[string]*CharDev
}

// charDevs maps the class devices of ib_umad and ib_uverbs to the RDMA device
// (and port) their ibdev and port files name.
func (f FS) charDevs() (charDevIndex, error) {
	idx := charDevIndex{
		umad:  map[portKey]*CharDev{},
		issm:  map[portKey]*CharDev{},
		verbs: map[string]*CharDev{},
	}
	madDir := f.sys("class", "infiniband_mad")
	ents, err := os.ReadDir(madDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return idx, fmt.Errorf("listing umad devices: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		var m map[portKey]*CharDev
		switch {
		case isIndexed(name, "umad"):
			m = idx.umad
		case isIndexed(name, "issm"):
			m = idx.issm
		default:
			continue // abi_version
		}
		c, ibdev, err := f.readCharDev(madDir, name)
		if err != nil {
			return idx, err
		}
		r := attrs{dir: c.SysDir}
		port := r.uint("port", 8)
		if r.err != nil {
			return idx, fmt.Errorf("reading %s: %w", name, r.err)
		}
		m[portKey{ibdev, uint8(port)}] = c
	}
	verbsDir := f.sys("class", "infiniband_verbs")
	ents, err = os.ReadDir(verbsDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return idx, fmt.Errorf("listing uverbs devices: %w", err)
	}
	for _, e := range ents {
		if !isIndexed(e.Name(), "uverbs") {
			continue
		}
		c, ibdev, err := f.readCharDev(verbsDir, e.Name())
		if err != nil {
			return idx, err
		}
		idx.verbs[ibdev] = c
	}
	return idx, nil
}

func isIndexed(name, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" {
		return false
	}
	_, err := strconv.ParseUint(rest, 10, 32)
	return err == nil
}

func (f FS) readCharDev(classDir, name string) (*CharDev, string, error) {
	c := &CharDev{Name: name, Path: f.dev("infiniband", name), SysDir: filepath.Join(classDir, name)}
	r := attrs{dir: c.SysDir}
	ibdev, _ := r.required("ibdev")
	if dev, ok := r.read("dev"); ok {
		maj, min, ok := strings.Cut(dev, ":")
		a, err1 := strconv.ParseUint(maj, 10, 32)
		b, err2 := strconv.ParseUint(min, 10, 32)
		if !ok || err1 != nil || err2 != nil {
			r.parseErr("dev", dev, "major:minor")
		}
		c.Major, c.Minor = uint32(a), uint32(b)
	}
	if r.err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", name, r.err)
	}
	return c, ibdev, nil
}

// MADABIVersion reads <SysRoot>/class/infiniband_mad/abi_version, the
// version of struct ib_user_mad the kernel speaks (5 since Linux 2.6.x; see
// rdma/ib_user_mad.h). A missing file means ib_umad is not loaded.
func (f FS) MADABIVersion() (int, error) {
	path := f.sys("class", "infiniband_mad", "abi_version")
	b, err := readAttr(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number", path, strings.TrimSpace(string(b)))
	}
	return v, nil
}

// pairSMIGSI sets the GSI and SMI ports of every port, as libibumad's
// umad_get_smi_gsi_pairs pairs devices: ports that share a port GUID are
// planes of one physical port; the one without IsSMDisabled carries SMPs,
// the others carry GMPs.
func pairSMIGSI(devs []*Device) {
	byGUID := map[uint64][]*Port{}
	for _, d := range devs {
		for _, p := range d.Ports {
			if p.PortGUID != 0 {
				byGUID[uint64(p.PortGUID)] = append(byGUID[uint64(p.PortGUID)], p)
			}
		}
	}
	for _, d := range devs {
		for _, p := range d.Ports {
			p.GSIPort, p.SMIPort = p, nil
			if p.LinkLayer == LinkLayerInfiniBand && !p.IsSMDisabled() {
				p.SMIPort = p
			}
			sibs := byGUID[uint64(p.PortGUID)]
			if len(sibs) > 1 {
				for _, q := range sibs {
					if q == p {
						continue
					}
					if q.IsSMDisabled() && !p.IsSMDisabled() && p.GSIPort == p {
						p.GSIPort = q
					}
					if !q.IsSMDisabled() && p.IsSMDisabled() && p.SMIPort == nil &&
						q.LinkLayer == LinkLayerInfiniBand {
						p.SMIPort = q
					}
				}
			}
			p.GSIUmad = p.GSIPort.Umad
			if p.SMIPort != nil {
				p.SMIUmad = p.SMIPort.Umad
			}
		}
	}
}
