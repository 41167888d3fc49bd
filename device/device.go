package device

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
)

// Default roots of the live system.
const (
	DefaultSysRoot = "/sys"
	DefaultDevRoot = "/dev"
)

// FS names where sysfs and the device nodes are. The zero value means the
// live system; tests point SysRoot at a fixture tree.
type FS struct {
	SysRoot string // sysfs mount point; DefaultSysRoot when empty
	DevRoot string // device node directory; DefaultDevRoot when empty
}

func (f FS) sys(elem ...string) string {
	root := f.SysRoot
	if root == "" {
		root = DefaultSysRoot
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

func (f FS) dev(elem ...string) string {
	root := f.DevRoot
	if root == "" {
		root = DefaultDevRoot
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// Device is one RDMA device, <SysRoot>/class/infiniband/<Name>.
type Device struct {
	Name         string
	NodeType     NodeType
	NodeGUID     iba.GUID
	SysImageGUID iba.GUID
	FWVersion    string // fw_ver; empty when the driver has none
	HWRev        string
	BoardID      string
	HCAType      string
	NodeDesc     string // NodeDescription (IBA 14.2.5.2), UTF-8
	// Ports are the end ports in port number order: 1..N on a CA, 0 on a
	// switch.
	Ports []*Port
	// Uverbs is the verbs character device, nil when ib_uverbs is not
	// loaded.
	Uverbs *CharDev
	// Dir is the device's sysfs directory.
	Dir string

	fs FS
}

// FS is where the device was read from.
func (d *Device) FS() FS { return d.fs }

// String is the device name.
func (d *Device) String() string { return d.Name }

// Port returns the port numbered n, or nil.
func (d *Device) Port(n int) *Port {
	for _, p := range d.Ports {
		if int(p.Num) == n {
			return p
		}
	}
	return nil
}

// List reads every RDMA device under <SysRoot>/class/infiniband, in name
// order (libibumad's alphasort). A system without an RDMA stack has no such
// directory; List then returns no devices and no error.
func (f FS) List() ([]*Device, error) {
	dir := f.sys("class", "infiniband")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing RDMA devices: %w", err)
	}
	chars, err := f.charDevs()
	if err != nil {
		return nil, err
	}
	var devs []*Device
	for _, e := range ents {
		d, err := f.readDevice(e.Name(), chars)
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].Name < devs[j].Name })
	pairSMIGSI(devs)
	return devs, nil
}

// List reads the devices under sysRoot ("" for the live /sys); see FS.List.
func List(sysRoot string) ([]*Device, error) { return FS{SysRoot: sysRoot}.List() }

// Lookup reads one device by name.
func (f FS) Lookup(name string) (*Device, error) {
	devs, err := f.List()
	if err != nil {
		return nil, err
	}
	for _, d := range devs {
		if d.Name == name {
			return d, nil
		}
	}
	return nil, &NotFoundError{What: "RDMA device", Spec: name, Have: deviceNames(devs)}
}

func (f FS) readDevice(name string, chars charDevIndex) (*Device, error) {
	dir := f.sys("class", "infiniband", name)
	r := attrs{dir: dir}
	d := &Device{
		Name:         name,
		NodeType:     NodeType(r.numPrefix("node_type")),
		NodeGUID:     r.guid("node_guid"),
		SysImageGUID: r.guid("sys_image_guid"),
		FWVersion:    r.optional("fw_ver"),
		HWRev:        r.optional("hw_rev"),
		BoardID:      r.optional("board_id"),
		HCAType:      r.optional("hca_type"),
		NodeDesc:     r.optional("node_desc"),
		Dir:          dir,
		fs:           f,
	}
	if r.err != nil {
		return nil, fmt.Errorf("reading RDMA device %s: %w", name, r.err)
	}
	d.Uverbs = chars.verbs[name]
	ents, err := os.ReadDir(filepath.Join(dir, "ports"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading RDMA device %s: %w", name, err)
	}
	for _, e := range ents {
		n, err := strconv.ParseUint(e.Name(), 10, 8)
		if err != nil {
			continue // not a port directory
		}
		p, err := readPort(d, uint8(n), chars)
		if err != nil {
			return nil, err
		}
		d.Ports = append(d.Ports, p)
	}
	sort.Slice(d.Ports, func(i, j int) bool { return d.Ports[i].Num < d.Ports[j].Num })
	return d, nil
}

// attrs reads sysfs attribute files of one directory and keeps the first
// error, so a reader can fill a whole struct and check once.
type attrs struct {
	dir string
	err error
}

func (r *attrs) path(name string) string { return filepath.Join(r.dir, name) }

func (r *attrs) fail(name string, err error) {
	if r.err == nil {
		r.err = err
	}
}

// read returns the attribute without its trailing newline; ok is false when
// the file does not exist.
func (r *attrs) read(name string) (string, bool) {
	b, err := readAttr(r.path(name))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.fail(name, err)
		}
		return "", false
	}
	return strings.TrimRight(string(b), "\n"), true
}

func (r *attrs) optional(name string) string {
	s, _ := r.read(name)
	return s
}

func (r *attrs) required(name string) (string, bool) {
	s, ok := r.read(name)
	if !ok && r.err == nil {
		r.fail(name, fmt.Errorf("%s: %w", r.path(name), fs.ErrNotExist))
	}
	return s, ok
}

func (r *attrs) parseErr(name, s, want string) {
	r.fail(name, fmt.Errorf("%s: %q is not %s", r.path(name), s, want))
}

// numPrefix parses "4: ACTIVE" style attributes.
func (r *attrs) numPrefix(name string) uint8 {
	s, ok := r.required(name)
	if !ok {
		return 0
	}
	num, _, _ := strings.Cut(s, ":")
	v, err := strconv.ParseUint(strings.TrimSpace(num), 10, 8)
	if err != nil {
		r.parseErr(name, s, `"N: text"`)
	}
	return uint8(v)
}

// uint parses decimal or 0x-prefixed hex, as the kernel prints lid ("0x1")
// and lid_mask_count ("0").
func (r *attrs) uint(name string, bits int) uint64 {
	s, ok := r.required(name)
	if !ok {
		return 0
	}
	v, err := strconv.ParseUint(strings.TrimSpace(s), 0, bits)
	if err != nil {
		r.parseErr(name, s, fmt.Sprintf("a %d-bit number", bits))
	}
	return v
}

// guid parses the kernel's "0002:c903:0000:1491" spelling.
func (r *attrs) guid(name string) iba.GUID {
	s, ok := r.required(name)
	if !ok {
		return 0
	}
	g, err := iba.ParseGUID(s)
	if err != nil {
		r.parseErr(name, s, "a GUID")
	}
	return g
}

func deviceNames(devs []*Device) []string {
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = d.Name
	}
	return names
}
