package diags

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/verbs"
)

// TestPingpongUsage: bad command lines are refused before any device is
// opened, with the usage exit status.
func TestPingpongUsage(t *testing.T) {
	for _, argv := range [][]string{
		{"ibtool", "rc_pingpong", "-m", "1000"},
		{"ibtool", "rc_pingpong", "-p", "70000"},
		{"ibtool", "rc_pingpong", "-n", "0"},
		{"ibtool", "rc_pingpong", "host1", "host2"},
		{"ibtool", "ud_pingpong", "-m", "1024"}, // ibv_ud_pingpong has no -m
		{"ibtool", "ud_pingpong", "-l", "16"},
		{"ibtool", "rdma_bw", "-t", "0"},
		{"ibtool", "rdma_bw", "-e", "64"},
		{"ibtool", "rc_pingpong", "--bogus"},
	} {
		if _, stderr, code := run(t, "", argv...); code != 2 || !strings.Contains(stderr, "Run 'ibtool") {
			t.Errorf("%q: exit %d, stderr %q; want a usage error", argv[1:], code, stderr)
		}
	}
	out, _, code := run(t, "", "ibtool", "rc_pingpong", "-h")
	if code != 0 || !strings.Contains(out, "--gid-idx") || !strings.Contains(out, "-d, --ib-dev") {
		t.Errorf("rc_pingpong -h: exit %d\n%s", code, out)
	}
	// No device by that name (or none at all on this machine).
	if _, stderr, code := run(t, "", "ibtool", "rc_pingpong", "-d", "nosuchdev0"); code != 1 || !strings.Contains(stderr, "nosuchdev0") && !strings.Contains(stderr, "verbs") {
		t.Errorf("rc_pingpong -d nosuchdev0: exit %d, %q", code, stderr)
	}
}

// TestPingpongNoLibibverbs: where libibverbs cannot be loaded, the verbs
// commands exist, say what to install and exit 1. The test binary runs
// itself again with verbs.EnvLibrary naming a library that is not there
// (the library is loaded once per process).
func TestPingpongNoLibibverbs(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("package verbs does not load libibverbs on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	if os.Getenv("DIAGS_TEST_NO_LIBIBVERBS") == "1" {
		for _, name := range []string{"rc_pingpong", "ud_pingpong", "rdma_bw"} {
			_, stderr, code := run(t, "", "ibtool", name, "-d", "mlx5_0", "host")
			if code != 1 || !strings.Contains(stderr, "libibverbs is not available") ||
				!strings.Contains(stderr, "apt-get install libibverbs1 ibverbs-providers") || !strings.Contains(stderr, "dnf install libibverbs") {
				t.Errorf("%s: exit %d, %q", name, code, stderr)
			}
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPingpongNoLibibverbs$", "-test.v")
	cmd.Env = append(os.Environ(), "DIAGS_TEST_NO_LIBIBVERBS=1", verbs.EnvLibrary+"=libibverbs-absent.so.1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestPingpongNoLibibverbs") {
		t.Errorf("%v\n%s", err, out)
	}
}

// TestBWConnLineBound: rdma_bw's side channel reads a document per line
// and stops a peer that sends a line longer than bwMaxLine without
// buffering it.
func TestBWConnLineBound(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		b.Write([]byte(`{"ready":true}` + "\n"))
		b.Write(bytes.Repeat([]byte("x"), 64<<10))
	}()
	c := &bwConn{c: a, r: bufio.NewReaderSize(a, bwMaxLine)}
	var ready map[string]bool
	if err := c.recv(&ready, 5*time.Second); err != nil || !ready["ready"] {
		t.Fatalf("first line: %v %v", ready, err)
	}
	if err := c.recv(&ready, 5*time.Second); err == nil || !strings.Contains(err.Error(), "a line longer than 4096 bytes") {
		t.Fatalf("an endless line: %v", err)
	}
}
