//go:build linux

package nldevtest

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
)

// StartTraffic starts, inside the kernel VM (internal/vmtest), processes
// that hold every kind of RDMA resource: an RC pingpong pair on rxe0 (QPs,
// CQs, MRs, PDs, contexts), rping pairs on rxe0 and siw0 (CM IDs, iWARP QPs)
// and an ib_send_bw pair with a shared receive queue. Once the resources
// show in the kernel's dump it freezes them (SIGSTOP), so that PSNs and
// counters hold still while tests look; they are killed by PID when t ends.
func StartTraffic(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"ibv_rc_pingpong", "rping", "ib_send_bw"} {
		_, err := exec.LookPath(tool)
		floor.Need(t, err == nil, tool+" in the VM")
	}
	_, err := os.Stat("/sys/class/infiniband/siw0")
	floor.Need(t, err == nil, "siw0 in the VM")
	const dev, ip, siwIP = "rxe0", "10.0.0.1", "10.0.1.1"
	gid := "1" // the IPv4-mapped RoCEv2 GID of dummy0's address
	procs := []*os.Process{
		StartProc(t, "ibv_rc_pingpong", "-d", dev, "-g", gid, "-n", "100000000"),
		StartProc(t, "rping", "-s", "-a", ip, "-C", "100000000"),
		StartProc(t, "rping", "-s", "-a", siwIP, "-C", "100000000"),
		StartProc(t, "ib_send_bw", "-d", dev, "-x", gid, "-p", "18600", "--use-srq", "-n", "100000000"),
	}
	// rping's server listens through rdma_cm, not TCP: its LISTEN CM IDs
	// show in the resource dump.
	WaitListen(t, 18515, 18600)
	WaitFor(t, "rping's servers", 30*time.Second, func(c *nldev.Conn) string {
		if CountRes(c, dev, "cm_id", "rping") < 1 || CountRes(c, "siw0", "cm_id", "rping") < 1 {
			return "no listening CM IDs"
		}
		return ""
	})
	procs = append(procs,
		StartProc(t, "ibv_rc_pingpong", "-d", dev, "-g", gid, "-n", "100000000", "127.0.0.1"),
		StartProc(t, "rping", "-c", "-a", ip, "-C", "100000000"),
		StartProc(t, "rping", "-c", "-a", siwIP, "-C", "100000000"),
		StartProc(t, "ib_send_bw", "-d", dev, "-x", gid, "-p", "18600", "--use-srq", "-n", "100000000", "127.0.0.1"),
	)
	WaitFor(t, "the traffic's resources", 30*time.Second, func(c *nldev.Conn) string {
		var missing []string
		for _, w := range []struct {
			dev, kind, comm string
			n               int
		}{
			{dev, "qp-rts", "ibv_rc_pingpong", 2},
			{dev, "cm_id", "rping", 3},
			{"siw0", "cm_id", "rping", 3},
			{dev, "srq", "ib_send_bw", 1},
			// The SRQ comes before the QPs: wait for the client's QP in
			// RTS too, by when the server's QP exists as well.
			{dev, "qp-rts", "ib_send_bw", 1},
		} {
			if got := CountRes(c, w.dev, w.kind, w.comm); got < w.n {
				missing = append(missing, fmt.Sprintf("%s %s of %s: %d of %d", w.dev, w.kind, w.comm, got, w.n))
			}
		}
		return strings.Join(missing, "; ")
	})
	for _, p := range procs {
		if err := p.Signal(syscall.SIGSTOP); err != nil {
			t.Fatalf("SIGSTOP %d: %v", p.Pid, err)
		}
	}
	time.Sleep(300 * time.Millisecond)
}

// StartProc starts a helper process with its output in a log file; it is
// continued and killed by PID when t ends.
func StartProc(t testing.TB, name string, args ...string) *os.Process {
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

// WaitFor polls cond until it reports nothing missing or timeout passes.
func WaitFor(t testing.TB, what string, timeout time.Duration, cond func(c *nldev.Conn) (missing string)) {
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

// CountRes counts the resources of kind (qp-rts, cm_id or srq) on device
// name held by processes called comm.
func CountRes(c *nldev.Conn, name, kind, comm string) int {
	ctx := context.Background()
	devs, err := c.Dev.List(ctx)
	if err != nil {
		return 0
	}
	var q nldev.Query
	found := false
	for _, d := range devs {
		if d.Name == name {
			q, found = nldev.Query{Dev: d.Index}, true
		}
	}
	if !found {
		return 0
	}
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

// WaitListen waits until TCP ports are listening (/proc/net/tcp{,6}), so a
// client is never started before its server: under a loaded emulator the
// server may take seconds to get there.
func WaitListen(t testing.TB, ports ...int) {
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
