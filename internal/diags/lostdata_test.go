package diags

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/ibsimserver"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// lostBed is a simulated fabric brought up by the built-in SM and served
// over the ibsim protocol in-process, as fabricsim serves it.
type lostBed struct {
	f    *sim.Fabric
	srv  *ibsimserver.Server
	node string // the CA ibtool attaches to
}

func newLostBed(t *testing.T, spec string) *lostBed {
	t.Helper()
	tp, err := topo.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(tp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := f.RunSM(ctx, sim.SMConfig{Node: "hca1", Port: 1}); err != nil {
		t.Fatal(err)
	}
	srv, _ := serveIBSim(t, f, "rklost")
	return &lostBed{f: f, srv: srv, node: "hca1"}
}

func (b *lostBed) run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return run(t, "", append([]string{"ibtool", "--fabric", "ibsim:" + b.node, "-t", "100"}, args...)...)
}

// TestLostDataExitStatus: every command that discovers prints what it
// found and then exits exitIncomplete, saying how many ports lead to a
// node that did not answer, when a leaf switch is dead; on the healthy
// fabric the same commands exit 0.
func TestLostDataExitStatus(t *testing.T) {
	b := newLostBed(t, "fattree:k=4,n=2")
	ref := filepath.Join(t.TempDir(), "ref.cache")
	if _, errOut, code := b.run(t, "ibnetdiscover", "--cache", ref); code != 0 {
		t.Fatalf("ibnetdiscover --cache: exit %d: %s", code, errOut)
	}
	cmds := [][]string{
		{"ibnetdiscover"}, {"--json", "ibnetdiscover"}, {"ibnetdiscover", "-p"},
		{"iblinkinfo"}, {"--json", "iblinkinfo"},
		{"ibqueryerrors"}, {"--json", "ibqueryerrors"},
		{"ibhosts"}, {"ibswitches"}, {"ibnodes"}, {"--json", "ibhosts"},
		{"ibidsverify"}, {"subnet_diff", ref}, {"ibfindnodesusing", "0x0008f10500000004", "1"},
		{"dump_fts"}, {"dump_lfts"}, {"ibprintswitch", "-l"}, {"ibcheckstate", "--up"}, {"ibchecknet", "--up"},
	}
	// ibidsverify prints nothing when it finds nothing wrong.
	quiet := func(args []string) bool { return args[0] == "ibidsverify" }
	for _, args := range cmds {
		if out, errOut, code := b.run(t, args...); code != 0 || (out == "") != quiet(args) {
			t.Errorf("healthy fabric: %q: exit %d, %d bytes out\n%s", args, code, len(out), errOut)
		}
	}
	// The leaf behind which hca13 to hca16 hang: four spine ports lead to
	// it.
	if err := b.f.SetNodeDead("ft-l0-3", true); err != nil {
		t.Fatal(err)
	}
	for _, args := range cmds {
		out, errOut, code := b.run(t, args...)
		if code != exitIncomplete || (out == "") != quiet(args) {
			t.Errorf("dead leaf: %q: exit %d, want %d after the output (%d bytes)\n%s", args, code, exitIncomplete, len(out), errOut)
			continue
		}
		last := errOut[strings.LastIndex(strings.TrimSuffix(errOut, "\n"), "\n")+1:]
		if !strings.Contains(last, "discovery incomplete: ") || !strings.Contains(last, "4 ports lead to a node that did not answer") {
			t.Errorf("dead leaf: %q: the last line does not say what was lost: %q", args, last)
		}
	}
}

// TestSimulatorDiesMidSweep is the reproducer of a discovery that loses
// its fabric: the simulator goes away after ibnetdiscover has read part of
// the subnet. It prints what it found and exits exitIncomplete, saying how
// much it lost, where it used to exit 0 with part of the topology.
func TestSimulatorDiesMidSweep(t *testing.T) {
	b := newLostBed(t, "fattree:k=4,n=3")
	full, errOut, code := b.run(t, "ibnetdiscover")
	if code != 0 {
		t.Fatalf("healthy fabric: exit %d: %s", code, errOut)
	}
	// One SMP at a time, 2 ms each: about 1650 SMPs take 3 s, and the
	// server goes once 100 of them have been answered.
	if err := b.f.SetLatency(sim.Latency{SMA: 2 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	type result struct {
		out, errOut string
		code        int
	}
	res := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := Main(context.Background(), []string{"ibtool", "--fabric", "ibsim:" + b.node, "-t", "100", "ibnetdiscover", "-o", "1"}, strings.NewReader(""), &out, &errb)
		res <- result{out.String(), errb.String(), code}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if n, _ := b.f.Delayed(); n >= 100 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the discovery did not start")
		}
		time.Sleep(time.Millisecond)
	}
	b.srv.Close()
	var r result
	select {
	case r = <-res:
	case <-time.After(60 * time.Second):
		t.Fatal("ibnetdiscover did not end after the simulator went away")
	}
	lines, fullLines := strings.Count(r.out, "\n"), strings.Count(full, "\n")
	if r.code != exitIncomplete || lines == 0 || lines >= fullLines {
		t.Fatalf("exit %d with %d of %d lines, want %d with part of them\n%s", r.code, lines, fullLines, exitIncomplete, r.errOut)
	}
	if !strings.Contains(r.errOut, "ibnetdiscover: discovery incomplete: ") || !strings.Contains(r.errOut, " to a node that did not answer") {
		t.Errorf("the loss is not said:\n%s", r.errOut)
	}
	t.Logf("%d of %d lines; %s", lines, fullLines, r.errOut[strings.LastIndex(strings.TrimSuffix(r.errOut, "\n"), "\n")+1:])
}
