package diags

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/fabric"
	"github.com/rdmakit/rdmakit/internal/floor"
	"github.com/rdmakit/rdmakit/internal/testbed"
)

// sysfsFixtures are the device layer's sysfs trees (device/testdata).
func sysfsFixtures(t *testing.T) map[string]string {
	t.Helper()
	dirs, err := filepath.Glob("../../device/testdata/*/sys")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no sysfs fixtures (%v)", err)
	}
	out := map[string]string{}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(filepath.Dir(d))] = abs
	}
	return out
}

// cOnSysfs runs a C tool of release rel that reads /sys/class (ibstat, the
// ibstatus script, ibv_devices) on a fixture tree: in a private mount
// namespace the fixture's class directory is bind-mounted over /sys/class,
// so the tool reads the same files as ours does through RDMAKIT_SYSFS. It
// needs root and unshare(1).
func cOnSysfs(t *testing.T, rel *testbed.Release, sys string, argv ...string) (stdout, stderr string, code int) {
	t.Helper()
	floor.Need(t, os.Geteuid() == 0, "root, to bind-mount sysfs fixtures for the C tools")
	_, err := exec.LookPath("unshare")
	floor.Need(t, err == nil, "unshare(1)")
	bin, err := rel.LookPath(argv[0])
	floor.Need(t, err == nil, argv[0]+" of "+rel.Name+" (infiniband-diags, ibverbs-utils)")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	script := `mount --bind "$1" /sys/class || exit 99; shift; exec "$@"`
	cmd := exec.CommandContext(ctx, "unshare", append([]string{"-m", "sh", "-c", script, "sh", filepath.Join(sys, "class"), bin}, argv[1:]...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if code == 99 || (err != nil && code < 0) {
		t.Fatalf("%v: %v\n%s", argv, err, errb.String())
	}
	return out.String(), errb.String(), code
}

// ibstatFailed is the warning of infiniband-diags 56's ibstat for a
// device or a port it cannot show, after which it goes on and exits 0.
var ibstatFailed = regexp.MustCompile(`stat of IB device '[^']*' failed`)

// ibstatExit is the exit status ours has where the C ibstat exited with
// code: 255 where 56 warned of a device or port it could not show and
// exited 0 (an unknown target is an error: docs/ibtool.md, "Deliberate
// differences"); 44 exits 255 there itself.
func ibstatExit(stderr string, code int) int {
	if code == 0 && ibstatFailed.MatchString(stderr) {
		return 255
	}
	return code
}

// oursOnSysfs runs our command on the fixture tree.
func oursOnSysfs(t *testing.T, sys string, argv ...string) (string, string, int) {
	t.Helper()
	t.Setenv(fabric.SysfsEnv, sys)
	t.Setenv(fabric.EnvVar, "")
	return run(t, "", append([]string{"ibtool"}, argv...)...)
}

// TestIBStatFixtures compares ibstat with the C ibstat of each release on
// every sysfs fixture, with every option.
func TestIBStatFixtures(t *testing.T) {
	testbed.EachRelease(t, func(t *testing.T, rel *testbed.Release) {
		for name, sys := range sysfsFixtures(t) {
			t.Run(name, func(t *testing.T) { ibstatFixture(t, rel, sys) })
		}
	})
}

func ibstatFixture(t *testing.T, rel *testbed.Release, sys string) {
	cases := [][]string{{}, {"-l"}, {"-s"}, {"-p"}, {"mlx5_0"}, {"mlx5_0", "1"}, {"-s", "mlx5_0", "1"},
		{"mlx5_0", "7"}, {"nosuchdev"}, {"rxe0", "1"}, {"-p", "rxe0"}, {"-l", "mlx5_1"}}
	for _, args := range cases {
		cOut, cErr, cCode := cOnSysfs(t, rel, sys, append([]string{"ibstat"}, args...)...)
		cCode = ibstatExit(cErr, cCode)
		out, errOut, code := oursOnSysfs(t, sys, append([]string{"ibstat"}, args...)...)
		if code != cCode || out != cOut {
			t.Errorf("ibstat %v: exit %d, C %d\n--- C\n%s--- ours\n%s%s", args, code, cCode, cOut, out, errOut)
		}
	}
}

// TestIBStatJSON keeps ibstat --json of two fixtures.
func TestIBStatJSON(t *testing.T) {
	fx := sysfsFixtures(t)
	for _, name := range []string{"mlx5-ib", "rxe"} {
		out, errOut, code := oursOnSysfs(t, fx[name], "ibstat", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		golden(t, name, out)
	}
	out, _, _ := oursOnSysfs(t, fx["two-port"], "--json", "ibstat", "-p")
	golden(t, "two-port-p", out)
}

// TestIBStatNoDevices is a machine without an RDMA stack: the C ibstat
// prints nothing and succeeds.
func TestIBStatNoDevices(t *testing.T) {
	out, errOut, code := oursOnSysfs(t, t.TempDir(), "ibstat")
	if code != 0 || out != "" {
		t.Errorf("exit %d, %q %q", code, out, errOut)
	}
}

// TestIBStatLive compares ibstat on the ibsim floor, where the C ibstat
// reads libumad2sim's fake sysfs and ours reads the attached port by SMPs,
// for a dual-port HCA and a switch.
func TestIBStatLive(t *testing.T) { eachRelease(t, testIBStatLive) }

func testIBStatLive(t *testing.T, p peers) {
	l := startLive(t, p)
	for _, node := range []string{liveHost, "S-leaf-1"} {
		for _, args := range [][]string{{}, {"-l"}, {"-s"}, {"-p"}, {"ibsim0"}, {"ibsim0", "1"}, {"ibsim0", "0"}, {"ibsim0", "3"}, {"nosuch"}} {
			argv := append([]string{"ibstat"}, args...)
			cOut, cErr, cCode := l.p.diags.RunC(t, l.sim, node, argv...)
			cCode = ibstatExit(cErr, cCode)
			out, errOut, code := run(t, "", append([]string{"ibtool", "--fabric", "ibsim:" + node}, argv...)...)
			if code != cCode || out != cOut {
				t.Errorf("%s: ibstat %v: exit %d, C %d\n--- C\n%s%s--- ours\n%s%s", node, args, code, cCode, cOut, cErr, out, errOut)
			}
		}
	}
	// ibstatus cannot run under libumad2sim (a shell script reads /sys
	// itself); ours shows the files libumad2sim would write.
	out, errOut, code := run(t, "", "ibtool", "--fabric", "ibsim:"+liveHost, "ibstatus")
	want := "Infiniband device 'ibsim0' port 1 status:\n" +
		"\tdefault gid:\t fe80:0000:0000:0000:0002:c903:00c0:0021\n" +
		"\tbase lid:\t 0x" + hexLID(l.lid[liveHost]) + "\n" +
		"\tsm lid:\t\t 0x" + hexLID(l.lid["H-1"]) + "\n" +
		"\tstate:\t\t 4: ACTIVE\n" +
		"\tphys state:\t 5: LinkUp\n" +
		"\trate:\t\t 40 Gb/sec (4X QDR)\n" +
		"\tlink_layer:\t IB\n\n"
	if code != 0 || out != want {
		t.Errorf("ibstatus on ibsim: exit %d\n%s%s--- want\n%s", code, out, errOut, want)
	}
}

func hexLID(n int) string { return strconv.FormatInt(int64(n), 16) }

// TestIBStatUnreadableDevice: a device ibstat cannot show (a port's rate
// gone from sysfs) is reported and the other devices are shown, as
// infiniband-diags 56 does, with IBEXIT's status (docs/ibtool.md). 44
// stops at that device, so the comparison is with 56.
func TestIBStatUnreadableDevice(t *testing.T) {
	tr := testbed.Trixie(t)
	sys := t.TempDir()
	if err := os.CopyFS(sys, os.DirFS(sysfsFixtures(t)["smi-split"])); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(sys, "class", "infiniband", "mlx5_0", "ports", "1", "rate")); err != nil {
		t.Fatal(err)
	}
	cOut, cErr, cCode := cOnSysfs(t, tr, sys, "ibstat")
	out, errOut, code := oursOnSysfs(t, sys, "ibstat")
	if !ibstatFailed.MatchString(cErr) || ibstatExit(cErr, cCode) != code || out != cOut || code != 255 ||
		!strings.Contains(errOut, "stat of IB device 'mlx5_0' failed") || !strings.Contains(out, "CA 'mlx5_1'") {
		t.Errorf("exit %d, C %d\n--- C\n%s%s--- ours\n%s%s", code, cCode, cOut, cErr, out, errOut)
	}
}
