package device

import (
	"errors"
	"strings"
	"testing"
)

func TestSelectEndPort(t *testing.T) {
	// mlx4_0 (port 1 DOWN, port 2 ACTIVE) then mlx5_0 (port 1 ACTIVE).
	twoAndIB := append(mustList(t, fixture("two-port")), mustList(t, fixture("mlx5-ib"))...)
	roce := mustList(t, fixture("roce"))
	split := mustList(t, fixture("smi-split"))
	allDown := append(mustList(t, fixture("two-port")), mustList(t, fixture("mlx5-ib"))...)
	for _, d := range allDown {
		for _, p := range d.Ports {
			p.State = PortDown
		}
	}
	armed := mustList(t, fixture("two-port"))
	armed[0].Ports[0].State = PortInit

	tests := []struct {
		name     string
		devs     []*Device
		ca, port string
		want     string // end port, or "" when an error is expected
		wantErr  error
		errText  string
	}{
		{name: "default skips DOWN port", devs: twoAndIB, want: "mlx4_0/2"},
		{name: "default takes INIT", devs: armed, want: "mlx4_0/1"},
		{name: "default with nothing up", devs: allDown, want: "mlx4_0/1"},
		{name: "default RoCE", devs: roce, want: "mlx5_0/1"},
		{name: "no devices", devs: nil, wantErr: ErrNoDevices, errText: "no RDMA device found"},
		{name: "no devices with -C", devs: nil, ca: "mlx5_0", wantErr: ErrNoDevices},

		{name: "-P device", devs: twoAndIB, port: "mlx5_0", want: "mlx5_0/1"},
		{name: "-P device is first port even if down", devs: twoAndIB, port: "mlx4_0", want: "mlx4_0/1"},
		{name: "-P device/port", devs: twoAndIB, port: "mlx4_0/2", want: "mlx4_0/2"},
		{name: "-P port GID", devs: twoAndIB, port: "fe80::2:c903:0:1492", want: "mlx4_0/2"},
		{name: "-P port GID full form", devs: twoAndIB, port: "fe80:0000:0000:0000:0002:c903:0000:1491", want: "mlx4_0/1"},
		{name: "-P port GUID colon", devs: twoAndIB, port: "0002:c903:0000:1492", want: "mlx4_0/2"},
		{name: "-P port GUID short groups", devs: twoAndIB, port: "2:c903:0:1491", want: "mlx4_0/1"},
		{name: "-P port GUID 0x", devs: twoAndIB, port: "0x248a0703005d8e2a", want: "mlx5_0/1"},
		{name: "-P port GUID bare hex", devs: twoAndIB, port: "248a0703005d8e2a", want: "mlx5_0/1"},
		{name: "-P port number of first device", devs: twoAndIB, port: "2", want: "mlx4_0/2"},
		{name: "-P RoCE GID from IPv4", devs: roce, port: "::ffff:192.168.10.5", want: "mlx5_0/1"},
		{name: "-P RoCE link-local GID", devs: roce, port: "fe80::526b:4bff:fe12:3456", want: "mlx5_0/1"},
		{name: "-P plane device", devs: split, port: "mlx5_1/1", want: "mlx5_1/1"},
		{name: "-P shared port GUID picks first device", devs: split, port: "b83f:d203:000a:01c0", want: "mlx5_0/1"},

		{name: "-P unknown device", devs: twoAndIB, port: "mlx9", wantErr: ErrNotFound,
			errText: `RDMA device "mlx9" not found (have mlx4_0, mlx5_0)`},
		{name: "-P unknown port number", devs: twoAndIB, port: "3", wantErr: ErrNotFound,
			errText: `RDMA end port "mlx4_0/3" not found (have mlx4_0/1, mlx4_0/2)`},
		{name: "-P unknown device/port", devs: twoAndIB, port: "mlx4_0/9", wantErr: ErrNotFound},
		{name: "-P bad port", devs: twoAndIB, port: "mlx4_0/x", wantErr: ErrInvalidSpec,
			errText: `invalid end port specification "mlx4_0/x"`},
		{name: "-P port 256", devs: twoAndIB, port: "mlx4_0/256", wantErr: ErrInvalidSpec},
		{name: "-P unknown GID", devs: twoAndIB, port: "fe80::dead", wantErr: ErrNotFound,
			errText: `RDMA end port with port GUID "fe80::dead" not found`},
		{name: "-P global GID not owned", devs: roce, port: "::ffff:10.1.1.1", wantErr: ErrNotFound},
		{name: "-P GID with zero GUID", devs: roce, port: "2001:db8::", wantErr: ErrNotFound},
		{name: "-P unknown GUID", devs: twoAndIB, port: "0:0:0:1", wantErr: ErrNotFound},
		{name: "-P empty device", devs: twoAndIB, port: "/1", wantErr: ErrInvalidSpec},
		{name: "-P blanks", devs: twoAndIB, port: "mlx4 0", wantErr: ErrInvalidSpec},

		{name: "-C device", devs: twoAndIB, ca: "mlx5_0", want: "mlx5_0/1"},
		{name: "-C device first port", devs: twoAndIB, ca: "mlx4_0", want: "mlx4_0/1"},
		{name: "-C node GUID", devs: twoAndIB, ca: "0002:c903:0000:1490", want: "mlx4_0/1"},
		{name: "-C node GUID 0x", devs: twoAndIB, ca: "0x248a0703005d8e2a", want: "mlx5_0/1"},
		{name: "-C -P number", devs: twoAndIB, ca: "mlx4_0", port: "2", want: "mlx4_0/2"},
		{name: "-C -P GID on device", devs: twoAndIB, ca: "mlx4_0", port: "fe80::2:c903:0:1492", want: "mlx4_0/2"},
		{name: "-C -P device/port on device", devs: twoAndIB, ca: "mlx4_0", port: "mlx4_0/2", want: "mlx4_0/2"},
		{name: "-C SMI device", devs: split, ca: "smi1", want: "smi1/1"},
		{name: "-C -P on other device", devs: twoAndIB, ca: "mlx5_0", port: "mlx4_0/2", wantErr: ErrInvalidSpec,
			errText: "end port mlx4_0/2 is not on device mlx5_0"},
		{name: "-C -P unknown spec", devs: twoAndIB, ca: "mlx5_0", port: "mlx9/1", wantErr: ErrNotFound},
		{name: "-C unknown", devs: twoAndIB, ca: "mlx9", wantErr: ErrNotFound,
			errText: `RDMA device "mlx9" not found (have mlx4_0, mlx5_0)`},
		{name: "-C unknown node GUID", devs: twoAndIB, ca: "0:0:0:9", wantErr: ErrNotFound,
			errText: `RDMA device with node GUID "0:0:0:9" not found`},
		{name: "-C -P unknown number", devs: twoAndIB, ca: "mlx5_0", port: "2", wantErr: ErrNotFound,
			errText: `RDMA end port "mlx5_0/2" not found (have mlx5_0/1)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := SelectEndPort(tt.devs, tt.ca, tt.port)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("SelectEndPort(%q, %q) = %v, %v; want error %v", tt.ca, tt.port, p, err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.errText) {
					t.Errorf("error %q, want it to contain %q", err, tt.errText)
				}
				return
			}
			if err != nil {
				t.Fatalf("SelectEndPort(%q, %q): %v", tt.ca, tt.port, err)
			}
			if p.String() != tt.want {
				t.Errorf("SelectEndPort(%q, %q) = %s, want %s", tt.ca, tt.port, p, tt.want)
			}
		})
	}
}

func TestSelectDeviceWithoutPorts(t *testing.T) {
	devs := []*Device{{Name: "bare0", NodeType: NodeCA}}
	for _, args := range [][2]string{{"", ""}, {"bare0", ""}, {"", "bare0"}} {
		_, err := SelectEndPort(devs, args[0], args[1])
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "bare0") {
			t.Errorf("SelectEndPort(%q, %q) on a device without ports = %v, want ErrNotFound naming bare0", args[0], args[1], err)
		}
	}
}

func TestFindWithoutDevices(t *testing.T) {
	if _, err := FindEndPort(nil, "mlx5_0"); !errors.Is(err, ErrNoDevices) {
		t.Errorf("FindEndPort(nil) = %v, want ErrNoDevices", err)
	}
	if _, err := FindDevice(nil, "mlx5_0"); !errors.Is(err, ErrNoDevices) {
		t.Errorf("FindDevice(nil) = %v, want ErrNoDevices", err)
	}
}
