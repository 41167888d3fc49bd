package diags

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/rdmakit/rdmakit/iba"
	"github.com/rdmakit/rdmakit/mad"
	"github.com/rdmakit/rdmakit/mad/madtest"
	"github.com/rdmakit/rdmakit/perf"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// checkTopo is the fabric of the ibcheck tests: two switches, three HCAs,
// ca-1's second port not cabled (Polling) and the inter-switch link
// trained at 1x of the 4x both ends support.
const checkTopo = `switchguid=0x10
Switch	8 "sw-a"		# "switch A" enhanced port 0
[1]	"ca-1"[1]
[2]	"ca-2"[1]
[5]	"sw-b"[5]	w=1

switchguid=0x20
Switch	8 "sw-b"		# "switch B" enhanced port 0
[1]	"ca-3"[1]
[5]	"sw-a"[5]	w=1

caguid=0x100
Hca	2 "ca-1"	# "host one"
[1]	"sw-a"[1]

caguid=0x200
Hca	1 "ca-2"	# "host two"
[1]	"sw-a"[2]

caguid=0x300
Hca	1 "ca-3"	# "host three"
[1]	"sw-b"[1]
`

// checkFabric brings up checkTopo with the built-in SM (and its SA unless
// noSA) on ca-1 port 1: the
// fabric the test injects errors into; runCheck attaches to it.
func checkFabric(t *testing.T, noSA bool) *sim.Fabric {
	t.Helper()
	path := filepath.Join(t.TempDir(), "check.topo")
	if err := os.WriteFile(path, []byte(checkTopo), 0o644); err != nil {
		t.Fatal(err)
	}
	tp, err := topo.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := sim.New(tp)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := f.RunSM(ctx, sim.SMConfig{Node: "ca-1", Port: 1, NoSA: noSA}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// runCheck runs a command of the ibcheck family on f, attached at ca-1
// port 1: the test-only hook that --fabric sim: (a new fabric per run)
// cannot give.
func runCheck(t *testing.T, f *sim.Fabric, name string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	sp, ok := checkCommands[name]
	if !ok {
		t.Fatalf("no command %s", name)
	}
	return runOnFabric(t, f, func(e *Env, open func() (*session, error)) *cobra.Command { return newCheckCommand(e, sp, open) }, args...)
}

// runOnFabric runs the command mk builds on f, attached at ca-1 port 1.
func runOnFabric(t *testing.T, f *sim.Fabric, mk func(*Env, func() (*session, error)) *cobra.Command, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e := &Env{Ctx: ctx, Stdout: &out, Stderr: &errb, Retries: -1}
	rest := []string{}
	for _, a := range args {
		switch a {
		case "--json":
			e.JSON = true
		case "-v":
			e.Verbose++
		default:
			rest = append(rest, a)
		}
	}
	open := func() (*session, error) {
		tr, err := f.Attach("ca-1", 1)
		if err != nil {
			return nil, err
		}
		mc := mad.NewClient(tr, mad.WithTimeout(300*time.Millisecond), mad.WithRetries(1))
		lp, err := mc.LocalPort(ctx)
		if err != nil {
			mc.Close()
			return nil, err
		}
		return testSession(e, mc, lp), nil
	}
	c := mk(e, open)
	c.SilenceErrors, c.SilenceUsage = true, true
	c.SetArgs(rest)
	err := c.Execute()
	var ue *UsageError
	switch {
	case err == nil:
	case errors.As(err, &ue):
		code = 2
		errb.WriteString(err.Error())
	default:
		code = 1
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), code
}

// The simulator counts the MADs themselves as traffic, in whatever order
// the parallel checks send them, so data counters are masked in the
// golden files; tests that need them read them through --json.
var checkDataCounter = regexp.MustCompile(`((?:Xmt|Rcv)(?:Data|Pkts):\.+|"port(?:Xmit|Rcv)(?:Data|Pkts)": )\d+`)

func maskCheckData(s string) string { return checkDataCounter.ReplaceAllString(s, "${1}N") }

func inject(t *testing.T, f *sim.Fabric, node string, port int, e sim.PortErrors) {
	t.Helper()
	if err := f.InjectErrors(node, port, e); err != nil {
		t.Fatal(err)
	}
}

// TestIBCheckFabric runs the fabric-wide checks on the simulator with
// errors injected: counters above and at their thresholds, on CA ports
// (no AllPortSelect: one port each) and switch ports (AllPortSelect, then
// port by port), a port that is not up, a degraded link, and the -v,
// --up and --json forms. The golden files are the expected reports.
func TestIBCheckFabric(t *testing.T) {
	f := checkFabric(t, false)
	inject(t, f, "ca-2", 1, sim.PortErrors{SymbolErrors: 15, LinkDowned: 10})
	inject(t, f, "sw-a", 2, sim.PortErrors{RcvErrors: 11, XmitDiscards: 50})
	inject(t, f, "sw-b", 5, sim.PortErrors{VL15Dropped: 101, ExcessiveBufferOverrun: 12})
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"ibcheckerrors", []string{"ibcheckerrors"}, 1},
		{"ibcheckerrors-v", []string{"ibcheckerrors", "-v"}, 1},
		{"ibcheckerrors-up", []string{"ibcheckerrors", "--up"}, 1},
		{"ibchecknet", []string{"ibchecknet", "--up"}, 1},
		{"ibcheckstate", []string{"ibcheckstate"}, 1},
		{"ibcheckstate-up", []string{"ibcheckstate", "--up"}, 0},
		{"ibcheckwidth", []string{"ibcheckwidth"}, 0},
		{"ibcheckwidth-v", []string{"ibcheckwidth", "-v"}, 0},
		{"ibdatacounters", []string{"ibdatacounters"}, 0},
		{"ibcheckerrors-json", []string{"ibcheckerrors", "--up", "--json"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCheck(t, f, tc.args[0], tc.args[1:]...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			golden(t, tc.name, maskCheckData(out))
		})
	}
}

// TestIBCheckThresholds puts one count on every PortCounters error counter
// of a port and checks that a threshold file naming each of them (in each
// accepted spelling) reports each, that -s shows the file's values, and
// that bad files are refused with a clear error.
func TestIBCheckThresholds(t *testing.T) {
	f := checkFabric(t, false)
	inject(t, f, "ca-3", 1, sim.PortErrors{SymbolErrors: 2, LinkErrorRecovery: 2, LinkDowned: 2, RcvErrors: 2,
		RcvRemotePhysErrors: 2, RcvSwitchRelayErrors: 2, XmitDiscards: 2, XmitConstraintErrors: 2,
		RcvConstraintErrors: 2, LocalLinkIntegrityErrors: 2, ExcessiveBufferOverrun: 2, VL15Dropped: 2, XmitWait: 2})
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	all := write("all", `# every error counter, in the spellings python-rdma accepts
symbolErrorCounter=1
LinkErrorRecoveryCounter = 1
LinkDowned=0x1
portrcverrors=1
RcvRemotePhysErrors=1
PortRcvSwitchRelayErrors=1
XmtDiscards=1
portXmitConstraintErrors=01
RcvConstraintErrors=1
LinkIntegrityErrors=1
ExcBufOverrunErrors=1
VL15Dropped=1
XmtWait=1

portXmitData=0
`)
	at := write("at", "symbolErrorCounter=2\nVL15Dropped=3\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"every-counter", []string{"ibcheckerrs", "-T", all, "5"}, 1},
		{"at-threshold", []string{"ibcheckerrs", "-T", at, "5"}, 0},
		{"show", []string{"ibcheckerrs", "-T", all, "-s"}, 0},
		{"show-defaults", []string{"ibcheckerrs", "-s"}, 0},
		{"fabric", []string{"ibcheckerrors", "--up", "-T", all}, 1},
		{"every-counter-brief", []string{"ibcheckerrs", "-b", "-T", all, "5"}, 1},
		{"fabric-brief", []string{"ibcheckerrors", "-b", "--up", "-T", all}, 1},
		{"unknown-key", []string{"ibcheckerrs", "-T", write("bad", "SymbolErrs=1\n"), "4"}, 1},
		{"not-a-counter", []string{"ibcheckerrs", "-T", write("sel", "PortSelect=1\n"), "4"}, 1},
		{"bad-value", []string{"ibcheckerrs", "-T", write("val", "VL15Dropped=ten\n"), "4"}, 1},
		{"no-file", []string{"ibcheckerrs", "-T", filepath.Join(dir, "none"), "4"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCheck(t, f, tc.args[0], tc.args[1:]...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			golden(t, tc.name, maskCheckData(out+strings.ReplaceAll(errOut, dir, "DIR")))
		})
	}
}

// TestIBCheckScriptForms runs the family as the diags scripts were run:
// -nocolor, -timeout and a topology file in place of discovery, whose
// connected ports are the ones checked.
func TestIBCheckScriptForms(t *testing.T) {
	const fab = "sim:fattree:k=4,n=2"
	topoFile := filepath.Join(t.TempDir(), "fabric.topo")
	topoText, errOut, code := run(t, "", "ibtool", "--fabric", fab, "ibnetdiscover")
	if code != 0 {
		t.Fatalf("ibnetdiscover: exit %d: %s", code, errOut)
	}
	if err := os.WriteFile(topoFile, []byte(topoText), 0o644); err != nil {
		t.Fatal(err)
	}
	discovered, _, code := run(t, "", "ibtool", "--fabric", fab, "ibchecknet", "--nocolor")
	if code != 1 || !strings.Contains(discovered, "88 ports checked, 16 ports with bad state found") {
		t.Fatalf("ibchecknet: exit %d\n%s", code, discovered)
	}
	fromFile, errOut, code := run(t, "", "ibtool", "--fabric", fab, "ibchecknet", "-nocolor", "-timeout", "500", topoFile)
	if code != 0 || !strings.Contains(fromFile, "72 ports checked, 0 ports with bad state found") || strings.Contains(fromFile, "\033[") {
		t.Errorf("ibchecknet -nocolor -timeout 500 FILE: exit %d\n%s%s", code, fromFile, errOut)
	}
	if _, errOut, code := run(t, "", "ibtool", "--fabric", fab, "ibchecknet", topoFile, topoFile); code != 2 {
		t.Errorf("two topology files: exit %d: %s", code, errOut)
	}
	if _, errOut, code := run(t, "", "ibtool", "--fabric", fab, "ibcheckstate", filepath.Join(t.TempDir(), "none")); code != 1 || !strings.Contains(errOut, "none") {
		t.Errorf("a missing topology file: exit %d: %s", code, errOut)
	}
}

// TestIBCheckSingle runs the single-target commands on CA and switch
// ports, good and bad, including the SA checks of ibchecknode.
func TestIBCheckSingle(t *testing.T) {
	f := checkFabric(t, false)
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"checknode-ca", []string{"ibchecknode", "-v", "4"}, 0},
		{"checknode-switch", []string{"ibchecknode", "1"}, 0},
		{"checkport", []string{"ibcheckport", "-v", "4", "1"}, 0},
		{"checkport-polling", []string{"ibcheckport", "3", "2"}, 1},
		{"checkportstate-switch", []string{"ibcheckportstate", "-v", "1", "5"}, 0},
		{"checkportwidth-degraded", []string{"ibcheckportwidth", "1", "5"}, 0},
		{"checkerrs-switch", []string{"ibcheckerrs", "-v", "2"}, 0},
		{"checkerrs-dr", []string{"ibcheckerrs", "-D", "0,1", "5"}, 0},
		{"datacounts", []string{"ibdatacounts", "4", "1"}, 0},
		{"usage", []string{"ibcheckport", "4"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCheck(t, f, tc.args[0], tc.args[1:]...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			golden(t, tc.name, maskCheckData(out+errOut))
		})
	}
}

// TestIBCheckNoSA: without an SA every node check fails and says why, and
// the other checks still run.
func TestIBCheckNoSA(t *testing.T) {
	f := checkFabric(t, true)
	out, errOut, code := runCheck(t, f, "ibcheckstate", "--up")
	if code != 1 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	golden(t, "ibcheckstate", out)
}

// TestIBClearCounters clears the error counters, then everything, and
// checks both what the fabric's counters then read and what the commands
// said they cleared.
func TestIBClearCounters(t *testing.T) {
	f := checkFabric(t, false)
	inject(t, f, "ca-2", 1, sim.PortErrors{SymbolErrors: 15, XmitWait: 5})
	inject(t, f, "sw-a", 2, sim.PortErrors{RcvErrors: 11})
	if err := f.Traffic("ca-2", 1, 5, 100, 4000); err != nil {
		t.Fatal(err)
	}
	steps := []struct{ name, cmd string }{
		{"clearerrors", "ibclearerrors"},
		{"after-clearerrors", "ibdatacounters"},
		{"clearcounters", "ibclearcounters"},
		{"clearcounters-json", "ibclearcounters"},
	}
	for _, st := range steps {
		args := []string{"-v"}
		if strings.HasSuffix(st.name, "json") {
			args = []string{"--json"}
		}
		out, errOut, code := runCheck(t, f, st.cmd, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", st.cmd, code, out, errOut)
		}
		golden(t, st.name, maskCheckData(out))
		if st.name == "clearerrors" {
			// The errors are gone, the data counters are not.
			out, _, code := runCheck(t, f, "ibcheckerrors", "--up")
			if code != 0 || !strings.Contains(out, "0 ports have errors beyond threshold") {
				t.Errorf("after ibclearerrors, ibcheckerrors: exit %d\n%s", code, out)
			}
		}
	}
	// The 100 packets of traffic are gone; what is left is the MADs sent
	// since the reset, which the simulator counts as traffic too.
	out, _, _ := runCheck(t, f, "ibdatacounts", "--json", "4", "1")
	var doc struct {
		Result CheckResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Result.Runs) != 1 {
		t.Fatalf("ibdatacounts --json: %v\n%s", err, out)
	}
	var pc struct{ PortXmitPkts, PortRcvPkts uint64 }
	if err := json.Unmarshal(doc.Result.Runs[0].Counters, &pc); err != nil || pc.PortXmitPkts >= 100 {
		t.Errorf("after ibclearcounters, ca-2 port 1 counters: %s (%v)", doc.Result.Runs[0].Counters, err)
	}
}

// TestIBCheckAllPortSelectEmulation: ibcheckerrs on a switch whose PMA lacks
// AllPortSelect sums its ports with saturation, as perfquery -a does.
func TestIBCheckAllPortSelectEmulation(t *testing.T) {
	pma := &fakePMA{capMask: iba.PMCapPortCountersXmitWait}
	respond := func(req *mad.Packet) []*mad.Packet {
		h, _ := madtest.ParseHeader(req.MAD)
		if h.Class == iba.ClassSubnMgt && (h.AttrID == iba.AttrIDPortInfo || h.AttrID == iba.AttrIDNodeDescription) {
			b := make([]byte, 64)
			if h.AttrID == iba.AttrIDPortInfo {
				pi := iba.PortInfo{LID: 5, PortState: iba.PortStateActive, PortPhysicalState: iba.PhysPortStateLinkUp}
				_ = pi.MarshalTo(b)
			} else {
				copy(b, "fake switch")
			}
			return []*mad.Packet{madtest.Reply(req, 0, b)}
		}
		return pma.respond(req)
	}
	mk := func(e *Env, open func() (*session, error)) interface {
		SetArgs([]string)
		Execute() error
	} {
		c := newCheckCommand(e, checkCommands["ibcheckerrs"], open)
		c.SilenceErrors, c.SilenceUsage = true, true
		return c
	}
	out, errOut, code := runFake(t, respond, mk, "5")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	golden(t, "ibcheckerrs", out)
}

// FuzzCheckThresholds: no threshold file makes the ibcheck family's reader
// panic; what it takes names PortCounters counters by their IBA names,
// with the values the file gives.
func FuzzCheckThresholds(f *testing.F) {
	for _, s := range []string{
		"SymbolErrorCounter=10\nLinkDownedCounter=0x10\n",
		"# comment\n\nportRcvErrors = 5\nRcvErrors=7\nsymbolerrors=017\n",
		"PortXmitData=1\n",         // a PortCounters counter but not an error
		"PortXmitDataExtended=1\n", // PortCountersExtended: refused here
		"XmtWait=18446744073709551615\n",
		"=\n", "x=1\n", "SymbolErrorCounter=-1\n", "SymbolErrorCounter\n",
	} {
		f.Add(s)
	}
	names, _ := portCounterNames()
	ibaName := map[string]bool{}
	for _, n := range names {
		ibaName[n] = true
	}
	f.Fuzz(func(t *testing.T, text string) {
		th, err := perf.ParseThresholds(strings.NewReader(text), "fuzz")
		if err != nil {
			return
		}
		m, err := checkThresholds(th, "fuzz")
		if err != nil {
			if !strings.Contains(err.Error(), "is not a PortCounters counter") {
				t.Fatalf("unexpected error: %v", err)
			}
			return
		}
		if len(m) != len(th.Counters()) {
			t.Fatalf("%d thresholds of %d", len(m), len(th.Counters()))
		}
		for k := range m {
			if !ibaName[k] {
				t.Fatalf("threshold %q is not a PortCounters IBA name", k)
			}
		}
	})
}
