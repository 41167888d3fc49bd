package diags

import (
	"strings"
	"testing"

	"github.com/rdmakit/rdmakit/fabric"
)

// A fabric string or option the user got wrong is a usage error (exit 2);
// a machine without devices is not, and its message suggests the simulator.
func TestFabricErrors(t *testing.T) {
	empty := t.TempDir()
	t.Setenv(fabric.SysfsEnv, empty)
	t.Setenv(fabric.EnvVar, "")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--fabric", "carrier-pigeon", "smpquery", "nodeinfo", "1"}, 2, "want umad"},
		{[]string{"--fabric", "sim:", "smpquery", "nodeinfo", "1"}, 2, "needs a topology"},
		{[]string{"--fabric", "ibsim:x", "-C", "mlx5_0", "smpquery", "nodeinfo", "1"}, 2, "ibsim:NODE"},
		{[]string{"smpquery", "nodeinfo", "1"}, NoDeviceStatus, "--fabric sim:"},
		{[]string{"--fabric", "sim:/no/such/file.topo", "smpquery", "nodeinfo", "1"}, 1, "no such file"},
		// -t and --retries are range-checked before they become a wait
		// and a count: 9300000000000 ms overflows a time.Duration.
		{[]string{"--fabric", "sim:fattree:k=2,n=2", "-t", "9300000000000", "smpquery", "nodeinfo", "1"}, 2, "-t/--timeout 9300000000000: want 0"},
		{[]string{"--fabric", "sim:fattree:k=2,n=2", "-t", "-1", "smpquery", "nodeinfo", "1"}, 2, "-t/--timeout -1"},
		{[]string{"--fabric", "sim:fattree:k=2,n=2", "-t", "3600001", "ibtracert", "1", "2"}, 2, "-t/--timeout 3600001"},
		{[]string{"--fabric", "sim:fattree:k=2,n=2", "--retries", "101", "smpquery", "nodeinfo", "1"}, 2, "--retries 101: want 0 to 100"},
		{[]string{"--fabric", "sim:fattree:k=2,n=2", "--retries", "-2", "ibnetdiscover"}, 2, "--retries -2"},
	} {
		_, errs, code := run(t, "", append([]string{"ibtool"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errs, tc.code, tc.msg)
		}
	}
}

// No RDMA device is one exit status, whatever the command: the C tools'
// IBEXIT status.
func TestNoDeviceStatus(t *testing.T) {
	t.Setenv(fabric.SysfsEnv, t.TempDir())
	t.Setenv(fabric.EnvVar, "")
	for _, args := range [][]string{
		{"ibaddr"}, {"ibnetdiscover"}, {"perfquery"}, {"saquery"}, {"iblinkinfo"}, {"ibqueryerrors"},
		{"ibroute", "1"}, {"dump_fts"}, {"ibtracert", "1", "2"}, {"sminfo"}, {"smpdump", "1", "0x11"},
		{"ibcheckerrors"}, {"ibhosts"}, {"ibprintca", "-l"}, {"ibping", "1"}, {"query", "SubnGet", "NodeInfo"},
		{"set_port_state", "1"}, {"init_all_ports"}, {"ibfindnodesusing", "0x1", "1"}, {"ibidsverify"},
		{"ibswportwatch", "1"}, {"vendstat", "1"}, {"ibccquery", "CongestionInfo", "1"}, {"ibsysstat", "1"},
	} {
		_, errs, code := run(t, "", append([]string{"ibtool"}, args...)...)
		if code != NoDeviceStatus || !strings.Contains(errs, "no RDMA device") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d, no RDMA device", args, code, errs, NoDeviceStatus)
		}
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

// TestCompletion: ibtool completion writes cobra's scripts for bash, zsh,
// fish and PowerShell.
func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{"bash": "__start_ibtool", "zsh": "#compdef ibtool", "fish": "complete -c ibtool", "powershell": "Register-ArgumentCompleter"} {
		out, errOut, code := run(t, "", "ibtool", "completion", shell)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("completion %s: exit %d, %q not in the script (%s)", shell, code, want, errOut)
		}
	}
}
