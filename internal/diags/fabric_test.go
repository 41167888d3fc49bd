package diags

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/ibsim"
)

func TestOpenTransportErrors(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		name, fabric, env, sysfs string
		usage                    bool
		msg                      string
	}{
		{name: "no devices", fabric: "", sysfs: empty, msg: "--fabric"},
		{name: "no devices from env", env: "umad", sysfs: empty, msg: "no RDMA device"},
		{name: "umad with argument", fabric: "umad:mlx5_0", usage: true, msg: "takes no argument"},
		{name: "unknown kind", fabric: "carrier-pigeon", usage: true, msg: "want umad, ibsim"},
		{name: "sim without topology", fabric: "sim:", usage: true, msg: "needs a topology"},
		{name: "sim bad generator", fabric: "sim:fattree:k=banana", msg: "not a number"},
		{name: "sim missing file", fabric: "sim:/no/such/file.topo", msg: "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(FabricEnv, tc.env)
			t.Setenv(SysfsEnv, tc.sysfs)
			e := &Env{Ctx: context.Background(), Fabric: tc.fabric}
			tr, err := e.openTransport()
			if err == nil {
				tr.Close()
				t.Fatal("opened a transport")
			}
			var ue *UsageError
			if errors.As(err, &ue) != tc.usage || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q (usage %v), want one containing %q (usage %v)", err, errors.As(err, &ue), tc.msg, tc.usage)
			}
		})
	}
}

// With ibsim named but no simulator running, the error says so at once.
func TestOpenTransportIBSimNotRunning(t *testing.T) {
	t.Setenv("IBSIM_SOCKNAME", "rdmakit-test-nobody-"+t.Name())
	t.Setenv("IBSIM_SERVER_NAME", "")
	e := &Env{Ctx: context.Background(), Fabric: "ibsim:Hca1"}
	_, err := e.openTransport()
	if !errors.Is(err, ibsim.ErrNotRunning) {
		t.Errorf("error %v, want one matching ibsim.ErrNotRunning", err)
	}
}

// The global flags may come before or after the command's name.
func TestGlobalFlagsEitherSide(t *testing.T) {
	in := readFile(t, nodeInfoHex)
	for _, argv := range [][]string{
		{"ibtool", "--json", "decode_mad"},
		{"ibtool", "decode_mad", "--json"},
		{"ibtool", "-t", "200", "decode_mad", "--json"},
	} {
		out, errs, code := run(t, in, argv...)
		if code != 0 || !strings.HasPrefix(out, "{") {
			t.Errorf("%v: exit %d, stderr %q, stdout starts %.20q", argv, code, errs, out)
		}
	}
}

// An in-process fabric answers the commands with no hardware and no peer.
func TestSimFabric(t *testing.T) {
	out, errs, code := run(t, "", "ibtool", "--fabric", "sim:fattree:k=4,n=2", "smpquery", "nodeinfo", "-D", "0")
	if code != 0 || !strings.Contains(out, "NodeType:") || !strings.Contains(out, "Channel Adapter") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	out, errs, code = run(t, "", "ibtool", "--fabric", "sim:fattree:k=4,n=2", "perfquery", "--json")
	if code != 0 || !strings.Contains(out, `"portXmitData"`) {
		t.Fatalf("perfquery exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}
