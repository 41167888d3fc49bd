package fabricsim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/ibsim"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/sa"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/topo"
)

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), append([]string{"fabricsim"}, args...), strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func TestGen(t *testing.T) {
	out, _, code := run(t, "gen", "fattree:k=2,n=3")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	top, err := topo.Parse(strings.NewReader(out), "gen")
	if err != nil {
		t.Fatal(err)
	}
	if s, c, _ := top.Counts(); s != 12 || c != 8 {
		t.Fatalf("2-ary 3-tree: %d switches, %d CAs", s, c)
	}
	if _, errs, code := run(t, "gen", "fattree:k=x"); code != 1 || !strings.Contains(errs, "not a number") {
		t.Fatalf("bad generator: exit %d, %q", code, errs)
	}
	if _, errs, code := run(t, "gen"); code != 2 || !strings.Contains(errs, "usage") {
		t.Fatalf("no generator: exit %d, %q", code, errs)
	}
	if _, _, code := run(t, "frobnicate"); code != 2 {
		t.Fatalf("unknown command: exit %d", code)
	}
	if _, _, code := run(t); code != 2 {
		t.Fatalf("no command: exit %d", code)
	}
}

func TestConsole(t *testing.T) {
	top, err := topo.Generate("fattree:k=2,n=2")
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(top)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cfg := sim.SMConfig{Node: "hca1", Port: 1}
	c := &Console{F: f, SM: &cfg}
	ctx := context.Background()
	for _, ok := range []string{
		"", "# a comment", "help", "sweep", "latency hop=2 sma=1ms agent=5us queue=8 loss=0.5",
		"node dead hca2", "node alive hca2", "drop hca3 1 10", "errors hca3 1 symbol=3 downed=1",
		"link down hca4 1", "link up hca4 1", "latency off", "status",
		"traffic hca1 1 hca2 4096", "traffic hca1 1 hca3 1000000 10",
	} {
		if _, err := c.Exec(ctx, ok); err != nil {
			t.Fatalf("%q: %v", ok, err)
		}
	}
	if f.Latency() != (sim.Latency{}) {
		t.Fatalf("latency after off: %+v", f.Latency())
	}
	if err := c.F.SetLatency(sim.Latency{}); err != nil {
		t.Fatal(err)
	}
	l, err := ParseLatency(sim.Latency{}, "hop=2,sma=1ms,agent=5us,queue=8,loss=0.5")
	if err != nil || l.Hop != 2*time.Microsecond || l.SMA != time.Millisecond || l.Agent != 5*time.Microsecond || l.QueueDepth != 8 || l.Loss != 0.5 {
		t.Fatalf("latency %+v %v", l, err)
	}
	for _, bad := range []string{
		"frob", "link sideways hca1 1", "link down hca1", "link down hca1 x", "link down nope 1",
		"node dead nope", "node asleep hca1", "drop hca1 1 x", "drop hca1 1 200", "latency hop", "latency speed=3",
		"latency loss=300", "latency loss=NaN", "latency loss=-1", "latency loss=Inf", "latency hop=NaN",
		"latency hop=-5us", "latency sma=1e300", "latency agent=2h", "latency queue=-1",
		"errors hca1 1 bogus=1", "errors hca1 1 symbol=x", "errors hca1",
		"traffic hca1 1 nope 10", "traffic hca1 1 hca2 x", "traffic hca1 1 hca2 10 0", "traffic hca1", "traffic hca1 9 hca2 10",
	} {
		if _, err := c.Exec(ctx, bad); err == nil {
			t.Fatalf("%q: no error", bad)
		}
	}
	if _, err := (&Console{F: f}).Exec(ctx, "sweep"); err == nil {
		t.Fatal("sweep without an SM")
	}
	err = c.Run(ctx, strings.NewReader("latency hop=1\n\nfrob\n"), "faults")
	if err == nil || !strings.Contains(err.Error(), "faults:3:") {
		t.Fatalf("faults file error: %v", err)
	}
}

var seq atomic.Int64

// Serve a generated fabric with the built-in SM and a faults file, reach
// it through package ibsim's transport (SMPs and the SA), and pull a
// cable through the control socket.
func TestServe(t *testing.T) {
	name := fmt.Sprintf("rkfsim%d-%d", os.Getpid(), seq.Add(1))
	dir := t.TempDir()
	faults := filepath.Join(dir, "faults")
	if err := os.WriteFile(faults, []byte("# start with a little latency\nlatency hop=1us sma=2us\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	sctx, stop := context.WithCancel(ctx)
	go func() {
		done <- Main(sctx, []string{"fabricsim", "serve", "--sockname", name, "--faults", faults, "fattree:k=2,n=2"}, strings.NewReader(""), &out, &errb)
	}()
	t.Cleanup(func() {
		stop()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("serve exit %d: %s", code, errb.String())
			}
		case <-time.After(20 * time.Second):
			t.Error("serve did not stop")
		}
	})
	ctlRun := func(cmd ...string) (string, error) {
		var o bytes.Buffer
		err := ctl(ctx, append([]string{"--sockname", name}, cmd...), &o)
		return strings.TrimSpace(o.String()), err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := ctlRun("status"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not up: %s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	st, err := ctlRun("status")
	if err != nil || !strings.Contains(st, "SM MASTER") || !strings.Contains(st, "hop=1µs") {
		t.Fatalf("status %q %v", st, err)
	}
	tr, err := ibsim.Dial(ctx, ibsim.Config{SockName: name, Node: "hca2"})
	if err != nil {
		t.Fatal(err)
	}
	mc := mad.NewClient(tr, mad.WithTimeout(2*time.Second), mad.WithRetries(1))
	t.Cleanup(func() { mc.Close() })
	lp, err := mc.LocalPort(ctx)
	if err != nil || lp.LID == 0 || lp.SMLID == 0 {
		t.Fatalf("local port %+v %v", lp, err)
	}
	// The SA answers through the ibsim protocol (one MAD: a Get).
	sc := sa.New(mc)
	rec := iba.NodeRecord{LID: lp.LID}
	if err := sc.Get(ctx, &rec); err != nil || rec.NodeInfo.NodeGUID != lp.NodeGUID {
		t.Fatalf("NodeRecord %+v %v", rec, err)
	}
	// Pull hca3's cable: its LID stops answering; plug it back: the SM
	// sweeps again on the trap and it answers with the same LID.
	var pi iba.PortInfo
	var l3 uint16
	for l := uint16(1); l < 16; l++ {
		var nd iba.NodeDescription
		if mc.SubnGet(ctx, mad.Route{Addr: mad.Addr{LID: l}}, &nd, 0) == nil && strings.HasPrefix(string(nd.NodeString[:]), "hca3") {
			l3 = l
		}
	}
	if l3 == 0 {
		t.Fatal("no LID answers as hca3")
	}
	if _, err := ctlRun("link", "down", "hca3", "1"); err != nil {
		t.Fatal(err)
	}
	quick := mad.Route{Addr: mad.Addr{LID: l3}, Timeout: 200 * time.Millisecond, Tries: 1}
	if err := mc.SubnGet(ctx, quick, &pi, 0); err == nil {
		t.Fatal("hca3 answers with its cable pulled")
	}
	if _, err := ctlRun("link", "up", "hca3", "1"); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for mc.SubnGet(ctx, quick, &pi, 0) != nil || pi.PortState != iba.PortStateActive {
		if time.Now().After(deadline) {
			t.Fatalf("hca3 not back: %+v", pi)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := ctlRun("frob"); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("bad control command: %v", err)
	}
	if err := ctl(ctx, []string{"--control", "@" + name + ":nothing", "status"}, &bytes.Buffer{}); err == nil {
		t.Fatal("ctl to no server")
	}
	usageErr := usage("x")
	if !errors.Is(usageErr, ErrUsage) {
		t.Fatal("usage errors")
	}
}

func TestServeErrors(t *testing.T) {
	if _, errs, code := run(t, "serve"); code != 2 || !strings.Contains(errs, "one TOPOLOGY") {
		t.Fatalf("serve without a topology: %d %q", code, errs)
	}
	if _, errs, code := run(t, "serve", "--control", "-", "/nonexistent/file.net"); code != 1 || !strings.Contains(errs, "no such file") {
		t.Fatalf("missing file: %d %q", code, errs)
	}
	if _, errs, code := run(t, "serve", "--latency", "hop=x", "--control", "-", "--sockname", fmt.Sprintf("rkfsimE%d", os.Getpid()), "fattree:k=2,n=1"); code != 2 || !strings.Contains(errs, "--latency") {
		t.Fatalf("bad latency: %d %q", code, errs)
	}
	if _, _, code := run(t, "serve", "--bogus", "x"); code != 2 {
		t.Fatalf("unknown flag: %d", code)
	}
}
