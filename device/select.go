package device

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rdmakit/rdmakit/iba"
)

// Errors of end port selection; the typed errors below match them with
// errors.Is.
var (
	// ErrNoDevices: the machine has no RDMA device (or no RDMA stack).
	ErrNoDevices = errors.New("no RDMA device found")
	// ErrNotFound: a device or end port named by the user does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalidSpec: the text is not any form of device or end port.
	ErrInvalidSpec = errors.New("invalid end port specification")
)

// NotFoundError reports a device or end port that does not exist.
type NotFoundError struct {
	What string // "RDMA device", "RDMA end port"
	Spec string
	Have []string // what exists, for the message
}

func (e *NotFoundError) Error() string {
	s := fmt.Sprintf("%s %q not found", e.What, e.Spec)
	if len(e.Have) > 0 {
		s += " (have " + strings.Join(e.Have, ", ") + ")"
	}
	return s
}

// Is matches ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// SpecError reports text that cannot name an end port.
type SpecError struct {
	Spec   string
	Reason string
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("invalid end port specification %q: %s", e.Spec, e.Reason)
}

// Is matches ErrInvalidSpec.
func (e *SpecError) Is(target error) bool { return target == ErrInvalidSpec }

// linkLocalPrefix is the default GID prefix fe80::/64 (IBA 4.1.1).
const linkLocalPrefix = 0xfe80000000000000

// SelectEndPort picks the local end port from the -C (ca) and -P (port)
// options, as python-rdma's LibIBOpts.get_end_port does:
//
//   - neither: the first end port in state INIT or better, in device order;
//     otherwise the first port of the first device;
//   - -P only: an end port spec (see FindEndPort); failing that, a port
//     number of the first device;
//   - -C: a device name or node GUID; with -P, a port number of that device.
//
// Where python-rdma rejects -P forms other than a number next to -C, this
// also accepts any end port spec that names a port of that device.
// With no devices it returns an error matching ErrNoDevices.
func SelectEndPort(devs []*Device, ca, port string) (*Port, error) {
	if len(devs) == 0 {
		return nil, ErrNoDevices
	}
	if ca == "" && port == "" {
		for _, d := range devs {
			for _, p := range d.Ports {
				if p.State >= PortInit {
					return p, nil
				}
			}
		}
		return firstPort(devs[0])
	}
	if ca == "" {
		p, err := FindEndPort(devs, port)
		if err == nil {
			return p, nil
		}
		if _, nerr := strconv.ParseUint(port, 10, 8); nerr != nil {
			return nil, err
		}
		return devicePort(devs[0], port)
	}
	d, err := FindDevice(devs, ca)
	if err != nil {
		return nil, err
	}
	if port == "" {
		return firstPort(d)
	}
	if _, nerr := strconv.ParseUint(port, 10, 8); nerr == nil {
		return devicePort(d, port)
	}
	p, err := FindEndPort(devs, port)
	if err != nil {
		return nil, err
	}
	if p.Device != d {
		return nil, &SpecError{Spec: port, Reason: fmt.Sprintf("end port %s is not on device %s", p, d.Name)}
	}
	return p, nil
}

// FindDevice finds a device by name or node GUID (python-rdma's
// rdma.get_device).
func FindDevice(devs []*Device, spec string) (*Device, error) {
	if len(devs) == 0 {
		return nil, ErrNoDevices
	}
	if g, err := iba.ParseGUID(spec); err == nil {
		for _, d := range devs {
			if d.NodeGUID == g {
				return d, nil
			}
		}
		return nil, &NotFoundError{What: "RDMA device with node GUID", Spec: spec}
	}
	for _, d := range devs {
		if d.Name == spec {
			return d, nil
		}
	}
	return nil, &NotFoundError{What: "RDMA device", Spec: spec, Have: deviceNames(devs)}
}

// FindEndPort finds an end port by one of the forms of python-rdma's
// rdma.get_end_port, tried in this order:
//
//	port GID     fe80::2:c903:0:1491 (a fe80:: GID names its port GUID)
//	port GUID    0002:c903:0000:1491, 0x0002c90300001491
//	device       mlx4_0 (its first port)
//	device/port  mlx4_0/1
func FindEndPort(devs []*Device, spec string) (*Port, error) {
	if len(devs) == 0 {
		return nil, ErrNoDevices
	}
	if gid, err := iba.ParseGID(spec); err == nil {
		if gid.Prefix() == linkLocalPrefix {
			return findPortGUID(devs, gid.GUID(), spec)
		}
		if gid.GUID() != 0 {
			for _, d := range devs {
				for _, p := range d.Ports {
					if _, ok := p.GIDIndex(gid); ok {
						return p, nil
					}
				}
			}
		}
		return nil, &NotFoundError{What: "RDMA end port with GID", Spec: spec}
	}
	if g, err := iba.ParseGUID(spec); err == nil {
		return findPortGUID(devs, g, spec)
	}
	name, num, hasNum := strings.Cut(spec, "/")
	var d *Device
	for _, x := range devs {
		if x.Name == name {
			d = x
		}
	}
	if d == nil {
		if name == "" || strings.ContainsAny(spec, " \t") {
			return nil, &SpecError{Spec: spec, Reason: "want a device, device/port, port GID or port GUID"}
		}
		return nil, &NotFoundError{What: "RDMA device", Spec: name, Have: deviceNames(devs)}
	}
	if !hasNum {
		return firstPort(d)
	}
	return devicePort(d, num)
}

func findPortGUID(devs []*Device, g iba.GUID, spec string) (*Port, error) {
	for _, d := range devs {
		for _, p := range d.Ports {
			if p.PortGUID == g {
				return p, nil
			}
		}
	}
	return nil, &NotFoundError{What: "RDMA end port with port GUID", Spec: spec}
}

func firstPort(d *Device) (*Port, error) {
	if len(d.Ports) == 0 {
		return nil, &NotFoundError{What: "end port of RDMA device", Spec: d.Name}
	}
	return d.Ports[0], nil
}

func devicePort(d *Device, num string) (*Port, error) {
	n, err := strconv.ParseUint(num, 10, 8)
	if err != nil {
		return nil, &SpecError{Spec: d.Name + "/" + num, Reason: "the port is not a number from 0 to 255"}
	}
	if p := d.Port(int(n)); p != nil {
		return p, nil
	}
	have := make([]string, len(d.Ports))
	for i, p := range d.Ports {
		have[i] = p.String()
	}
	return nil, &NotFoundError{What: "RDMA end port", Spec: fmt.Sprintf("%s/%d", d.Name, n), Have: have}
}
