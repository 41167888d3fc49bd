//go:build vmguest

package diags

// These tests run as root in the floor-4 VM (internal/vmtest) on rxe0:
// ibtool (in $VMTEST_DIR) and rdma-core's C examples talk
// to each other over 127.0.0.1, RoCE GID index 1 (::ffff:10.0.0.1). Each
// case checks with `rdma -j res show` that nothing was left behind.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func ppIbtool(t *testing.T) string {
	t.Helper()
	p := filepath.Join(os.Getenv("VMTEST_DIR"), "ibtool")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("ibtool: %v", err)
	}
	return p
}

func ppGuestRes(t *testing.T) map[string]int {
	t.Helper()
	out, err := exec.Command("rdma", "-j", "res", "show").Output()
	if err != nil {
		t.Fatalf("rdma -j res show: %v", err)
	}
	var devs []map[string]any
	if err := json.Unmarshal(out, &devs); err != nil {
		t.Fatalf("rdma -j res show: %v in %s", err, out)
	}
	m := map[string]int{}
	for _, d := range devs {
		if d["ifname"] == "rxe0" {
			for _, k := range []string{"pd", "cq", "qp", "mr"} {
				if v, ok := d[k].(float64); ok {
					m[k] = int(v)
				}
			}
		}
	}
	return m
}

// ppListening waits until something listens on TCP port p (IPv4 or IPv6).
func ppListening(t *testing.T, p int) {
	t.Helper()
	want := fmt.Sprintf(":%04X ", p)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
			b, _ := os.ReadFile(f)
			for _, l := range strings.Split(string(b), "\n") {
				fs := strings.Fields(l)
				if len(fs) > 3 && strings.HasSuffix(fs[1]+" ", want) && fs[3] == "0A" {
					return
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("nothing listens on TCP port %d", p)
}

// ppPeer runs one side; the server is started first and killed by PID when
// the test ends.
type ppPeer struct {
	cmd *exec.Cmd
	out bytes.Buffer
}

func ppStartPeer(t *testing.T, ctx context.Context, argv ...string) *ppPeer {
	t.Helper()
	p := &ppPeer{cmd: exec.CommandContext(ctx, argv[0], argv[1:]...)}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	p.cmd.WaitDelay = 2 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := p.cmd.Process.Pid
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			if pr, err := os.FindProcess(pid); err == nil {
				_ = pr.Kill()
			}
			_ = p.cmd.Wait()
		}
	})
	return p
}

func (p *ppPeer) wait(t *testing.T, name string) string {
	t.Helper()
	err := p.cmd.Wait()
	out := p.out.String()
	t.Logf("%s (%s):\n%s", name, strings.Join(p.cmd.Args, " "), out)
	if err != nil {
		t.Errorf("%s: %v", name, err)
	}
	return out
}

// pingpongCase runs server then client and checks both finished all
// iterations and left no resources behind.
func pingpongCase(t *testing.T, port int, server, client []string) (string, string) {
	t.Helper()
	before := ppGuestRes(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := ppStartPeer(t, ctx, server...)
	ppListening(t, port)
	cli := ppStartPeer(t, ctx, client...)
	cout := cli.wait(t, "client")
	sout := srv.wait(t, "server")
	for name, out := range map[string]string{"server": sout, "client": cout} {
		if strings.HasPrefix(out, "{") {
			continue // --json: the caller reads it
		}
		if !strings.Contains(out, "remote address:") || !strings.Contains(out, " iters in ") {
			t.Errorf("%s did not finish its iterations", name)
		}
	}
	if after := ppGuestRes(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("rdma res after %v, before %v: leaked", after, before)
	}
	return sout, cout
}

func pingpongMatrix(t *testing.T, tool string, base int, common ...string) {
	ours := []string{ppIbtool(t), tool}
	theirs := []string{"ibv_" + tool}
	args := func(port int, extra ...string) []string {
		return append(append([]string{"-d", "rxe0", "-g", "1", "-p", fmt.Sprint(port)}, common...), extra...)
	}
	cat := func(a, b []string) []string { return append(append([]string(nil), a...), b...) }
	t.Run("ours-client-C-server", func(t *testing.T) {
		pingpongCase(t, base, cat(theirs, args(base)), cat(ours, args(base, "127.0.0.1")))
	})
	t.Run("C-client-ours-server", func(t *testing.T) {
		pingpongCase(t, base+1, cat(ours, args(base+1)), cat(theirs, args(base+1, "127.0.0.1")))
	})
	t.Run("ours-both-events", func(t *testing.T) {
		pingpongCase(t, base+2, cat(ours, args(base+2, "-e")), cat(ours, args(base+2, "127.0.0.1")))
	})
}

func TestGuestPingpongRC(t *testing.T) {
	pingpongMatrix(t, "rc_pingpong", 18515, "-n", "30", "-s", "4096", "-m", "1024")
}

func TestGuestPingpongUD(t *testing.T) {
	pingpongMatrix(t, "ud_pingpong", 18615, "-n", "30", "-s", "512")
}

// TestGuestPingpongJSON: the result as a JSON document.
func TestGuestPingpongJSON(t *testing.T) {
	ib := ppIbtool(t)
	_, cout := pingpongCase(t, 18715, []string{"ibv_rc_pingpong", "-d", "rxe0", "-g", "1", "-p", "18715", "-n", "20"},
		[]string{ib, "rc_pingpong", "--json", "-d", "rxe0", "-g", "1", "-p", "18715", "-n", "20", "127.0.0.1"})
	var doc struct {
		Version int            `json:"version"`
		Command string         `json:"command"`
		Result  PingpongResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(cout), &doc); err != nil {
		t.Fatalf("client JSON: %v", err)
	}
	r := doc.Result
	if doc.Version != 1 || doc.Command != "rc_pingpong" || r.Iters != 20 || r.Bytes != 4096*20*2 || r.USecPerIter <= 0 ||
		r.Local.GID != "::ffff:10.0.0.1" || r.Remote.QPN == 0 || r.Remote.QPN == r.Local.QPN {
		t.Errorf("JSON result %+v", doc)
	}
}

func TestGuestRDMABW(t *testing.T) {
	ib := ppIbtool(t)
	before := ppGuestRes(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := ppStartPeer(t, ctx, ib, "rdma_bw", "-d", "rxe0", "-g", "1", "-p", "4444")
	ppListening(t, 4444)
	cli := ppStartPeer(t, ctx, ib, "rdma_bw", "--json", "-d", "rxe0", "-g", "1", "-p", "4444", "-s", "65536", "-n", "100", "-t", "16", "-e", "3", "127.0.0.1")
	cout := cli.wait(t, "client")
	sout := srv.wait(t, "server")
	var doc struct {
		Result RDMABWResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(cout), &doc); err != nil {
		t.Fatalf("client JSON: %v", err)
	}
	r := doc.Result
	if r.Role != "client" || r.Bytes != 65536*100 || r.MBPerSec <= 0 || r.LatencyUSec == nil || r.LatencyUSec.Min <= 0 ||
		r.LatencyUSec.Avg < r.LatencyUSec.Min || r.LatencyUSec.Max < r.LatencyUSec.Avg || r.NumSGE != 3 {
		t.Errorf("client result %+v", r)
	}
	if !strings.Contains(sout, "6553600 bytes in") || !strings.Contains(sout, "data verified: true") {
		t.Errorf("server output lacks the totals or the data check")
	}
	t.Logf("rdma_bw on rxe0 under TCG: %.1f MB/s, write latency avg %.0f us (min %.0f, max %.0f)",
		r.MBPerSec, r.LatencyUSec.Avg, r.LatencyUSec.Min, r.LatencyUSec.Max)
	if after := ppGuestRes(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("rdma res after %v, before %v: leaked", after, before)
	}
}

// TestGuestRDMABWBidirIPv6 runs python-rdma's -b (the server writes too)
// with -6 (the side channel over IPv6) on both sides.
func TestGuestRDMABWBidirIPv6(t *testing.T) {
	ib := ppIbtool(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := ppStartPeer(t, ctx, ib, "rdma_bw", "--json", "-b", "-6", "-d", "rxe0", "-g", "1", "-p", "4445")
	ppListening(t, 4445)
	cli := ppStartPeer(t, ctx, ib, "rdma_bw", "--json", "-6", "-d", "rxe0", "-g", "1", "-p", "4445", "-s", "65536", "-n", "50", "::1")
	cout := cli.wait(t, "client")
	sout := srv.wait(t, "server")
	for _, side := range []struct{ name, out string }{{"client", cout}, {"server", sout}} {
		var doc struct {
			Result RDMABWResult `json:"result"`
		}
		if err := json.Unmarshal([]byte(side.out), &doc); err != nil {
			t.Fatalf("%s JSON: %v", side.name, err)
		}
		r := doc.Result
		if r.Role != side.name || !r.Bidirectional || r.Bytes != 65536*50 || r.MBPerSec <= 0 || r.LatencyUSec == nil {
			t.Errorf("%s result %+v", side.name, r)
		}
	}
}
