//go:build vmguest

package nldev_test

// Runs inside the kernel VM (internal/vmtest): every replay case against the
// real kernel through a recorder. With NLDEV_RECORD=1 the recordings go to
// the console for the host test (vm_host_test.go) to store in testdata.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/internal/floor"
	"github.com/rdmakit/rdmakit/nldev"
	"github.com/rdmakit/rdmakit/nldev/nldevtest"
)

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

// traffic starts what holds every kind of resource and freezes it once the
// resources are there, so that the recordings are a consistent snapshot.
func traffic(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"ibv_rc_pingpong", "rping", "ib_send_bw"} {
		_, err := exec.LookPath(tool)
		floor.Need(t, err == nil, tool+" in the VM")
	}
	_, err := os.Stat("/sys/class/infiniband/siw0")
	floor.Need(t, err == nil, "siw0 in the VM")
	procs := []*os.Process{
		startProc(t, "ibv_rc_pingpong", "-d", "rxe0", "-g", "1", "-n", "100000000"),
		startProc(t, "rping", "-s", "-a", "10.0.0.1", "-C", "100000000"),
		startProc(t, "rping", "-s", "-a", "10.0.1.1", "-C", "100000000"),
		startProc(t, "ib_send_bw", "-d", "rxe0", "-x", "1", "-p", "18600", "--use-srq", "-n", "100000000"),
	}
	// rping's server listens through rdma_cm, not TCP: its LISTEN CM IDs
	// show in the resource dump.
	waitListen(t, 18515, 18600)
	waitFor(t, "rping's servers", 30*time.Second, func(c *nldev.Conn) string {
		if countRes(c, "rxe0", "cm_id", "rping") < 1 || countRes(c, "siw0", "cm_id", "rping") < 1 {
			return "no listening CM IDs"
		}
		return ""
	})
	procs = append(procs,
		startProc(t, "ibv_rc_pingpong", "-d", "rxe0", "-g", "1", "-n", "100000000", "127.0.0.1"),
		startProc(t, "rping", "-c", "-a", "10.0.0.1", "-C", "100000000"),
		startProc(t, "rping", "-c", "-a", "10.0.1.1", "-C", "100000000"),
		startProc(t, "ib_send_bw", "-d", "rxe0", "-x", "1", "-p", "18600", "--use-srq", "-n", "100000000", "127.0.0.1"),
	)
	waitFor(t, "the traffic's resources", 30*time.Second, func(c *nldev.Conn) string {
		var missing []string
		for _, w := range []struct {
			dev, kind, comm string
			n               int
		}{
			{"rxe0", "qp-rts", "ibv_rc_pingpong", 2},
			{"rxe0", "cm_id", "rping", 3},
			{"siw0", "cm_id", "rping", 3},
			{"rxe0", "srq", "ib_send_bw", 1},
		} {
			if got := countRes(c, w.dev, w.kind, w.comm); got < w.n {
				missing = append(missing, fmt.Sprintf("%s %s of %s: %d of %d", w.dev, w.kind, w.comm, got, w.n))
			}
		}
		return strings.Join(missing, "; ")
	})
	for _, p := range procs {
		_ = p.Signal(syscall.SIGSTOP)
	}
	time.Sleep(300 * time.Millisecond)
}

// waitFor polls cond until it reports nothing missing or timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func(c *nldev.Conn) (missing string)) {
	t.Helper()
	c, err := nldev.Dial(nil)
	if err != nil {
		t.Fatalf("RDMA netlink in the VM: %v", err)
	}
	defer c.Close()
	deadline := time.Now().Add(timeout)
	for {
		missing := cond(c)
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			out, _ := exec.Command("rdma", "res", "show").CombinedOutput()
			t.Fatalf("waited %v for %s: %s\nrdma res show:\n%s", timeout, what, missing, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// devIndex returns the index of the device named name.
func devIndex(ctx context.Context, c *nldev.Conn, name string) (uint32, bool) {
	devs, err := c.Dev.List(ctx)
	if err != nil {
		return 0, false
	}
	for _, d := range devs {
		if d.Name == name {
			return d.Index, true
		}
	}
	return 0, false
}

// countRes counts the resources of kind on device name held by comm.
func countRes(c *nldev.Conn, name, kind, comm string) int {
	ctx := context.Background()
	idx, ok := devIndex(ctx, c, name)
	if !ok {
		return 0
	}
	q := nldev.Query{Dev: idx}
	var entries []*nldev.Entry
	switch kind {
	case "qp-rts":
		qps, _ := c.Res.QPs(ctx, q)
		for i := range qps {
			if qps[i].State == 3 { // IB_QPS_RTS
				entries = append(entries, &qps[i].Entry)
			}
		}
	case "cm_id":
		ids, _ := c.Res.CMIDs(ctx, q)
		for i := range ids {
			entries = append(entries, &ids[i].Entry)
		}
	case "srq":
		srqs, _ := c.Res.SRQs(ctx, q)
		for i := range srqs {
			entries = append(entries, &srqs[i].Entry)
		}
	}
	n := 0
	for _, e := range entries {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", e.PID)); err == nil && strings.TrimSpace(string(b)) == comm {
			n++
		}
	}
	return n
}

func TestRecordReplies(t *testing.T) {
	traffic(t)
	rec, err := nldevtest.NewRecorder()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	uname, _ := exec.Command("uname", "-r").Output()
	record := os.Getenv("NLDEV_RECORD") == "1"
	for _, rc := range replayCases {
		t.Run(rc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			got, err := runCase(ctx, rec.Conn(), rc)
			ex := rec.Take()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(got, `"Unknown": [`) {
				t.Errorf("attributes left undecoded:\n%s", got)
			}
			if !record {
				return
			}
			b, err := nldevtest.Marshal(fmt.Sprintf("%s: recorded from Linux %s in the vmtest VM (go test ./nldev -run TestVM -record)", rc.name, strings.TrimSpace(string(uname))), ex)
			if err != nil {
				t.Fatal(err)
			}
			nldevtest.Emit(replayDir+"/"+rc.name+".nl", b)
		})
	}
}

// waitListen waits until TCP ports are listening (/proc/net/tcp{,6}), so a
// client is never started before its server: under a loaded emulator the
// server may take seconds to get there.
func waitListen(t *testing.T, ports ...int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var missing []int
		for _, p := range ports {
			if !listening(p) {
				missing = append(missing, p)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on TCP ports %v after 30 s", missing)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func listening(port int) bool {
	want := fmt.Sprintf(":%04X ", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(l)
			// local_address is field 1, st is field 3; 0A is LISTEN.
			if len(fs) > 3 && strings.HasSuffix(fs[1]+" ", want) && fs[3] == "0A" {
				return true
			}
		}
	}
	return false
}
