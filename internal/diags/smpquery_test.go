package diags

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rdmakit/rdmakit/internal/testbed"
)

// liveHost is the node both the C tools and ours attach to; OpenSM runs on
// H-1.
const liveHost = "H-2"

// live is floor 3 for smpquery and perfquery: ibsim with OpenSM on a
// generated fat tree, and the way to run the C tool and ours on it.
type live struct {
	p   peers
	f   *testbed.Fabric
	sim *testbed.IBSim
	dr  map[string]string // node -> DR path from liveHost
	lid map[string]int    // node -> LID (a CA's port 1)
}

// startLive brings up a 2-leaf, 1-spine fat tree with dual-port HCAs:
// 4x QDR host links, 12x EDR uplinks, and one host link degraded to 1x SDR,
// so the widths and speeds that PortInfo shows vary. The fabric is p.sim's
// ibsim and OpenSM; l.c runs p.diags' C tools.
func startLive(t *testing.T, p peers) *live {
	t.Helper()
	p.sim.Require(t)
	p.diags.Require(t)
	f, err := testbed.FatTree{Leaves: 2, Spines: 1, HCAsPerLeaf: 2, DualPortHCAs: true,
		UplinkWidth: testbed.Width12x, UplinkSpeed: testbed.EDR}.Build()
	if err != nil {
		t.Fatal(err)
	}
	l := f.LinkAt("H-4", 2)
	l.A.Width, l.A.Speed = testbed.Width1x, testbed.SDR
	l.B.Width, l.B.Speed = testbed.Width1x, testbed.SDR
	topo, err := f.Topology()
	if err != nil {
		t.Fatal(err)
	}
	sim := p.sim.StartIBSim(t, topo)
	testbed.StartOpenSM(t, sim, testbed.HCAName(1))
	t.Setenv("IBSIM_SOCKNAME", sim.SockName)
	lv := &live{p: p, f: f, sim: sim, dr: drRoutes(f, liveHost), lid: map[string]int{}}
	lidLine := regexp.MustCompile(`(?m)^Lid:\.+(\d+)$`)
	for name, path := range lv.dr {
		out, errOut, code := p.diags.RunC(t, sim, liveHost, "smpquery", "-D", "portinfo", path)
		m := lidLine.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("LID of %s: exit %d\n%s%s", name, code, out, errOut)
		}
		lv.lid[name], _ = strconv.Atoi(m[1])
	}
	return lv
}

// drRoutes finds a directed route from start (through its port 1) to every
// node.
func drRoutes(f *testbed.Fabric, start string) map[string]string {
	paths := map[string]string{start: "0"}
	var queue []string
	if peer, _, ok := f.Peer(start, 1); ok {
		paths[peer] = "0,1"
		queue = append(queue, peer)
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for p := 1; p <= f.Node(n).Ports; p++ {
			peer, _, ok := f.Peer(n, p)
			if _, seen := paths[peer]; !ok || seen {
				continue
			}
			paths[peer] = paths[n] + "," + strconv.Itoa(p)
			if f.Node(peer).Type == testbed.Switch {
				queue = append(queue, peer)
			}
		}
	}
	return paths
}

// ours runs our tool in-process on the live fabric.
func (l *live) ours(t *testing.T, tool string, args ...string) (string, string, int) {
	t.Helper()
	return run(t, "", append([]string{"ibtool", "--fabric", "ibsim:" + liveHost, tool}, args...)...)
}

// c runs the C tool on the live fabric.
func (l *live) c(t *testing.T, tool string, args ...string) (string, string, int) {
	t.Helper()
	return l.p.diags.RunC(t, l.sim, liveHost, append([]string{tool}, args...)...)
}

var ibErrorLine = regexp.MustCompile(`(?m)^\S+: iberror: (?:\[pid \d+\] \S+: )?failed: (.*)$`)

// compareAll runs the C tool and ours with each of the argument lists and
// diffs stdout and the exit status (through l.check, which normalises the
// C tool's output to infiniband-diags 56's). A command line the C release
// gets wrong (testbed.Release.Broken) is not run. When the C tool fails, it prints its
// "iberror: failed: MSG" line on stdout where ours prints on stderr: then
// MSG must appear in ours' stderr (the loose comparison), and only the
// output before that line must match. The C tools run a few at a time
// (they start slowly under libumad2sim; ibsim takes 10 clients at once)
// while ours run in turn, then all are checked in order.
func (l *live) compareAll(t *testing.T, tool string, cases [][]string) {
	t.Helper()
	type result struct {
		cOut, cErr, out, errOut string
		cCode, code             int
		err                     error
	}
	res := make([]result, len(cases))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	skip := make([]bool, len(cases))
	for i, args := range cases {
		if skip[i] = l.broken(t, tool, args); skip[i] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), testbed.RunCTimeout)
			defer cancel()
			r := &res[i]
			r.cOut, r.cErr, r.cCode, r.err = l.p.diags.RunCContext(ctx, l.sim, liveHost, append([]string{tool}, args...)...)
		}()
	}
	// Ours run in-process and fast, one after the other.
	for i, args := range cases {
		if skip[i] {
			continue
		}
		r := &res[i]
		r.out, r.errOut, r.code = l.ours(t, tool, args...)
	}
	wg.Wait()
	for i, r := range res {
		if skip[i] {
			continue
		}
		if r.err == nil && (r.cCode != r.code || r.cOut != r.out) {
			// The C tools ran four at a time on one simulator node; on a
			// loaded machine one of them can miss its reply (seen with
			// vendstat against a fake agent). A disagreement is run again
			// alone before it counts.
			ctx, cancel := context.WithTimeout(context.Background(), testbed.RunCTimeout)
			r.cOut, r.cErr, r.cCode, r.err = l.p.diags.RunCContext(ctx, l.sim, liveHost, append([]string{tool}, cases[i]...)...)
			cancel()
		}
		if r.err != nil {
			t.Errorf("%s %v: the C tool: %v", tool, cases[i], r.err)
			continue
		}
		l.check(t, tool, cases[i], r.cOut, r.cErr, r.cCode, r.out, r.errOut, r.code, nil)
	}
}

// broken says whether the C release cannot be compared on this command
// line (testbed.Release.Broken), and logs why.
func (l *live) broken(t *testing.T, tool string, args []string) bool {
	t.Helper()
	why := l.p.diags.Broken(append([]string{tool}, args...))
	if why != "" {
		t.Logf("%s %s: not compared: %s", tool, strings.Join(args, " "), why)
	}
	return why != ""
}

// check compares one run of the C tool with ours. The C tool's output is
// first normalised to what infiniband-diags 56 prints
// (testbed.Release.Normalise).
func (l *live) check(t *testing.T, tool string, args []string, cOut, cErr string, cCode int, out, errOut string, code int, same func(c, ours string) bool) {
	t.Helper()
	cOut = l.p.diags.Normalise(append([]string{tool}, args...), cOut)
	what := tool + " " + strings.Join(args, " ")
	if code != cCode {
		t.Errorf("%s: exit %d, the C tool's %d\nours:\n%s%s\nC:\n%s%s", what, code, cCode, out, errOut, cOut, cErr)
		return
	}
	if m := ibErrorLine.FindStringSubmatchIndex(cOut); m != nil {
		msg := cOut[m[2]:m[3]]
		if !strings.Contains(errOut, msg) {
			t.Errorf("%s: our error %q does not say the C tool's %q", what, errOut, msg)
		}
		cOut = cOut[:m[0]]
	}
	if same == nil {
		same = func(c, o string) bool { return c == o }
	}
	if !same(cOut, out) {
		t.Errorf("%s: ours differs from the C tool's\n--- C\n%s--- ours\n%s", what, cOut, out)
	}
}

// TestSMPQueryLive compares every smpquery op with the C smpquery on the
// same ibsim fabric, by LID and by directed route, on every node and port,
// and the C tool's errors and exit statuses on bad input.
func TestSMPQueryLive(t *testing.T) { eachRelease(t, testSMPQueryLive) }

func testSMPQueryLive(t *testing.T, p peers) {
	l := startLive(t, p)
	// A generous timeout: the machine may be loaded, and a slow reply must
	// not read as a failure of one side only.
	to := []string{"-t", "3000"}
	var cases [][]string
	add := func(args ...string) { cases = append(cases, append(append([]string{}, to...), args...)) }
	for _, n := range l.f.Nodes {
		lid := strconv.Itoa(l.lid[n.Name])
		dr := l.dr[n.Name]
		add("nodeinfo", lid)
		add("-D", "NI", dr)
		add("nodedesc", lid)
		add("-D", "ND", dr)
		add("guidinfo", lid)
		add("pkeys", lid)
		add("sl2vl", lid)
		add("vlarb", lid)
		add("portinfo", lid)
		if n.Type == testbed.Switch {
			add("switchinfo", lid)
			add("-D", "SI", dr)
			// Port 0, and the last port (an uplink).
			for _, p := range []string{"0", strconv.Itoa(n.Ports)} {
				add("portinfo", lid, p)
				add("PKeyTable", lid, p)
				add("SL2VLTable", lid, p)
				add("VLArbitration", lid, p)
				add("MEPI", lid, p)
			}
		} else {
			add("SI", lid) // a CA has no SwitchInfo: the C tool's failure
			add("-D", "PortInfo", dr, "2")
			add("mlnxextportinfo", lid, "2")
		}
	}
	sw, ca := strconv.Itoa(l.lid["S-leaf-1"]), strconv.Itoa(l.lid["H-3"])
	add("-D", "PIE", l.dr["H-3"])
	add("PortInfoExtended", sw, "1")
	add("-K", "portinfo", ca, "1")
	add("-x", "portinfo", sw, "5")
	add("-L", "NodeInfo", sw)
	add("-G", "nodeinfo", fmt.Sprintf("0x%016x", uint64(l.f.Node("H-3").PortGUID(1))))
	add("-G", "portinfo", fmt.Sprintf("0x%016x", uint64(l.f.Node("H-4").PortGUID(2))), "2")
	add("-D", "portinfo", "0,", "1")
	add("-D", "pkeys", "0,1", "3")
	add("-D", "vlarb", "0,1", "0")
	add("pkeys", sw, "9") // invalid port number
	add("sl2vl", ca, "3") // invalid port number
	add("SL2VL", sw, "2") // every input port to output 2
	l.compareAll(t, "smpquery", cases)

	t.Run("node-name-map", func(t *testing.T) {
		m := filepath.Join(t.TempDir(), "names")
		text := fmt.Sprintf("# a map\n0x%016x \"first host\"\n%#x  leaf one # comment\n", uint64(l.f.Node("H-1").GUID), uint64(l.f.Node("S-leaf-1").GUID))
		if err := os.WriteFile(m, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		var cases [][]string
		for _, n := range []string{"H-1", "S-leaf-1", "H-3"} {
			cases = append(cases, []string{"--node-name-map", m, "nodedesc", strconv.Itoa(l.lid[n])})
		}
		l.compareAll(t, "smpquery", cases)
	})
	t.Run("sa", func(t *testing.T) {
		// python-rdma's --sa answers from the SA's records: the same text
		// as the SMPs give. (ibsim cuts multi-record SA tables, so the
		// ops that need a GetTable are left to the simulator floor.)
		for _, args := range [][]string{{"nodeinfo", ca}, {"nodeinfo", sw}, {"nodedesc", ca}, {"switchinfo", sw}} {
			cOut, cErr, cCode := l.c(t, "smpquery", args...)
			out, errOut, code := l.ours(t, "smpquery", append([]string{"--sa"}, args...)...)
			l.check(t, "smpquery --sa", args, cOut, cErr, cCode, out, errOut, code, nil)
		}
	})
	t.Run("bad-input", func(t *testing.T) {
		long := "0" + strings.Repeat(",1", 70)
		l.compareAll(t, "smpquery", [][]string{
			{"frobnicate", sw},                         // unknown op: 255
			{"nodeinfo"},                               // no target: usage, 2
			{"nodeinfo", "0xzz"},                       // not a LID: 255
			{"-D", "nodeinfo", long},                   // DR path too long: 255
			{"-t", "100", "nodeinfo", "200"},           // no such LID: 255, at once
			{"-t", "100", "-D", "nodeinfo", "0,1,9"},   // a port with no link
			{"-c", "-t", "100", "nodeinfo", sw, "0,1"}, // combined route: ibsim drops it
		})
		_, errOut, code := l.ours(t, "smpquery", "-t", "100", "nodeinfo", "200")
		if code != 255 || !strings.Contains(errOut, "DLID=200") || !noAnswer(errOut) {
			t.Errorf("unreachable LID: exit %d, stderr %q does not name the target", code, errOut)
		}
	})
}

// TestSMPQueryJSON keeps the JSON of a few ops on the live fabric, by
// directed route so that no LID the SM chose appears in it.
func TestSMPQueryJSON(t *testing.T) {
	l := startLive(t, machinePeers)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"nodeinfo", []string{"-D", "nodeinfo", "0,1"}},
		{"nodedesc", []string{"-D", "nodedesc", "0,1,5"}},
		{"switchinfo", []string{"-D", "switchinfo", "0,1,5"}},
		{"pkeys", []string{"-D", "pkeys", "0,1,5,2", "1"}},
		{"sl2vl", []string{"-D", "sl2vl", "0,1,5"}},
		{"mlnxextportinfo", []string{"-D", "MEPI", "0,1", "3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := l.ours(t, "smpquery", append([]string{"--json"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var doc struct {
				Version int
				Command string
				Result  SMPQueryResult
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Command != "smpquery" || len(doc.Result.Attributes) == 0 {
				t.Fatalf("bad document (%v):\n%s", err, out)
			}
			golden(t, tc.name, out)
		})
	}
}

func TestSMPQueryCStrtoul(t *testing.T) {
	for in, want := range map[string]uint64{
		"12": 12, "0x1f": 31, "0X1F": 31, "010": 8, "0": 0, "": 0, "abc": 0, "7abc": 7,
		"  42": 42, "0x": 0, "09": 0, "+5": 5,
	} {
		if got := cStrtoul(in); got != want {
			t.Errorf("cStrtoul(%q) = %d, want %d", in, got, want)
		}
	}
	if got := cPort("-1"); got != -1 {
		t.Errorf("cPort(-1) = %d", got)
	}
}

func TestSMPQueryUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"smpquery"}, 2},
		{[]string{"smpquery", "nodeinfo"}, 2},
		{[]string{"smpquery", "-c", "nodeinfo", "3"}, 2},
		{[]string{"smpquery", "--no-such-flag", "ni", "1"}, 2},
		{[]string{"smpquery", "bogus", "1"}, 255},
	} {
		_, errOut, code := run(t, "", append([]string{"ibtool", "--fabric", "ibsim:nowhere"}, tc.args...)...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (%s)", tc.args, code, tc.code, errOut)
		}
	}
}

// FuzzSMPQueryArgs runs smpquery with the fuzzer's words as its arguments
// on an in-process fabric: no op, destination (a DR list with -D, -c's
// LID and path, a LID, a GUID) or op parameter makes it panic, hang or end
// with a status it does not document.
func FuzzSMPQueryArgs(f *testing.F) {
	for _, s := range []string{
		"nodeinfo 1", "-D nodeinfo 0", "-D NI 0,1", "-D NI 0,1,", "-D portinfo 0,1 1", "-D ND 0,1,3", "-D nodeinfo ,",
		"-D nodeinfo 0,300", "-D nodeinfo 0,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1",
		"-c nodeinfo 1 0,1", "-c NI 65535 0", "nodedesc 1", "pkeys 1 1", "pkeys 2 0", "sl2vl 2 1", "vlarb 1 1", "guidinfo 1",
		"switchinfo 2", "SI 1", "mlnxextportinfo 1 1", "PIE 1 1", "PortInfoExtended 2 1", "-G nodeinfo 0x0002c90300000001",
		"-L nodeinfo 1", "-x portinfo 2 5", "-K portinfo 1 1", "-D -L NI 1", "NI 0xffff", "NI -1", "portinfo 1 -1", "portinfo 1 999",
		"pkeys 1 1 9", "vlarb 2 0", "bogus 1", "NI", "-y 0x1 NI 1", "-y x NI 1", "NI 1(2)", "NI 'IBPath(DLID=1)'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzCommand(t, append([]string{"smpquery"}, fuzzWords(s, 6)...)...)
	})
}

// TestSMPQueryPythonOps: python-rdma's LFT op prints the table ibroute -a
// reads (whose output is compared with the C tool's elsewhere), eight
// ports a line; ops are found by a prefix of their names when it names
// one op only.
func TestSMPQueryPythonOps(t *testing.T) {
	const fab = "sim:fattree:k=4,n=2"
	out, errOut, code := run(t, "", "ibtool", "--fabric", fab, "smpquery", "LFT", "2")
	if code != 0 {
		t.Fatalf("LFT: exit %d: %s", code, errOut)
	}
	route, _, _ := run(t, "", "ibtool", "--fabric", fab, "ibroute", "-a", "2")
	var lft []string
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, l := range lines[:len(lines)-1] {
		head, rest, ok := strings.Cut(l, ": ")
		if !ok || strings.TrimSpace(head) != strconv.Itoa(8*i) {
			t.Fatalf("line %d: %q", i, l)
		}
		lft = append(lft, strings.Fields(rest)...)
	}
	if len(lft) != 49152 || lines[len(lines)-1] != "49152 LFT capacity for this port, top is 24" {
		t.Fatalf("%d entries, last line %q", len(lft), lines[len(lines)-1])
	}
	n := 0
	for _, m := range regexp.MustCompile(`(?m)^0x([0-9a-f]{4}) (\d{3}) :`).FindAllStringSubmatch(route, -1) {
		lid, _ := strconv.ParseUint(m[1], 16, 16)
		port, _ := strconv.Atoi(m[2])
		if lft[lid] != strconv.Itoa(port) {
			t.Errorf("LID %d: LFT %s, ibroute %d", lid, lft[lid], port)
		}
		n++
	}
	if n != 25 {
		t.Errorf("ibroute -a listed %d LIDs", n)
	}
	want, _, _ := run(t, "", "ibtool", "--fabric", fab, "smpquery", "NodeInfo", "2")
	for _, name := range []string{"nodei", "NODEINF", "SMPNodeInfo", "smpnodei"} {
		if got, errOut, code := run(t, "", "ibtool", "--fabric", fab, "smpquery", name, "2"); code != 0 || got != want {
			t.Errorf("%s: exit %d %s\n%s", name, code, errOut, got)
		}
	}
	for name, msg := range map[string]string{"node": "ambiguous: NodeInfo, NodeDesc", "bogus": "operation 'bogus' not supported"} {
		if _, errOut, code := run(t, "", "ibtool", "--fabric", fab, "smpquery", name, "2"); code != 255 || !strings.Contains(errOut, msg) {
			t.Errorf("%s: exit %d %q, want %q", name, code, errOut, msg)
		}
	}
}
