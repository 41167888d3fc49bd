//go:build vmguest

package rdmatool

// Runs inside the kernel VM (internal/vmtest), as root, with iproute2 6.1's
// rdma, ibv_rc_pingpong and rping on PATH and an rxe device up: the live
// comparison of rdmatool with rdma(8).

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/internal/floor"
	"github.com/rdmakit/rdmakit/nldev"
)

// result is what both tools must agree on.
type result struct {
	stdout string
	ok     bool
	stderr string
}

func runRdma(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "rdma", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("rdma %v: timed out", args)
	}
	return result{out.String(), err == nil, errb.String()}
}

func runOurs(args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code := Run(ctx, args, &out, &errb)
	return result{out.String(), code == 0, errb.String()}
}

// startProc starts a helper process, killed by PID when the test ends.
func startProc(t *testing.T, name string, args ...string) *os.Process {
	t.Helper()
	cmd := exec.Command(name, args...)
	log, err := os.Create(filepath.Join(t.TempDir(), name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	p := cmd.Process
	t.Cleanup(func() {
		_ = p.Signal(syscall.SIGCONT)
		_ = p.Kill()
		_, _ = p.Wait()
		log.Close()
	})
	return p
}

// rxeDevice returns the first RDMA device, its netdev and that netdev's
// IPv4 address.
func rxeDevice(t *testing.T) (dev, netdev string, ip net.IP) {
	t.Helper()
	c, err := nldev.Dial(nil)
	if err != nil {
		t.Fatalf("RDMA netlink in the VM: %v", err)
	}
	defer c.Close()
	ctx := context.Background()
	ports, err := c.Link.List(ctx)
	if err != nil || len(ports) == 0 {
		t.Fatalf("no RDMA ports in the VM: %v", err)
	}
	dev, netdev = ports[0].DevName, ports[0].NdevName
	ifc, err := net.InterfaceByName(netdev)
	if err != nil {
		t.Fatalf("netdev %q of %s: %v", netdev, dev, err)
	}
	addrs, _ := ifc.Addrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
			return dev, netdev, n.IP.To4()
		}
	}
	t.Fatalf("netdev %s of %s has no IPv4 address", netdev, dev)
	return
}

// Fields that change between two runs a moment apart are masked only where
// rdmatool deliberately differs (the full 64-bit MR iova, docs/rdmatool.md).
var iovaRe = regexp.MustCompile(`(iova 0x|"iova":")[0-9a-f]+`)

func mask(s string) string { return iovaRe.ReplaceAllString(s, "${1}X") }

func TestLiveCompare(t *testing.T) {
	_, err := exec.LookPath("rdma")
	floor.Need(t, err == nil, "iproute2's rdma in the VM")
	for _, tool := range []string{"ibv_rc_pingpong", "rping"} {
		_, err := exec.LookPath(tool)
		floor.Need(t, err == nil, tool+" in the VM")
	}
	dev, _, ip := rxeDevice(t)

	// Traffic that holds every kind of resource: an RC pingpong pair (QPs,
	// CQs, MRs, PDs, contexts) and an rping pair (CM IDs).
	gid := "1" // the IPv4-mapped RoCEv2 GID of the netdev's address
	srv := startProc(t, "ibv_rc_pingpong", "-d", dev, "-g", gid, "-n", "100000000")
	time.Sleep(300 * time.Millisecond)
	cli := startProc(t, "ibv_rc_pingpong", "-d", dev, "-g", gid, "-n", "100000000", "127.0.0.1")
	rs := startProc(t, "rping", "-s", "-a", ip.String(), "-C", "100000000")
	time.Sleep(300 * time.Millisecond)
	rc := startProc(t, "rping", "-c", "-a", ip.String(), "-C", "100000000")
	time.Sleep(700 * time.Millisecond)
	// Frozen processes post no work: PSNs and counters hold still while
	// both tools look.
	for _, p := range []*os.Process{srv, cli, rs, rc} {
		if err := p.Signal(syscall.SIGSTOP); err != nil {
			t.Fatalf("SIGSTOP %d: %v", p.Pid, err)
		}
	}
	time.Sleep(300 * time.Millisecond)

	batch := filepath.Join(t.TempDir(), "batch")
	if err := os.WriteFile(batch, []byte("dev\n# a comment\nlink show "+dev+"/1\nres show qp\nsys\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sets := [][]string{
		{"dev"},
		{"dev", "show", dev},
		{"-d", "dev"},
		{"-j", "dev"},
		{"-j", "-p", "-d", "dev"},
		{"link"},
		{"link", "show", dev + "/1"},
		{"-d", "link"},
		{"-j", "link"},
		{"-jp", "-d", "link"},
		{"res"},
		{"res", "show", dev},
		{"-j", "res"},
		{"res", "show", "qp"},
		{"-j", "res", "show", "qp"},
		{"-d", "res", "show", "qp"},
		{"-dd", "res", "show", "qp"},
		{"r", "s", "q", "link", dev + "/1"},
		{"res", "show", "qp", "type", "RC,gsi"},
		{"res", "show", "qp", "lqpn", "1-100,200", "state", "rts"},
		{"res", "show", "qp", "lqpn", "99999"},
		{"res", "show", "cm_id"},
		{"-j", "res", "show", "cm_id"},
		{"res", "show", "cm_id", "ps", "tcp"},
		{"res", "show", "cq"},
		{"-j", "-p", "res", "show", "cq"},
		{"res", "show", "mr"},
		{"-j", "res", "show", "mr"},
		{"res", "show", "pd"},
		{"res", "show", "pd", "dev", dev, "users", "1-10"},
		{"res", "show", "ctx"},
		{"res", "show", "srq"},
		{"sys"},
		{"system", "show", "netns"},
		{"statistic"},
		{"-j", "statistic", "show", "link", dev + "/1"},
		{"stat", "qp", "mode"},
		{"stat", "qp", "show"},
		{"-b", batch},
		{"dev", "show", "nosuchdev"},
		{"link", "show", "nosuchdev/1"},
		{"res", "show", "qp", "bogus", "1"},
		{"-V"},
		{"help"},
	}
	for _, args := range sets {
		name := strings.Join(args, " ")
		t.Run(name, func(t *testing.T) {
			compare(t, args)
		})
	}

	t.Run("link add, show, delete", func(t *testing.T) {
		const name = "rxecmp"
		if r := runOurs("link", "add", name, "type", "rxe", "netdev", "lo"); !r.ok {
			t.Fatalf("rdmatool link add: %s", r.stderr)
		}
		t.Cleanup(func() { runRdma(t, "link", "delete", name) })
		waitActive(t, name)
		compare(t, []string{"link", "show", name + "/1"})
		compare(t, []string{"-j", "dev", "show", name})
		if r := runRdma(t, "link", "delete", name); !r.ok {
			t.Fatalf("rdma link delete: %s", r.stderr)
		}
		compare(t, []string{"link", "show", name + "/1"})
		if r := runRdma(t, "link", "add", name, "type", "rxe", "netdev", "lo"); !r.ok {
			t.Fatalf("rdma link add: %s", r.stderr)
		}
		waitActive(t, name)
		compare(t, []string{"dev"})
		if r := runOurs("link", "delete", name); !r.ok {
			t.Fatalf("rdmatool link delete: %s", r.stderr)
		}
		compare(t, []string{"dev", "show", name})
	})

	// The bugs fixed on purpose: same stdout, different status or form.
	t.Run("fixed: unknown command fails", func(t *testing.T) {
		want, got := runRdma(t, "bogus"), runOurs("bogus")
		if want.stdout != got.stdout || !want.ok || got.ok {
			t.Fatalf("rdma ok=%v %q, rdmatool ok=%v %q", want.ok, want.stdout, got.ok, got.stdout)
		}
	})
	t.Run("fixed: sys -j is JSON", func(t *testing.T) {
		got := runOurs("-j", "sys")
		if !got.ok || !strings.HasPrefix(got.stdout, `{"netns":`) {
			t.Fatalf("rdmatool -j sys: %q", got.stdout)
		}
	})
	t.Log("compared", len(sets)+5, "argument sets")
}

// compare runs both tools and requires the same stdout and status; a first
// mismatch is retried once in case a frozen process still had work in
// flight.
func compare(t *testing.T, args []string) {
	t.Helper()
	var want, got result
	for try := 0; try < 2; try++ {
		want, got = runRdma(t, args...), runOurs(args...)
		if mask(want.stdout) == mask(got.stdout) && want.ok == got.ok {
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Errorf("rdma %s\n--- rdma (ok=%v) stdout:\n%s--- stderr: %s\n--- rdmatool (ok=%v) stdout:\n%s--- stderr: %s",
		strings.Join(args, " "), want.ok, want.stdout, want.stderr, got.ok, got.stdout, got.stderr)
}

// waitActive waits for a new link's port to settle, so both tools see the
// same state.
func waitActive(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if r := runRdma(t, "link", "show", name+"/1"); r.ok && strings.Contains(r.stdout, "state ACTIVE") {
			time.Sleep(200 * time.Millisecond)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("link %s/1 did not become ACTIVE in 10 s", name)
}
