package diags

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmakit/rdmakit/internal/testbed"
	"github.com/rdmakit/rdmakit/sim"
	"github.com/rdmakit/rdmakit/sim/topo"
)

// dataField matches a data counter as ibqueryerrors prints it: the
// traffic of the tools themselves moves these between two runs.
var dataField = regexp.MustCompile(`\[(Port(?:Xmit|Rcv)(?:Data|Pkts)|Port(?:Unicast|Multicast)(?:Xmit|Rcv)Pkts) == \d+ \([ 0-9.]+[KMGTPE]?B?\)\]`)

func maskData(s string) string { return dataField.ReplaceAllString(s, "[$1 == N]") }

// qeBed is a fabric both ibqueryerrors run on, C (of release diags) and
// ours.
type qeBed struct {
	diags *testbed.Release
	sim   *testbed.IBSim
	host  string
}

// compare runs the C tool and ours and compares stdout and the exit
// status; a command line the C release gets wrong (testbed.Release.Broken)
// is not compared, and ours' output is returned all the same.
func (b *qeBed) compare(t *testing.T, mask bool, args ...string) string {
	t.Helper()
	argv := append([]string{"ibqueryerrors"}, args...)
	if why := b.diags.Broken(argv); why != "" {
		t.Logf("%q: not compared: %s", args, why)
		out, _, _ := run(t, "", append([]string{"ibtool", "--fabric", "ibsim:" + b.host}, argv...)...)
		return out
	}
	cOut, cErr, cCode := b.diags.RunC(t, b.sim, b.host, argv...)
	cOut = b.diags.Normalise(argv, cOut)
	out, errOut, code := run(t, "", append([]string{"ibtool", "--fabric", "ibsim:" + b.host}, argv...)...)
	if code != cCode {
		t.Errorf("%q: exit %d, C %d\nours: %s\nC: %s", args, code, cCode, errOut, cErr)
	}
	if mask {
		cOut, out = maskData(cOut), maskData(out)
	}
	if out != cOut {
		t.Errorf("%q differs from the C tool:\n%s--- ours\n%s--- C\n%s", args, firstLines(out, cOut), out, cOut)
	}
	return out
}

// dropMADs sends NodeInfo queries to node through a port that drops every
// packet it receives, so that ibsim counts PortRcvErrors there.
func dropMADs(t *testing.T, b *discoverBed, node string, port int, lid int) {
	t.Helper()
	if err := b.sim.SetErrorRate(node, port, 100, 0); err != nil {
		t.Fatal(err)
	}
	b.c(t, "smpquery", "-t", "50", "nodeinfo", fmt.Sprint(lid))
	if err := b.sim.SetErrorRate(node, port, 0, 0); err != nil {
		t.Fatal(err)
	}
}

// TestIBQueryErrorsLive compares ibqueryerrors with the C tool on ibsim:
// a clean fabric, then one with receive errors on a CA port, with every
// option the C tool has.
func TestIBQueryErrorsLive(t *testing.T) { eachRelease(t, testIBQueryErrorsLive) }

func testIBQueryErrorsLive(t *testing.T, p peers) {
	db := startDiscoverBed(t, p)
	b := &qeBed{diags: p.diags, sim: db.sim, host: db.host}
	dir := t.TempDir()
	out := b.compare(t, false)
	if !strings.Contains(out, "## Summary:") {
		t.Fatalf("no summary:\n%s", out)
	}
	lidOf := func(node string) int {
		js, _, _ := db.ours(t, "--json", "iblinkinfo", "--cas-only")
		var doc struct {
			Result LinkInfoResult `json:"result"`
		}
		_ = json.Unmarshal([]byte(js), &doc)
		for _, n := range doc.Result.Nodes {
			if n.Name == node {
				return int(n.Ports[0].LID)
			}
		}
		t.Fatalf("no LID for %s", node)
		return 0
	}
	dropMADs(t, db, "H-3", 1, lidOf("H-3"))
	thr := filepath.Join(dir, "thresholds")
	if err := os.WriteFile(thr, []byte("# test\n\nPortRcvErrors=1000\nSymbolErrorCounter=5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Where the C tool skips a threshold line it cannot use, or a file
	// that is not there, ours stops and says which (docs/ibtool.md).
	bogus := filepath.Join(dir, "bogus")
	if err := os.WriteFile(bogus, []byte("# test\n\nPortRcvErrors=1000\nSymbolErrorCounter=5\nNoSuchCounter=3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, msg string }{{bogus, "line 5"}, {filepath.Join(dir, "none"), "no such file"}} {
		if _, errOut, code := db.ours(t, "ibqueryerrors", "--skip-sl", "--threshold-file", c.file); code != 1 || !strings.Contains(errOut, c.msg) {
			t.Errorf("--threshold-file %s: exit %d, stderr %q", c.file, code, errOut)
		}
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "fabric.cache")
	if _, errOut, code := b.diags.RunC(t, b.sim, b.host, "ibnetdiscover", "--cache", cache); code != 0 {
		t.Fatalf("ibnetdiscover --cache: %s", errOut)
	}
	for _, args := range [][]string{
		{}, {"-r"}, {"--details"}, {"--switch"}, {"--ca"}, {"--router"}, {"--ca", "--switch"},
		{"-s", "PortRcvErrors"}, {"-s", "PortRcvErrors,SymbolErrorCounter", "-c"}, {"-c"}, {"-s", "Bogus"},
		{"--threshold-file", thr}, {"--threshold-file", empty},
		{"--skip-sl"}, {"-R"}, {"-o", "1"},
		{"--load-cache", cache}, {"--load-cache", cache, "-G", "0x0002c90300c00031"}, {"--load-cache", cache, "-S", "0x0002c90300a00001", "-r"},
		{"--load-cache", cache, "-G", "0x99"},
		{"-D", "0"}, {"-D", "0,1"}, {"-D", "0,1", "-r"},
	} {
		// The SLs change no output: most cases skip the SA's path
		// records, which ibsim cannot carry (ours waits for them once).
		if len(args) > 0 && args[0] != "-D" {
			args = append([]string{"--skip-sl"}, args...)
		}
		b.compare(t, false, args...)
	}
	for _, args := range [][]string{{"--data"}, {"--skip-sl", "--data", "-r"}, {"--skip-sl", "--counters"}, {"--skip-sl", "--counters", "-r"}, {"--skip-sl", "--counters", "--ca"}} {
		b.compare(t, true, args...)
	}

	// -k clears the error counters after reading them, -K the data
	// counters: each tool's second run finds what its first left.
	cFirst, _, cCode := b.diags.RunC(t, b.sim, b.host, "ibqueryerrors", "--skip-sl", "-k", "-K")
	cSecond, _, _ := b.diags.RunC(t, b.sim, b.host, "ibqueryerrors", "--skip-sl")
	dropMADs(t, db, "H-3", 1, lidOf("H-3"))
	first, _, code := db.ours(t, "ibqueryerrors", "--skip-sl", "-k", "-K")
	second, _, code2 := db.ours(t, "ibqueryerrors", "--skip-sl")
	if code != cCode || first != cFirst || cCode != 1 || code2 != 0 || second != cSecond || strings.Contains(second, "Errors for") {
		t.Errorf("-k -K: exit %d (C %d), then %d\n--- ours\n%s%s--- C\n%s%s", code, cCode, code2, first, second, cFirst, cSecond)
	}
	js, _, _ := db.ours(t, "--json", "ibqueryerrors", "--skip-sl", "--ca")
	var doc struct {
		Result QueryErrorsResult `json:"result"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil || doc.Result.Summary.NodesChecked == 0 {
		t.Errorf("--json: %v\n%s", err, js)
	}
}

// serveSim serves a sim.Fabric of the test bed's topology over the ibsim
// protocol and brings it up with OpenSM of release rel, so rel's C tools
// run on it (testbed.RunC with the returned IBSim).
func serveSim(t *testing.T, f *testbed.Fabric, smNode string, rel *testbed.Release) (*sim.Fabric, *testbed.IBSim) {
	t.Helper()
	rel.Require(t)
	text, err := f.Topology()
	if err != nil {
		t.Fatal(err)
	}
	tp, err := topo.Parse(strings.NewReader(text), "fabric")
	if err != nil {
		t.Fatal(err)
	}
	return serveTopo(t, tp, smNode, rel)
}

// serveTopo serves a topology as serveSim does.
func serveTopo(t *testing.T, tp *topo.Topology, smNode string, rel *testbed.Release) (*sim.Fabric, *testbed.IBSim) {
	t.Helper()
	rel.Require(t)
	fab, err := sim.NewWithOptions(tp, sim.Options{LinearFDBCap: 30720})
	if err != nil {
		t.Fatal(err)
	}
	_, name := serveIBSim(t, fab, "rkqe")
	bed := &testbed.IBSim{SockName: name, Release: rel}
	testbed.StartOpenSM(t, bed, smNode)
	return fab, bed
}

// TestIBQueryErrorsSimErrors injects every error counter into the
// simulator, some beyond their width (the PMA saturates them), serves it
// to the C tool and ours, and compares both with and without thresholds,
// suppressions, details and data.
func TestIBQueryErrorsSimErrors(t *testing.T) { eachRelease(t, testIBQueryErrorsSimErrors) }

func testIBQueryErrorsSimErrors(t *testing.T, p peers) {
	ft := testbed.FatTree{Leaves: 2, Spines: 1, HCAsPerLeaf: 2}
	f, err := ft.Build()
	if err != nil {
		t.Fatal(err)
	}
	fab, bed := serveSim(t, f, "H-1", p.diags)
	b := &qeBed{diags: p.diags, sim: bed, host: "H-2"}
	inject := []struct {
		node string
		port int
		e    sim.PortErrors
	}{
		{"H-3", 1, sim.PortErrors{SymbolErrors: 7, LinkErrorRecovery: 300, LinkDowned: 2, RcvErrors: 70000}},
		{"H-4", 1, sim.PortErrors{RcvRemotePhysErrors: 3, RcvSwitchRelayErrors: 4, XmitDiscards: 5, XmitConstraintErrors: 6}},
		{testbed.LeafName(1), 1, sim.PortErrors{RcvConstraintErrors: 9, LocalLinkIntegrityErrors: 20, ExcessiveBufferOverrun: 3}},
		{testbed.LeafName(2), 2, sim.PortErrors{VL15Dropped: 11, XmitWait: 1234}},
		{testbed.SpineName(1), 1, sim.PortErrors{SymbolErrors: 1, XmitDiscards: 100}},
	}
	for _, in := range inject {
		if err := fab.InjectErrors(in.node, in.port, in.e); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	thr := filepath.Join(dir, "thresholds")
	lines := []string{}
	for _, c := range qeChecked {
		lines = append(lines, c.String()+"=5")
	}
	if err := os.WriteFile(thr, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{}, {"-r"}, {"--details"}, {"--threshold-file", thr}, {"--threshold-file", thr, "-r"},
		{"-s", "PortXmitDiscards,VL15Dropped"}, {"-c"}, {"--switch"}, {"--ca", "-s", "SymbolErrorCounter"},
	} {
		out := b.compare(t, false, append([]string{"--skip-sl"}, args...)...)
		if len(args) == 0 {
			for _, c := range qeChecked {
				if !strings.Contains(out, "["+c.String()+" == ") {
					t.Errorf("%s is not reported:\n%s", c, out)
				}
			}
			if !strings.Contains(out, "[LinkErrorRecoveryCounter == 255]") || !strings.Contains(out, "[PortRcvErrors == 65535]") {
				t.Errorf("narrow counters do not saturate:\n%s", out)
			}
		}
	}
	b.compare(t, true, "--skip-sl", "--data")
	b.compare(t, true, "--skip-sl", "--counters")
}

// TestIBQueryErrorsDrops runs ibqueryerrors on a fabric where three CAs
// drop most MADs sent to them: whatever fails, the run completes, every
// node it could not reach and every PMA query that failed is reported,
// the summary counts the failures, and the exit status is exitIncomplete
// when anything was lost.
func TestIBQueryErrorsDrops(t *testing.T) {
	ft := testbed.FatTree{Leaves: 4, Spines: 2, HCAsPerLeaf: 4}
	f, err := ft.Build()
	if err != nil {
		t.Fatal(err)
	}
	fab, bed := serveSim(t, f, "H-1", testbed.Bookworm)
	t.Setenv("IBSIM_SOCKNAME", bed.SockName)
	for _, n := range []string{"H-5", "H-9", "H-13"} {
		if err := fab.SetDropRate(n, 1, 60); err != nil {
			t.Fatal(err)
		}
	}
	failuresRe := regexp.MustCompile(`(?m)^##\s+(\d+) PMA query failures$`)
	checkedRe := regexp.MustCompile(`## Summary: (\d+) nodes checked`)
	for i := range 4 {
		start := time.Now()
		// Tries of 200 ms: only the dropping CAs may fail, not a healthy
		// node whose reply a loaded machine holds up.
		out, errOut, code := run(t, "", "ibtool", "--fabric", "ibsim:H-2", "-t", "200", "--retries", "1", "ibqueryerrors", "--skip-sl")
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("run %d took %v", i, d)
		}
		m := checkedRe.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("run %d: no summary:\n%s", i, out)
		}
		unreachable := strings.Count(errOut, "warning: no node reachable at")
		if checked, _ := strconv.Atoi(m[1]); checked+unreachable != 22 {
			t.Errorf("run %d: %d nodes checked and %d unreachable of 22\n%s%s", i, checked, unreachable, out, errOut)
		}
		failed := strings.Count(errOut, " query failed on ")
		counted := 0
		if m := failuresRe.FindStringSubmatch(out); m != nil {
			counted, _ = strconv.Atoi(m[1])
		}
		if failed != counted {
			t.Errorf("run %d: %d PMA queries reported failed, the summary counts %d\n%s%s", i, failed, counted, out, errOut)
		}
		last := errOut[strings.LastIndex(strings.TrimSuffix(errOut, "\n"), "\n")+1:]
		switch lost := strings.Contains(errOut, "warning: "); {
		case lost && code != exitIncomplete:
			t.Errorf("run %d: exit %d after losing data, want %d\n%s", i, code, exitIncomplete, errOut)
		case lost && !strings.Contains(last, "discovery incomplete: ") && !strings.Contains(last, "PMA queries failed"):
			t.Errorf("run %d: the last line does not say what was lost: %q", i, last)
		case !lost && code != 0 && code != 1:
			t.Errorf("run %d: exit %d\n%s", i, code, errOut)
		}
		t.Logf("run %d: exit %d, %d unreachable, %d PMA failures", i, code, unreachable, failed)
	}
}

// TestIBQueryErrorsText checks the pieces of the text that no live run
// reaches: the human-readable figures, thresholds files and the C tool's
// parsing of -s.
func TestIBQueryErrorsText(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		data bool
		want string
	}{
		{0, false, " [X == 0 (0.000)]"},
		{1023, false, " [X == 1023 (1023.000)]"},
		{1024, false, " [X == 1024 (1.000K)]"},
		{300, true, " [X == 300 (1.172KB)]"},
		{255, true, " [X == 255 (1020.000B)]"},
		{257, true, " [X == 257 (1.004KB)]"},
		{1 << 40, true, " [X == 1099511627776 (4.000TB)]"},
		{^uint64(0), false, " [X == 18446744073709551615 (16.000E)]"},
	} {
		if got := qeCounterText("X", c.v, c.data); got != c.want {
			t.Errorf("%d data=%v: %q, want %q", c.v, c.data, got, c.want)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "t")
	os.WriteFile(p, []byte("#c\n\nSymbolErrorCounter=0x10\nPortXmitWait=7\n"), 0o644)
	q := &qeRun{f: &queryErrorsFlags{thresholdFile: p}}
	if err := q.loadThresholds(true); err != nil || q.thrText == nil || *q.thrText != "Thresholds: [SymbolErrorCounter = 16][PortXmitWait = 7]" {
		t.Errorf("thresholds %v %v", q.thrText, err)
	}
	q = &qeRun{f: &queryErrorsFlags{thresholdFile: filepath.Join(dir, "none")}}
	if err := q.loadThresholds(false); err != nil || q.thrText != nil {
		t.Errorf("a missing default file gives %v, %v", q.thrText, err)
	}
	if err := q.loadThresholds(true); err == nil {
		t.Error("a missing file named on purpose is accepted")
	}
	// Where the C tool skips a line it cannot use, ours names it.
	os.WriteFile(p, []byte("SymbolErrorCounter=1\nBogus=1\n"), 0o644)
	q = &qeRun{f: &queryErrorsFlags{thresholdFile: p}}
	if err := q.loadThresholds(true); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("an unknown counter: error %v", err)
	}
	var sup []string
	qeSuppress{&sup}.Set("PortRcvErrors,Nonsense,VL15Dropped")
	qeSuppressCommon{&sup}.Set("true")
	if strings.Join(sup, " ") != "PortRcvErrors VL15Dropped PortRcvSwitchRelayErrors" {
		t.Errorf("suppressed %q", sup)
	}
}

// TestIBQueryErrorsRails compares the C tool and ours on a fabric whose
// HCAs have two ports on different leaves (rails), with errors on both
// ports of one HCA: our sweep begins reading a node while the discovery
// still runs, and an HCA's second port turns up later in the walk than its
// first, so the HCA must not be read before.
func TestIBQueryErrorsRails(t *testing.T) { eachRelease(t, testIBQueryErrorsRails) }

func testIBQueryErrorsRails(t *testing.T, p peers) {
	tp, err := topo.Generate("leafspine:leaves=4,spines=2,hosts=4,uplinks=2,hcaports=2")
	if err != nil {
		t.Fatal(err)
	}
	fab, bed := serveTopo(t, tp, "hca1", p.diags)
	for _, in := range []struct {
		node string
		port int
	}{{"hca3", 1}, {"hca3", 2}, {"hca6", 2}} {
		if err := fab.InjectErrors(in.node, in.port, sim.PortErrors{SymbolErrors: uint64(in.port), LinkDowned: 1}); err != nil {
			t.Fatal(err)
		}
	}
	b := &qeBed{diags: p.diags, sim: bed, host: "hca2"}
	for _, args := range [][]string{{}, {"-r"}, {"--ca"}, {"--details"}} {
		out := b.compare(t, false, append([]string{"--skip-sl"}, args...)...)
		if len(args) == 0 && !strings.Contains(out, "port 2: [SymbolErrorCounter == 2]") {
			t.Errorf("the second port's errors are missing:\n%s", out)
		}
	}
}
