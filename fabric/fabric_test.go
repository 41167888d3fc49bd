package fabric

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/device"
	"github.com/rdmakit/rdmakit/ibsim"
)

func TestOpenErrors(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		name, uri, env string
		bad, noDev     bool
		msg            string
	}{
		{name: "no devices", uri: "", noDev: true, msg: "sim:fattree"},
		{name: "no devices from env", env: "umad", noDev: true, msg: "no RDMA device"},
		{name: "umad end port, no devices", uri: "umad:mlx5_0/1", noDev: true, msg: "no RDMA device"},
		{name: "unknown kind", uri: "carrier-pigeon", bad: true, msg: "want umad"},
		{name: "sim without topology", uri: "sim:", bad: true, msg: "needs a topology"},
		{name: "sim bad generator", uri: "sim:fattree:k=banana", msg: "not a number"},
		{name: "sim missing file", uri: "sim:/no/such/file.topo", msg: "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvVar, tc.env)
			f, err := Open(context.Background(), tc.uri, WithSysfs(empty))
			if err == nil {
				f.Close()
				t.Fatal("opened a fabric")
			}
			if errors.Is(err, ErrBadURI) != tc.bad || errors.Is(err, device.ErrNoDevices) != tc.noDev || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q (bad URI %v, no device %v), want one containing %q (bad URI %v, no device %v)",
					err, errors.Is(err, ErrBadURI), errors.Is(err, device.ErrNoDevices), tc.msg, tc.bad, tc.noDev)
			}
		})
	}
}

func TestOptionErrors(t *testing.T) {
	for _, o := range []Option{WithTimeout(-1), WithTimeout(2e13), WithRetries(1000)} {
		if _, err := Open(context.Background(), "sim:fattree:k=2,n=1", o); !errors.Is(err, ErrBadURI) {
			t.Errorf("error %v, want one matching ErrBadURI", err)
		}
	}
}

// With ibsim named but no simulator running, the error says so at once.
func TestOpenIBSimNotRunning(t *testing.T) {
	t.Setenv("IBSIM_SOCKNAME", "rdmakit-test-nobody-"+t.Name())
	t.Setenv("IBSIM_SERVER_NAME", "")
	_, err := Open(context.Background(), "ibsim:Hca1")
	if !errors.Is(err, ibsim.ErrNotRunning) {
		t.Errorf("error %v, want one matching ibsim.ErrNotRunning", err)
	}
	if _, err := Open(context.Background(), "ibsim:Hca1", WithEndPort("mlx5_0", "")); !errors.Is(err, ErrBadURI) {
		t.Errorf("ibsim with -C: error %v, want one matching ErrBadURI", err)
	}
}

func TestOpenSimNode(t *testing.T) {
	ctx := context.Background()
	f, err := Open(ctx, "sim:fattree:k=4,n=2", WithEndPort("hca2", "1"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Sim == nil || f.Local.LID == 0 || f.Local.PortNum != 1 {
		t.Errorf("local port %+v, sim %v", f.Local, f.Sim != nil)
	}
	if _, err := Open(ctx, "sim:fattree:k=4,n=2", WithEndPort("no-such-node", "")); !errors.Is(err, ErrBadURI) {
		t.Errorf("unknown node: error %v, want ErrBadURI", err)
	}
}
