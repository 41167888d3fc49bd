//go:build vmguest

package rdmatool

// Runs inside the kernel VM (internal/vmtest), as root, with iproute2 6.1's
// rdma, ibv_rc_pingpong and rping on PATH and an rxe device up: the live
// comparison of rdmatool with rdma(8).

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/internal/floor"
	"github.com/rdmakit/rdmakit/nldev/nldevtest"
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

func hasSiw() bool {
	_, err := os.Stat("/sys/class/infiniband/siw0")
	return err == nil
}

// Fields that change between two runs a moment apart are masked only where
// rdmatool deliberately differs (the full 64-bit MR iova, docs/rdmatool.md).
var iovaRe = regexp.MustCompile(`(iova 0x|"iova":")[0-9a-f]+`)

func mask(s string) string { return iovaRe.ReplaceAllString(s, "${1}X") }

// liveSet is one argument set; rdma's stdout must contain must, so that a
// comparison of two empty outputs cannot pass for one of the resources.
type liveSet struct {
	args []string
	must string
}

func TestLiveCompare(t *testing.T) {
	began := time.Now()
	_, err := exec.LookPath("rdma")
	floor.Need(t, err == nil, "iproute2's rdma in the VM")
	const dev, ip, siwIP = "rxe0", "10.0.0.1", "10.0.1.1"

	nldevtest.StartTraffic(t)
	t.Logf("traffic up after %v", time.Since(began).Round(time.Millisecond))

	dir := t.TempDir()
	batch := filepath.Join(dir, "batch")
	if err := os.WriteFile(batch, []byte("dev\n# a comment\nlink show "+dev+"/1\nres show qp\nsys\nres show srq type BASIC\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	batchErr := filepath.Join(dir, "batch-errors")
	if err := os.WriteFile(batchErr, []byte("dev show "+dev+"\nres show qp lqpn 1 \\\n  link "+dev+"/1\ndev show nosuchdev\nres show pd\nres show cq users 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lp := dev + "/1"
	sets := []liveSet{
		// dev
		{[]string{"dev"}, "siw0"},
		{[]string{"dev", "show", dev}, "node_guid"},
		{[]string{"dev", "show", "siw0"}, "rnic"},
		{[]string{"-d", "dev"}, "caps"},
		{[]string{"-j", "dev"}, `"node_type":"ca"`},
		{[]string{"-j", "-p", "-d", "dev"}, "adaptive-moderation"},
		{[]string{"-p", "dev"}, ""},
		{[]string{"--json", "--details", "dev", "list"}, ""},
		{[]string{"d", "sh", dev}, ""},
		// link
		{[]string{"link"}, "netdev dummy1"},
		{[]string{"link", "show", lp}, "ACTIVE"},
		{[]string{"-d", "link"}, "netdev_index"},
		{[]string{"-j", "link"}, ""},
		{[]string{"-jp", "-d", "link"}, ""},
		{[]string{"-dd", "link", "show", "siw0/1"}, ""},
		{[]string{"link", "show", dev}, ""},
		// resource summary
		{[]string{"res"}, "cm_id"},
		{[]string{"res", "show", dev}, "srq 1"},
		{[]string{"-j", "res"}, ""},
		{[]string{"-jp", "res", "show", "siw0"}, ""},
		// qp
		{[]string{"res", "show", "qp"}, "comm ibv_rc_pingpong"},
		{[]string{"-j", "res", "show", "qp"}, "rping"},
		{[]string{"-d", "res", "show", "qp"}, "ib_send_bw"},
		{[]string{"-dd", "res", "show", "qp"}, ""},
		{[]string{"-dd", "-j", "res", "show", "qp"}, ""},
		{[]string{"r", "s", "q", "link", lp}, ""},
		{[]string{"res", "show", "qp", "link", "siw0/1"}, "rping"},
		{[]string{"res", "show", "qp", "type", "RC,gsi"}, "GSI"},
		{[]string{"res", "show", "qp", "lqpn", "1-100,200", "state", "rts"}, ""},
		{[]string{"res", "show", "qp", "comm", "ibv_rc_pingpong"}, ""},
		{[]string{"res", "show", "qp", "lqpn", "17"}, ""},
		{[]string{"res", "show", "qp", "link", lp, "lqpn", "1"}, "GSI"},
		{[]string{"res", "show", "qp", "lqpn", "99999"}, ""},
		{[]string{"res", "show", "qp", "link", lp, "lqpn", "99999"}, ""},
		{[]string{"-r", "res", "show", "qp"}, ""},
		{[]string{"res", "show", "qp", "bogus", "1"}, ""},
		{[]string{"res", "show", "qp", "lqpn"}, ""},
		{[]string{"res", "show", "qp", "lqpn", "x"}, ""},
		// cm_id
		{[]string{"res", "show", "cm_id"}, "comm rping"},
		{[]string{"-j", "res", "show", "cm_id"}, "src-addr"},
		{[]string{"-dd", "res", "show", "cm_id"}, ""},
		{[]string{"res", "show", "cm_id", "ps", "tcp"}, ""},
		{[]string{"res", "show", "cm_id", "state", "listen"}, "LISTEN"},
		{[]string{"res", "show", "cm_id", "src-port", "7174"}, ""},
		{[]string{"res", "show", "cm_id", "dst-addr", ip}, ""},
		{[]string{"res", "show", "cm_id", "link", "siw0/1"}, "siw0"},
		{[]string{"res", "show", "cm_id", "cm-idn", "0"}, ""},
		// cq
		{[]string{"res", "show", "cq"}, "poll-ctx"},
		{[]string{"-j", "-p", "res", "show", "cq"}, ""},
		{[]string{"-d", "res", "show", "cq"}, ""},
		{[]string{"res", "show", "cq", "dev", dev, "users", "1-2"}, ""},
		{[]string{"res", "show", "cq", "poll-ctx", "workqueue"}, ""},
		{[]string{"res", "show", "cq", "cqn", "1"}, ""},
		{[]string{"res", "show", "cq", "dev", dev, "cqn", "0"}, ""},
		// mr
		{[]string{"res", "show", "mr"}, "mrlen"},
		{[]string{"-j", "res", "show", "mr"}, ""},
		{[]string{"-d", "res", "show", "mr"}, ""},
		{[]string{"res", "show", "mr", "mrlen", "16-4096"}, ""},
		{[]string{"res", "show", "mr", "dev", "siw0", "mrn", "1"}, ""},
		// pd
		{[]string{"res", "show", "pd"}, "local_dma_lkey"},
		{[]string{"res", "show", "pd", "dev", dev, "users", "1-10"}, ""},
		{[]string{"-j", "res", "show", "pd"}, ""},
		{[]string{"res", "show", "pd", "pdn", "1"}, ""},
		// ctx
		{[]string{"res", "show", "ctx"}, "comm ib_send_bw"},
		{[]string{"-j", "res", "show", "ctx"}, ""},
		{[]string{"res", "show", "ctx", "dev", "siw0"}, ""},
		{[]string{"res", "show", "ctx", "ctxn", "0"}, ""},
		// srq
		{[]string{"res", "show", "srq"}, "srqn"},
		{[]string{"-j", "res", "show", "srq"}, ""},
		{[]string{"-dd", "res", "show", "srq"}, ""},
		{[]string{"res", "show", "srq", "type", "basic"}, ""},
		{[]string{"res", "show", "srq", "srqn", "0"}, ""},
		{[]string{"res", "show", "srq", "lqpn", "1-100"}, ""},
		// sys
		{[]string{"sys"}, "netns shared"},
		{[]string{"system", "show", "netns"}, ""},
		{[]string{"sys", "help"}, ""},
		// statistic
		{[]string{"statistic"}, "rcvd_pkts"},
		{[]string{"stat", "show", "link", lp}, ""},
		{[]string{"-j", "statistic", "show", "link", lp}, ""},
		{[]string{"-p", "-j", "stat", "show", "link", lp}, ""},
		{[]string{"stat", "show", "link", "siw0/1"}, ""},
		{[]string{"stat", "qp", "mode"}, "auto"},
		{[]string{"stat", "qp", "mode", "link", lp}, ""},
		{[]string{"-j", "stat", "qp", "mode"}, ""},
		{[]string{"stat", "qp", "show"}, ""},
		{[]string{"stat", "mode", "link", lp}, ""},
		{[]string{"stat", "mode", "supported", "link", lp}, ""},
		{[]string{"stat", "qp", "bind", "link", lp, "lqpn", "17"}, ""},
		{[]string{"stat", "help"}, ""},
		// unknown devices and other failures
		{[]string{"dev", "show", "nosuchdev"}, ""},
		{[]string{"link", "show", "nosuchdev/1"}, ""},
		{[]string{"res", "show", "qp", "link", "nosuch/1"}, ""},
		{[]string{"res", "show", "cq", "dev", "nosuch"}, ""},
		{[]string{"stat", "show", "link", "nosuch/1"}, ""},
		{[]string{"link", "delete", "nosuch"}, ""},
		{[]string{"dev", "set", "nosuch", "name", "x"}, ""},
		// batch files, options, help
		{[]string{"-b", batch}, "netns"},
		{[]string{"-f", "-b", batchErr}, "poll-ctx"},
		{[]string{"--force", "--batch=" + batchErr}, "poll-ctx"},
		{[]string{"-force", "-b", batchErr}, ""},
		{[]string{"-b"}, ""},
		{[]string{"-b", batchErr}, ""},
		{[]string{"-b", filepath.Join(dir, "missing")}, ""},
		{[]string{"-V"}, "iproute2"},
		{[]string{"help"}, "OBJECT"},
		{[]string{"-h"}, ""},
		{[]string{"dev", "help"}, ""},
		{[]string{"res", "help"}, ""},
		{[]string{"link", "help"}, ""},
	}
	for _, s := range sets {
		t.Run(strings.Join(s.args, " "), func(t *testing.T) {
			compare(t, s.args, s.must)
		})
	}
	n := len(sets)

	t.Run("link add, show, delete", func(t *testing.T) {
		for _, typ := range []string{"rxe", "siw"} {
			name := typ + "cmp"
			if r := runOurs("link", "add", name, "type", typ, "netdev", "lo"); !r.ok {
				t.Fatalf("rdmatool link add %s: %s", typ, r.stderr)
			}
			t.Cleanup(func() { runRdma(t, "link", "delete", name) })
			waitActive(t, name)
			compare(t, []string{"link", "show", name + "/1"}, "netdev lo")
			compare(t, []string{"-j", "dev", "show", name}, name)
			compare(t, []string{"res", "show", name}, name)
			if r := runRdma(t, "link", "delete", name); !r.ok {
				t.Fatalf("rdma link delete: %s", r.stderr)
			}
			compare(t, []string{"link", "show", name + "/1"}, "")
			if r := runRdma(t, "link", "add", name, "type", typ, "netdev", "lo"); !r.ok {
				t.Fatalf("rdma link add: %s", r.stderr)
			}
			waitActive(t, name)
			compare(t, []string{"dev"}, name)
			compare(t, []string{"link", "add", name, "type", typ, "netdev", "lo"}, "")
			if r := runOurs("link", "delete", name); !r.ok {
				t.Fatalf("rdmatool link delete: %s", r.stderr)
			}
			compare(t, []string{"dev", "show", name}, "")
			n += 8
		}
		compare(t, []string{"link", "add", "badcmp", "type", "nosuchtype", "netdev", "lo"}, "")
		compare(t, []string{"link", "add", "badcmp", "type", "rxe", "netdev", "nosuchnetdev"}, "")
		n += 2
	})

	t.Run("dev set", func(t *testing.T) {
		if r := runOurs("dev", "set", dev, "adaptive-moderation", "on"); !r.ok {
			t.Fatalf("rdmatool dev set adaptive-moderation: %s", r.stderr)
		}
		t.Cleanup(func() { runRdma(t, "dev", "set", dev, "adaptive-moderation", "off") })
		compare(t, []string{"-d", "dev", "show", dev}, "adaptive-moderation on")
		if r := runOurs("dev", "set", dev, "name", "rxecmp9"); !r.ok {
			t.Fatalf("rdmatool dev set name: %s", r.stderr)
		}
		t.Cleanup(func() { runRdma(t, "dev", "set", "rxecmp9", "name", dev) })
		compare(t, []string{"dev"}, "rxecmp9")
		if r := runRdma(t, "dev", "set", "rxecmp9", "name", dev); !r.ok {
			t.Fatalf("rdma dev set name: %s", r.stderr)
		}
		compare(t, []string{"-j", "dev", "show", dev}, dev)
		n += 3
	})

	t.Run("stat qp set", func(t *testing.T) {
		if r := runOurs("stat", "qp", "set", "link", lp, "auto", "type", "on"); !r.ok {
			t.Fatalf("rdmatool stat qp set: %s", r.stderr)
		}
		t.Cleanup(func() { runRdma(t, "stat", "qp", "set", "link", lp, "auto", "off") })
		compare(t, []string{"stat", "qp", "mode"}, "auto type on")
		compare(t, []string{"-j", "stat", "qp", "mode", "link", lp}, "")
		if r := runRdma(t, "stat", "qp", "set", "link", lp, "auto", "off"); !r.ok {
			t.Fatalf("rdma stat qp set: %s", r.stderr)
		}
		compare(t, []string{"stat", "qp", "mode", "link", lp}, "auto off")
		n += 3
	})

	t.Run("not root", func(t *testing.T) {
		// The initramfs's root directory is mode 0700: open it up so
		// that an unprivileged user can reach /usr/bin (the VM is
		// thrown away afterwards).
		if err := os.Chmod("/", 0o755); err != nil {
			t.Fatal(err)
		}
		bin := unprivilegedCopy(t)
		for _, args := range [][]string{
			{"dev"},
			{"res", "show", "qp"},
			{"link", "add", "permcmp", "type", "rxe", "netdev", "lo"},
			{"dev", "set", dev, "adaptive-moderation", "on"},
			{"stat", "qp", "set", "link", lp, "auto", "type", "on"},
		} {
			want := runAs(t, "rdma", args)
			got := runAs(t, bin, args)
			if mask(want.stdout) != mask(got.stdout) || want.ok != got.ok {
				t.Errorf("as nobody, rdma %s\n--- rdma (ok=%v):\n%s--- stderr: %s\n--- rdmatool (ok=%v):\n%s--- stderr: %s",
					strings.Join(args, " "), want.ok, want.stdout, want.stderr, got.ok, got.stdout, got.stderr)
			}
			if !got.ok && !strings.Contains(got.stderr, "Operation not permitted") {
				t.Errorf("as nobody, rdmatool %s: stderr %q does not say the operation is not permitted", strings.Join(args, " "), got.stderr)
			}
			n++
		}
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
	t.Logf("compared %d argument sets in %v", n, time.Since(began).Round(time.Millisecond))
}

// unprivilegedCopy copies the rdmatool binary where an unprivileged user
// can run it: $VMTEST_DIR is a 9p share of a directory only root may enter.
func unprivilegedCopy(t *testing.T) string {
	t.Helper()
	src := filepath.Join(os.Getenv("VMTEST_DIR"), "rdmatool")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("the rdmatool binary (vmtest ExtraBinaries): %v", err)
	}
	dir, err := os.MkdirTemp("/tmp", "rdmatool")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "rdmatool")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// runAs runs a program as user and group 65534 (nobody), without
// CAP_NET_ADMIN.
func runAs(t *testing.T, prog string, args []string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = "/tmp"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v: timed out", prog, args)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s %v: %v", prog, args, err)
	}
	return result{out.String(), err == nil, errb.String()}
}

// compare runs both tools and requires the same stdout and status; a first
// mismatch is retried once in case a frozen process still had work in
// flight.
func compare(t *testing.T, args []string, must string) {
	t.Helper()
	var want, got result
	for try := 0; try < 2; try++ {
		want, got = runRdma(t, args...), runOurs(args...)
		if try == 0 && must != "" && !strings.Contains(want.stdout, must) {
			t.Errorf("rdma %s shows no %q: the test's setup is not visible:\n%s", strings.Join(args, " "), must, want.stdout)
		}
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
